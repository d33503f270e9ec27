//! Many tools into one toolset, with one `?` at the end.

use super::{ToolOptions, Toolset, ToolsetError, WebSearch};
use crate::Tool;

/// Registers many tools in one expression: every step is kept, and
/// [`build`](Self::build) returns the first registration that was refused.
/// The toolset's settings (layers, observers, approval rules, prepare
/// steps, run options, tool search, its label) are its `with_*` methods,
/// one spelling each, on the toolset it builds.
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
/// use toolcall_core::toolset::{ToolOptions, Toolset};
///
/// # fn main() -> Result<(), toolcall_core::toolset::ToolsetError> {
/// let tools = Toolset::builder()
///     .add(tool("search"))
///     .add_with(tool("slow_report"), ToolOptions::new().with_timeout(std::time::Duration::from_secs(60)))
///     .build()?;
/// assert_eq!(tools.len(), 2);
/// let err = Toolset::builder().add(tool("search")).add(tool("Search")).build().unwrap_err();
/// assert!(err.to_string().contains("collides"), "{err}");
/// # Ok(()) }
/// ```
#[derive(Debug, Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ToolsetBuilder {
    toolset: Toolset,
    error: Option<ToolsetError>,
}

impl Toolset {
    /// Build a toolset from many tools with one `?` ([`ToolsetBuilder`]).
    pub fn builder() -> ToolsetBuilder {
        ToolsetBuilder::default()
    }
}

impl ToolsetBuilder {
    /// Register a tool ([`Toolset::add`]).
    #[expect(clippy::should_implement_trait, reason = "named as `Toolset::add`, whose step it is")]
    pub fn add(self, tool: impl Tool + 'static) -> Self {
        self.add_with(tool, ToolOptions::new())
    }

    /// Register a tool with options of its own ([`Toolset::add_with`]).
    pub fn add_with(self, tool: impl Tool + 'static, options: ToolOptions) -> Self {
        self.step(|toolset| toolset.add_with(tool, options).map(drop))
    }

    /// Record the native web search ([`Toolset::add_web_search`]).
    pub fn add_web_search(self, search: WebSearch) -> Self {
        self.step(|toolset| toolset.add_web_search(search).map(drop))
    }

    /// Merge another toolset's tools ([`Toolset::merge`]): a collision is
    /// the builder's error.
    pub fn merge(self, other: Toolset) -> Self {
        self.step(|toolset| toolset.merge(other).map(drop))
    }

    /// The toolset, or the first registration that was refused.
    ///
    /// # Errors
    ///
    /// The first step's error, as the [`Toolset`] method of the same name returned it (e.g.
    /// [`ToolsetError::Duplicate`] for a name registered twice); later steps were skipped.
    pub fn build(self) -> Result<Toolset, ToolsetError> {
        match self.error {
            Some(error) => Err(error),
            None => Ok(self.toolset),
        }
    }

    /// One step, skipped once a step has failed: the first error is the
    /// one worth reading, the later ones may follow from it.
    fn step(mut self, apply: impl FnOnce(&mut Toolset) -> Result<(), ToolsetError>) -> Self {
        if self.error.is_none()
            && let Err(error) = apply(&mut self.toolset)
        {
            self.error = Some(error);
        }
        self
    }
}
