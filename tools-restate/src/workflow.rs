//! The agent run as a Restate workflow: `run` executes it (once per run
//! id), `waiting` shows the calls held for a person, `decide` takes their
//! decisions, one durable promise per held call.

use std::sync::Arc;

use restate_sdk::discovery::ServiceName;
use restate_sdk::endpoint::{ContextInternal, InputMetadata};
use restate_sdk::prelude::*;
use restate_sdk::service::macro_support::{ServiceBoxFuture, service_definition};
use restate_sdk::service::{Discoverable, Service};
use serde::{Deserialize, Serialize};
use toolcall_agent::{Agent, Decision, Pending, RunInput, RunResult};

use crate::progress::Recorded;
use crate::{Decisions, Journal, ModelRetry, Step};

/// The workflow state's key of the calls a run waits on.
pub(crate) const WAITING: &str = "waiting";

/// The workflow state's key of where the run is ([`Phase`]): what tells
/// the `decide` handler a run that never started (404) from one that does
/// not wait now (409), since both have no [`WAITING`].
const PHASE: &str = "phase";

/// The workflow state's key of the number of the run's latest wait, kept
/// once the wait is over: a decision sent again after the run took it is
/// recognized (200) rather than refused.
pub(crate) const LAST_WAIT: &str = "last_wait";

/// The workflow name an agent is served under unless it is given another
/// ([`AgentRun::named`]).
pub const DEFAULT_NAME: &str = "AgentRun";

/// Where a run is, as its workflow's state keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Phase {
    /// The `run` handler started it.
    Running,
    /// The `run` handler ended, with a result or an error.
    Ended,
}

/// The durable promise that carries the decision about call `id` (a
/// [`Pending::id`]) of the run's wait number `wait`: the run awaits it,
/// the `decide` handler resolves it. Workflow promises are resolved only
/// by the workflow's own handlers: Restate has no outside API for them.
pub(crate) fn decision_promise(wait: u32, id: &str) -> String {
    format!("decision:{wait}:{id}")
}

/// What the `run` handler takes: a prompt, as a JSON string (`"Order 2
/// lamps"`); or a run's input ([`RunInput`] as JSON: `{"transcript":
/// {...}}`, `{"paused": {...}}`) with `"pause": true` for a run that ends
/// [`Paused`](toolcall_agent::StopReason::Paused) on a call held for
/// approval, for its caller to keep and resume (a chat server's session
/// store), rather than wait for `decide` (the default), and
/// `"follow": true` for a run that writes its steps for a reader (the
/// `steps` handler; a few state writes a step, which a run no one follows
/// does not pay).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
#[expect(clippy::large_enum_variant, reason = "made once per run, as RunInput is")]
pub enum Start {
    /// A new run from this prompt, which waits for `decide` on a held call.
    Prompt(String),
    /// A run from this input.
    Input {
        /// Where the run starts.
        #[serde(flatten)]
        input: RunInput,
        /// Whether a held call ends the run paused rather than waiting.
        #[serde(default)]
        pause: bool,
        /// Whether the run writes its steps for a reader.
        #[serde(default)]
        follow: bool,
    },
}

/// The calls a run waits on for a person: what the `waiting` handler
/// gives back (and [`Admin`](crate::Admin) reads from the server's state).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Waiting {
    /// Which of the run's waits this is, from 1: a run that waits again
    /// (a sub-agent that pauses once more) waits on new calls under a new
    /// number.
    pub wait: u32,
    /// The calls that wait, as the model made them. Through the `waiting`
    /// handler, each with the [`decision`](Pending::decision) sent for it
    /// so far, if any; the run goes on once every one has one. (Read from
    /// the state by [`Admin`](crate::Admin), with no worker, the
    /// decisions are not filled in.)
    pub pending: Vec<Pending>,
}

/// The handlers of an agent's workflow. The macro writes their schema
/// (the [`Discoverable`] impl, under the name [`DEFAULT_NAME`]);
/// [`AgentRun`] serves them under its own name through [`Dispatch`].
struct Handlers {
    agent: Agent,
    retry: ModelRetry,
    /// The prefix of the runs' idempotency scopes: `None` under the
    /// default name, the name otherwise.
    prefix: Option<String>,
}

/// An [`Agent`] served as a Restate workflow, `AgentRun` unless named
/// otherwise ([`Self::named`]): each run is one workflow, keyed by its
/// run id, through Restate's ingress:
///
/// - `POST /AgentRun/{id}/run` with the prompt (a JSON string) starts it
///   (`/send` for not waiting) and gives its [`RunResult`]: the one the
///   same run gives in-process, as JSON, its stop reason as data
///   (`"answered"`, `{"max_turns": {"turns": 10}}`...);
/// - `GET`/`POST /AgentRun/{id}/waiting` gives the calls it waits on
///   ([`Waiting`], or `null`), each with its decision so far;
/// - `POST /AgentRun/{id}/decide` with [`Decisions`] records a decision
///   per call: all the held calls at once, or call by call in several
///   requests (sent one after the other or at the same moment); the run
///   goes on once every held call is decided.
///
/// The `decide` handler answers with a status that says whose fault a
/// refusal is: 404 for a run id that never started, 409 for decisions that
/// do not fit the run's state (it does not wait, a call was decided
/// otherwise already, it ended, they name a call it does not hold), 400
/// for a body that is not [`Decisions`] (or names no call); a 500 is the
/// worker's own failure. The same decision sent again for a call is taken
/// as sent: 200, nothing changes.
///
/// Its steps are journaled by [`Journal`]: a worker that dies mid-run
/// loses nothing, the run goes on in another (or the same, restarted). A
/// model request that fails transiently is retried as the
/// [`ModelRetry`] says ([`Self::with_model_retry`]).
///
/// An `AgentRun` is bound to a restate-sdk endpoint like any service
/// (`Endpoint::builder().bind(run)`); [`serve_runs`](crate::serve_runs)
/// serves several, each under its own name.
#[derive(Debug)]
pub struct AgentRun {
    name: ServiceName,
    handlers: Handlers,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers").field("agent", &self.agent).field("retry", &self.retry).finish()
    }
}

/// A workflow name Restate does not take: it must start with a letter
/// (or `_` and a letter or digit) and go on with letters, digits, `.`,
/// `_` and `-`.
#[derive(Debug, thiserror::Error)]
#[error("`{name}` cannot name a Restate workflow: {reason}")]
pub struct InvalidName {
    name: String,
    reason: String,
}

impl AgentRun {
    /// The workflow of this agent's runs, under the name `AgentRun`. Every
    /// worker of one Restate deployment must serve the same agent under a
    /// name: a run replays on any of them.
    pub fn new(agent: Agent) -> Self {
        Self {
            name: ServiceName::try_from(DEFAULT_NAME.to_owned())
                .unwrap_or_else(|_| unreachable!("`AgentRun` is a valid name")),
            handlers: Handlers { agent, retry: ModelRetry::default(), prefix: None },
        }
    }

    /// The workflow of this agent's runs under another name: its ingress
    /// paths are `/{name}/{run id}/run`, `/waiting`, `/decide`. Several
    /// agents, each under its own name, are served from one worker by
    /// [`serve_runs`](crate::serve_runs).
    ///
    /// The run ids of two workflows are apart (`researcher/run-1` and
    /// `writer/run-1` are two runs), so a named agent's tools get
    /// idempotency keys that start with the name:
    /// `{name}/{run id}:{turn}:{call id}` (under `AgentRun`, the name is
    /// left out, as before names could be given).
    ///
    /// ```
    /// use toolcall_agent::{Agent, OpenAiChat};
    /// use toolcall_core::toolset::Toolset;
    /// use toolcall_restate::AgentRun;
    ///
    /// let agent = Agent::new(OpenAiChat::new("gpt-4.1-mini"), Toolset::new()).unwrap();
    /// let run = AgentRun::named("researcher", agent).unwrap();
    /// assert_eq!(run.name(), "researcher");
    /// let agent = Agent::new(OpenAiChat::new("gpt-4.1-mini"), Toolset::new()).unwrap();
    /// assert!(AgentRun::named("a researcher", agent).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidName`] for a name Restate does not take (a space, a
    /// slash, a leading digit...).
    pub fn named(name: impl Into<String>, agent: Agent) -> Result<Self, InvalidName> {
        let name = name.into();
        let service = ServiceName::try_from(name.clone())
            .map_err(|error| InvalidName { name: name.clone(), reason: error.to_string() })?;
        let prefix = (name != DEFAULT_NAME).then_some(name);
        Ok(Self { name: service, handlers: Handlers { agent, retry: ModelRetry::default(), prefix } })
    }

    /// How a model request that fails transiently is retried
    /// ([`ModelRetry::default`]: 3 attempts, 1 s then 2 s apart).
    pub fn with_model_retry(mut self, retry: ModelRetry) -> Self {
        self.handlers.retry = retry;
        self
    }

    /// The workflow's name: `AgentRun`, or the one given to [`Self::named`].
    pub fn name(&self) -> &str {
        &self.name
    }
}

#[restate_sdk::workflow(name = "AgentRun", client_visibility = "pub(crate)")]
impl Handlers {
    /// Run the agent from its [`Start`] to its end: described here for
    /// the workflow's schema, run by [`Handlers::start`], which [`Dispatch`]
    /// calls with the invocation's context owned (a sub-agent's steps are
    /// taken on it).
    #[handler]
    async fn run(
        &self,
        _ctx: WorkflowContext<'_>,
        _start: Json<Start>,
    ) -> Result<Json<RunResult>, HandlerError> {
        Err(TerminalError::new("the run is started through `Dispatch`, which calls `Handlers::start`").into())
    }

    /// The run's steps so far from the `after`th (from 0), up to 500 at a
    /// time ([`Step`]): what a reader in another process follows the run
    /// by while it goes ([`Remote`](crate::Remote)).
    #[handler]
    async fn steps(
        &self,
        ctx: SharedWorkflowContext<'_>,
        after: Json<u64>,
    ) -> Result<Json<Vec<Step>>, HandlerError> {
        Ok(Json(crate::progress::read(&ctx, after.into_inner()).await?))
    }

    /// The calls the run waits on, if it waits, each with the decision
    /// recorded for it so far.
    #[handler]
    async fn waiting(&self, ctx: SharedWorkflowContext<'_>) -> Result<Json<Option<Waiting>>, HandlerError> {
        let Some(Json(mut waiting)) = ctx.get::<Json<Waiting>>(WAITING).await? else {
            return Ok(Json(None));
        };
        for pending in &mut waiting.pending {
            let promise = decision_promise(waiting.wait, &pending.id());
            if let Some(Json(decision)) = ctx.peek_promise::<Json<Decision>>(&promise).await? {
                pending.decision = Some(decision);
            }
        }
        Ok(Json(Some(waiting)))
    }

    /// A person's decisions about calls the run waits on: each recorded
    /// on its call's promise, which the run awaits.
    ///
    /// A decision for a call that has one already is taken as sent (200)
    /// if it is the same, refused (409) if it differs. Two different
    /// decisions for one call sent at the same moment may both find it
    /// undecided: both resolve its promise, Restate keeps the first and
    /// refuses the second (which restate-sdk 0.13 does not report to the
    /// handler), so each reads the promise back, and the one whose
    /// decision is not there answers 409. A request of several calls
    /// refused for one of them may have recorded the others (those that
    /// read back as sent): `waiting` shows what was taken.
    ///
    /// # Errors
    ///
    /// A terminal error whose code the ingress answers with: 404 when no
    /// run has this id; 409 when the run does not wait on a decision (it
    /// has not come to one, or has gone on, or has ended), when a call was
    /// decided otherwise already, or when the decisions name a call it does
    /// not wait on; 400 for decisions that name no call. (A body that does
    /// not read as [`Decisions`] is refused with 400 by restate-sdk before
    /// the handler runs.)
    #[handler]
    async fn decide(
        &self,
        ctx: SharedWorkflowContext<'_>,
        decisions: Json<Decisions>,
    ) -> Result<(), HandlerError> {
        // In id order: a handler retried by Restate replays its journal,
        // and must take the same steps in the same order.
        let mut decisions: Vec<(String, Decision)> = decisions.into_inner().into_iter().collect();
        decisions.sort_by(|a, b| a.0.cmp(&b.0));
        if decisions.is_empty() {
            let message = "no decision: name at least one call the run waits on";
            return Err(TerminalError::new_with_code(400, message).into());
        }
        let Some(Json(waiting)) = ctx.get::<Json<Waiting>>(WAITING).await? else {
            return not_waiting(&ctx, &decisions).await;
        };
        let held: Vec<String> = waiting.pending.iter().map(Pending::id).collect();
        if let Some((id, _)) = decisions.iter().find(|(id, _)| !held.contains(id)) {
            let message = format!("the run does not wait on a call `{id}`; it waits on: {}", held.join(", "));
            return Err(TerminalError::new_with_code(409, message).into());
        }
        let mut fresh = Vec::new();
        for (id, decision) in &decisions {
            let promise = decision_promise(waiting.wait, id);
            match ctx.peek_promise::<Json<Decision>>(&promise).await? {
                Some(Json(taken)) if taken == *decision => {}
                Some(Json(taken)) => return Err(conflict(id, &taken)),
                None => fresh.push((id, decision, promise)),
            }
        }
        for (_, decision, promise) in &fresh {
            ctx.resolve_promise(promise, Json(Decision::clone(decision)));
        }
        // Read back: a decide that raced this one may have resolved a
        // promise first, and Restate keeps the first value.
        for (id, decision, promise) in &fresh {
            match ctx.peek_promise::<Json<Decision>>(promise).await? {
                Some(Json(taken)) if taken == **decision => {}
                Some(Json(taken)) => {
                    let taken = serde_json::to_string(&taken).unwrap_or_else(|_| format!("{taken:?}"));
                    let message = format!(
                        "another decision for the call `{id}` was sent at the same moment and taken first \
                         ({taken}); the run goes on with that decision"
                    );
                    return Err(TerminalError::new_with_code(409, message).into());
                }
                None => {
                    let message = format!("the decision for `{id}` was not recorded; send it again");
                    return Err(TerminalError::new_with_code(500, message).into());
                }
            }
        }
        Ok(())
    }
}

impl Handlers {
    /// The `run` handler: the agent run from its [`Start`] to its end, each
    /// step journaled and written to the workflow's state as it is taken
    /// (the `steps` handler reads them). Its [`Phase`] is kept in the
    /// workflow's state, for `decide` to tell an unknown run from one that
    /// does not wait.
    async fn start(
        &self,
        internal: &ContextInternal,
        metadata: InputMetadata,
        start: Json<Start>,
    ) -> Result<Json<RunResult>, HandlerError> {
        let ctx: WorkflowContext<'_> = (internal, metadata).into();
        ctx.set(PHASE, Json(Phase::Running));
        let mut journal = Journal::new(internal.clone(), ctx.key()).with_model_retry(self.retry.clone());
        if let Some(prefix) = &self.prefix {
            journal = journal.with_key_prefix(prefix);
        }
        let (input, pause, follow) = match start.into_inner() {
            Start::Prompt(prompt) => (RunInput::from(prompt), false, false),
            Start::Input { input, pause, follow } => (input, pause, follow),
        };
        let effects = Recorded::new(&ctx, journal, pause, follow);
        let result = self.agent.run_with(input, &effects).await;
        ctx.set(PHASE, Json(Phase::Ended));
        Ok(Json(result.map_err(|error| TerminalError::new(error.to_string()))?))
    }
}

/// The refusal of a decision for call `id`, which has `taken` already.
fn conflict(id: &str, taken: &Decision) -> HandlerError {
    let taken = serde_json::to_string(taken).unwrap_or_else(|_| format!("{taken:?}"));
    let message =
        format!("the call `{id}` was decided already ({taken}); the run goes on with that decision");
    TerminalError::new_with_code(409, message).into()
}

/// `decide` for a run that waits on nothing now: 404 for no run, 409 for
/// a run that ended or does not wait, but 200 for decisions the run took
/// at its latest wait, sent again (a retry whose answer was lost).
async fn not_waiting(
    ctx: &SharedWorkflowContext<'_>,
    decisions: &[(String, Decision)],
) -> Result<(), HandlerError> {
    let refusal = match ctx.get::<Json<Phase>>(PHASE).await?.map(Json::into_inner) {
        None => TerminalError::new_with_code(404, format!("there is no run `{}`", ctx.key())),
        Some(Phase::Ended) => TerminalError::new_with_code(409, "the run has ended: it waits on no decision"),
        Some(Phase::Running) => {
            if let Some(Json(wait)) = ctx.get::<Json<u32>>(LAST_WAIT).await? {
                let mut taken = true;
                for (id, decision) in decisions {
                    let promise = decision_promise(wait, id);
                    let recorded = ctx.peek_promise::<Json<Decision>>(&promise).await?;
                    taken &= recorded.is_some_and(|Json(recorded)| recorded == *decision);
                }
                if taken {
                    return Ok(());
                }
            }
            TerminalError::new_with_code(
                409,
                "the run waits on no decision now: it has not come to one, or the calls it held were decided",
            )
        }
    };
    Err(refusal.into())
}

/// What a Restate endpoint calls: the [`Handlers`] of one agent, under the
/// name of its [`AgentRun`]. What `#[restate_sdk::workflow]` writes for
/// the type it is put on, but for a name given at run time, which the
/// macro's (a literal) cannot be. A handler added to [`Handlers`] is
/// added here too (a unit test compares the two lists).
struct Dispatch(Arc<Handlers>);

/// The handlers [`Dispatch`] calls.
#[cfg(test)]
const DISPATCHED: [&str; 4] = ["run", "steps", "waiting", "decide"];

impl Service for Dispatch {
    type Future = ServiceBoxFuture;

    fn handle(&self, ctx: ContextInternal) -> Self::Future {
        let handlers = Arc::clone(&self.0);
        Box::pin(async move {
            match ctx.handler_name() {
                "run" => {
                    let (start, metadata) = ctx.input().await;
                    let result = handlers.start(&ctx, metadata, start).await;
                    ctx.handle_handler_result(result);
                }
                "steps" => {
                    let (after, metadata) = ctx.input().await;
                    let result = handlers.steps((&ctx, metadata).into(), after).await;
                    ctx.handle_handler_result(result);
                }
                "waiting" => {
                    let (_, metadata) = ctx.input::<()>().await;
                    let result = handlers.waiting((&ctx, metadata).into()).await;
                    ctx.handle_handler_result(result);
                }
                "decide" => {
                    let (decisions, metadata) = ctx.input().await;
                    let result = handlers.decide((&ctx, metadata).into(), decisions).await;
                    ctx.handle_handler_result(result);
                }
                _ => {
                    return Err(restate_sdk::endpoint::Error::unknown_handler(
                        ctx.service_name(),
                        ctx.handler_name(),
                    ));
                }
            }
            ctx.end();
            Ok(())
        })
    }
}

/// The workflow under its name: the handlers' schema as the macro
/// describes it, renamed, and a dispatch to call them.
impl IntoServiceDefinition for AgentRun {
    fn into_service_definition(self) -> ServiceDefinition {
        let mut discovery = <Handlers as Discoverable>::discover();
        discovery.name = self.name;
        service_definition(Dispatch(Arc::new(self.handlers)), discovery)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_handler_of_the_schema_is_dispatched() {
        let discovery = <Handlers as Discoverable>::discover();
        let mut described: Vec<&str> =
            discovery.handlers.iter().map(|handler| handler.name.as_str()).collect();
        described.sort_unstable();
        let mut dispatched = DISPATCHED.to_vec();
        dispatched.sort_unstable();
        assert_eq!(described, dispatched);
    }
}
