//! Layers around every call: code that runs before the tool, after it, and
//! when it fails, for retries, limits, caches, argument repair and
//! guardrails. The ready ones are in [`crate::layers`].

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::Toolset;
use crate::{Output, OutputFuture, Tool, ToolContext, ToolError};

/// One call as a layer sees it: the tool (its name, schema and
/// annotations), the call's context, its id, and the arguments (the raw text
/// the model sent, or what an outer layer put in its place).
#[derive(Clone, Copy)]
pub struct LayerCall<'a> {
    /// The tool the call is for.
    pub tool: &'a dyn Tool,
    /// The call's context (its id, tool name, deadline and cancellation).
    pub ctx: &'a ToolContext,
    /// The provider's id for the call.
    pub id: &'a str,
    /// The arguments, as raw text: the tool still cleans and checks them.
    pub arguments: &'a str,
}

impl<'a> LayerCall<'a> {
    /// The same call with other arguments.
    pub fn with_arguments<'b>(self, arguments: &'b str) -> LayerCall<'b>
    where
        'a: 'b,
    {
        LayerCall { arguments, ..self }
    }
}

impl std::fmt::Debug for LayerCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LayerCall")
            .field("tool", &self.tool.spec().name())
            .field("id", &self.id)
            .field("arguments", &self.arguments)
            .finish()
    }
}

/// What a layer's before step decides.
#[derive(Debug)]
pub enum Before {
    /// Go on with the arguments as they are.
    Run,
    /// Go on with these arguments instead.
    RunWith(String),
    /// Do not run the tool (nor the layers inside this one): this is the
    /// call's answer.
    Answer(Result<Output, ToolError>),
}

/// What a layer's error step decides about an error from inside it.
#[derive(Debug)]
pub enum OnError {
    /// The call fails with this error (the one it got, or another).
    Fail(ToolError),
    /// Run the layers inside and the tool again, after this pause.
    Rerun(Duration),
    /// Run them again with these arguments.
    RerunWith(String),
    /// The call's answer instead of the error.
    Answer(Result<Output, ToolError>),
}

/// Code around every call of a toolset, or of one tool.
///
/// A layer has three steps, each optional: `before` (may rewrite the
/// arguments, or answer without running the tool), `after` (may change a
/// successful output, or turn it into an error), and `on_error` (may retry,
/// repair the arguments, or answer instead). [`Layer::around`] runs them,
/// and a layer that needs to hold something for the whole call (a permit,
/// a timer) implements `around` itself.
///
/// Order: the toolset's layers in the order they were added, the first
/// outermost, then the tool's own ([`ToolOptions::with_layer`](super::ToolOptions::with_layer)),
/// then the tool. `before` steps run outside in, `after` and `on_error`
/// steps inside out. A layer runs inside the call's timeout and panic
/// guard: a retry does not outlive the timeout, and a panicking layer is
/// that call's [`Outcome::Panicked`](crate::Outcome::Panicked), nothing more.
/// The errors a layer sees are the tool's ([`ToolError`]); timeouts,
/// cancellation and panics end the call around all of them.
///
/// ```
/// use futures::future::BoxFuture;
/// use toolcall_core::toolset::{Before, Layer, LayerCall};
///
/// /// Answers every call of `delete_*` tools without running them.
/// struct NoDeletes;
///
/// impl Layer for NoDeletes {
///     fn before<'a>(&'a self, call: LayerCall<'a>) -> BoxFuture<'a, Before> {
///         let refused = call.tool.spec().name().starts_with("delete_");
///         Box::pin(async move {
///             if refused { Before::Answer(Err(toolcall_core::ToolError::failed("deleting is off"))) } else { Before::Run }
///         })
///     }
/// }
///
/// let tools = toolcall_core::Toolset::new().with_layer(NoDeletes);
/// ```
pub trait Layer: Send + Sync {
    /// Before the call: go on, go on with other arguments, or answer.
    fn before<'a>(&'a self, call: LayerCall<'a>) -> BoxFuture<'a, Before> {
        let _ = call;
        Box::pin(std::future::ready(Before::Run))
    }

    /// After a successful call: the output the call answers with.
    fn after<'a>(&'a self, call: LayerCall<'a>, output: Output) -> BoxFuture<'a, Result<Output, ToolError>> {
        let _ = call;
        Box::pin(std::future::ready(Ok(output)))
    }

    /// After an error from inside: `attempt` counts the runs that failed
    /// before this one (0 on the first).
    fn on_error<'a>(&'a self, call: LayerCall<'a>, error: ToolError, attempt: u32) -> BoxFuture<'a, OnError> {
        let _ = (call, attempt);
        Box::pin(std::future::ready(OnError::Fail(error)))
    }

    /// The whole call: `before`, then `next` (the layers inside and the
    /// tool) until `on_error` stops retrying, then `after`.
    fn around<'a>(&'a self, call: LayerCall<'a>, next: Next<'a>) -> OutputFuture<'a> {
        Box::pin(async move {
            let mut arguments = match self.before(call).await {
                Before::Run => None,
                Before::RunWith(arguments) => Some(arguments),
                Before::Answer(answer) => return answer,
            };
            let mut attempt = 0;
            loop {
                let current = arguments.as_deref().map_or(call, |arguments| call.with_arguments(arguments));
                let error = match next.call(current).await {
                    Ok(output) => return self.after(current, output).await,
                    Err(error) => error,
                };
                match self.on_error(current, error, attempt).await {
                    OnError::Fail(error) => return Err(error),
                    OnError::Answer(answer) => return answer,
                    OnError::Rerun(pause) => {
                        if !pause.is_zero() {
                            tokio::time::sleep(pause).await;
                        }
                    }
                    OnError::RerunWith(repaired) => arguments = Some(repaired),
                }
                attempt = attempt.saturating_add(1);
            }
        })
    }
}

impl<L: Layer + ?Sized> Layer for Arc<L> {
    fn before<'a>(&'a self, call: LayerCall<'a>) -> BoxFuture<'a, Before> {
        (**self).before(call)
    }
    fn after<'a>(&'a self, call: LayerCall<'a>, output: Output) -> BoxFuture<'a, Result<Output, ToolError>> {
        (**self).after(call, output)
    }
    fn on_error<'a>(&'a self, call: LayerCall<'a>, error: ToolError, attempt: u32) -> BoxFuture<'a, OnError> {
        (**self).on_error(call, error, attempt)
    }
    fn around<'a>(&'a self, call: LayerCall<'a>, next: Next<'a>) -> OutputFuture<'a> {
        (**self).around(call, next)
    }
}

impl Toolset {
    /// This toolset with every call wrapped in `layer`, inside the layers
    /// added before it ([`Layer`] has the order).
    pub fn with_layer(mut self, layer: impl Layer + 'static) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }
}

/// What is inside a layer: the layers after it, then the tool.
#[derive(Clone, Copy)]
pub struct Next<'a> {
    outer: &'a [Arc<dyn Layer>],
    inner: &'a [Arc<dyn Layer>],
}

impl<'a> Next<'a> {
    /// The toolset's layers, then the tool's.
    pub(super) fn new(outer: &'a [Arc<dyn Layer>], inner: &'a [Arc<dyn Layer>]) -> Self {
        Self { outer, inner }
    }

    /// Call the rest of the chain (the layers inside, then the tool).
    pub fn call(self, call: LayerCall<'a>) -> OutputFuture<'a> {
        match (self.outer.split_first(), self.inner.split_first()) {
            (Some((layer, outer)), _) => layer.around(call, Next { outer, ..self }),
            (None, Some((layer, inner))) => layer.around(call, Next { outer: &[], inner }),
            (None, None) => call.tool.call(call.ctx, call.arguments),
        }
    }
}

impl std::fmt::Debug for Next<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("layers", &(self.outer.len() + self.inner.len())).finish()
    }
}
