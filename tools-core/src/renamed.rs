//! Rename or re-describe any tool without touching its code.

use std::borrow::Cow;

use crate::{OutputFuture, Tool, ToolContext, ToolSpec};

/// A tool shown with another spec: under another name or description;
/// the call is the inner tool's, whole (its text, parts and artifact).
/// Useful to register a third-party tool under a name that fits the rest
/// of a toolset.
///
/// ```
/// use toolcall_core::{Renamed, Tool};
/// # use toolcall_core::{Output, OutputFuture, Parameters, ToolContext, ToolSpec};
/// # struct Search(ToolSpec);
/// # impl Tool for Search {
/// #     fn spec(&self) -> &ToolSpec { &self.0 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
/// # }
/// # let search = Search(ToolSpec::from_parameters("search", "Search.", Parameters::of::<()>()));
/// let tool = Renamed::new(search).with_name("docs_search").with_description("Search the docs.");
/// assert_eq!((tool.spec().name(), tool.spec().description()), ("docs_search", "Search the docs."));
/// ```
pub struct Renamed<T> {
    inner: T,
    spec: ToolSpec,
}

impl<T> std::fmt::Debug for Renamed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renamed").field("spec", &self.spec).finish_non_exhaustive()
    }
}

impl<T: Tool> Renamed<T> {
    /// The tool as it is, ready to be renamed.
    pub fn new(inner: T) -> Self {
        let spec = inner.spec().clone();
        Self { inner, spec }
    }

    /// Call it by this name.
    pub fn with_name(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.spec = self.spec.with_name(name);
        self
    }

    /// Describe it with this text.
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.spec = self.spec.with_description(description);
        self
    }

    /// The tool inside.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: Tool> Tool for Renamed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        self.inner.call(ctx, arguments)
    }
}
