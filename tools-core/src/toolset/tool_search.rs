//! The reserved `tool_search` entry: for a toolset too large to send whole,
//! the model starts with a few tools and a search, and finds the rest when
//! it needs them. Where the provider has a native tool search (Anthropic),
//! the deferred tools are sent marked as such and the provider searches;
//! elsewhere the model calls a local `tool_search` function, registered
//! beside the other tools ([`Toolset::with_search_function`]; the agent
//! registers its BM25 search) and run as they are, and the tools it found
//! are offered from the next turn on.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::names::RESERVED_TOOL_SEARCH;
use super::{ToolOptions, Toolset, ToolsetError};
use crate::{Renamed, Tool};

/// Tool search: which tools the model always sees, and how many one search
/// finds. Every other tool of the toolset is deferred: not offered until a
/// search found it.
///
/// ```
/// use toolcall_core::toolset::{ToolSearch, Toolset};
/// let tools = Toolset::new().with_tool_search(ToolSearch::new().with_loaded(["Get_Weather"]).with_max_results(3));
/// assert!(!tools.is_deferred("get_weather"));
/// assert!(tools.is_deferred("github_create_issue"));
/// assert_eq!(tools.tool_search().unwrap().max_results(), 3);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSearch {
    /// Lower-cased names of the tools offered from the start.
    loaded: BTreeSet<String>,
    /// Lower-cased names of the tools searches found, in the order found:
    /// offered after the others, so that a find appends to the request's
    /// tools and leaves the bytes before it as they were (a provider's
    /// prompt cache matches the request's prefix).
    found: Vec<String>,
    max_results: usize,
}

impl Default for ToolSearch {
    fn default() -> Self {
        Self { loaded: BTreeSet::new(), found: Vec::new(), max_results: 5 }
    }
}

impl ToolSearch {
    /// Search on, every tool deferred, five tools a search.
    pub fn new() -> Self {
        Self::default()
    }

    /// Offer these tools from the start (names compared ignoring case):
    /// the ones most turns need.
    pub fn with_loaded<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.loaded.extend(names.into_iter().map(|name| name.as_ref().to_ascii_lowercase()));
        self
    }

    /// At most this many tools a search (at least one).
    pub fn with_max_results(mut self, max: usize) -> Self {
        self.max_results = max.max(1);
        self
    }

    /// How many tools one search finds at most.
    pub fn max_results(&self) -> usize {
        self.max_results
    }

    /// This setting with the tools `other` keeps loaded kept loaded too,
    /// and what it found found too (after what this one found).
    pub(super) fn with_loaded_of(mut self, other: &ToolSearch) -> Self {
        self.loaded.extend(other.loaded.iter().cloned());
        self.with_found(&other.found)
    }

    /// These tools found by a search, offered from now on after the tools
    /// offered so far, in this order (names compared ignoring case; a tool
    /// already offered keeps its place).
    ///
    /// ```
    /// use toolcall_core::toolset::ToolSearch;
    /// let search = ToolSearch::new().with_loaded(["a"]).with_found(["C", "a", "b", "c"]);
    /// assert_eq!(search.found(), ["c", "b"]);
    /// assert!(search.is_loaded("B"));
    /// ```
    pub fn with_found<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        for name in names {
            let name = name.as_ref().to_ascii_lowercase();
            if !self.is_loaded(&name) {
                self.found.push(name);
            }
        }
        self
    }

    /// The lower-cased names of the tools searches found, in the order
    /// found, without those offered from the start: the definitions of a
    /// request offer them last, in this order.
    pub fn found(&self) -> &[String] {
        &self.found
    }

    /// Whether the tool with this name is offered without a search, or a
    /// search found it.
    pub fn is_loaded(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        self.loaded.contains(&name) || self.found.contains(&name)
    }
}

impl Toolset {
    /// This toolset with tool search on ([`ToolSearch`]); replaces an
    /// earlier setting.
    pub fn with_tool_search(mut self, search: ToolSearch) -> Self {
        self.tool_search = Some(search);
        self
    }

    /// Answer the model's `tool_search` calls with `search`, registered
    /// under that reserved name (whatever its own) beside the other tools,
    /// and run as they are: its timeout, the layers, observers and
    /// counters. The provider formats send the search entry in its place
    /// (the provider's own search where it has one). The agent loop
    /// registers its BM25 search over the deferred tools here; replaces an
    /// earlier one.
    ///
    /// # Errors
    ///
    /// [`ToolsetError::NotAnObject`] when `search`'s parameters are no object schema.
    pub fn with_search_function(mut self, search: impl Tool + 'static) -> Result<Self, ToolsetError> {
        let search = Renamed::new(search).with_name(RESERVED_TOOL_SEARCH);
        self.insert(Arc::new(search), ToolOptions::default(), true)?;
        Ok(self)
    }

    /// The tool search setting, when search is on.
    pub fn tool_search(&self) -> Option<&ToolSearch> {
        self.tool_search.as_ref()
    }

    /// Whether a tool is deferred: search is on and the tool is not kept
    /// loaded. A deferred tool still runs when called; it is only not
    /// offered to a model until a search found it.
    pub fn is_deferred(&self, name: &str) -> bool {
        self.tool_search.as_ref().is_some_and(|search| !search.is_loaded(name))
    }

    /// The same toolset with these tools loaded as well: what the agent
    /// loop offers once a search found them, after the tools offered so
    /// far and in this order ([`ToolSearch::with_found`]), so that the
    /// definitions sent before stay the same bytes.
    pub fn with_loaded<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        if let Some(search) = self.tool_search.take() {
            self.tool_search = Some(search.with_found(names));
        }
        self
    }
}
