//! The one seam a run's side effects go through: each model request, each
//! turn's tool calls and the wait for a person's decision. The loop decides
//! what to do; an [`Effects`] decides how it happens: here, in this process
//! (the default), or as journaled steps of a durable engine that replays
//! them after a crash (`toolcall-restate`).

use futures::future::BoxFuture;
use toolcall_core::{ToolCall, ToolContext, ToolResult, Toolset};

use crate::{Model, ModelError, ModelRequest, ModelResponse, RunState};

/// How a run's side effects happen ([`Agent::run_with`](crate::Agent::run_with)).
///
/// Every method has the in-process behaviour as its default, which
/// [`InProcess`] keeps: an engine overrides what it journals. The loop
/// stays the same whatever the engine, so a durable run's transcript is
/// the one the same run would have in-process.
///
/// ```
/// use futures::future::BoxFuture;
/// use toolcall_agent::{Agent, Effects, Model, ModelError, ModelRequest, ModelResponse};
/// use toolcall_agent::testing::{ScriptedModel};
/// use toolcall_core::Toolset;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// /// Counts the model requests, and makes them as usual.
/// #[derive(Default)]
/// struct Counted(AtomicUsize);
///
/// impl Effects for Counted {
///     fn request<'a>(&'a self, model: &'a dyn Model, request: ModelRequest<'a>)
///         -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
///         self.0.fetch_add(1, Ordering::Relaxed);
///         model.request(request)
///     }
/// }
///
/// # futures::executor::block_on(async {
/// let agent = Agent::new(ScriptedModel::new().then_text("Hi."), Toolset::new()).unwrap();
/// let counted = Counted::default();
/// let result = agent.run_with("Hello", &counted).await.unwrap();
/// assert_eq!((result.answer.as_str(), counted.0.load(Ordering::Relaxed)), ("Hi.", 1));
/// # });
/// ```
pub trait Effects: Send + Sync {
    /// Make one model request (never a streamed one: a streamed run
    /// ([`Agent::stream`](crate::Agent::stream)) runs in-process).
    fn request<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        model.request(request)
    }

    /// Run one turn's calls through `toolset` with `context` and give
    /// their results in call order; `approved` says a person approved
    /// them ([`Toolset::run_turn_approved`]), otherwise calls that need
    /// approval are refused ([`Toolset::run_turn`]; the loop holds them
    /// back before they get here).
    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approved: bool,
    ) -> BoxFuture<'a, Vec<ToolResult>> {
        if approved {
            Box::pin(toolset.run_turn_approved(context, calls))
        } else {
            Box::pin(toolset.run_turn(context, calls))
        }
    }

    /// Calls wait for a person's approval (`state`): give the state with
    /// the decisions taken, and the run goes on; or `None`, and the run
    /// stops with [`StopReason::Paused`](crate::StopReason::Paused) for
    /// the caller to resume. `None` by default: a process does not wait
    /// days. A durable engine waits on a durable promise instead.
    fn decide<'a>(&'a self, state: &'a RunState) -> BoxFuture<'a, Result<Option<RunState>, ModelError>> {
        let _ = state;
        Box::pin(async { Ok(None) })
    }
}

/// The run's effects happen in this process, as they come: what
/// [`Agent::run`](crate::Agent::run) uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct InProcess;

impl Effects for InProcess {}
