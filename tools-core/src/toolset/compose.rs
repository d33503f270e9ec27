//! Toolsets composed: merged into one, filtered, prefixed, one tool renamed
//! or re-described. Names stay stable (the same inputs give the same names,
//! in registration order) and the ones composition makes are lower-cased.
//! Nothing is lost on the way: a tool keeps its registration's options, its
//! call counters, and every approval that held it.

use std::collections::HashSet;
use std::sync::Arc;

use super::approval::ToolRule;
use super::names::{RESERVED_WEB_SEARCH, is_reserved, validate_name};
use super::{Entry, Toolset, ToolsetError};
use crate::{Renamed, Tool};

impl Toolset {
    /// The same toolset under a label that names it in errors: every tool
    /// registered in it, before or after, is labeled `source` unless it
    /// came with a label of its own (from a toolset merged into this one).
    ///
    /// ```
    /// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Named(ToolSpec);
    /// # impl Tool for Named {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// # fn tool(name: &'static str) -> Named {
    /// #     Named(ToolSpec::from_parameters(name, "", Parameters::of::<()>()))
    /// # }
    /// use toolcall_core::Toolset;
    ///
    /// # fn main() -> Result<(), toolcall_core::toolset::ToolsetError> {
    /// let github = Toolset::builder().add(tool("search")).build()?.with_source("github");
    /// let docs = Toolset::builder().add(tool("search")).build()?.with_source("docs");
    /// assert_eq!(github.source_of("search"), Some("github"));
    /// let err = Toolset::builder().merge(docs).merge(github).build().unwrap_err();
    /// assert!(err.to_string().starts_with("tool `search` from `github` collides with `search` from `docs`"));
    /// # Ok(()) }
    /// ```
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        let source: Arc<str> = Arc::from(source.into());
        for entry in self.tools.iter_mut().filter(|entry| entry.source.is_none()) {
            entry.source = Some(Arc::clone(&source));
        }
        self.source = Some(source);
        self
    }

    /// This toolset's label ([`Toolset::with_source`]).
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// The label of the toolset the tool with this name (ignoring case) was
    /// registered in; `None` if there is no such tool, or its toolset had
    /// no label.
    ///
    /// ```
    /// use toolcall_core::Toolset;
    /// assert_eq!(Toolset::new().with_source("github").source_of("search"), None);
    /// ```
    pub fn source_of(&self, name: &str) -> Option<&str> {
        self.entry(name).and_then(|entry| entry.source.as_deref())
    }

    /// Move every tool of `other` into this toolset, after its own, in
    /// order. A name that collides (ignoring case) with one already here is
    /// an error naming both tools and the toolsets they came from
    /// ([`Toolset::with_source`]), and nothing is merged: the merge is all
    /// or nothing.
    ///
    /// A merged tool keeps its registration's options (timeout, layers,
    /// approval predicate), its call counters and its label. What `other`
    /// said about all its tools keeps holding for them, and only for them:
    /// its layers wrap their calls (inside this toolset's layers), its
    /// observers hear their calls (after this toolset's), its default
    /// timeout bounds the ones without a timeout of their own, its prepare
    /// steps decide when the model sees them ([`Toolset::prepared`]), and a
    /// tool its approval rules picked stays held. Approval stays fail-closed:
    /// a call that waited for approval in `other` waits here too, and this
    /// toolset's own rules apply to the merged tools as well. The turn-level
    /// [`TurnOptions::max_concurrency`](super::TurnOptions::max_concurrency)
    /// is this toolset's; `other`'s count of unknown names is not carried
    /// over. `other`'s native web search moves here; if both have one, that
    /// is a collision on `web_search`.
    ///
    /// ```
    /// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Named(ToolSpec);
    /// # impl Tool for Named {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// # fn tool(name: &'static str) -> Named {
    /// #     Named(ToolSpec::from_parameters(name, "", Parameters::of::<()>()))
    /// # }
    /// use toolcall_core::Toolset;
    ///
    /// # fn main() -> Result<(), toolcall_core::toolset::ToolsetError> {
    /// let mut tools = Toolset::builder().add(tool("search")).build()?.with_source("docs");
    /// let github = Toolset::builder().add(tool("Search")).add(tool("open_issue")).build()?.with_source("github");
    ///
    /// let err = tools.merge(github.clone()).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "tool `Search` from `github` collides with `search` from `docs`: names are compared ignoring case; \
    ///      prefix one toolset (Toolset::prefixed) or rename the tool (Toolset::rename)"
    /// );
    /// assert_eq!(tools.len(), 1); // nothing was merged
    ///
    /// tools.merge(github.prefixed("github")?)?;
    /// assert_eq!(tools.names().collect::<Vec<_>>(), ["search", "github_search", "github_open_issue"]);
    /// assert_eq!(tools.source_of("github_search"), Some("github"));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ToolsetError::Collision`] when a tool of `other` has the name (ignoring case) of one
    /// here, or both have a native web search; nothing is merged. Prefix one toolset
    /// ([`Toolset::prefixed`]) or rename the tool ([`Toolset::rename`]) and merge again.
    pub fn merge(&mut self, other: Toolset) -> Result<&mut Self, ToolsetError> {
        if let (Some(_), Some(_)) = (&self.web_search, &other.web_search) {
            let (mine, theirs) = (self.entry(RESERVED_WEB_SEARCH), other.entry(RESERVED_WEB_SEARCH));
            return Err(ToolsetError::Collision {
                new: RESERVED_WEB_SEARCH.to_owned(),
                new_source: label(theirs.map_or(&other.source, |entry| &entry.source)),
                existing: RESERVED_WEB_SEARCH.to_owned(),
                existing_source: label(mine.map_or(&self.source, |entry| &entry.source)),
            });
        }
        // Every check comes before the first change: all or nothing.
        if let Some((new, existing)) =
            other.tools.iter().find_map(|new| self.entry(&new.name).map(|existing| (new, existing)))
        {
            return Err(ToolsetError::Collision {
                new: new.name.to_string(),
                new_source: label(&new.source),
                existing: existing.name.to_string(),
                existing_source: label(&existing.source),
            });
        }
        let Toolset {
            tools,
            web_search,
            tool_search,
            options: run,
            observers,
            layers,
            approval_rules,
            prepare,
            ..
        } = other;
        for mut entry in tools {
            hold_if_picked(&approval_rules, &mut entry);
            let options = &mut entry.options;
            options.layers.splice(0..0, layers.iter().cloned());
            options.observers.splice(0..0, observers.iter().cloned());
            options.prepare.splice(0..0, prepare.iter().cloned());
            if options.timeout.is_none() && entry.tool.spec().timeout().is_none() {
                options.timeout = run.default_timeout;
            }
            self.index.insert(entry.name.to_ascii_lowercase(), self.tools.len());
            self.tools.push(entry);
        }
        if web_search.is_some() {
            self.web_search = web_search;
        }
        // Tool search is on for the whole toolset or for none of it: the
        // merged toolset's setting joins when this one has none, and the
        // tools it kept loaded stay loaded.
        self.tool_search = match (self.tool_search.take(), tool_search) {
            (Some(mine), Some(theirs)) => Some(mine.with_loaded_of(&theirs)),
            (mine, theirs) => mine.or(theirs),
        };
        Ok(self)
    }

    /// The tools `keep` says yes to, in order, each with its options and
    /// counters; the toolset's layers, observers, rules and options stay.
    /// The native web search follows its fallback function when it has one
    /// (the predicate judges that); without one there is no tool to judge,
    /// and it stays ([`Toolset::without`] removes it).
    ///
    /// ```
    /// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Named(ToolSpec);
    /// # impl Tool for Named {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// # fn tool(name: &'static str) -> Named {
    /// #     Named(ToolSpec::from_parameters(name, "", Parameters::of::<()>()))
    /// # }
    /// use toolcall_core::Toolset;
    ///
    /// # fn main() -> Result<(), toolcall_core::toolset::ToolsetError> {
    /// let tools = Toolset::builder().add(tool("get_issue")).add(tool("delete_repo")).build()?;
    /// let safe = tools.filtered(|tool| !tool.spec().name().starts_with("delete_"));
    /// assert_eq!(safe.names().collect::<Vec<_>>(), ["get_issue"]);
    /// # Ok(()) }
    /// ```
    pub fn filtered(mut self, mut keep: impl FnMut(&dyn Tool) -> bool) -> Self {
        self.retain(|entry| keep(&*entry.tool));
        self
    }

    /// Only the tools with these names (ignoring case), in registration
    /// order. A name no tool has is an error listing the ones there are: a
    /// misspelt name would otherwise leave the model without its tool.
    ///
    /// ```
    /// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Named(ToolSpec);
    /// # impl Tool for Named {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// # fn tool(name: &'static str) -> Named {
    /// #     Named(ToolSpec::from_parameters(name, "", Parameters::of::<()>()))
    /// # }
    /// use toolcall_core::Toolset;
    ///
    /// # fn main() -> Result<(), toolcall_core::toolset::ToolsetError> {
    /// let tools = Toolset::builder().add(tool("a")).add(tool("b")).add(tool("c")).build()?;
    /// assert_eq!(tools.clone().only(["c", "A"])?.names().collect::<Vec<_>>(), ["a", "c"]);
    /// let err = tools.only(["d"]).unwrap_err();
    /// assert!(err.to_string().contains("the tools are: a, b, c"), "{err}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ToolsetError::Unknown`], listing the tools there are, when a name matches no tool (nor
    /// the native web search, for `web_search`).
    pub fn only<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Result<Self, ToolsetError> {
        let mut wanted = HashSet::new();
        for name in names {
            let key = name.as_ref().to_ascii_lowercase();
            let native = key == RESERVED_WEB_SEARCH && self.web_search.is_some();
            if !native && !self.index.contains_key(&key) {
                return Err(self.unknown(name.as_ref()));
            }
            wanted.insert(key);
        }
        if !wanted.contains(RESERVED_WEB_SEARCH) {
            self.web_search = None;
        }
        self.retain(|entry| wanted.contains(&*entry.name.to_ascii_lowercase()));
        Ok(self)
    }

    /// Every tool but the ones with these names (ignoring case); `web_search`
    /// removes the native web search too. A name no tool has is already
    /// left out, and is not an error.
    ///
    /// ```
    /// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Named(ToolSpec);
    /// # impl Tool for Named {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// # fn tool(name: &'static str) -> Named {
    /// #     Named(ToolSpec::from_parameters(name, "", Parameters::of::<()>()))
    /// # }
    /// use toolcall_core::Toolset;
    ///
    /// # fn main() -> Result<(), toolcall_core::toolset::ToolsetError> {
    /// let tools = Toolset::builder().add(tool("a")).add(tool("b")).build()?;
    /// assert_eq!(tools.without(["B", "z"]).names().collect::<Vec<_>>(), ["a"]);
    /// # Ok(()) }
    /// ```
    pub fn without<S: AsRef<str>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        let dropped: HashSet<String> =
            names.into_iter().map(|name| name.as_ref().to_ascii_lowercase()).collect();
        if dropped.contains(RESERVED_WEB_SEARCH) {
            self.web_search = None;
        }
        self.retain(|entry| !dropped.contains(&*entry.name.to_ascii_lowercase()));
        self
    }

    /// Every tool under the name `<prefix>_<name>`, lower-cased (no `_` is
    /// added after a prefix that ends in `_` or `-`; an empty prefix changes
    /// nothing): e.g. every tool of one MCP server as `github_*`. Calls by
    /// the new name reach the tool, whose own `call` never sees the prefix:
    /// its context's [`tool_name`](crate::ToolContext::tool_name) is its own
    /// name. Layers, observers and results see the name it is called by.
    ///
    /// A name the prefix makes invalid (too long, or a character outside
    /// `a-z 0-9 _ -`) is an error naming the tool, and nothing is renamed.
    /// A toolset with the native web search is refused: `web_search` keeps
    /// its reserved name, so prefix the toolset before adding web search, or
    /// add it to the toolset this one is merged into. A tool an approval
    /// rule picked by its old name stays held.
    ///
    /// ```
    /// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Named(ToolSpec);
    /// # impl Tool for Named {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// # fn tool(name: &'static str) -> Named {
    /// #     Named(ToolSpec::from_parameters(name, "", Parameters::of::<()>()))
    /// # }
    /// use toolcall_core::Toolset;
    ///
    /// # fn main() -> Result<(), toolcall_core::toolset::ToolsetError> {
    /// let tools = Toolset::builder().add(tool("Search")).add(tool("get_issue")).build()?;
    /// let github = tools.clone().prefixed("GitHub")?;
    /// assert_eq!(github.names().collect::<Vec<_>>(), ["github_search", "github_get_issue"]);
    ///
    /// let err = tools.prefixed("git hub").unwrap_err();
    /// assert!(err.to_string().starts_with("the prefix `git hub` gives tool `Search` an invalid name"), "{err}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ToolsetError::WebSearchName`] when the toolset has the native web search;
    /// [`ToolsetError::InvalidPrefix`] when a prefixed name breaks the naming rules, and
    /// [`ToolsetError::Reserved`] when it is a reserved name. Nothing is renamed.
    pub fn prefixed(mut self, prefix: &str) -> Result<Self, ToolsetError> {
        if prefix.is_empty() {
            return Ok(self);
        }
        if self.web_search.is_some() {
            return Err(ToolsetError::WebSearchName { prefix: Some(prefix.to_owned()) });
        }
        let separator = if prefix.ends_with(['_', '-']) { "" } else { "_" };
        let names = self
            .tools
            .iter()
            .map(|entry| {
                let name = format!("{prefix}{separator}{}", entry.name).to_ascii_lowercase();
                match validate_name(&name) {
                    Ok(()) if is_reserved(&name) => Err(ToolsetError::Reserved { name }),
                    Ok(()) => Ok(name),
                    Err(error) => Err(ToolsetError::InvalidPrefix {
                        prefix: prefix.to_owned(),
                        tool: entry.name.to_string(),
                        error,
                    }),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (entry, name) in self.tools.iter_mut().zip(names) {
            hold_if_picked(&self.approval_rules, entry);
            let description = entry.tool.spec().description().to_owned();
            entry.present(&name, &description);
        }
        self.reindex();
        Ok(self)
    }

    /// Call the tool named `name` (ignoring case) by `new_name`, lower-cased;
    /// its description, schema, options and counters stay, and its own
    /// `call` still sees its own name. An unknown name, a `new_name` that
    /// breaks the naming rules or is another tool's, and `web_search` on
    /// either side are errors, and nothing changes.
    ///
    /// ```
    /// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Named(ToolSpec);
    /// # impl Tool for Named {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// # fn tool(name: &'static str) -> Named {
    /// #     Named(ToolSpec::from_parameters(name, "Look it up.", Parameters::of::<()>()))
    /// # }
    /// use toolcall_core::Toolset;
    ///
    /// # fn main() -> Result<(), toolcall_core::toolset::ToolsetError> {
    /// let mut tools = Toolset::builder().add(tool("search")).add(tool("fetch")).build()?;
    /// tools.rename("search", "Find_Docs")?.redescribe("find_docs", "Search the product docs.")?;
    /// assert_eq!(tools.names().collect::<Vec<_>>(), ["find_docs", "fetch"]);
    /// assert_eq!(tools.get("find_docs").unwrap().spec().description(), "Search the product docs.");
    /// assert!(tools.rename("fetch", "find_docs").is_err()); // taken
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ToolsetError::Unknown`] when no tool has `name`, [`ToolsetError::WebSearchName`] when
    /// it is `web_search`; [`ToolsetError::InvalidName`] when `new_name` breaks the naming
    /// rules, [`ToolsetError::Reserved`] when it is reserved, [`ToolsetError::Duplicate`] when taken.
    pub fn rename(&mut self, name: &str, new_name: &str) -> Result<&mut Self, ToolsetError> {
        let at = self.position(name)?;
        let new_name = new_name.to_ascii_lowercase();
        validate_name(&new_name)?;
        if self.tools[at].name.eq_ignore_ascii_case(RESERVED_WEB_SEARCH) {
            return Err(ToolsetError::WebSearchName { prefix: None });
        }
        if is_reserved(&new_name) {
            return Err(ToolsetError::Reserved { name: new_name });
        }
        if let Some(&taken) = self.index.get(&new_name)
            && taken != at
        {
            return Err(ToolsetError::Duplicate {
                existing: self.tools[taken].name.to_string(),
                new: new_name,
            });
        }
        let entry = &mut self.tools[at];
        hold_if_picked(&self.approval_rules, entry);
        let description = entry.tool.spec().description().to_owned();
        entry.present(&new_name, &description);
        self.reindex();
        Ok(self)
    }

    /// Describe the tool named `name` (ignoring case) to the model with
    /// `description` instead of its own; an unknown name is an error
    /// listing the tools there are. See [`Toolset::rename`].
    ///
    /// # Errors
    ///
    /// [`ToolsetError::Unknown`], listing the tools there are, when no tool has `name`.
    pub fn redescribe(
        &mut self,
        name: &str,
        description: impl Into<String>,
    ) -> Result<&mut Self, ToolsetError> {
        let at = self.position(name)?;
        let entry = &mut self.tools[at];
        hold_if_picked(&self.approval_rules, entry);
        let name = Arc::clone(&entry.name);
        entry.present(&name, &description.into());
        Ok(self)
    }

    /// Keep the entries `keep` says yes to; the native web search goes with
    /// its fallback function.
    pub(super) fn retain(&mut self, keep: impl FnMut(&Entry) -> bool) {
        self.tools.retain(keep);
        if self.web_search.as_ref().is_some_and(|search| search.fallback.is_some())
            && !self.tools.iter().any(|entry| entry.name.eq_ignore_ascii_case(RESERVED_WEB_SEARCH))
        {
            self.web_search = None;
        }
        self.reindex();
    }

    /// Where the tool with this name is, or an error listing the tools.
    fn position(&self, name: &str) -> Result<usize, ToolsetError> {
        self.index.get(&name.to_ascii_lowercase()).copied().ok_or_else(|| self.unknown(name))
    }

    fn unknown(&self, name: &str) -> ToolsetError {
        ToolsetError::Unknown { name: name.to_owned(), available: self.names().map(str::to_owned).collect() }
    }
}

impl Entry {
    /// Show the tool under `name` and `description`: the registered tool
    /// itself when they are its own, else one [`Renamed`] around it (never
    /// a wrapper around a wrapper).
    fn present(&mut self, name: &str, description: &str) {
        let own = &self.own;
        let renamed = name != own.spec().name();
        let redescribed = description != own.spec().description();
        self.tool = if renamed || redescribed {
            let mut shown = Renamed::new(Arc::clone(own));
            if renamed {
                shown = shown.with_name(name.to_owned());
            }
            if redescribed {
                shown = shown.with_description(description.to_owned());
            }
            Arc::new(shown)
        } else {
            Arc::clone(own)
        };
        self.name = Arc::from(name);
    }
}

/// Composition never clears an approval: a tool one of `rules` picks as it
/// is now stays held, whatever its name, description or toolset becomes.
fn hold_if_picked(rules: &[ToolRule], entry: &mut Entry) {
    if !entry.options.held && rules.iter().any(|rule| rule(&*entry.tool)) {
        entry.options.held = true;
    }
}

fn label(source: &Option<Arc<str>>) -> Option<String> {
    source.as_deref().map(str::to_owned)
}

/// A toolset as a collision names it: its label, or what it is to the merge.
pub(super) fn origin(source: Option<&str>, unlabeled: &str) -> String {
    match source {
        Some(source) => format!("`{source}`"),
        None => unlabeled.to_owned(),
    }
}

/// The names there are, for an error about one that is not.
pub(super) fn listing(available: &[String]) -> String {
    if available.is_empty() {
        "the toolset is empty".to_owned()
    } else {
        format!("the tools are: {}", available.join(", "))
    }
}

/// Why `web_search` keeps its name.
pub(super) fn reserved_web_search(prefix: Option<&str>) -> String {
    match prefix {
        Some(prefix) => format!(
            "the prefix `{prefix}` cannot apply to this toolset: its provider-native `web_search` keeps its \
             reserved name; prefix the toolset before Toolset::add_web_search, or add web search to the \
             toolset it is merged into"
        ),
        None => "the provider-native `web_search` keeps its reserved name and cannot be renamed; remove it \
                 (Toolset::remove) and register its fallback as a tool of its own"
            .to_owned(),
    }
}
