//! The agent's events as UI message chunks: [`UiAdapter`], the state the
//! translation needs (which text or reasoning part is open, which calls
//! were shown, whether a step is under way), and [`ui_stream`], a whole
//! run's events as the SSE body.

use std::collections::HashSet;

use futures::{Stream, StreamExt};
use serde_json::Value;
use toolcall_agent::{AgentEvent, StopReason};
use toolcall_core::{Media, Outcome, Part, Source, ToolCall, ToolResult};

use crate::UiChunk;
use crate::calls::Calls;
use crate::chunk::DONE;

/// Turns [`AgentEvent`]s, in order, into [`UiChunk`]s: one adapter per
/// response (one run, or one resumed run).
///
/// - text and reasoning deltas open a part, add to it, and end it when
///   something else comes;
/// - each model request is a step (`start-step` ... `finish-step`), its
///   calls and their results included;
/// - a call shows as it streams (`tool-input-start`, `-delta`), then whole
///   (`tool-input-available`, also for a model that does not stream its
///   calls); a held call asks for approval (`tool-approval-request`, its
///   approval id the call's id);
/// - results are `tool-output-available` (the content the model reads: as
///   JSON when it is a JSON object or array, else as a string),
///   `tool-output-denied` or `tool-output-error`; after a successful
///   result, each image and file part of it as a `file` chunk (its URL, or
///   a data URL for bytes up to [`Self::with_max_inline_bytes`], 256 KiB by
///   default; bigger bytes are left out of the stream), then its artifact
///   as a `data-{tool name}` chunk whose id is the call's id (kept in the
///   message, not transient);
/// - the run's end is its typed answer, when the agent has an answer type
///   ([`RunResult::typed_answer`](toolcall_agent::RunResult::typed_answer)), as
///   a `data-answer` chunk (id `answer`) after the answer's text, then
///   `finish` with its reason (`tool-calls` when calls wait for approval),
///   or `error`.
///
/// ```
/// use toolcall_agent::AgentEvent;
/// use toolcall_ui::{UiAdapter, UiChunk};
///
/// let mut adapter = UiAdapter::new();
/// let chunks = adapter.push(&AgentEvent::TextDelta("Hi".into()));
/// assert_eq!(chunks[0], UiChunk::StartStep);
/// assert_eq!(chunks[2], UiChunk::TextDelta { id: "text-1".into(), delta: "Hi".into() });
/// ```
pub struct UiAdapter {
    /// The open text part's id.
    text: Option<String>,
    /// The open reasoning part's id.
    reasoning: Option<String>,
    /// Parts opened so far, for their ids.
    parts: usize,
    /// A step is under way.
    in_step: bool,
    /// Its model request is over: what comes from the model next is a new step.
    answered: bool,
    /// Calls streamed and shown with `tool-input-start`.
    calls: Calls,
    /// Calls shown whole, with `tool-input-available`.
    available: HashSet<String>,
    /// The response goes on with a message whose calls the page shows
    /// already: until the model writes again, results only update them.
    resumed: bool,
    /// The most bytes of an image or file sent as a data URL.
    max_inline: usize,
}

impl Default for UiAdapter {
    fn default() -> Self {
        Self {
            text: None,
            reasoning: None,
            parts: 0,
            in_step: false,
            answered: false,
            calls: Calls::default(),
            available: HashSet::new(),
            resumed: false,
            max_inline: Self::MAX_INLINE_BYTES,
        }
    }
}

impl std::fmt::Debug for UiAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiAdapter").field("in_step", &self.in_step).finish_non_exhaustive()
    }
}

impl UiAdapter {
    /// The most bytes of an image or file a new adapter sends in the
    /// stream, as a data URL: 256 KiB.
    pub const MAX_INLINE_BYTES: usize = 256 * 1024;

    /// An adapter for a new run's response: a new assistant message.
    pub fn new() -> Self {
        Self::default()
    }

    /// An adapter for a resumed run's response, which goes on with the
    /// assistant message that showed the held calls: the decided calls'
    /// results update those parts in place (no step starts and no call is
    /// shown again before the model writes, since the AI SDK looks a
    /// call's part up in the current step when it is shown).
    pub fn resuming() -> Self {
        Self { resumed: true, ..Self::default() }
    }

    /// The same adapter, sending images and files of up to `bytes` bytes
    /// in the stream as data URLs (`data:image/png;base64,...`); bigger
    /// ones, given as bytes, are left out of the stream (a part given as
    /// a URL is always sent, as its URL).
    ///
    /// ```
    /// use toolcall_agent::AgentEvent;
    /// use toolcall_core::{Media, Outcome, ToolResult};
    /// use toolcall_ui::{UiAdapter, UiChunk};
    ///
    /// let mut result = ToolResult::new("call_1", "chart", "The chart:", Outcome::Success);
    /// result.parts.push(toolcall_core::Part::Image(Media::bytes(vec![1, 2, 3], "image/png")));
    /// let chunks = UiAdapter::new().with_max_inline_bytes(3).push(&AgentEvent::ToolResult(result.clone()));
    /// assert_eq!(chunks[2], UiChunk::File { url: "data:image/png;base64,AQID".into(), media_type: "image/png".into() });
    /// let chunks = UiAdapter::new().with_max_inline_bytes(2).push(&AgentEvent::ToolResult(result));
    /// assert!(!chunks.iter().any(|chunk| matches!(chunk, UiChunk::File { .. })));
    /// ```
    #[must_use]
    pub fn with_max_inline_bytes(mut self, bytes: usize) -> Self {
        self.max_inline = bytes;
        self
    }

    /// A whole run's events as the body of a UI message stream: each
    /// chunk as one SSE event, from `start` to `[DONE]`; send it with
    /// [`HEADERS`](crate::HEADERS).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use futures::StreamExt;
    /// use toolcall_agent::{Agent, ScriptedModel};
    /// use toolcall_core::toolset::Toolset;
    /// use toolcall_ui::UiAdapter;
    ///
    /// let agent = Agent::new(ScriptedModel::new().then_text("Hello."), Toolset::builder().build().unwrap()).unwrap();
    /// let body: Vec<String> = UiAdapter::new().stream(agent.stream("Hi")).collect().await;
    /// assert_eq!(body.first().map(String::as_str), Some("data: {\"type\":\"start\"}\n\n"));
    /// assert!(body.iter().any(|event| event.contains(r#""delta":"Hello.""#)));
    /// assert_eq!(body.last().map(String::as_str), Some("data: [DONE]\n\n"));
    /// # }
    /// ```
    pub fn stream(mut self, events: impl Stream<Item = AgentEvent>) -> impl Stream<Item = String> {
        let start = futures::stream::iter([UiChunk::Start { message_id: None }.to_sse()]);
        let chunks = events.flat_map(move |event| {
            futures::stream::iter(self.push(&event).into_iter().map(|chunk| chunk.to_sse()))
        });
        start.chain(chunks).chain(futures::stream::iter([DONE.to_owned()]))
    }

    /// The chunks of one event, in order (often none or one).
    pub fn push(&mut self, event: &AgentEvent) -> Vec<UiChunk> {
        let mut out = Vec::new();
        match event {
            AgentEvent::TextDelta(delta) => {
                self.model_output(&mut out);
                self.close_reasoning(&mut out);
                let id = self.open(&mut out, false);
                out.push(UiChunk::TextDelta { id, delta: delta.clone() });
            }
            AgentEvent::ReasoningDelta(delta) => {
                self.model_output(&mut out);
                self.close_text(&mut out);
                let id = self.open(&mut out, true);
                out.push(UiChunk::ReasoningDelta { id, delta: delta.clone() });
            }
            AgentEvent::CallDelta { index, id, name, arguments } => {
                self.model_output(&mut out);
                self.close_parts(&mut out);
                self.call_delta(&mut out, *index, id.as_deref(), name.as_deref(), arguments);
            }
            AgentEvent::Usage(_) => {
                // The model's response is over.
                self.close_parts(&mut out);
                self.answered = true;
                self.calls.turn_over();
            }
            AgentEvent::ToolCall(call) => self.show(&mut out, call),
            AgentEvent::ApprovalRequested(pending) => {
                self.show(&mut out, &pending.call);
                let id = pending.call.id.to_string();
                out.push(UiChunk::ToolApprovalRequest { approval_id: id.clone(), tool_call_id: id });
            }
            AgentEvent::ToolResult(result) => {
                if !self.resumed {
                    self.step(&mut out);
                }
                out.push(output(result));
                out.extend(extras(result, self.max_inline));
                // What the model writes next is the next step.
                self.answered = true;
            }
            AgentEvent::Finished(ended) => {
                self.close_parts(&mut out);
                if let Ok(result) = ended
                    && let Some(answer) = &result.typed_answer
                {
                    out.push(UiChunk::data("answer", "answer", answer.clone()));
                }
                if self.in_step {
                    out.push(UiChunk::FinishStep);
                    self.in_step = false;
                }
                out.push(match ended {
                    Ok(result) => UiChunk::Finish { finish_reason: Some(finish_reason(&result.stop)) },
                    Err(error) => UiChunk::Error { error_text: error.to_string() },
                });
            }
            // An event this adapter does not know shows nothing.
            _ => {}
        }
        out
    }

    /// A step is under way (a resumed run's first results start one).
    fn step(&mut self, out: &mut Vec<UiChunk>) {
        if !self.in_step {
            out.push(UiChunk::StartStep);
            self.in_step = true;
            self.answered = false;
        }
    }

    /// The model writes: after a finished request, that is the next step.
    fn model_output(&mut self, out: &mut Vec<UiChunk>) {
        self.resumed = false;
        if self.in_step && self.answered {
            out.push(UiChunk::FinishStep);
            self.in_step = false;
        }
        self.step(out);
    }

    /// The open text or reasoning part's id, opening one if none is.
    fn open(&mut self, out: &mut Vec<UiChunk>, reasoning: bool) -> String {
        let slot = if reasoning { &mut self.reasoning } else { &mut self.text };
        if let Some(id) = slot {
            return id.clone();
        }
        self.parts += 1;
        let id = format!("{}-{}", if reasoning { "reasoning" } else { "text" }, self.parts);
        *slot = Some(id.clone());
        out.push(if reasoning {
            UiChunk::ReasoningStart { id: id.clone() }
        } else {
            UiChunk::TextStart { id: id.clone() }
        });
        id
    }

    fn close_text(&mut self, out: &mut Vec<UiChunk>) {
        if let Some(id) = self.text.take() {
            out.push(UiChunk::TextEnd { id });
        }
    }

    fn close_reasoning(&mut self, out: &mut Vec<UiChunk>) {
        if let Some(id) = self.reasoning.take() {
            out.push(UiChunk::ReasoningEnd { id });
        }
    }

    fn close_parts(&mut self, out: &mut Vec<UiChunk>) {
        self.close_text(out);
        self.close_reasoning(out);
    }

    /// A piece of a streamed call, shown once its id and name are known.
    fn call_delta(
        &mut self,
        out: &mut Vec<UiChunk>,
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
        arguments: &str,
    ) {
        let Some(piece) = self.calls.delta(index, id, name, arguments) else { return };
        if piece.first {
            out.push(UiChunk::ToolInputStart { tool_call_id: piece.id.clone(), tool_name: piece.name });
        }
        if !piece.delta.is_empty() {
            out.push(UiChunk::ToolInputDelta { tool_call_id: piece.id, input_text_delta: piece.delta });
        }
    }

    /// A whole call, shown once (a resumed message shows it already).
    fn show(&mut self, out: &mut Vec<UiChunk>, call: &ToolCall) {
        if self.resumed {
            return;
        }
        self.step(out);
        let id = call.id.to_string();
        if self.calls.start(&id) {
            out.push(UiChunk::ToolInputStart { tool_call_id: id.clone(), tool_name: call.name.to_string() });
        }
        if self.available.insert(id.clone()) {
            let input = serde_json::from_str(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            out.push(UiChunk::ToolInputAvailable {
                tool_call_id: id,
                tool_name: call.name.to_string(),
                input,
            });
        }
    }
}

/// A call's result as its output chunk.
fn output(result: &ToolResult) -> UiChunk {
    let tool_call_id = result.id.to_string();
    match result.outcome {
        Outcome::Success => {
            UiChunk::ToolOutputAvailable { tool_call_id, output: output_value(&result.content) }
        }
        Outcome::Denied => UiChunk::ToolOutputDenied { tool_call_id },
        _ => UiChunk::ToolOutputError { tool_call_id, error_text: result.content.clone() },
    }
}

/// A tool's content as the page's `output`: the JSON value when the
/// content is a JSON object or array, else the text as a string.
pub(crate) fn output_value(content: &str) -> Value {
    let trimmed = content.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(value @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str(content)
    {
        return value;
    }
    Value::String(content.to_owned())
}

/// What a successful result gives the page beyond its output: a `file`
/// chunk for each image and file part that can be sent (a URL, or bytes
/// up to `max_inline` as a data URL), then the artifact as the
/// `data-{tool}` part whose id is the call's.
pub(crate) fn extras(result: &ToolResult, max_inline: usize) -> Vec<UiChunk> {
    if !result.outcome.is_success() {
        return Vec::new();
    }
    let mut out: Vec<UiChunk> = result
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Image(media) | Part::File(media) => file(media, max_inline),
            _ => None,
        })
        .collect();
    if let Some(artifact) = &result.artifact {
        out.push(UiChunk::data(result.name.as_str(), result.id.as_str(), artifact.clone()));
    }
    out
}

/// An image or file as a `file` chunk: its URL, or its bytes as a data
/// URL if there are at most `max_inline` of them.
fn file(media: &Media, max_inline: usize) -> Option<UiChunk> {
    let url = match &media.source {
        Source::Url(url) => url.clone(),
        Source::Data(bytes) if bytes.len() <= max_inline => {
            format!("data:{};base64,{}", media.media_type, media.base64().unwrap_or_default())
        }
        _ => return None,
    };
    Some(UiChunk::File { url, media_type: media.media_type.clone() })
}

/// The protocol's finish reason for a run's end.
fn finish_reason(stop: &StopReason) -> &'static str {
    match stop {
        StopReason::Answered | StopReason::EndTool { .. } => "stop",
        StopReason::Paused(_) => "tool-calls",
        StopReason::Truncated { .. } => "length",
        StopReason::Refused { .. } => "content-filter",
        StopReason::Cancelled => "interrupted",
        _ => "other",
    }
}
