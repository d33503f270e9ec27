//! A durable run's progress, kept in its workflow's state as it goes, for
//! a reader in another process (a chat server, a dashboard) to follow
//! while the run is under way: each step the run reports, in order.
//!
//! The run's events are written where the loop reports them
//! ([`Effects::record`]), between its journaled steps and in their order,
//! so a replay writes the same steps at the same places: a reader sees
//! each step once, whatever the crashes. The model's text comes whole,
//! one [`Step::Text`] per response, as the run records it (a replay could
//! not give its pieces).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use toolcall_agent::{
    AgentEvent, Approval, Effects, Model, ModelError, ModelEvent, ModelRequest, ModelResponse, Pending,
    RunState, Usage,
};
use toolcall_core::{ToolCall, ToolContext, ToolResult, Toolset};

/// One step of a durable run's progress, as the workflow's `steps`
/// handler gives it, as JSON (`{"type": "call", "call": {...}}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Step {
    /// The text of one model response, whole.
    Text {
        /// The text.
        text: String,
    },
    /// The visible reasoning of one model response, whole.
    Reasoning {
        /// The reasoning's text.
        text: String,
    },
    /// A call about to run.
    Call {
        /// The call.
        call: ToolCall,
    },
    /// A call's result.
    Result {
        /// The result.
        result: ToolResult,
    },
    /// A call held for a person's decision.
    Approval {
        /// The call, with its id for the decision.
        pending: Pending,
    },
    /// The tokens of one model request.
    Usage {
        /// The tokens.
        usage: Usage,
    },
    /// The run went on with another agent.
    Handoff {
        /// The agent that handed off, if it has a name.
        from: Option<String>,
        /// The agent the conversation went to.
        to: String,
    },
}

impl Step {
    /// The step an event the run records ([`Effects::record`]) is, if it
    /// is one a reader is shown. A sub-agent's events are not recorded
    /// here: its effects ([`Effects::below`]) are the journal's, which
    /// records nothing; the reader sees its agent tool's call and result.
    pub fn of(event: &AgentEvent) -> Option<Self> {
        Some(match event {
            // Whole, as the run records them: one of each per response.
            AgentEvent::TextDelta(text) => Self::Text { text: text.clone() },
            AgentEvent::ReasoningDelta(text) => Self::Reasoning { text: text.clone() },
            AgentEvent::ToolCall(call) => Self::Call { call: call.clone() },
            AgentEvent::ToolResult(result) => Self::Result { result: result.clone() },
            AgentEvent::ApprovalRequested(pending) => Self::Approval { pending: pending.clone() },
            AgentEvent::Usage(usage) => Self::Usage { usage: *usage },
            AgentEvent::Handoff { from, to } => Self::Handoff { from: from.clone(), to: to.clone() },
            _ => return None,
        })
    }

    /// The step as the event an in-process run's stream has for it (the
    /// text and reasoning as one piece each).
    pub fn into_event(self) -> AgentEvent {
        match self {
            Self::Text { text } => AgentEvent::TextDelta(text),
            Self::Reasoning { text } => AgentEvent::ReasoningDelta(text),
            Self::Call { call } => AgentEvent::ToolCall(call),
            Self::Result { result } => AgentEvent::ToolResult(result),
            Self::Approval { pending } => AgentEvent::ApprovalRequested(pending),
            Self::Usage { usage } => AgentEvent::Usage(usage),
            Self::Handoff { from, to } => AgentEvent::Handoff { from, to },
        }
    }
}

/// The workflow state's key of the run's `n`th step (from 0).
pub(crate) fn step_key(n: u64) -> String {
    format!("step:{n}")
}

/// The most steps one read gives.
pub(crate) const MAX_READ: u64 = 500;

/// The run's steps from the `after`th on, up to [`MAX_READ`] of them: the
/// `steps` handler's answer.
pub(crate) async fn read(ctx: &SharedWorkflowContext<'_>, after: u64) -> Result<Vec<Step>, TerminalError> {
    let mut steps = Vec::new();
    for n in after..after.saturating_add(MAX_READ) {
        match ctx.get::<Json<Step>>(&step_key(n)).await? {
            Some(Json(step)) => steps.push(step),
            None => break,
        }
    }
    Ok(steps)
}

/// Effects that write the run's steps to its workflow's state, around
/// `inner` (the [`Journal`](crate::Journal)), which makes them happen;
/// and, for a caller that keeps paused runs itself, that end the run
/// paused on a held call rather than wait for a decision.
pub(crate) struct Recorded<'c, E> {
    ctx: &'c WorkflowContext<'c>,
    inner: E,
    /// A held call ends the run paused.
    pause: bool,
    /// The steps are written (a reader follows the run).
    follow: bool,
    /// The steps written so far.
    written: AtomicU64,
}

impl<'c, E: Effects> Recorded<'c, E> {
    pub(crate) fn new(ctx: &'c WorkflowContext<'c>, inner: E, pause: bool, follow: bool) -> Self {
        Self { ctx, inner, pause, follow, written: AtomicU64::new(0) }
    }

    fn write(&self, step: Step) {
        let n = self.written.fetch_add(1, Ordering::SeqCst);
        self.ctx.set(&step_key(n), Json(step));
    }
}

impl<E: Effects> std::fmt::Debug for Recorded<'_, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorded").field("written", &self.written).finish_non_exhaustive()
    }
}

impl<E: Effects> Effects for Recorded<'_, E> {
    fn request<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.inner.request(model, request)
    }

    fn request_streamed<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelEvent) + Send + Sync),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.inner.request_streamed(model, request, deltas)
    }

    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approval: Approval,
    ) -> BoxFuture<'a, Vec<ToolResult>> {
        self.inner.run_calls(toolset, context, calls, approval)
    }

    fn decide<'a>(&'a self, state: &'a RunState) -> BoxFuture<'a, Result<Option<RunState>, ModelError>> {
        if self.pause {
            return Box::pin(async { Ok(None) });
        }
        self.inner.decide(state)
    }

    fn record(&self, event: &AgentEvent) {
        if let Some(step) = Step::of(event).filter(|_| self.follow) {
            self.write(step);
        }
        self.inner.record(event);
    }

    fn below(&self) -> Option<Arc<dyn Effects>> {
        self.inner.below()
    }
}
