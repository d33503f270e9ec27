//! The agent run as a Restate workflow: `run` executes it (once per run
//! id), `waiting` shows the calls held for a person, `decide` takes their
//! decisions.

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use toolcall_agent::{Agent, Pending, RunResult};

use crate::{Decisions, Journal};

/// The workflow state's key of the calls a run waits on.
pub(crate) const WAITING: &str = "waiting";

/// The workflow state's key of where the run is ([`Phase`]): what tells
/// the `decide` handler a run that never started (404) from one that does
/// not wait now (409), since both have no [`WAITING`].
const PHASE: &str = "phase";

/// Where a run is, as its workflow's state keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Phase {
    /// The `run` handler started it.
    Running,
    /// The `run` handler ended, with a result or an error.
    Ended,
}

/// The workflow promise that records the decisions sent for the wait on
/// `awakeable`: a shared handler cannot write the workflow's state, but it
/// can resolve a promise and peek at one, and so tell a second decision
/// for the same wait (409) from the first.
fn decided(awakeable: &str) -> String {
    format!("decided:{awakeable}")
}

/// The calls a run waits on for a person, and the awakeable their
/// decisions resolve: what the `waiting` handler gives back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Waiting {
    /// The awakeable the run is suspended on; the `decide` handler resolves
    /// it, or anyone through Restate's
    /// `POST /restate/awakeables/{id}/resolve` with the [`Decisions`].
    pub awakeable: String,
    /// The calls that wait, as the model made them.
    pub pending: Vec<Pending>,
}

/// An [`Agent`] served as the Restate workflow `AgentRun`: each run is one
/// workflow, keyed by its run id, through Restate's ingress:
///
/// - `POST /AgentRun/{id}/run` with the prompt (a JSON string) starts it
///   (`/send` for not waiting) and gives its [`RunResult`]: the one the
///   same run gives in-process, as JSON, its stop reason as data
///   (`"answered"`, `{"max_turns": {"turns": 10}}`...);
/// - `GET`/`POST /AgentRun/{id}/waiting` gives the calls it waits on
///   ([`Waiting`], or `null`);
/// - `POST /AgentRun/{id}/decide` with [`Decisions`] resumes it.
///
/// The `decide` handler answers with a status that says whose fault a
/// refusal is: 404 for a run id that never started, 409 for decisions that
/// do not fit the run's state (it does not wait, they were sent already
/// for this wait, it ended, they name a call it does not hold), 400 for a
/// body that is not [`Decisions`]; a 500 is the worker's own failure.
///
/// Its steps are journaled by [`Journal`]: a worker that dies mid-run
/// loses nothing, the run goes on in another (or the same, restarted).
#[derive(Debug)]
pub struct AgentRun {
    agent: Agent,
}

impl AgentRun {
    /// The workflow of this agent's runs. Every worker of one Restate
    /// deployment must serve the same agent: a run replays on any of them.
    pub fn new(agent: Agent) -> Self {
        Self { agent }
    }
}

#[restate_sdk::workflow(name = "AgentRun", client_visibility = "pub(crate)")]
impl AgentRun {
    /// Run the agent from a prompt to its end, each step journaled. Its
    /// [`Phase`] is kept in the workflow's state, for `decide` to tell an
    /// unknown run from one that does not wait.
    #[handler]
    async fn run(&self, ctx: WorkflowContext<'_>, prompt: String) -> Result<Json<RunResult>, HandlerError> {
        ctx.set(PHASE, Json(Phase::Running));
        let result = self.agent.run_with(prompt, &Journal::new(&ctx)).await;
        ctx.set(PHASE, Json(Phase::Ended));
        Ok(Json(result.map_err(|error| TerminalError::new(error.to_string()))?))
    }

    /// The calls the run waits on, if it waits.
    #[handler]
    async fn waiting(&self, ctx: SharedWorkflowContext<'_>) -> Result<Json<Option<Waiting>>, HandlerError> {
        Ok(Json(ctx.get::<Json<Waiting>>(WAITING).await?.map(Json::into_inner)))
    }

    /// A person's decisions about the calls the run waits on.
    ///
    /// # Errors
    ///
    /// A terminal error whose code the ingress answers with: 404 when no
    /// run has this id; 409 when the run does not wait on a decision (it
    /// has not come to one, or has gone on, or has ended), when decisions
    /// were sent already for this wait, or when they name a call it does
    /// not wait on. (A body that does not read as [`Decisions`] is refused
    /// with 400 by restate-sdk before the handler runs.)
    #[handler]
    async fn decide(
        &self,
        ctx: SharedWorkflowContext<'_>,
        decisions: Json<Decisions>,
    ) -> Result<(), HandlerError> {
        let Some(Json(waiting)) = ctx.get::<Json<Waiting>>(WAITING).await? else {
            let refusal = match ctx.get::<Json<Phase>>(PHASE).await?.map(Json::into_inner) {
                None => TerminalError::new_with_code(404, format!("there is no run `{}`", ctx.key())),
                Some(Phase::Ended) => {
                    TerminalError::new_with_code(409, "the run has ended: it waits on no decision")
                }
                Some(Phase::Running) => TerminalError::new_with_code(
                    409,
                    "the run waits on no decision now: it has not come to one, or the calls it held were \
                     decided",
                ),
            };
            return Err(refusal.into());
        };
        let decisions = decisions.into_inner();
        if let Some(id) =
            decisions.keys().find(|id| !waiting.pending.iter().any(|pending| pending.call.id == **id))
        {
            let ids: Vec<_> = waiting.pending.iter().map(|pending| pending.call.id.to_string()).collect();
            let message = format!("the run does not wait on a call `{id}`; it waits on: {}", ids.join(", "));
            return Err(TerminalError::new_with_code(409, message).into());
        }
        let record = decided(&waiting.awakeable);
        if ctx.peek_promise::<Json<Decisions>>(&record).await?.is_some() {
            let message = "decisions were sent already for the calls the run waits on; it goes on with those";
            return Err(TerminalError::new_with_code(409, message).into());
        }
        ctx.resolve_promise(&record, Json(decisions.clone()));
        ctx.resolve_awakeable(&waiting.awakeable, Json(decisions));
        Ok(())
    }
}
