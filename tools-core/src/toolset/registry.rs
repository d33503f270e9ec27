//! Registration, lookup and removal of tools.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::counters::ToolCounters;
use super::names::{NameError, RESERVED_WEB_SEARCH, validate_name};
use super::observe::Observer;
use crate::Tool;

/// Why a tool could not be registered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsetError {
    /// The name breaks the naming rules.
    #[error(transparent)]
    InvalidName(#[from] NameError),
    /// A tool with the same lower-cased name is already registered.
    #[error("tool `{new}` collides with the registered tool `{existing}`: names are compared ignoring case")]
    Duplicate {
        /// The name already registered.
        existing: String,
        /// The name that was refused.
        new: String,
    },
    /// `web_search` is reserved for the providers' native search tool.
    #[error(
        "tool name `{name}` is reserved for the provider's native web search: register it with \
         Toolset::add_web_search, or give the tool another name"
    )]
    Reserved {
        /// The refused name.
        name: String,
    },
    /// The tool's parameters are not an object schema.
    #[error(
        "tool `{name}` has a parameter schema whose root is not `\"type\": \"object\"`; use a struct as the request type"
    )]
    NotAnObject {
        /// The refused tool.
        name: String,
    },
}

/// Up to this many tools, a lookup compares names instead of hashing.
const LINEAR_LOOKUP: usize = 8;

/// The provider-native web search entry, and the function that stands in for
/// it where a provider has no native search.
///
/// ```
/// use tools_core::toolset::{Toolset, WebSearch};
/// let mut tools = Toolset::new();
/// tools.add_web_search(WebSearch::new().with_max_uses(3).with_allowed_domains(["docs.rs"])).unwrap();
/// assert_eq!(tools.web_search().unwrap().max_uses, Some(3));
/// ```
#[derive(Clone, Default)]
pub struct WebSearch {
    /// Only results from these domains.
    pub allowed_domains: Vec<String>,
    /// Never results from these domains.
    pub blocked_domains: Vec<String>,
    /// The most searches the provider may run in one request.
    pub max_uses: Option<u32>,
    /// The function registered under `web_search`, for dialects without native search.
    pub fallback: Option<Arc<dyn Tool>>,
}

impl WebSearch {
    /// Native search with no options and no fallback.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allow only these domains.
    pub fn with_allowed_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.allowed_domains = domains.into_iter().map(Into::into).collect();
        self
    }

    /// Never use these domains.
    pub fn with_blocked_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.blocked_domains = domains.into_iter().map(Into::into).collect();
        self
    }

    /// Limit the searches per request.
    pub fn with_max_uses(mut self, max_uses: u32) -> Self {
        self.max_uses = Some(max_uses);
        self
    }

    /// The function to call where a provider has no native search; it is
    /// registered under the name `web_search`, whatever its own name.
    pub fn with_fallback(mut self, tool: impl Tool + 'static) -> Self {
        self.fallback = Some(Arc::new(tool));
        self
    }
}

impl std::fmt::Debug for WebSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSearch")
            .field("allowed_domains", &self.allowed_domains)
            .field("blocked_domains", &self.blocked_domains)
            .field("max_uses", &self.max_uses)
            .field("fallback", &self.fallback.as_ref().map(|tool| tool.name().to_owned()))
            .finish()
    }
}

/// The tools a model may call, under their lower-cased names, in
/// registration order.
///
/// ```
/// use tools_core::toolset::Toolset;
/// # use tools_core::{JsonObject, Tool, ToolContext, ToolFuture};
/// # struct Named(&'static str, JsonObject);
/// # impl Tool for Named {
/// #     fn name(&self) -> &str { self.0 }
/// #     fn description(&self) -> &str { "" }
/// #     fn parameters(&self) -> &JsonObject { &self.1 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> ToolFuture<'a> { Box::pin(async { Ok(String::new()) }) }
/// # }
/// # fn tool(name: &'static str) -> Named {
/// #     Named(name, serde_json::json!({"type": "object", "properties": {}}).as_object().unwrap().clone())
/// # }
/// let mut tools = Toolset::new();
/// tools.add(tool("Get_Weather")).unwrap();
/// assert!(tools.get("get_weather").is_some());
/// let err = tools.add(tool("GET_WEATHER")).unwrap_err();
/// assert!(err.to_string().contains("`Get_Weather`"));
/// ```
///
/// A clone holds the same tools and shares their call counters.
#[derive(Clone, Default)]
pub struct Toolset {
    tools: Vec<Entry>,
    /// Lower-cased name to index in `tools`.
    index: HashMap<String, usize>,
    web_search: Option<WebSearch>,
    /// Settings of the turn executor (see `run.rs`).
    pub(super) default_timeout: Option<Duration>,
    pub(super) max_concurrency: Option<usize>,
    pub(super) observers: Vec<Arc<dyn Observer>>,
    pub(super) not_found: Arc<std::sync::atomic::AtomicU64>,
}

/// One registered tool and what the executor keeps beside it.
#[derive(Clone)]
pub(super) struct Entry {
    pub(super) tool: Arc<dyn Tool>,
    /// The display name, shared with every call's context instead of
    /// copied into it.
    pub(super) name: Arc<str>,
    /// A timeout set at registration, ahead of the tool's own.
    pub(super) timeout: Option<Duration>,
    pub(super) counters: Arc<ToolCounters>,
}

impl Toolset {
    /// An empty toolset.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a tool (any `Tool`, an `Arc<T>` or an `Arc<dyn Tool>`).
    pub fn add(&mut self, tool: impl Tool + 'static) -> Result<&mut Self, ToolsetError> {
        self.add_arc(Arc::new(tool))
    }

    /// Register a shared tool.
    pub fn add_arc(&mut self, tool: Arc<dyn Tool>) -> Result<&mut Self, ToolsetError> {
        if tool.name().eq_ignore_ascii_case(RESERVED_WEB_SEARCH) {
            return Err(ToolsetError::Reserved { name: tool.name().to_owned() });
        }
        self.insert(tool, false).map(|_| self)
    }

    /// Register a tool whose calls may take at most `timeout`, whatever the
    /// tool itself declares.
    pub fn add_with_timeout(
        &mut self,
        tool: impl Tool + 'static,
        timeout: Duration,
    ) -> Result<&mut Self, ToolsetError> {
        let name = tool.name().to_ascii_lowercase();
        self.add(tool)?;
        if let Some(&index) = self.index.get(&name) {
            self.tools[index].timeout = Some(timeout);
        }
        Ok(self)
    }

    /// The same toolset with `tool` added, for building in one expression.
    pub fn with(mut self, tool: impl Tool + 'static) -> Result<Self, ToolsetError> {
        self.add(tool)?;
        Ok(self)
    }

    /// Register a tool in place of the one with the same name (ignoring
    /// case), returning the one it replaced; adds it if there was none.
    pub fn replace(&mut self, tool: impl Tool + 'static) -> Result<Option<Arc<dyn Tool>>, ToolsetError> {
        let tool: Arc<dyn Tool> = Arc::new(tool);
        if tool.name().eq_ignore_ascii_case(RESERVED_WEB_SEARCH) {
            return Err(ToolsetError::Reserved { name: tool.name().to_owned() });
        }
        self.insert(tool, true)
    }

    /// Record the provider-native web search; its fallback function, if any,
    /// is registered under `web_search`. Replaces an earlier entry.
    pub fn add_web_search(&mut self, search: WebSearch) -> Result<&mut Self, ToolsetError> {
        self.remove(RESERVED_WEB_SEARCH);
        if let Some(fallback) = &search.fallback {
            let named: Arc<dyn Tool> = if fallback.name() == RESERVED_WEB_SEARCH {
                Arc::clone(fallback)
            } else {
                Arc::new(crate::Renamed::new(Arc::clone(fallback)).with_name(RESERVED_WEB_SEARCH))
            };
            self.insert(named, false)?;
        }
        self.web_search = Some(search);
        Ok(self)
    }

    /// The native web search entry, if one was added.
    pub fn web_search(&self) -> Option<&WebSearch> {
        self.web_search.as_ref()
    }

    /// Remove the tool with this name (ignoring case). `web_search` also
    /// removes the native search entry, which has no function to return.
    pub fn remove(&mut self, name: &str) -> Option<Arc<dyn Tool>> {
        if name.eq_ignore_ascii_case(RESERVED_WEB_SEARCH) {
            self.web_search = None;
        }
        let index = self.index.remove(&name.to_ascii_lowercase())?;
        let removed = self.tools.remove(index);
        for slot in self.index.values_mut() {
            if *slot > index {
                *slot -= 1;
            }
        }
        Some(removed.tool)
    }

    /// The tool with this name, ignoring case.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.entry(name).map(|entry| &entry.tool)
    }

    /// The registration under this name, ignoring case; the exact name is
    /// tried first so the common call allocates nothing.
    pub(super) fn entry(&self, name: &str) -> Option<&Entry> {
        // A short list is scanned faster than a name is hashed.
        if self.tools.len() <= LINEAR_LOOKUP {
            return self.tools.iter().find(|entry| entry.name.eq_ignore_ascii_case(name));
        }
        let index = match self.index.get(name) {
            Some(index) => *index,
            None => *self.index.get(&name.to_ascii_lowercase())?,
        };
        self.tools.get(index)
    }

    /// The registrations in order, for the executor.
    pub(super) fn entries(&self) -> &[Entry] {
        &self.tools
    }

    /// The tools in registration order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Arc<dyn Tool>> {
        self.tools.iter().map(|entry| &entry.tool)
    }

    /// The tools' display names in registration order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.tools.iter().map(|entry| entry.tool.name())
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    fn insert(&mut self, tool: Arc<dyn Tool>, replace: bool) -> Result<Option<Arc<dyn Tool>>, ToolsetError> {
        validate_name(tool.name())?;
        if tool.parameters().get("type").and_then(serde_json::Value::as_str) != Some("object") {
            return Err(ToolsetError::NotAnObject { name: tool.name().to_owned() });
        }
        let key = tool.name().to_ascii_lowercase();
        let entry = Entry { name: Arc::from(tool.name()), tool, timeout: None, counters: Arc::default() };
        match self.index.get(&key) {
            Some(&index) if replace => Ok(Some(std::mem::replace(&mut self.tools[index], entry).tool)),
            Some(&index) => Err(ToolsetError::Duplicate {
                existing: self.tools[index].tool.name().to_owned(),
                new: entry.tool.name().to_owned(),
            }),
            None => {
                self.index.insert(key, self.tools.len());
                self.tools.push(entry);
                Ok(None)
            }
        }
    }
}

impl std::fmt::Debug for Toolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolset")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("web_search", &self.web_search)
            .field("default_timeout", &self.default_timeout)
            .field("max_concurrency", &self.max_concurrency)
            .field("observers", &self.observers.len())
            .finish()
    }
}
