//! Rename or re-describe any tool without touching its code.

use std::borrow::Cow;
use std::time::Duration;

use crate::{Annotations, JsonObject, Tool, ToolContext, ToolFuture};

/// A tool under another name or description; everything else (schema,
/// call, annotations, timeout) is the inner tool's. Useful to register a
/// third-party tool under a name that fits the rest of a toolset.
///
/// ```
/// use tools_core::{Renamed, Tool};
/// # use tools_core::{JsonObject, ToolContext, ToolFuture};
/// # struct Search(JsonObject);
/// # impl Tool for Search {
/// #     fn name(&self) -> &str { "search" }
/// #     fn description(&self) -> &str { "Search." }
/// #     fn parameters(&self) -> &JsonObject { &self.0 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> ToolFuture<'a> { Box::pin(async { Ok(String::new()) }) }
/// # }
/// let tool = Renamed::new(Search(JsonObject::new())).with_name("docs_search").with_description("Search the docs.");
/// assert_eq!((tool.name(), tool.description()), ("docs_search", "Search the docs."));
/// ```
pub struct Renamed<T> {
    inner: T,
    name: Option<Cow<'static, str>>,
    description: Option<Cow<'static, str>>,
}

impl<T: Tool> Renamed<T> {
    /// The tool as it is, ready to be renamed.
    pub fn new(inner: T) -> Self {
        Self { inner, name: None, description: None }
    }

    /// Call it by this name.
    pub fn with_name(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Describe it with this text.
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The tool inside.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: Tool> Tool for Renamed<T> {
    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or_else(|| self.inner.name())
    }
    fn description(&self) -> &str {
        self.description.as_deref().unwrap_or_else(|| self.inner.description())
    }
    fn parameters(&self) -> &JsonObject {
        self.inner.parameters()
    }
    fn call<'a>(&'a self, ctx: &'a ToolContext, input: &'a str) -> ToolFuture<'a> {
        self.inner.call(ctx, input)
    }
    fn annotations(&self) -> &Annotations {
        self.inner.annotations()
    }
    fn timeout(&self) -> Option<Duration> {
        self.inner.timeout()
    }
    fn needs_approval(&self) -> bool {
        self.inner.needs_approval()
    }
    fn examples(&self) -> &[serde_json::Value] {
        self.inner.examples()
    }
    fn output_schema(&self) -> Option<&JsonObject> {
        self.inner.output_schema()
    }
}
