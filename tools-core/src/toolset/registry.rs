//! Registration, lookup and removal of tools.

use std::sync::Arc;

use super::names::{RESERVED_WEB_SEARCH, validate_name};
use super::{Entry, ToolOptions, Toolset, ToolsetError, TurnOptions, WebSearch, shared};
use crate::{Renamed, Tool};

/// Up to this many tools, a lookup compares names instead of hashing.
const LINEAR_LOOKUP: usize = 8;

impl Toolset {
    /// An empty toolset.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register a tool: a `#[tool]` type, any other `Tool`, or an
    /// `Arc<dyn Tool>` (kept as it is, not wrapped again).
    ///
    /// # Errors
    ///
    /// [`ToolsetError::InvalidName`] when the tool's name breaks the naming rules,
    /// [`ToolsetError::Reserved`] for `web_search` or `tool_search`, [`ToolsetError::NotAnObject`]
    /// when its parameters are no object schema, [`ToolsetError::Duplicate`] when the name is taken.
    pub fn add(&mut self, tool: impl Tool + 'static) -> Result<&mut Self, ToolsetError> {
        self.add_with(tool, ToolOptions::new())
    }

    /// Register a tool with options that take precedence over what the tool
    /// declares (a timeout of this registration's own).
    ///
    /// # Errors
    ///
    /// Those of [`Toolset::add`]: [`ToolsetError::InvalidName`], [`ToolsetError::Reserved`],
    /// [`ToolsetError::NotAnObject`] or [`ToolsetError::Duplicate`].
    pub fn add_with(
        &mut self,
        tool: impl Tool + 'static,
        options: ToolOptions,
    ) -> Result<&mut Self, ToolsetError> {
        let tool = shared(tool);
        refuse_reserved(&*tool)?;
        self.insert(tool, options, false).map(|_| self)
    }

    /// Register a tool in place of the one with the same name (ignoring
    /// case), returning the one it replaced; adds it if there was none.
    ///
    /// # Errors
    ///
    /// [`ToolsetError::InvalidName`] when the tool's name breaks the naming rules,
    /// [`ToolsetError::Reserved`] for `web_search` or `tool_search`, [`ToolsetError::NotAnObject`]
    /// when its parameters are no object schema; a taken name is no error here.
    pub fn replace(&mut self, tool: impl Tool + 'static) -> Result<Option<Arc<dyn Tool>>, ToolsetError> {
        let tool = shared(tool);
        refuse_reserved(&*tool)?;
        self.insert(tool, ToolOptions::new(), true)
    }

    /// Record the provider-native web search; its fallback function, if any,
    /// is registered under `web_search`. Replaces an earlier entry.
    ///
    /// # Errors
    ///
    /// [`ToolsetError::NotAnObject`] when the fallback function's parameters are no object
    /// schema; the earlier `web_search` entry is already removed then.
    pub fn add_web_search(&mut self, search: WebSearch) -> Result<&mut Self, ToolsetError> {
        self.remove(RESERVED_WEB_SEARCH);
        if let Some(fallback) = &search.fallback {
            let named: Arc<dyn Tool> = if fallback.spec().name() == RESERVED_WEB_SEARCH {
                Arc::clone(fallback)
            } else {
                Arc::new(Renamed::new(Arc::clone(fallback)).with_name(RESERVED_WEB_SEARCH))
            };
            self.insert(named, ToolOptions::new(), false)?;
        }
        self.web_search = Some(search);
        Ok(self)
    }

    /// The native web search entry, if one was added.
    pub fn web_search(&self) -> Option<&WebSearch> {
        self.web_search.as_ref()
    }

    /// The same toolset running its turns with these options.
    pub fn with_options(mut self, options: TurnOptions) -> Self {
        self.options = options;
        self
    }

    /// How the executor runs this toolset's turns.
    pub fn options(&self) -> &TurnOptions {
        &self.options
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

    /// The tools in registration order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Arc<dyn Tool>> {
        self.tools.iter().map(|entry| &entry.tool)
    }

    /// The tools' display names in registration order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.tools.iter().map(|entry| entry.tool.spec().name())
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub(super) fn insert(
        &mut self,
        tool: Arc<dyn Tool>,
        options: ToolOptions,
        replace: bool,
    ) -> Result<Option<Arc<dyn Tool>>, ToolsetError> {
        validate_name(tool.spec().name())?;
        if tool.spec().parameters().get("type").and_then(serde_json::Value::as_str) != Some("object") {
            return Err(ToolsetError::NotAnObject { name: tool.spec().name().to_owned() });
        }
        let key = tool.spec().name().to_ascii_lowercase();
        let name: Arc<str> = Arc::from(tool.spec().name());
        let entry = Entry {
            own: Arc::clone(&tool),
            tool,
            own_name: smol_str::SmolStr::from(Arc::clone(&name)),
            name,
            options,
            counters: Arc::default(),
            source: self.source.clone(),
        };
        match self.index.get(&key) {
            Some(&index) if replace => Ok(Some(std::mem::replace(&mut self.tools[index], entry).tool)),
            Some(&index) => Err(ToolsetError::Duplicate {
                existing: self.tools[index].tool.spec().name().to_owned(),
                new: entry.tool.spec().name().to_owned(),
            }),
            None => {
                self.index.insert(key, self.tools.len());
                self.tools.push(entry);
                Ok(None)
            }
        }
    }

    /// Make the lower-cased name to index map again, after entries were
    /// renamed or dropped.
    pub(super) fn reindex(&mut self) {
        self.index =
            self.tools.iter().enumerate().map(|(at, entry)| (entry.name.to_ascii_lowercase(), at)).collect();
    }
}

/// `web_search` is registered only through [`Toolset::add_web_search`].
fn refuse_reserved(tool: &dyn Tool) -> Result<(), ToolsetError> {
    if super::names::is_reserved(tool.spec().name()) {
        return Err(ToolsetError::Reserved { name: tool.spec().name().to_owned() });
    }
    Ok(())
}
