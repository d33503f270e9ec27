//! The loop's side effects as journaled steps of a Restate workflow: what
//! Restate gives back on replay instead of doing again.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures::future::BoxFuture;
use restate_sdk::prelude::*;
use toolcall_agent::{Decision, Effects, Model, ModelError, ModelRequest, ModelResponse, RunState};
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

fn engine(error: impl std::fmt::Display) -> ModelError {
    ModelError::Engine { message: error.to_string() }
}

impl Effects for Journal<'_> {
    fn request<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let ctx: &'a WorkflowContext<'a> = self.ctx;
        self.turns.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            // A model error is the step's terminal result (the clients
            // have their own retries): journaled, so a replay fails the
            // same way rather than asking again.
            let step = ctx.run(|| async move {
                match model.request(request).await {
                    Ok(response) => Ok(Json(response)),
                    Err(error) => Err(TerminalError::new(error.to_string()).into()),
                }
            });
            step.name("model request").await.map(Json::into_inner).map_err(engine)
        })
    }

    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approved: bool,
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
                    Ok(Json(match approved {
                        true => toolset.run_turn_approved(context, once).await,
                        false => toolset.run_turn(context, once).await,
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
            let decisions = decided.await.map_err(engine)?.into_inner();
            ctx.clear(WAITING);
            let mut state = state.clone();
            for (id, decision) in decisions {
                state.decide(&id, decision).map_err(engine)?;
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
