//! The agent's events as AG-UI events (the protocol of `@ag-ui/core`
//! 1.0.0): [`AguiEvent`], one event as its schema reads it, and
//! [`AguiAdapter`], a run's events into them.

use serde::Serialize;
use serde_json::Value;
use toolcall_agent::{AgentEvent, RunResult, StopReason};
use toolcall_core::ToolCall;

use crate::calls::Calls;

/// One AG-UI event: a JSON object whose `type` names it, sent as one SSE
/// event (`data: {...}`). Only the events an agent run produces are here;
/// the names are the protocol's.
///
/// ```
/// use toolcall_ui::AguiEvent;
///
/// let event = AguiEvent::TextMessageContent { message_id: "m1".into(), delta: "Hel".into() };
/// assert_eq!(event.to_sse(), "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"Hel\"}\n\n");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum AguiEvent {
    /// The run starts: always the first event.
    RunStarted {
        /// The conversation's id, as the request gave it.
        thread_id: String,
        /// The run's id, as the request gave it.
        run_id: String,
    },
    /// An assistant text message opens.
    TextMessageStart {
        /// The message's id.
        message_id: String,
        /// Always `assistant`.
        role: String,
    },
    /// More of a text message.
    TextMessageContent {
        /// The message's id.
        message_id: String,
        /// The text that follows.
        delta: String,
    },
    /// The text message is complete.
    TextMessageEnd {
        /// The message's id.
        message_id: String,
    },
    /// A span of reasoning opens (it holds one reasoning message).
    ReasoningStart {
        /// The span's id, its message's too.
        message_id: String,
    },
    /// A reasoning message opens.
    ReasoningMessageStart {
        /// The message's id.
        message_id: String,
        /// Always `reasoning`.
        role: String,
    },
    /// More of the model's visible reasoning.
    ReasoningMessageContent {
        /// The message's id.
        message_id: String,
        /// The text that follows.
        delta: String,
    },
    /// The reasoning message is complete.
    ReasoningMessageEnd {
        /// The message's id.
        message_id: String,
    },
    /// The span of reasoning is over.
    ReasoningEnd {
        /// The span's id.
        message_id: String,
    },
    /// A call opens, in the assistant message of its turn.
    ToolCallStart {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_call_name: String,
        /// The assistant message that holds the call.
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    },
    /// More of the call's argument text (JSON, in pieces).
    ToolCallArgs {
        /// The call's id.
        tool_call_id: String,
        /// The argument text that follows.
        delta: String,
    },
    /// The call's arguments are complete.
    ToolCallEnd {
        /// The call's id.
        tool_call_id: String,
    },
    /// A call's result: a tool message.
    ToolCallResult {
        /// The tool message's id.
        message_id: String,
        /// The call it answers.
        tool_call_id: String,
        /// What the model reads (for a denied or failed call, why).
        content: String,
        /// Always `tool`.
        role: String,
    },
    /// The run did not fail: always the last event, unless
    /// [`RunError`](Self::RunError).
    RunFinished {
        /// The conversation's id.
        thread_id: String,
        /// The run's id.
        run_id: String,
        /// The final answer, when the run gave one.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// Why the run ended.
        outcome: RunOutcome,
    },
    /// The run failed: the last event.
    RunError {
        /// What went wrong.
        message: String,
    },
}

/// Why a run ended, as `RUN_FINISHED.outcome` says it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum RunOutcome {
    /// The run completed.
    Success,
    /// The run waits for these calls to be approved.
    Interrupt {
        /// One per held call.
        interrupts: Vec<Interrupt>,
    },
    /// The run was stopped before it completed.
    Cancelled,
}

/// A call held for approval, as an AG-UI interrupt.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// The interrupt's id: the call's id.
    pub id: String,
    /// Always `tool_approval`.
    pub reason: String,
    /// For a person: which tool waits.
    pub message: String,
    /// The held call.
    pub tool_call_id: String,
    /// The answer a resume entry gives in its `payload`:
    /// `{"approved": true}`, or `{"approved": false, "reason": "..."}`.
    pub response_schema: Value,
}

/// The JSON Schema of an approval's answer ([`Interrupt::response_schema`]).
fn approval_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "approved": {"type": "boolean"},
            "reason": {"type": "string", "description": "why not, for the model (a denial)"},
        },
        "required": ["approved"],
    })
}

impl AguiEvent {
    /// The event as one server-sent event: `data: {json}` and a blank line.
    pub fn to_sse(&self) -> String {
        // A enum of strings and JSON values always serializes.
        let json = serde_json::to_string(self).unwrap_or_default();
        format!("data: {json}\n\n")
    }
}

/// Turns [`AgentEvent`]s, in order, into [`AguiEvent`]s: one adapter per run.
///
/// - each model turn is one assistant message: its text streams as
///   `TEXT_MESSAGE_*`, its calls as `TOOL_CALL_*` with that message as
///   parent (a call the model does not stream comes whole: start, args,
///   end); visible reasoning is a reasoning message of its own;
/// - results are `TOOL_CALL_RESULT`s, tool messages;
/// - the run's end is `RUN_FINISHED`, its `result` the answer, or
///   `RUN_ERROR`. A run paused on calls held for approval finishes with
///   the outcome `interrupt`, one interrupt per held call (its id the
///   call's). AG-UI resumes by a new run whose `resume` entries answer the
///   interrupts ([`AguiServer`](crate::AguiServer) takes them); the
///   adapter of that run is [`AguiAdapter::resuming`].
///
/// Message ids start with the run's id, so runs on one thread never reuse one.
///
/// ```
/// use toolcall_agent::AgentEvent;
/// use toolcall_ui::{AguiAdapter, AguiEvent};
///
/// let mut adapter = AguiAdapter::new("thread-1", "run-1");
/// let events = adapter.push(&AgentEvent::TextDelta("Hi".into()));
/// assert_eq!(events[1], AguiEvent::TextMessageContent { message_id: "run-1-1".into(), delta: "Hi".into() });
/// ```
pub struct AguiAdapter {
    thread_id: String,
    run_id: String,
    /// The current turn's assistant message.
    message: Option<String>,
    /// The open text message's id.
    text: Option<String>,
    /// The open reasoning message's id.
    reasoning: Option<String>,
    /// Ids given so far.
    ids: usize,
    /// The model's turn is over: what it writes next is a new message.
    answered: bool,
    /// A resumed run, until the model writes: its calls were shown by the
    /// run that paused.
    resumed: bool,
    calls: Calls,
}

impl std::fmt::Debug for AguiAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AguiAdapter").field("run_id", &self.run_id).finish_non_exhaustive()
    }
}

impl AguiAdapter {
    /// An adapter for a run, by the ids its request gave: the thread's and the run's.
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        Self {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            message: None,
            text: None,
            reasoning: None,
            ids: 0,
            answered: false,
            resumed: false,
            calls: Calls::default(),
        }
    }

    /// An adapter for a run that resumes a paused one: the held calls,
    /// which the run that paused showed, are not shown again (their
    /// results are), so a client that keeps the thread's messages holds
    /// each call once.
    ///
    /// ```
    /// use toolcall_agent::AgentEvent;
    /// use toolcall_core::ToolCall;
    /// use toolcall_ui::AguiAdapter;
    ///
    /// let mut adapter = AguiAdapter::resuming("thread-1", "run-2");
    /// assert!(adapter.push(&AgentEvent::ToolCall(ToolCall::new("c1", "get_weather", "{}"))).is_empty());
    /// ```
    pub fn resuming(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        Self { resumed: true, ..Self::new(thread_id, run_id) }
    }

    /// A whole run's events as an AG-UI SSE body (`text/event-stream`),
    /// from `RUN_STARTED` to `RUN_FINISHED` or `RUN_ERROR`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use futures::StreamExt;
    /// use toolcall_agent::{Agent, ScriptedModel};
    /// use toolcall_core::toolset::Toolset;
    /// use toolcall_ui::AguiAdapter;
    ///
    /// let agent = Agent::new(ScriptedModel::new().then_text("Hello."), Toolset::builder().build().unwrap()).unwrap();
    /// let body: Vec<String> = AguiAdapter::new("t1", "r1").stream(agent.stream("Hi")).collect().await;
    /// assert_eq!(body[0], "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n");
    /// assert!(body.last().unwrap().contains("RUN_FINISHED"));
    /// # }
    /// ```
    pub fn stream(
        mut self,
        events: impl futures::Stream<Item = AgentEvent>,
    ) -> impl futures::Stream<Item = String> {
        use futures::StreamExt;
        let started =
            AguiEvent::RunStarted { thread_id: self.thread_id.clone(), run_id: self.run_id.clone() };
        let events = events.flat_map(move |event| {
            futures::stream::iter(self.push(&event).into_iter().map(|event| event.to_sse()))
        });
        futures::stream::iter([started.to_sse()]).chain(events)
    }

    /// The AG-UI events of one event, in order (often none or one).
    pub fn push(&mut self, event: &AgentEvent) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        match event {
            AgentEvent::TextDelta(delta) => {
                self.model_output();
                self.close_reasoning(&mut out);
                let message_id = match &self.text {
                    Some(id) => id.clone(),
                    None => {
                        let id = self.message_id();
                        out.push(AguiEvent::TextMessageStart {
                            message_id: id.clone(),
                            role: "assistant".into(),
                        });
                        self.text = Some(id.clone());
                        id
                    }
                };
                out.push(AguiEvent::TextMessageContent { message_id, delta: delta.clone() });
            }
            AgentEvent::ReasoningDelta(delta) => {
                self.model_output();
                self.close_text(&mut out);
                let message_id = match &self.reasoning {
                    Some(id) => id.clone(),
                    None => {
                        let id = self.next_id();
                        out.push(AguiEvent::ReasoningStart { message_id: id.clone() });
                        out.push(AguiEvent::ReasoningMessageStart {
                            message_id: id.clone(),
                            role: "reasoning".into(),
                        });
                        self.reasoning = Some(id.clone());
                        id
                    }
                };
                out.push(AguiEvent::ReasoningMessageContent { message_id, delta: delta.clone() });
            }
            AgentEvent::CallDelta { index, id, name, arguments } => {
                self.model_output();
                self.close_parts(&mut out);
                if let Some(piece) = self.calls.delta(*index, id.as_deref(), name.as_deref(), arguments) {
                    if piece.first {
                        out.push(AguiEvent::ToolCallStart {
                            tool_call_id: piece.id.clone(),
                            tool_call_name: piece.name,
                            parent_message_id: Some(self.message_id()),
                        });
                    }
                    if !piece.delta.is_empty() {
                        out.push(AguiEvent::ToolCallArgs { tool_call_id: piece.id, delta: piece.delta });
                    }
                }
            }
            AgentEvent::Usage(_) => {
                // The model's turn is over, its calls' arguments complete.
                self.end_turn(&mut out);
                self.answered = true;
            }
            AgentEvent::ToolCall(call) => self.show(&mut out, call),
            AgentEvent::ApprovalRequested(pending) => self.show(&mut out, &pending.call),
            AgentEvent::ToolResult(result) => {
                let tool_call_id = result.id.to_string();
                out.push(AguiEvent::ToolCallResult {
                    message_id: format!("{}-result-{tool_call_id}", self.run_id),
                    tool_call_id,
                    content: result.content.clone(),
                    role: "tool".into(),
                });
            }
            AgentEvent::Finished(ended) => {
                self.end_turn(&mut out);
                out.push(match ended {
                    Ok(result) => self.finished(result),
                    Err(error) => AguiEvent::RunError { message: error.to_string() },
                });
            }
            // An event this adapter does not know shows nothing.
            _ => {}
        }
        out
    }

    fn finished(&self, result: &RunResult) -> AguiEvent {
        let (outcome, result) = match &result.stop {
            StopReason::Paused(state) => {
                let interrupts = state
                    .pending()
                    .iter()
                    .map(|pending| Interrupt {
                        id: pending.call.id.to_string(),
                        reason: "tool_approval".into(),
                        message: format!("`{}` needs approval", pending.call.name),
                        tool_call_id: pending.call.id.to_string(),
                        response_schema: approval_schema(),
                    })
                    .collect();
                (RunOutcome::Interrupt { interrupts }, None)
            }
            StopReason::Cancelled => (RunOutcome::Cancelled, None),
            _ => (RunOutcome::Success, Some(Value::String(result.answer.clone()))),
        };
        AguiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result,
            outcome,
        }
    }

    fn next_id(&mut self) -> String {
        self.ids += 1;
        format!("{}-{}", self.run_id, self.ids)
    }

    /// The current turn's assistant message id, given on first use.
    fn message_id(&mut self) -> String {
        if let Some(id) = &self.message {
            return id.clone();
        }
        let id = self.next_id();
        self.message = Some(id.clone());
        id
    }

    /// The model writes: after a finished turn, that is a new message.
    fn model_output(&mut self) {
        self.resumed = false;
        if self.answered {
            self.answered = false;
            self.message = None;
        }
    }

    /// Close what the turn left open: text, reasoning, streamed calls.
    fn end_turn(&mut self, out: &mut Vec<AguiEvent>) {
        self.close_parts(out);
        for tool_call_id in self.calls.turn_over() {
            out.push(AguiEvent::ToolCallEnd { tool_call_id });
        }
    }

    fn close_text(&mut self, out: &mut Vec<AguiEvent>) {
        if let Some(message_id) = self.text.take() {
            out.push(AguiEvent::TextMessageEnd { message_id });
        }
    }

    fn close_reasoning(&mut self, out: &mut Vec<AguiEvent>) {
        if let Some(message_id) = self.reasoning.take() {
            out.push(AguiEvent::ReasoningMessageEnd { message_id: message_id.clone() });
            out.push(AguiEvent::ReasoningEnd { message_id });
        }
    }

    fn close_parts(&mut self, out: &mut Vec<AguiEvent>) {
        self.close_text(out);
        self.close_reasoning(out);
    }

    /// A whole call the model did not stream: start, arguments, end.
    fn show(&mut self, out: &mut Vec<AguiEvent>, call: &ToolCall) {
        let tool_call_id = call.id.to_string();
        if self.resumed || !self.calls.start(&tool_call_id) {
            return;
        }
        out.push(AguiEvent::ToolCallStart {
            tool_call_id: tool_call_id.clone(),
            tool_call_name: call.name.to_string(),
            parent_message_id: Some(self.message_id()),
        });
        if !call.arguments.is_empty() {
            out.push(AguiEvent::ToolCallArgs {
                tool_call_id: tool_call_id.clone(),
                delta: call.arguments.clone(),
            });
        }
        out.push(AguiEvent::ToolCallEnd { tool_call_id });
    }
}
