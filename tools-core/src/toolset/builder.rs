//! Many tools into one toolset, with one `?` at the end.

use super::{Layer, Observer, RunOptions, ToolOptions, Toolset, ToolsetError, WebSearch};
use crate::{Tool, ToolContext};

/// Builds a [`Toolset`] in one expression: every step is kept, and
/// [`build`](Self::build) returns the first registration that was refused.
///
/// ```
/// # use tools_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
/// # struct Named(ToolSpec);
/// # impl Tool for Named {
/// #     fn spec(&self) -> &ToolSpec { &self.0 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
/// # }
/// # fn tool(name: &'static str) -> Named {
/// #     Named(ToolSpec::from_parameters(name, "", Parameters::of::<()>()))
/// # }
/// use tools_core::toolset::{ToolOptions, Toolset};
///
/// # fn main() -> Result<(), tools_core::toolset::ToolsetError> {
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
    pub fn web_search(self, search: WebSearch) -> Self {
        self.step(|toolset| toolset.add_web_search(search).map(drop))
    }

    /// Add an observer ([`Toolset::add_observer`]).
    pub fn observer(self, observer: impl Observer + 'static) -> Self {
        self.step(|toolset| {
            toolset.add_observer(observer);
            Ok(())
        })
    }

    /// Add a layer around every call ([`Toolset::add_layer`]).
    pub fn layer(self, layer: impl Layer + 'static) -> Self {
        self.step(|toolset| {
            toolset.add_layer(layer);
            Ok(())
        })
    }

    /// Hold the calls of the tools `rule` picks for approval
    /// ([`Toolset::require_approval`]).
    pub fn require_approval(self, rule: impl Fn(&dyn Tool) -> bool + Send + Sync + 'static) -> Self {
        self.step(|toolset| {
            toolset.require_approval(rule);
            Ok(())
        })
    }

    /// Merge another toolset's tools ([`Toolset::merge`]): a collision is
    /// the builder's error.
    pub fn merge(self, other: Toolset) -> Self {
        self.step(|toolset| toolset.merge(other).map(drop))
    }

    /// Label the toolset ([`Toolset::with_source`]), its tools before and after.
    pub fn source(mut self, source: impl Into<String>) -> Self {
        self.toolset = std::mem::take(&mut self.toolset).with_source(source);
        self
    }

    /// Show a tool in a turn only when `step` says so ([`Toolset::add_prepare`]).
    pub fn prepare(self, step: impl Fn(&ToolContext, &dyn Tool) -> bool + Send + Sync + 'static) -> Self {
        self.step(|toolset| {
            toolset.add_prepare(step);
            Ok(())
        })
    }

    /// Run the turns with these options ([`Toolset::with_options`]).
    pub fn options(self, options: RunOptions) -> Self {
        self.step(|toolset| {
            toolset.options = options;
            Ok(())
        })
    }

    /// The toolset, or the first registration that was refused.
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
