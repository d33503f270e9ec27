//! A run paused for a person: the calls that wait for approval, what was
//! decided about each, and everything the run needs to go on later, as
//! data that can be saved and loaded in another process.

use serde::{Deserialize, Serialize};
use toolcall_core::{ToolCall, ToolError, ToolResult};

use crate::model::{ModelName, Usage};
use crate::run::Progress;
use crate::{RunBudget, Transcript};

/// What a person decided about one held call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Run the call as the model made it.
    Approve,
    /// Run the call with these arguments instead; they go through the
    /// tool's argument checks like any call's, and the transcript records
    /// the call with them.
    ApproveWith {
        /// The arguments to run with, as JSON text.
        arguments: String,
    },
    /// Do not run the call; the model reads the reason as its result.
    Deny {
        /// Why, for the model.
        reason: String,
    },
}

/// A call that waits for approval: one of the run's own, or one of a
/// sub-agent's ([`AgentTool`](crate::AgentTool)), whose run paused inside
/// the call that started it and pauses the run above with it.
///
/// A decision names it by its [`id`](Self::id): the call's own id for the
/// run's own calls; for a sub-agent's, the ids of the agent-tool calls on
/// its way down and its own, joined by `/` (`c1/call_7`), since a
/// sub-agent's model picks its ids without knowing the caller's and two
/// runs may use the same one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The call as the model made it (the sub-agent's model, for a
    /// sub-agent's call).
    pub call: ToolCall,
    /// What was decided so far; `None` until someone decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The agent tools from the run down to the one whose run holds the
    /// call, as the models called them (`["researcher"]`, then
    /// `["researcher", "fact_checker"]` a level deeper); empty for the
    /// run's own calls (and in a state saved before sub-agents could pause).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
    /// The ids of the agent-tool calls along [`path`](Self::path), one per
    /// name, the run's own call first: which call of an agent tool the
    /// sub-agent works for when a turn calls it twice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_path: Vec<String>,
    /// The call's place in its turn (its own run's turn).
    position: usize,
}

/// A result of the paused turn, at its place in the turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Placed {
    pub(crate) position: usize,
    pub(crate) result: ToolResult,
}

/// Which pending call a decision named, when none has that id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no call waiting for approval has the id `{id}`; the pending calls are: {}", pending.join(", "))]
pub struct UnknownCall {
    /// The id given.
    pub id: String,
    /// The ids of the calls that wait.
    pub pending: Vec<String>,
}

/// A run stopped because calls wait for a person's approval
/// ([`StopReason::Paused`](crate::StopReason::Paused)). The turn's other
/// calls ran; these did not, and nothing runs them but
/// [`Agent::run`](crate::Agent::run) after a decision: a state that is
/// dropped, saved for days or loaded in another process runs nothing.
///
/// It is the run's [`Transcript`] and its [`PausedTurn`]: a store that
/// keeps the conversation's messages already keeps the first, and needs
/// only the second beside them ([`RunState::split`], [`RunState::join`]).
///
/// ```
/// # use toolcall_agent::RunState;
/// fn review(state: &mut RunState) {
///     let ids: Vec<_> = state.pending().iter().map(|p| p.call.id.clone()).collect();
///     for id in ids {
///         state.deny(&id, "not today").unwrap();
///     }
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    /// The run so far; its last message is the turn whose calls wait.
    transcript: Transcript,
    /// Everything else; flattened, so a state saved before the split loads.
    #[serde(flatten)]
    turn: PausedTurn,
}

/// A paused run without its transcript: the held turn (the calls that ran,
/// the calls that wait and what was decided) and what the run spent. It
/// belongs after the transcript's last message, which holds the turn's
/// calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedTurn {
    /// The turn's calls that ran, each at its place.
    done: Vec<Placed>,
    /// The turn's calls that wait.
    pending: Vec<Pending>,
    /// What the run spent of its limits.
    budget: RunBudget,
    /// The tokens of each request so far.
    usage: Vec<Usage>,
    /// The model that answered each request so far (none in a state saved
    /// before they were recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    models: Vec<ModelName>,
    /// The turns with tools so far.
    turns: usize,
    /// The turn's agent-tool calls whose sub-agent paused, each with the
    /// sub-agent's paused run (whose calls are among `pending`, with their
    /// path, for show and decisions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    nested: Vec<Below>,
    /// The W3C trace context (`traceparent`) of the span of the run that
    /// paused, which the run that resumes it links to; none without the
    /// feature `otel`, without a trace, or in a state saved before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    traceparent: Option<String>,
}

/// An agent-tool call of the paused turn whose sub-agent paused: the call,
/// its place in the turn, and the sub-agent's paused run, which the
/// resumed call goes on with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Below {
    pub(crate) position: usize,
    pub(crate) call: ToolCall,
    pub(crate) state: Box<RunState>,
}

impl Below {
    /// Whether anything in the sub-agent's run was decided, at any depth:
    /// then resuming it gets somewhere; otherwise it would only pause again.
    pub(crate) fn decided(&self) -> bool {
        self.state.pending().iter().any(|pending| pending.decision.is_some())
    }

    /// The sub-agent's pending calls as the run above sees them: under the
    /// call's tool name and id.
    pub(crate) fn pending(&self) -> impl Iterator<Item = Pending> + '_ {
        let (name, id) = ([self.call.name.to_string()], [self.call.id.to_string()]);
        self.state.pending().iter().map(move |pending| pending.clone().under(&name, &id))
    }
}

/// A turn held for decisions: its calls that ran, each at its place, those
/// that wait (the run's own), and its agent-tool calls whose sub-agent
/// paused.
pub(crate) struct Held {
    pub(crate) done: Vec<Placed>,
    pub(crate) pending: Vec<Pending>,
    pub(crate) nested: Vec<Below>,
}

/// A paused run's parts, as the loop takes them apart to resume it: what
/// the run has done, and the turn it holds.
pub(crate) struct Parts {
    pub(crate) progress: Progress,
    pub(crate) held: Held,
}

impl RunState {
    pub(crate) fn new(parts: Parts) -> Self {
        let Parts {
            progress: Progress { transcript, usage, models, budget, turns },
            held: Held { done, mut pending, nested },
        } = parts;
        // The sub-agents' calls are listed with the run's own: one list to
        // show and decide, whatever the depth.
        pending.extend(nested.iter().flat_map(Below::pending));
        Self {
            transcript,
            turn: PausedTurn { done, pending, budget, usage, models, turns, nested, traceparent: None },
        }
    }

    /// The state's parts, where the run resumes: the sub-agents' calls are
    /// in their own paused runs, with their decisions.
    pub(crate) fn into_parts(self) -> Parts {
        let PausedTurn { done, mut pending, budget, usage, models, turns, nested, traceparent: _ } =
            self.turn;
        pending.retain(|pending| pending.path.is_empty());
        Parts {
            progress: Progress { transcript: self.transcript, usage, models, budget, turns },
            held: Held { done, pending, nested },
        }
    }

    /// The transcript and the paused turn, to keep apart (a store keeps
    /// the transcript as the conversation's messages).
    ///
    /// ```
    /// # use toolcall_agent::RunState;
    /// fn store(state: RunState) -> RunState {
    ///     let (transcript, turn) = state.split();
    ///     // ... the messages in one place, the turn as JSON in another ...
    ///     RunState::join(transcript, turn)
    /// }
    /// ```
    pub fn split(self) -> (Transcript, PausedTurn) {
        (self.transcript, self.turn)
    }

    /// A paused run from its transcript and its turn ([`Self::split`]).
    /// The transcript must be the one the turn was paused in (its last
    /// message holds the turn's calls); with another, the resumed run
    /// answers the calls the transcript's last message holds, a call
    /// without a decision denied.
    pub fn join(transcript: Transcript, turn: PausedTurn) -> Self {
        Self { transcript, turn }
    }

    /// The calls that wait, with what was decided so far: the run's own in
    /// turn order, then its sub-agents' (those with a
    /// [`path`](Pending::path)), each named by its [`id`](Pending::id).
    pub fn pending(&self) -> &[Pending] {
        self.turn.pending()
    }

    /// The run so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The W3C trace context of the run that paused, as a `traceparent`
    /// (`00-{trace id}-{span id}-{flags}`): its `invoke_agent` span, which
    /// the run that resumes this state links to (an OpenTelemetry span
    /// link), in this process or another. Recorded with the feature `otel`
    /// when the run was traced through tracing-opentelemetry; `None`
    /// otherwise.
    pub fn traceparent(&self) -> Option<&str> {
        self.turn.traceparent()
    }

    /// Keep the trace context of the run that paused.
    pub(crate) fn set_traceparent(&mut self, traceparent: Option<String>) {
        self.turn.traceparent = traceparent;
    }

    /// Decide about the pending call with this id ([`Pending::id`]: a
    /// sub-agent's call's is prefixed with the agent-tool calls above it,
    /// `c1/call_7`); a later decision replaces an earlier one.
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`.
    pub fn decide(&mut self, id: &str, decision: Decision) -> Result<&mut Self, UnknownCall> {
        self.turn.decide(id, decision)?;
        Ok(self)
    }

    /// Run this call as the model made it.
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`.
    pub fn approve(&mut self, id: &str) -> Result<&mut Self, UnknownCall> {
        self.decide(id, Decision::Approve)
    }

    /// Run this call with other arguments (JSON text).
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`. The arguments
    /// are not checked here: the tool reads them when the run resumes.
    pub fn approve_with(&mut self, id: &str, arguments: impl Into<String>) -> Result<&mut Self, UnknownCall> {
        self.decide(id, Decision::ApproveWith { arguments: arguments.into() })
    }

    /// Do not run this call; the model reads `reason`.
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`.
    pub fn deny(&mut self, id: &str, reason: impl Into<String>) -> Result<&mut Self, UnknownCall> {
        self.decide(id, Decision::Deny { reason: reason.into() })
    }
}

impl PausedTurn {
    /// The calls that wait, in turn order, with what was decided so far.
    pub fn pending(&self) -> &[Pending] {
        &self.pending
    }

    /// The results of the turn's calls that ran before it paused (those
    /// that needed no approval), in turn order.
    pub fn done(&self) -> impl Iterator<Item = &ToolResult> {
        self.done.iter().map(|placed| &placed.result)
    }

    /// The W3C trace context of the run that paused
    /// ([`RunState::traceparent`]).
    pub fn traceparent(&self) -> Option<&str> {
        self.traceparent.as_deref()
    }

    /// Decide about the pending call with this id ([`Pending::id`]; a
    /// sub-agent's call's paused run takes the decision too); a later
    /// decision replaces an earlier one.
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`.
    pub fn decide(&mut self, id: &str, decision: Decision) -> Result<&mut Self, UnknownCall> {
        let unknown = |pending: &[Pending]| UnknownCall {
            id: id.to_owned(),
            pending: pending.iter().map(Pending::id).collect(),
        };
        let Some(at) = self.pending.iter().position(|pending| pending.is(id)) else {
            return Err(unknown(&self.pending));
        };
        let pending = &self.pending[at];
        if let Some((outer, rest)) = pending.call_path.split_first() {
            // A sub-agent's call: its paused run, which the resumed call
            // goes on with, takes the decision, under the id it knows there.
            let inner = Pending { call_path: rest.to_vec(), ..pending.clone() }.id();
            let Some(below) = self.nested.iter_mut().find(|below| below.call.id == outer.as_str()) else {
                return Err(unknown(&self.pending));
            };
            below.state.decide(&inner, decision.clone())?;
        }
        self.pending[at].decision = Some(decision);
        Ok(self)
    }
}

impl Pending {
    pub(crate) fn new(position: usize, call: ToolCall) -> Self {
        Self { call, decision: None, path: Vec::new(), call_path: Vec::new(), position }
    }

    /// What a decision names this call by: its id for the run's own call;
    /// for a sub-agent's, the ids of the agent-tool calls above it and its
    /// own, joined by `/` (`c1/call_7`), so that ids the sub-agent's model
    /// shares with the caller's are not confused.
    ///
    /// ```
    /// use toolcall_agent::Pending;
    /// use toolcall_core::ToolCall;
    ///
    /// let pending: Pending = serde_json::from_value(serde_json::json!({
    ///     "call": ToolCall::new("c1", "remove_dir", r#"{"path":"tmp"}"#),
    ///     "path": ["janitor"],
    ///     "call_path": ["c1"],
    ///     "position": 0,
    /// }))
    /// .unwrap();
    /// assert_eq!(pending.id(), "c1/c1");
    /// ```
    pub fn id(&self) -> String {
        let mut id = String::new();
        for outer in &self.call_path {
            id.push_str(outer);
            id.push('/');
        }
        id.push_str(&self.call.id);
        id
    }

    /// The call as a run above sees it: under the agent tools `path`,
    /// called as `call_path`.
    pub(crate) fn under(self, path: &[String], call_path: &[String]) -> Self {
        Self {
            path: path.iter().cloned().chain(self.path).collect(),
            call_path: call_path.iter().cloned().chain(self.call_path).collect(),
            ..self
        }
    }

    /// Whether [`Self::id`] is `id`, without building it.
    fn is(&self, id: &str) -> bool {
        let mut rest = id;
        for outer in &self.call_path {
            match rest.strip_prefix(outer.as_str()).and_then(|rest| rest.strip_prefix('/')) {
                Some(after) => rest = after,
                None => return false,
            }
        }
        rest == self.call.id
    }

    pub(crate) fn position(&self) -> usize {
        self.position
    }
}

/// The result a denied call gives the model.
pub(crate) fn denied(call: &ToolCall, reason: &str) -> ToolResult {
    let error = ToolError::Denied(format!(
        "a person denied this call of `{}`, so it did not run: {reason}",
        call.name
    ));
    ToolResult::error(call, &error)
}

/// The turn's results in call order: each placed result at its place, and
/// a denial where a saved state has none (it cannot run unapproved).
pub(crate) fn in_turn_order(calls: &[ToolCall], placed: Vec<Placed>) -> Vec<ToolResult> {
    let mut slots: Vec<Option<ToolResult>> = vec![None; calls.len()];
    for Placed { position, result } in placed {
        if let Some(slot) = slots.get_mut(position) {
            *slot = Some(result);
        }
    }
    slots
        .into_iter()
        .zip(calls)
        .map(|(slot, call)| slot.unwrap_or_else(|| denied(call, "the saved run has no decision for it")))
        .collect()
}
