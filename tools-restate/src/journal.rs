//! The loop's side effects as journaled steps of a Restate workflow: what
//! Restate gives back on replay instead of doing again.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::channel::oneshot;
use futures::future::BoxFuture;
use restate_sdk::endpoint::ContextInternal;
use restate_sdk::prelude::*;
use toolcall_agent::{
    Approval, Decision, Effects, HandedUp, InProcess, Model, ModelError, ModelEvent, ModelRequest,
    ModelResponse, PausedCall, RunState,
};
use toolcall_core::{IdempotencyScope, ToolCall, ToolContext, ToolError, ToolResult, Toolset};

use crate::workflow::{LAST_WAIT, WAITING, Waiting, decision_promise};

/// A run's [`Effects`] over one workflow invocation's context: each model
/// request and each turn's calls journaled steps (`ctx.run`; a model
/// request that fails transiently retried as its [`ModelRetry`] says), the
/// wait for a person's decisions one durable promise per held call. What
/// each guarantees after a crash is in the crate's table.
/// [`AgentRun`](crate::AgentRun) makes one for each run.
///
/// Each call runs with an [`IdempotencyScope`] of `{run id}:{turn}`
/// (`{prefix}/{run id}:{turn}` with [`Self::with_key_prefix`]; the
/// turn counts the model's responses), so its
/// [`idempotency_key`](ToolContext::idempotency_key) is
/// `{run id}:{turn}:{call id}`: the same on every replay, as a replay
/// takes the same steps in the same order and the call ids come from the
/// journaled responses. A sub-agent's calls (an agent tool's, whose steps
/// are journaled here too, [`Effects::below`]) have keys under their
/// agent tool call's: `{its key}/{turn}:{call id}`.
pub struct Journal {
    /// The invocation's context, owned (restate-sdk's handle on it is
    /// shared), so that a sub-agent's effects can take steps on it.
    ctx: ContextInternal,
    /// The run id: the workflow's key.
    key: String,
    /// The model responses so far: call ids are unique within one only.
    turns: AtomicUsize,
    /// The waits for decisions so far: each wait's promises carry its number.
    waits: AtomicU32,
    retry: ModelRetry,
    /// What the idempotency scopes start with, before the run id.
    prefix: Option<String>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("key", &self.key)
            .field("turns", &self.turns)
            .field("waits", &self.waits)
            .field("retry", &self.retry)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Journal {
    /// The effects of the run with id `key` that this context executes.
    pub(crate) fn new(ctx: ContextInternal, key: impl Into<String>) -> Self {
        Self {
            ctx,
            key: key.into(),
            turns: AtomicUsize::new(0),
            waits: AtomicU32::new(0),
            retry: ModelRetry::default(),
            prefix: None,
        }
    }

    /// Retry a model request that fails transiently as `retry` says
    /// ([`ModelRetry::default`] unless set).
    pub fn with_model_retry(mut self, retry: ModelRetry) -> Self {
        self.retry = retry;
        self
    }

    /// Start each call's idempotency key with `prefix` and a `/`:
    /// `{prefix}/{run id}:{turn}:{call id}`, for runs of several workflows
    /// whose run ids may be the same ([`AgentRun::named`](crate::AgentRun::named)
    /// gives its name).
    pub fn with_key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// The scope of the keys of turn `turn`'s calls, in `context`: under
    /// the scope it has (a sub-agent's, which its agent tool gives), or
    /// the run's.
    fn scope(&self, context: &ToolContext, turn: usize) -> IdempotencyScope {
        IdempotencyScope::new(match (context.get::<IdempotencyScope>(), &self.prefix) {
            (Some(above), _) => format!("{}/{turn}", above.as_str()),
            (None, None) => format!("{}:{turn}", self.key),
            (None, Some(prefix)) => format!("{prefix}/{}:{turn}", self.key),
        })
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
/// result, so a replay fails the same way: code 400 for an error not
/// retried, 500 once the [`ModelRetry`]'s attempts are spent), a run
/// cancelled in Restate.
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

/// How a durable run retries a model request that failed transiently
/// ([`ModelError::is_transient`]: a timeout, a connection that failed, a
/// provider rate limited, overloaded or failing after the client's own
/// resends), through restate-sdk's retry of a journaled step
/// ([`RunRetryPolicy`]): each attempt is a new try of the step, after a
/// wait that grows by `factor`, across worker restarts. Once
/// `max_attempts` have failed, the step's failure is journaled and the run
/// ends with an error naming the model, the provider, the attempts and
/// the last cause. An error that is not transient (a refused request, a
/// refused or missing key...) ends the run at once: another attempt would
/// fail the same way.
///
/// The default, 3 attempts, 1 s then 2 s apart: each attempt is the
/// client's whole request, which already resends a 429 or 5xx answer a few
/// times over up to a minute (the HTTP clients' `ResendPolicy`) and gives
/// up on a silent provider after its request timeout, so the durable
/// retries are for what outlasts those: a provider down for a moment, a
/// network that dropped, a request cut by a timeout. Two more attempts a
/// few seconds apart catch that; more would keep a run hanging on a
/// provider that is down (each attempt may last a whole request timeout),
/// where an error the caller can read and act on (start the run again,
/// another model) serves better.
///
/// ```
/// use std::time::Duration;
/// use toolcall_restate::ModelRetry;
///
/// let retry = ModelRetry::default();
/// assert_eq!((retry.max_attempts, retry.initial_delay), (3, Duration::from_secs(1)));
/// let patient = ModelRetry { max_attempts: 6, max_delay: Duration::from_secs(60), ..ModelRetry::default() };
/// assert_eq!(ModelRetry::none().max_attempts, 1);
/// # let _ = patient;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRetry {
    /// Attempts in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The wait before the second attempt.
    pub initial_delay: Duration,
    /// What each wait is multiplied by to give the next.
    pub factor: f32,
    /// The longest wait between two attempts.
    pub max_delay: Duration,
}

impl Default for ModelRetry {
    /// 3 attempts, 1 s then 2 s apart (the waits double, up to 30 s).
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_delay: Duration::from_secs(1),
            factor: 2.0,
            max_delay: Duration::from_secs(30),
        }
    }
}

impl ModelRetry {
    /// One attempt: a transient failure ends the run as any other does.
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// The policy restate-sdk retries the step by.
    fn policy(&self) -> RunRetryPolicy {
        RunRetryPolicy::new()
            .initial_delay(self.initial_delay)
            .exponentiation_factor(self.factor)
            .max_delay(self.max_delay)
            .max_attempts(self.max_attempts.max(1))
    }
}

/// The code a model request's step is journaled failed with when its
/// error is not transient; one that ran out of attempts has restate-sdk's
/// 500.
const NOT_RETRIED: u16 = 400;

/// The code restate-sdk journals a step's retryable failure with once its
/// attempts are spent.
const RETRIES_SPENT: u16 = 500;

/// Ask the model in a journaled step (`ask` runs unless the journal has
/// the step's result), retrying a transient failure as `retry` says: the
/// response, and whether the model was asked (`false`: the journal gave
/// it back).
async fn journaled<'a, A, F>(
    ctx: &'a ContextInternal,
    retry: &ModelRetry,
    model: &dyn Model,
    ask: A,
) -> Result<(ModelResponse, bool), ModelError>
where
    A: FnOnce() -> F + Send + 'a,
    F: Future<Output = Result<ModelResponse, ModelError>> + Send + 'a,
{
    let asked = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&asked);
    // A transient error is the step's retryable failure: restate-sdk
    // tries the step again after the policy's wait, and journals the last
    // failure once the attempts are spent. Any other error is the step's
    // terminal result at once. Either way a replay fails the same way
    // rather than asking again.
    let step = ctx.run(move || async move {
        flag.store(true, Ordering::SeqCst);
        match ask().await {
            Ok(response) => Ok(Json(response)),
            Err(error) if error.is_transient() => Err(HandlerError::from(error)),
            Err(error) => Err(TerminalError::new_with_code(NOT_RETRIED, error.to_string()).into()),
        }
    });
    let step = step.name(MODEL_REQUEST).retry_policy(retry.policy());
    let response = step.await.map_err(|error| {
        let (name, provider) = (model.model(), model.provider());
        let message = match error.code() {
            NOT_RETRIED => format!("the model `{name}` ({provider}) failed: {}", error.message()),
            RETRIES_SPENT if retry.max_attempts <= 1 => format!(
                "the model `{name}` ({provider}) failed (the durable run does not retry it): {}",
                error.message()
            ),
            RETRIES_SPENT => format!(
                "the model `{name}` ({provider}) failed {} times in a row (the durable run's retries \
                 ran out), the last time: {}",
                retry.max_attempts,
                error.message()
            ),
            // Restate's own: the run cancelled...
            _ => return StepFailed::new(MODEL_REQUEST, error),
        };
        StepFailed::new(MODEL_REQUEST, TerminalError::new_with_code(error.code(), message))
    })?;
    Ok((response.into_inner(), asked.load(Ordering::SeqCst)))
}

/// The journal's name of a model request's step.
const MODEL_REQUEST: &str = "model request";

impl Effects for Journal {
    fn request<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.turns.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let ask = move || model.request(request);
            let (response, _) = journaled(&self.ctx, &self.retry, model, ask).await?;
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
        self.turns.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let ask = move || InProcess.request_streamed(model, request, deltas);
            let (response, asked) = journaled(&self.ctx, &self.retry, model, ask).await?;
            let text = response.text();
            if !asked && !text.is_empty() {
                deltas(ModelEvent::TextDelta(text));
            }
            Ok(response)
        })
    }

    /// The turn's calls at once, each journaled with its result:
    ///
    /// - a `begin` step first, for the calls that are steps (all but an
    ///   agent tool's): when it runs, none of them has started, and they
    ///   all start, in this process, together; when the journal has it, an
    ///   earlier attempt got past it and may have started them;
    /// - the agent tools' calls, in call order, while the others run: each
    ///   is no step of its own, its sub-agent's requests and calls are
    ///   steps of this journal ([`Self::below`]);
    /// - then, in call order, each other call's step: the result of a call
    ///   that started, once it and the calls before it are done; for a
    ///   call an earlier attempt may have started, the journaled result,
    ///   or if there is none (it was cut), the call run again if its tool
    ///   may be (marked idempotent or read-only), [`unknown_result`]
    ///   otherwise.
    ///
    /// Only this sequence touches the journal, one step at a time: two
    /// steps awaited at once run, but do not replay after a crash cut them
    /// (restate-sdk 0.13: journal mismatch, RT0016). The calls themselves
    /// are no steps, so they overlap.
    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approval: Approval,
    ) -> BoxFuture<'a, Vec<ToolResult>> {
        let ctx = &self.ctx;
        let turn = self.turns.load(Ordering::SeqCst);
        Box::pin(async move {
            // One clone of the context per turn: a call's context, made
            // from it by the toolset, shares its extensions.
            let context = &context.clone().with_extension(self.scope(context, turn));
            let run = move |call: &'a ToolCall| async move {
                let once = std::slice::from_ref(call);
                match approval {
                    Approval::Approved => toolset.run_turn_approved(context, once).await,
                    Approval::Required => toolset.run_turn(context, once).await,
                }
            };
            // A call's result, and its pause if it paused (a remote agent
            // waiting for input): both journaled, so a replay holds what
            // the run held.
            let outcome = move |call: &'a ToolCall| async move {
                let results = run(call).await;
                Outcome { results, paused: PausedCall::take_handed_up(context, &call.id) }
            };
            let nested: Vec<bool> = calls.iter().map(|call| has_nested_steps(toolset, call)).collect();
            let stepped: Vec<&str> = calls
                .iter()
                .zip(&nested)
                .filter(|(_, nested)| !**nested)
                .map(|(call, _)| &*call.id)
                .collect();
            let begun = if stepped.is_empty() { Ok(false) } else { begin(ctx, &stepped).await };
            let fresh = matches!(begun, Ok(true));
            let mut outcomes: Vec<Option<oneshot::Receiver<Outcome>>> = Vec::with_capacity(calls.len());
            let mut started = Vec::new();
            for (call, nested) in calls.iter().zip(&nested) {
                if fresh && !nested {
                    let (send, receive) = oneshot::channel();
                    started.push(async move {
                        let _ = send.send(outcome(call).await);
                    });
                    outcomes.push(Some(receive));
                } else {
                    outcomes.push(None);
                }
            }
            let journaling = async {
                let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
                // The agent tools' calls first, in call order, while the
                // others run: their sub-agents' steps are this journal's.
                for at in (0..calls.len()).filter(|at| nested[*at]) {
                    results[at] = run(&calls[at]).await.pop();
                }
                // Then the others' results, in call order.
                for at in (0..calls.len()).filter(|at| !nested[*at]) {
                    let call = &calls[at];
                    let name = format!("call {} {}", call.name, call.id);
                    let step = match (&begun, outcomes[at].take()) {
                        (Err(error), _) => Err(error.to_string()),
                        (Ok(_), Some(started)) => match started.await {
                            Ok(outcome) => {
                                let done = move || async move { Ok(Json(outcome)) };
                                ctx.run(done).name(name).await.map_err(|error| error.to_string())
                            }
                            Err(_) => Err("the call was dropped".to_owned()),
                        },
                        (Ok(_), None) if may_rerun(toolset, call) => {
                            let again = move || async move { Ok(Json(outcome(call).await)) };
                            ctx.run(again).name(name).await.map_err(|error| error.to_string())
                        }
                        (Ok(_), None) => {
                            let unknown = move || async move {
                                Ok(Json(Outcome { results: vec![unknown_result(call)], paused: None }))
                            };
                            ctx.run(unknown).name(name).await.map_err(|error| error.to_string())
                        }
                    };
                    results[at] = match step.map(Json::into_inner) {
                        Ok(Outcome { mut results, paused }) => {
                            if let Some(paused) = paused {
                                paused.hand_up_again(context, &call.id);
                            }
                            results.pop()
                        }
                        Err(error) => Some(ToolResult::error(
                            call,
                            &ToolError::failed(format!("the call's step failed: {error}")),
                        )),
                    };
                }
                let given = results.into_iter().zip(calls);
                given
                    .map(|(result, call)| {
                        result.unwrap_or_else(|| {
                            ToolResult::error(
                                call,
                                &ToolError::failed("the journal gave no result for the call"),
                            )
                        })
                    })
                    .collect::<Vec<_>>()
            };
            let ((), results) = futures::join!(futures::future::join_all(started).map(drop), journaling);
            results
        })
    }

    /// The wait on a person: the held calls in the workflow's state, and
    /// one durable promise per call (`decision:{wait}:{call id}`), which
    /// the `decide` handler resolves; the run goes on once every call has
    /// its decision. A promise can be resolved only through the
    /// workflow's handlers (Restate has no outside API for them), so
    /// nothing but a [`Decision`] that `decide` checked reaches the run.
    fn decide<'a>(&'a self, state: &'a RunState) -> BoxFuture<'a, Result<Option<RunState>, ModelError>> {
        let ctx = &self.ctx;
        let wait = self.waits.fetch_add(1, Ordering::SeqCst) + 1;
        Box::pin(async move {
            let waiting = Waiting { wait, pending: state.pending().to_vec() };
            ctx.set(LAST_WAIT, Json(wait));
            ctx.set(WAITING, Json(waiting.clone()));
            let mut state = state.clone();
            for pending in &waiting.pending {
                let id = pending.id();
                let promise = decision_promise(wait, &id);
                let decided = ctx.promise::<Json<Decision>>(&promise).await;
                let decision = decided.map_err(|error| StepFailed::new("decision", error))?.into_inner();
                state.decide(&id, decision).map_err(|unknown| ModelError::engine(ENGINE, unknown))?;
            }
            ctx.clear(WAITING);
            Ok(Some(state))
        })
    }

    /// Effects over this journal for a sub-agent: its requests and calls
    /// journaled here, as this run's are, in the order the run takes them.
    fn below(&self) -> Option<Arc<dyn Effects>> {
        let below = Journal {
            retry: self.retry.clone(),
            prefix: self.prefix.clone(),
            ..Self::new(self.ctx.clone(), &*self.key)
        };
        Some(Arc::new(below))
    }
}

/// The step before a turn's calls, whose closure runs only when the
/// journal does not have it yet: `true` when it ran (none of the calls has
/// started), `false` when it was given back (an earlier attempt got past
/// it, and may have started them).
async fn begin(ctx: &ContextInternal, ids: &[&str]) -> Result<bool, TerminalError> {
    let fresh = Arc::new(AtomicBool::new(false));
    let begun = Arc::clone(&fresh);
    let step = ctx.run(move || async move {
        begun.store(true, Ordering::SeqCst);
        Ok(())
    });
    step.name(format!("begin {}", ids.join(" "))).await?;
    Ok(fresh.load(Ordering::SeqCst))
}

/// Whether a call's tool takes its side effects through the run's effects
/// (an agent tool): its steps are journaled, not the call.
fn has_nested_steps(toolset: &Toolset, call: &ToolCall) -> bool {
    toolset.get(&call.name).is_some_and(|tool| tool.spec().has_nested_steps())
}

/// A call's journaled outcome: its result, and what it handed up if it
/// paused.
#[derive(serde::Serialize, serde::Deserialize)]
struct Outcome {
    results: Vec<ToolResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    paused: Option<HandedUp>,
}

/// A person's decisions, by call id ([`Pending::id`](toolcall_agent::Pending::id)):
/// what the `decide` handler takes, as JSON (`{"call_1": {"decision":
/// "approve"}, "call_2": {"decision": "deny", "reason": "..."}}`). Calls
/// left out stay undecided, for another `decide` to decide: the run goes
/// on once every call it holds is decided.
pub type Decisions = HashMap<String, Decision>;
