//! The one seam a run's side effects go through: each model request
//! (plain or streamed), each turn's tool calls and the wait for a person's
//! decision. The loop decides what to do; an [`Effects`] decides how it
//! happens: here, in this process (the default), or as journaled steps of
//! a durable engine that replays them after a crash (`toolcall-restate`).

use std::sync::Arc;

use futures::future::BoxFuture;
use toolcall_core::{ToolCall, ToolContext, ToolResult, Toolset};

use crate::{AgentEvent, Model, ModelError, ModelEvent, ModelRequest, ModelResponse, RunState, Transcript};

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
    /// Make one model request, for a run that is not streamed
    /// ([`Agent::run_with`](crate::Agent::run_with)), and for the summaries
    /// a [`ContextPolicy`](crate::ContextPolicy) asks for.
    ///
    /// # Errors
    ///
    /// The model's [`ModelError`]; an engine that could not take or give
    /// the step, [`ModelError::Engine`].
    fn request<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        model.request(request)
    }

    /// Make one model request of a streamed run
    /// ([`Agent::stream_with`](crate::Agent::stream_with)): each piece of
    /// the response goes to `deltas` as it comes (text, reasoning, a
    /// call's pieces; never [`ModelEvent::Done`]), and the response,
    /// assembled, is what it gives back, which the loop goes on from. By
    /// default the model's stream ([`Model::stream`]), each piece passed
    /// on as it comes.
    ///
    /// An engine journals the response it gives back, not the pieces: the
    /// first time, the pieces still reach the stream live; a replay gives
    /// the journaled response back without asking the model again, and
    /// what it passes to `deltas` then (nothing, or the response's text
    /// as one piece, as `toolcall-restate` does) is the engine's to say.
    ///
    /// # Errors
    ///
    /// As [`Self::request`]; a stream that ends before its response,
    /// [`ModelError::StreamEnded`].
    fn request_streamed<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelEvent) + Send + Sync),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(crate::stream::assembled(model.provider(), model.stream(request), deltas))
    }

    /// Run one turn's calls through `toolset` with `context` and give
    /// their results in call order. [`Approval::Approved`]: a person
    /// approved them ([`Toolset::run_turn_approved`]);
    /// [`Approval::Required`]: no one did, and a call that needs approval
    /// is refused ([`Toolset::run_turn`]; the loop holds such calls back
    /// before they get here).
    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approval: Approval,
    ) -> BoxFuture<'a, Vec<ToolResult>> {
        match approval {
            Approval::Approved => Box::pin(toolset.run_turn_approved(context, calls)),
            Approval::Required => Box::pin(toolset.run_turn(context, calls)),
        }
    }

    /// Calls wait for a person's approval (`state`): give the state with
    /// the decisions taken, and the run goes on; or `None`, and the run
    /// stops with [`StopReason::Paused`](crate::StopReason::Paused) for
    /// the caller to resume. `None` by default: a process does not wait
    /// days. A durable engine waits on a durable promise instead.
    ///
    /// # Errors
    ///
    /// [`ModelError::Engine`] when the engine could not wait, or read the
    /// decisions it was given.
    fn decide<'a>(&'a self, state: &'a RunState) -> BoxFuture<'a, Result<Option<RunState>, ModelError>> {
        let _ = state;
        Box::pin(async { Ok(None) })
    }

    /// The run did something worth telling: each event the run reports,
    /// in order, as it happens, streamed or not, but for the model's
    /// pieces (which go to [`Self::request_streamed`]'s `deltas`) and the
    /// run's end: each response's visible reasoning and text come whole,
    /// as one [`AgentEvent::ReasoningDelta`] and one
    /// [`AgentEvent::TextDelta`] before its [`AgentEvent::Usage`] (a
    /// context policy's summaries are not the run's responses, and do not
    /// come). A sub-agent's events are recorded in its own effects
    /// ([`Self::below`]), not here, but for the calls it holds, which
    /// pause this run: each comes here too, as
    /// [`AgentEvent::ApprovalRequested`] with its path, once the call of
    /// the agent tool paused. Nothing by default. A durable engine keeps them where a reader in another
    /// process follows the run (`toolcall-restate` writes them to the
    /// workflow's state); called between the steps, in the run's order,
    /// the same on every replay.
    fn record(&self, event: &AgentEvent) {
        let _ = event;
    }

    /// The run's transcript grew to a point it can go on from: a model
    /// response whose calls are about to run, or a turn's results before
    /// the model is asked again. Keep it, so a run cut off later (its
    /// process killed, its model failing) leaves what its tools did, and
    /// which calls were in flight: a session store appends it under the
    /// run's lease (`toolcall-session`). Called before each request and
    /// each turn's calls whenever the transcript changed since the last
    /// time, never for a sub-agent's run; an error ends the run (a lease
    /// another run took, a store that fails). Nothing by default.
    ///
    /// # Errors
    ///
    /// [`ModelError::Engine`]: the transcript could not be kept, and the
    /// run must not go on.
    fn checkpoint<'a>(&'a self, transcript: &'a Transcript) -> BoxFuture<'a, Result<(), ModelError>> {
        let _ = transcript;
        Box::pin(async { Ok(()) })
    }

    /// The effects a sub-agent's run takes its steps through: the run of
    /// an agent tool that one of this run's calls runs (its spec says
    /// [`has_nested_steps`](toolcall_core::ToolSpec::has_nested_steps)).
    /// `None` by default: the sub-agent's run happens in this process, and
    /// is part of its call, which [`Self::run_calls`] runs. A durable
    /// engine gives effects over the same journal, and runs such a call
    /// outside a step of its own, so each of the sub-agent's model
    /// requests and calls is journaled as the run's own are. The
    /// sub-agent never waits on a person through them: its held calls
    /// pause it, and the run above holds them.
    fn below(&self) -> Option<Arc<dyn Effects>> {
        None
    }
}

/// The run's effects happen in this process, as they come: what
/// [`Agent::run`](crate::Agent::run) uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct InProcess;

impl Effects for InProcess {}

/// Whether a turn's calls were approved by a person, for
/// [`Effects::run_calls`]: the one thing that tells a toolset to run a
/// call that needs approval, so it is named rather than a `bool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Approval {
    /// A person approved these calls (a paused run's decisions): they run,
    /// those that need approval included.
    Approved,
    /// No one approved these calls: each runs unless its tool needs
    /// approval, which refuses it. The loop sends here only the calls
    /// that need none.
    Required,
}

/// The result the model reads for a call that was cut off: its run
/// stopped (its process killed, its lease lost) after the call may have
/// started and before its result was kept, so whether it took effect is
/// unknown. A session gives it to such a call rather than running it
/// again: at most once, whatever the tool.
pub fn cut_off(call: &ToolCall) -> ToolResult {
    let error = toolcall_core::ToolError::failed(format!(
        "the call of `{}` was cut off (the run stopped) before its result was kept; it may or may not have \
         taken effect, and it was not run again. Check its effect before calling it again.",
        call.name
    ));
    ToolResult::error(call, &error)
}
