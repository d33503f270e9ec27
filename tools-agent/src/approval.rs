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

/// A call that waits for approval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The call as the model made it.
    pub call: ToolCall,
    /// What was decided so far; `None` until someone decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The call's place in its turn.
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
    /// The W3C trace context (`traceparent`) of the span of the run that
    /// paused, which the run that resumes it links to; none without the
    /// feature `otel`, without a trace, or in a state saved before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    traceparent: Option<String>,
}

/// A turn held for decisions: its calls that ran, each at its place, and
/// those that wait.
pub(crate) struct Held {
    pub(crate) done: Vec<Placed>,
    pub(crate) pending: Vec<Pending>,
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
            held: Held { done, pending },
        } = parts;
        Self {
            transcript,
            turn: PausedTurn { done, pending, budget, usage, models, turns, traceparent: None },
        }
    }

    /// The state's parts, where the run resumes.
    pub(crate) fn into_parts(self) -> Parts {
        let PausedTurn { done, pending, budget, usage, models, turns, traceparent: _ } = self.turn;
        Parts {
            progress: Progress { transcript: self.transcript, usage, models, budget, turns },
            held: Held { done, pending },
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

    /// The calls that wait, in turn order, with what was decided so far.
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

    /// Decide about the pending call with this id (a later decision
    /// replaces an earlier one).
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

    /// Decide about the pending call with this id (a later decision
    /// replaces an earlier one).
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`.
    pub fn decide(&mut self, id: &str, decision: Decision) -> Result<&mut Self, UnknownCall> {
        match self.pending.iter_mut().find(|pending| pending.call.id == id) {
            Some(pending) => {
                pending.decision = Some(decision);
                Ok(self)
            }
            None => Err(UnknownCall {
                id: id.to_owned(),
                pending: self.pending.iter().map(|pending| pending.call.id.to_string()).collect(),
            }),
        }
    }
}

impl Pending {
    pub(crate) fn new(position: usize, call: ToolCall) -> Self {
        Self { call, decision: None, position }
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
