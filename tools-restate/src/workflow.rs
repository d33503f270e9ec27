//! The agent run as a Restate workflow: `run` executes it (once per run
//! id), `waiting` shows the calls held for a person, `decide` takes their
//! decisions.

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use toolcall_agent::{Agent, Pending, RunResult};

use crate::{Decisions, Journal};

/// The workflow state's key of the calls a run waits on.
pub(crate) const WAITING: &str = "waiting";

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
    /// Run the agent from a prompt to its end, each step journaled.
    #[handler]
    async fn run(&self, ctx: WorkflowContext<'_>, prompt: String) -> Result<Json<RunResult>, HandlerError> {
        let journal = Journal::new(&ctx);
        let result = self
            .agent
            .run_with(prompt, &journal)
            .await
            .map_err(|error| TerminalError::new(error.to_string()))?;
        Ok(Json(result))
    }

    /// The calls the run waits on, if it waits.
    #[handler]
    async fn waiting(&self, ctx: SharedWorkflowContext<'_>) -> Result<Json<Option<Waiting>>, HandlerError> {
        Ok(Json(ctx.get::<Json<Waiting>>(WAITING).await?.map(Json::into_inner)))
    }

    /// A person's decisions about the calls the run waits on; refused if
    /// the run waits on none, or for an id it does not wait on.
    #[handler]
    async fn decide(
        &self,
        ctx: SharedWorkflowContext<'_>,
        decisions: Json<Decisions>,
    ) -> Result<(), HandlerError> {
        let Some(Json(waiting)) = ctx.get::<Json<Waiting>>(WAITING).await? else {
            return Err(TerminalError::new("the run waits on no decision").into());
        };
        let decisions = decisions.into_inner();
        if let Some(id) =
            decisions.keys().find(|id| !waiting.pending.iter().any(|pending| pending.call.id == **id))
        {
            let ids: Vec<_> = waiting.pending.iter().map(|pending| pending.call.id.to_string()).collect();
            let message = format!("the run does not wait on a call `{id}`; it waits on: {}", ids.join(", "));
            return Err(TerminalError::new_with_code(400, message).into());
        }
        ctx.resolve_awakeable(&waiting.awakeable, Json(decisions));
        Ok(())
    }
}
