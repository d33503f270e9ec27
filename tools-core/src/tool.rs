//! The `Tool` trait: what a toolset holds and a model calls.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::{Annotations, JsonObject, Output, ToolContext, ToolError};

/// The future a [`Tool::call`] returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<String, ToolError>> + Send + 'a>>;

/// The future a [`Tool::call_output`] returns.
pub type OutputFuture<'a> = Pin<Box<dyn Future<Output = Result<Output, ToolError>> + Send + 'a>>;

/// A tool a model can call: a name, a description for the prompt, a JSON
/// Schema of its arguments, and a call from the raw argument string to the
/// content string.
///
/// Object-safe, so a toolset holds `Arc<dyn Tool>`; `Send + Sync`, because
/// all calls of one model turn run at once. Most tools do not implement this
/// directly: they implement [`TypedTool`](crate::TypedTool) (or use
/// `#[tool]`), whose JSON adapter implements `Tool` for them.
///
/// ```
/// use tools_core::{JsonObject, Tool, ToolContext, ToolFuture};
///
/// /// Echoes its raw arguments: a tool with no typed layer.
/// struct Echo(JsonObject);
///
/// impl Tool for Echo {
///     fn name(&self) -> &str { "echo" }
///     fn description(&self) -> &str { "Repeat the arguments." }
///     fn parameters(&self) -> &JsonObject { &self.0 }
///     fn call<'a>(&'a self, _ctx: &'a ToolContext, input: &'a str) -> ToolFuture<'a> {
///         Box::pin(async move { Ok(input.to_owned()) })
///     }
/// }
///
/// let tool: std::sync::Arc<dyn Tool> = std::sync::Arc::new(Echo(JsonObject::new()));
/// let out = futures::executor::block_on(tool.call(&ToolContext::new(), "hi")).unwrap();
/// assert_eq!(out, "hi");
/// ```
pub trait Tool: Send + Sync {
    /// The name the model calls it by; it must match `^[a-zA-Z0-9_-]{1,64}$`.
    fn name(&self) -> &str;

    /// The description injected into the prompt.
    fn description(&self) -> &str;

    /// The JSON Schema of the arguments: built once, borrowed on every call.
    fn parameters(&self) -> &JsonObject;

    /// Run one call with the raw argument string the model sent: its text.
    fn call<'a>(&'a self, ctx: &'a ToolContext, input: &'a str) -> ToolFuture<'a>;

    /// Run one call for its whole [`Output`]: the text, and the parts and
    /// artifact beyond it. What a toolset runs; by default the text of
    /// [`Tool::call`]. A tool with images or files to show implements this
    /// (a typed tool returning [`Output`] does).
    fn call_output<'a>(&'a self, ctx: &'a ToolContext, input: &'a str) -> OutputFuture<'a> {
        let call = self.call(ctx, input);
        Box::pin(async move { call.await.map(Output::text) })
    }

    /// Hints for MCP clients (title, read-only, destructive...).
    fn annotations(&self) -> &Annotations {
        &Annotations::NONE
    }

    /// How long one call may take; `None` leaves it to the caller.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Whether every call waits for a person's approval before it runs
    /// (`#[tool(needs_approval)]`); a toolset can require it of more calls
    /// ([`Toolset::require_approval`](crate::Toolset::require_approval)).
    fn needs_approval(&self) -> bool {
        false
    }

    /// The JSON Schema of the content, when the content is a JSON object of
    /// a known shape (MCP's `outputSchema`); `None` for free text.
    fn output_schema(&self) -> Option<&JsonObject> {
        None
    }

    /// Example arguments that show the model how to call the tool
    /// (`#[tool(example = ...)]`); each must fit the schema, which the
    /// provider formats check when they build the definitions.
    fn examples(&self) -> &[Value] {
        &[]
    }
}

impl<T: Tool + ?Sized> Tool for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn description(&self) -> &str {
        (**self).description()
    }
    fn parameters(&self) -> &JsonObject {
        (**self).parameters()
    }
    fn call<'a>(&'a self, ctx: &'a ToolContext, input: &'a str) -> ToolFuture<'a> {
        (**self).call(ctx, input)
    }
    fn call_output<'a>(&'a self, ctx: &'a ToolContext, input: &'a str) -> OutputFuture<'a> {
        (**self).call_output(ctx, input)
    }
    fn annotations(&self) -> &Annotations {
        (**self).annotations()
    }
    fn timeout(&self) -> Option<Duration> {
        (**self).timeout()
    }
    fn needs_approval(&self) -> bool {
        (**self).needs_approval()
    }
    fn output_schema(&self) -> Option<&JsonObject> {
        (**self).output_schema()
    }
    fn examples(&self) -> &[Value] {
        (**self).examples()
    }
}
