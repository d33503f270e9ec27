//! The loop's side effects as journaled steps of a Restate workflow: what
//! Restate gives back on replay instead of doing again.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures::future::BoxFuture;
use restate_sdk::prelude::*;
use toolcall_agent::{
    Approval, Decision, Effects, InProcess, Model, ModelError, ModelEvent, ModelRequest, ModelResponse,
    RunState,
};
use toolcall_core::{IdempotencyScope, ToolCall, ToolContext, ToolError, ToolResult, Toolset};

use crate::workflow::{WAITING, Waiting};

/// A run's [`Effects`] over one workflow invocation's context: each model
/// request and each tool call a journaled step (`ctx.run`), the wait for a
/// person's decision an awakeable. What each guarantees after a crash is
/// in the crate's table.
///
/// Each call runs with an [`IdempotencyScope`] of `{run id}:{turn}` (the
/// turn counts the model's responses), so its
/// [`idempotency_key`](ToolContext::idempotency_key) is
/// `{run id}:{turn}:{call id}`: the same on every replay, as a replay
/// takes the same steps in the same order and the call ids come from the
/// journaled responses.
pub struct Journal<'c> {
    ctx: &'c WorkflowContext<'c>,
    /// The model responses so far: call ids are unique within one only.
    turns: AtomicUsize,
}

impl std::fmt::Debug for Journal<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal").field("turns", &self.turns).finish_non_exhaustive()
    }
}

impl<'c> Journal<'c> {
    /// The effects of the run this context executes.
    pub fn new(ctx: &'c WorkflowContext<'c>) -> Self {
        Self { ctx, turns: AtomicUsize::new(0) }
    }
}

/// The result the model reads for a call that was cut by a crash after it
/// may have started, and that is not run again because its tool is not
/// marked idempotent (nor read-only): whether it took effect is unknown.
pub fn unknown_result(call: &ToolCall) -> ToolResult {
    let error = ToolError::failed(format!(
        "the call of `{}` was cut off (the worker running it stopped) before its result was recorded; it \
         may or may not have taken effect, and it was not run again because `{}` is not marked idempotent. \
         Check its effect before calling it again.",
        call.name, call.name
    ));
    ToolResult::error(call, &error)
}

/// Whether running a call of this tool twice is harmless: marked
/// idempotent or read-only.
fn may_rerun(toolset: &Toolset, call: &ToolCall) -> bool {
    toolset.get(&call.name).is_some_and(|tool| {
        let hints = tool.spec().annotations();
        hints.idempotent == Some(true) || hints.read_only == Some(true)
    })
}

/// A step of a durable run that Restate gave back failed: the step, and
/// the terminal error journaled for it. The source of the run's
/// [`ModelError::Engine`] (engine `restate`), for a caller that wants the
/// step or the code: a model's failure (journaled as its request's
/// result, so a replay fails the same way), a run cancelled in Restate,
/// an awakeable rejected.
///
/// ```
/// use restate_sdk::prelude::TerminalError;
/// use toolcall_agent::ModelError;
/// use toolcall_restate::StepFailed;
///
/// let error = ModelError::from(StepFailed::new("model request", TerminalError::new("HTTP 400")));
/// let ModelError::Engine { engine: "restate", source } = &error else { unreachable!() };
/// let failed = source.downcast_ref::<StepFailed>().unwrap();
/// assert_eq!((failed.step(), failed.terminal().code()), ("model request", 500));
/// assert_eq!(
///     error.to_string(),
///     "the run's engine (restate) failed: the `model request` step failed (500): HTTP 400"
/// );
/// ```
#[derive(Clone, Debug, thiserror::Error)]
#[error("the `{step}` step failed ({}): {}", error.code(), error.message())]
pub struct StepFailed {
    step: &'static str,
    error: TerminalError,
}

impl StepFailed {
    /// Step `step` failed with `error`.
    pub fn new(step: &'static str, error: TerminalError) -> Self {
        Self { step, error }
    }

    /// The step: `model request`, `decision`.
    pub fn step(&self) -> &'static str {
        self.step
    }

    /// The terminal error Restate gave back for it, with its code.
    pub fn terminal(&self) -> &TerminalError {
        &self.error
    }
}

impl From<StepFailed> for ModelError {
    fn from(failed: StepFailed) -> Self {
        ModelError::engine(ENGINE, failed)
    }
}

/// The engine's name in a [`ModelError::Engine`].
const ENGINE: &str = "restate";

/// Ask the model in a journaled step (`ask` runs unless the journal has
/// the step's result): the response, and whether the model was asked
/// (`false`: the journal gave it back).
async fn journaled<'a, A, F>(
    ctx: &'a WorkflowContext<'a>,
    ask: A,
) -> Result<(ModelResponse, bool), ModelError>
where
    A: FnOnce() -> F + Send + 'a,
    F: Future<Output = Result<ModelResponse, ModelError>> + Send + 'a,
{
    let asked = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&asked);
    // A model error is the step's terminal result (the clients have their
    // own retries): journaled, so a replay fails the same way rather than
    // asking again.
    let step = ctx.run(move || async move {
        flag.store(true, Ordering::SeqCst);
        match ask().await {
            Ok(response) => Ok(Json(response)),
            Err(error) => Err(TerminalError::new(error.to_string()).into()),
        }
    });
    let response = step.name(MODEL_REQUEST).await.map_err(|error| StepFailed::new(MODEL_REQUEST, error))?;
    Ok((response.into_inner(), asked.load(Ordering::SeqCst)))
}

/// The journal's name of a model request's step.
const MODEL_REQUEST: &str = "model request";

impl Effects for Journal<'_> {
    fn request<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        self.turns.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let (response, _) = journaled(ctx, move || model.request(request)).await?;
            Ok(response)
        })
    }

    /// The request journaled as [`Self::request`] journals it: the response
    /// whole, not its pieces. The first time, each piece reaches `deltas`
    /// as the model sends it; a replay, which does not ask the model, sends
    /// the journaled response's text as one piece (what a model without a
    /// stream sends, [`Model::stream`]), so that a stream read from a
    /// replayed run still has every turn's text.
    fn request_streamed<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelEvent) + Send + Sync),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        self.turns.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let ask = move || InProcess.request_streamed(model, request, deltas);
            let (response, asked) = journaled(ctx, ask).await?;
            let text = response.text();
            if !asked && !text.is_empty() {
                deltas(ModelEvent::TextDelta(text));
            }
            Ok(response)
        })
    }

    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approval: Approval,
    ) -> BoxFuture<'a, Vec<ToolResult>> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        let turn = self.turns.load(Ordering::SeqCst);
        Box::pin(async move {
            // One clone of the context per turn: a call's context, made
            // from it by the toolset, shares its extensions.
            let scope = IdempotencyScope::new(format!("{}:{turn}", ctx.key()));
            let context = &context.clone().with_extension(scope);
            let mut results = Vec::with_capacity(calls.len());
            // One step at a time: the context refuses two awaited at once.
            for call in calls {
                let once = std::slice::from_ref(call);
                let run = move || async move {
                    Ok(Json(match approval {
                        Approval::Approved => toolset.run_turn_approved(context, once).await,
                        Approval::Required => toolset.run_turn(context, once).await,
                    }))
                };
                let name = format!("call {} {}", call.name, call.id);
                let result = if may_rerun(toolset, call) {
                    ctx.run(run).name(name).await
                } else {
                    // The `begin` step's closure runs only when it is not in
                    // the journal yet: if it is, an earlier attempt got past
                    // it, and may have started the call.
                    let fresh = Arc::new(AtomicBool::new(false));
                    let begun = Arc::clone(&fresh);
                    let begin = ctx.run(move || async move {
                        begun.store(true, Ordering::SeqCst);
                        Ok(())
                    });
                    match begin.name(format!("begin {} {}", call.name, call.id)).await {
                        Err(error) => Err(error),
                        Ok(()) if fresh.load(Ordering::SeqCst) => ctx.run(run).name(name).await,
                        Ok(()) => {
                            let unknown = move || async move { Ok(Json(vec![unknown_result(call)])) };
                            ctx.run(unknown).name(name).await
                        }
                    }
                };
                let result = result.map(Json::into_inner).map_err(|error| error.to_string());
                results.push(match result {
                    Ok(mut result) if result.len() == 1 => result.remove(0),
                    Ok(_) => {
                        ToolResult::error(call, &ToolError::failed("the journal gave no result for the call"))
                    }
                    Err(error) => ToolResult::error(
                        call,
                        &ToolError::failed(format!("the call's step failed: {error}")),
                    ),
                });
            }
            results
        })
    }

    fn decide<'a>(&'a self, state: &'a RunState) -> BoxFuture<'a, Result<Option<RunState>, ModelError>> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        Box::pin(async move {
            let (awakeable, decided) = ctx.awakeable::<Json<Decisions>>();
            let waiting = Waiting { awakeable, pending: state.pending().to_vec() };
            ctx.set(WAITING, Json(waiting));
            let decisions = decided.await.map_err(|error| StepFailed::new("decision", error))?.into_inner();
            ctx.clear(WAITING);
            let mut state = state.clone();
            for (id, decision) in decisions {
                state.decide(&id, decision).map_err(|unknown| ModelError::engine(ENGINE, unknown))?;
            }
            Ok(Some(state))
        })
    }
}

/// A person's decisions, by call id: what the `decide` handler takes, as
/// JSON (`{"call_1": {"decision": "approve"}, "call_2": {"decision":
/// "deny", "reason": "..."}}`). Calls left out stay undecided: the run
/// waits again for them.
pub type Decisions = HashMap<String, Decision>;
