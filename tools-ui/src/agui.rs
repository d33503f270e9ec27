//! The agent's events as AG-UI events (the protocol of `@ag-ui/core`
//! 1.0.0): [`AguiEvent`], one event as its schema reads it, and
//! [`AguiAdapter`], which renders what the shared state machine
//! ([`Track`]) says to show as those events, with the message ids and the state
//! this protocol needs.

use serde::Serialize;
use serde_json::{Map, Value, json};
use toolcall_agent::{AgentEvent, RunResult, StopReason};
use toolcall_core::{Media, Part, Source, ToolResult};

use crate::track::{Show, Track};

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
        /// What the model reads (for a denied or failed call, why), as a
        /// string; for a result with images or files, its parts: that
        /// text as a `text` part, then each of the result's parts in order
        /// (`text`, JSON as `text`, `image`, `audio`, `video`, `document`,
        /// each with its `source`: `{"type": "url", "value": url}`, or
        /// `{"type": "data", "value": base64}` for bytes up to the inline
        /// size; bigger bytes are left out). `@ag-ui/core` 1.0.0 takes
        /// both.
        content: Value,
        /// Always `tool`.
        role: String,
    },
    /// The whole state of the run, for the client to take in place of its
    /// own: the state the input gave, with the artifact of each tool that
    /// gave one so far under the tool's name.
    StateSnapshot {
        /// The state.
        snapshot: Value,
    },
    /// A change to the state the client has: a JSON Patch (RFC 6902).
    StateDelta {
        /// The operations, in order.
        delta: Vec<Value>,
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
/// - results are `TOOL_CALL_RESULT`s, tool messages: the content the model
///   reads, with the result's images and files as parts when it has some
///   ([`AguiEvent::ToolCallResult`]);
/// - a tool's artifact goes into the run's state under the tool's name:
///   the first of the run as a `STATE_SNAPSHOT` (the state the input gave,
///   [`AguiAdapter::with_state`], with the artifact), each later one as a
///   `STATE_DELTA` that sets the tool's member (one `add` operation, which
///   RFC 6902 makes a replace when the member is there: an artifact is a
///   whole, so a diff inside it would save bytes only, for a dependency);
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
    /// What the run shows next, whatever the protocol.
    track: Track,
    /// What it shows, as AG-UI events.
    events: Events,
}

/// What rendering as AG-UI events needs: the ids, and the state.
struct Events {
    thread_id: String,
    run_id: String,
    /// The current turn's assistant message.
    message: Option<String>,
    /// The open text or reasoning message's id.
    block: String,
    /// Ids given so far.
    ids: usize,
    /// The state the client has once it was sent: the input's, with the
    /// artifacts so far.
    state: Value,
    /// The state was sent whole: what changes now goes as deltas.
    state_sent: bool,
    /// The most bytes of an image or file sent in a result, base64.
    max_inline: usize,
}

impl std::fmt::Debug for AguiAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AguiAdapter").field("run_id", &self.events.run_id).finish_non_exhaustive()
    }
}

impl AguiAdapter {
    /// The most bytes of an image or file a new adapter sends in a
    /// result, base64: 256 KiB, as [`UiAdapter`](crate::UiAdapter) does.
    pub const MAX_INLINE_BYTES: usize = crate::UiAdapter::MAX_INLINE_BYTES;

    /// An adapter for a run, by the ids its request gave: the thread's and the run's.
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        Self {
            track: Track::default(),
            events: Events {
                thread_id: thread_id.into(),
                run_id: run_id.into(),
                message: None,
                block: String::new(),
                ids: 0,
                state: Value::Object(Map::new()),
                state_sent: false,
                max_inline: Self::MAX_INLINE_BYTES,
            },
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
        Self { track: Track::resuming(), ..Self::new(thread_id, run_id) }
    }

    /// The same adapter, the run's state starting from `state` (the
    /// input's `state`, which the client holds): the first artifact's
    /// snapshot keeps what it holds beside the artifacts. A state that is
    /// not a JSON object has no place for them: the snapshot replaces it.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolcall_agent::AgentEvent;
    /// use toolcall_core::{Outcome, ToolResult};
    /// use toolcall_ui::{AguiAdapter, AguiEvent};
    ///
    /// let mut adapter = AguiAdapter::new("t1", "r1").with_state(json!({"theme": "dark"}));
    /// let mut result = ToolResult::new("c1", "forecast", "18°C", Outcome::Success);
    /// result.artifact = Some(json!({"celsius": 18}));
    /// let events = adapter.push(&AgentEvent::ToolResult(result.clone()));
    /// let snapshot = json!({"theme": "dark", "forecast": {"celsius": 18}});
    /// assert_eq!(events[1], AguiEvent::StateSnapshot { snapshot });
    /// result.artifact = Some(json!({"celsius": 19}));
    /// let events = adapter.push(&AgentEvent::ToolResult(result));
    /// let delta = vec![json!({"op": "add", "path": "/forecast", "value": {"celsius": 19}})];
    /// assert_eq!(events[1], AguiEvent::StateDelta { delta });
    /// ```
    #[must_use]
    pub fn with_state(mut self, state: Value) -> Self {
        if state.is_object() {
            self.events.state = state;
        }
        self
    }

    /// The same adapter, sending images and files of up to `bytes` bytes
    /// in results, base64; bigger ones given as bytes are left out (one
    /// given as a URL is always sent, as its URL).
    #[must_use]
    pub fn with_max_inline_bytes(mut self, bytes: usize) -> Self {
        self.events.max_inline = bytes;
        self
    }

    /// A whole run's events as an AG-UI SSE body (`text/event-stream`),
    /// from `RUN_STARTED` to `RUN_FINISHED` or `RUN_ERROR`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use futures::StreamExt;
    /// use toolcall_agent::{Agent};
    /// use toolcall_agent::testing::{ScriptedModel};
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
        let started = AguiEvent::RunStarted {
            thread_id: self.events.thread_id.clone(),
            run_id: self.events.run_id.clone(),
        };
        let events = events.flat_map(move |event| {
            futures::stream::iter(self.push(&event).into_iter().map(|event| event.to_sse()))
        });
        futures::stream::iter([started.to_sse()]).chain(events)
    }

    /// The AG-UI events of one event, in order (often none or one).
    pub fn push(&mut self, event: &AgentEvent) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        let Self { track, events } = self;
        track.push(event, |show| events.render(show, &mut out));
        out
    }
}

impl Events {
    /// What to show as its AG-UI events.
    fn render(&mut self, show: Show<'_>, out: &mut Vec<AguiEvent>) {
        match show {
            // A new step is the model's next turn: a new assistant message.
            Show::StepStart => self.message = None,
            Show::StepEnd | Show::Approval { .. } | Show::Answer(_) | Show::Agent(_) => {}
            Show::TextStart => {
                self.block = self.message_id();
                out.push(AguiEvent::TextMessageStart {
                    message_id: self.block.clone(),
                    role: "assistant".into(),
                });
            }
            Show::Text(delta) => out.push(AguiEvent::TextMessageContent {
                message_id: self.block.clone(),
                delta: delta.to_owned(),
            }),
            Show::TextEnd => {
                out.push(AguiEvent::TextMessageEnd { message_id: std::mem::take(&mut self.block) });
            }
            Show::ReasoningStart => {
                self.block = self.next_id();
                out.push(AguiEvent::ReasoningStart { message_id: self.block.clone() });
                out.push(AguiEvent::ReasoningMessageStart {
                    message_id: self.block.clone(),
                    role: "reasoning".into(),
                });
            }
            Show::Reasoning(delta) => out.push(AguiEvent::ReasoningMessageContent {
                message_id: self.block.clone(),
                delta: delta.to_owned(),
            }),
            Show::ReasoningEnd => {
                let message_id = std::mem::take(&mut self.block);
                out.push(AguiEvent::ReasoningMessageEnd { message_id: message_id.clone() });
                out.push(AguiEvent::ReasoningEnd { message_id });
            }
            Show::CallStart { id, name } => out.push(AguiEvent::ToolCallStart {
                tool_call_id: id,
                tool_call_name: name,
                parent_message_id: Some(self.message_id()),
            }),
            Show::CallArgs { id, delta } => out.push(AguiEvent::ToolCallArgs { tool_call_id: id, delta }),
            Show::CallArgsEnd { id } => out.push(AguiEvent::ToolCallEnd { tool_call_id: id }),
            // A streamed call was shown whole already.
            Show::Call { streamed: true, .. } => {}
            // A call the model did not stream: its arguments at once, and its end.
            Show::Call { call, streamed: false } => {
                let tool_call_id = call.id.to_string();
                if !call.arguments.is_empty() {
                    out.push(AguiEvent::ToolCallArgs {
                        tool_call_id: tool_call_id.clone(),
                        delta: call.arguments.clone(),
                    });
                }
                out.push(AguiEvent::ToolCallEnd { tool_call_id });
            }
            Show::Result(result) => {
                let tool_call_id = result.id.to_string();
                out.push(AguiEvent::ToolCallResult {
                    message_id: format!("{}-result-{tool_call_id}", self.run_id),
                    tool_call_id,
                    content: content(result, self.max_inline),
                    role: "tool".into(),
                });
                if result.outcome.is_success()
                    && let Some(artifact) = &result.artifact
                {
                    out.push(self.artifact(&result.name, artifact));
                }
            }
            Show::End(Ok(result)) => out.push(self.finished(result)),
            Show::End(Err(error)) => out.push(AguiEvent::RunError { message: error.to_string() }),
        }
    }

    /// The state with `tool`'s artifact set: whole the first time, then as
    /// the patch that sets it.
    fn artifact(&mut self, tool: &str, artifact: &Value) -> AguiEvent {
        if let Value::Object(state) = &mut self.state {
            state.insert(tool.to_owned(), artifact.clone());
        }
        if !self.state_sent {
            self.state_sent = true;
            return AguiEvent::StateSnapshot { snapshot: self.state.clone() };
        }
        // A JSON Pointer's member name, `~` and `/` escaped (RFC 6901).
        let path = format!("/{}", tool.replace('~', "~0").replace('/', "~1"));
        AguiEvent::StateDelta {
            delta: vec![serde_json::json!({"op": "add", "path": path, "value": artifact})],
        }
    }

    fn finished(&self, result: &RunResult) -> AguiEvent {
        let (outcome, result) = match &result.stop {
            StopReason::Paused(state) => {
                let interrupts = state
                    .pending()
                    .iter()
                    .map(|pending| Interrupt {
                        // A sub-agent's call is decided by its whole path,
                        // on the run's own agent-tool call it is inside.
                        id: pending.id(),
                        reason: "tool_approval".into(),
                        message: format!("`{}` needs approval", pending.call.name),
                        tool_call_id: pending
                            .call_path
                            .first()
                            .map_or(pending.call.id.as_str(), String::as_str)
                            .to_owned(),
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
}

/// A result's `content`: the text the model reads, or, for a successful
/// result with images or files, that text and its parts as AG-UI content
/// parts.
fn content(result: &ToolResult, max_inline: usize) -> Value {
    let media = |part: &Part| matches!(part, Part::Image(_) | Part::File(_));
    if !result.outcome.is_success() || !result.parts.iter().any(media) {
        return Value::String(result.content.clone());
    }
    let mut parts = vec![json!({"type": "text", "text": result.content})];
    parts.extend(result.parts.iter().filter_map(|part| match part {
        Part::Text { text } => Some(json!({"type": "text", "text": text})),
        Part::Json { value } => Some(json!({"type": "text", "text": value.to_string()})),
        Part::Image(media) => content_part("image", media, max_inline),
        Part::File(media) => {
            let kind = match media.media_type.split('/').next() {
                Some("image") => "image",
                Some("audio") => "audio",
                Some("video") => "video",
                _ => "document",
            };
            content_part(kind, media, max_inline)
        }
        // A kind of part to come has no place here yet.
        _ => None,
    }));
    Value::Array(parts)
}

/// An image or file as a content part of `kind`: its URL, or its bytes
/// base64 if there are at most `max_inline` of them.
fn content_part(kind: &str, media: &Media, max_inline: usize) -> Option<Value> {
    let source = match &media.source {
        Source::Url(url) => json!({"type": "url", "value": url, "mimeType": media.media_type}),
        Source::Data(bytes) if bytes.len() <= max_inline => {
            json!({"type": "data", "value": media.base64().unwrap_or_default(), "mimeType": media.media_type})
        }
        Source::Data(_) => return None,
    };
    Some(json!({"type": kind, "source": source}))
}
