//! The `Tool` trait: what a toolset holds and a model calls.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::{Output, ToolContext, ToolError, ToolSpec};

/// The future a [`Tool::call`] returns.
pub type OutputFuture<'a> = Pin<Box<dyn Future<Output = Result<Output, ToolError>> + Send + 'a>>;

/// The future a [`Tool::call_text`] returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<String, ToolError>> + Send + 'a>>;

/// A tool a model can call: what it says about itself (one [`ToolSpec`]:
/// name, description, the JSON Schema of its arguments, annotations,
/// examples, approval, timeout, output schema), and one call from the raw
/// arguments the model sent to its [`Output`].
///
/// Two methods, so a wrapper cannot forget one: it changes the spec and
/// delegates the call. Object-safe, so a toolset holds `Arc<dyn Tool>`;
/// `Send + Sync`, because all calls of one model turn run at once. Most
/// tools do not implement this directly: they implement
/// [`TypedTool`](crate::TypedTool) (or use `#[tool]`), whose JSON adapter
/// implements `Tool` for them.
///
/// ```
/// use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
///
/// /// Echoes its raw arguments: a tool with no typed layer.
/// struct Echo(ToolSpec);
///
/// impl Tool for Echo {
///     fn spec(&self) -> &ToolSpec { &self.0 }
///     fn call<'a>(&'a self, _ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
///         Box::pin(async move { Ok(Output::text(arguments)) })
///     }
/// }
///
/// let spec = ToolSpec::from_parameters("echo", "Repeat the arguments.", Parameters::of::<()>());
/// let tool: std::sync::Arc<dyn Tool> = std::sync::Arc::new(Echo(spec));
/// let out = futures::executor::block_on(tool.call_text(&ToolContext::new(), "hi")).unwrap();
/// assert_eq!(out, "hi");
/// ```
pub trait Tool: Send + Sync {
    /// Everything the tool says about itself: built once, borrowed on
    /// every call.
    fn spec(&self) -> &ToolSpec;

    /// Run one call with the raw argument text the model sent, for its
    /// whole [`Output`]: the text, and the parts and artifact beyond it.
    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a>;

    /// Run one call for its text alone ([`Output::into_text`]): a
    /// convenience over [`Tool::call`], with nothing to implement.
    fn call_text<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> ToolFuture<'a> {
        let call = self.call(ctx, arguments);
        Box::pin(async move { call.await.map(Output::into_text) })
    }
}

impl<T: Tool + ?Sized> Tool for Arc<T> {
    fn spec(&self) -> &ToolSpec {
        (**self).spec()
    }
    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        (**self).call(ctx, arguments)
    }
}
