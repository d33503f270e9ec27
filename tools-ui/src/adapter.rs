//! The agent's events as UI message chunks: [`UiAdapter`] renders what
//! the shared state machine ([`Track`]) says to show as chunks, with the
//! part ids and file links this protocol needs, and a whole run's events
//! as the SSE body ([`UiAdapter::stream`]).

use futures::{Stream, StreamExt};
use serde_json::Value;
use toolcall_agent::{AgentEvent, StopReason};
use toolcall_core::{Outcome, Part, ToolResult};

use crate::UiChunk;
use crate::chunk::DONE;
use crate::files::FileLinks;
use crate::track::{Show, Track};

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
///   default; bigger bytes at a URL where a server serves them,
///   [`Self::with_file_urls`], else left out of the stream), then its artifact
///   as a `data-{tool name}` chunk whose id is the call's id (kept in the
///   message, not transient);
/// - a sub-agent's call held for approval ([`AgentTool`](toolcall_agent::AgentTool)) as
///   `tool-approval-request` on the agent-tool call the page shows, then a
///   `data-approval` chunk (id the approval's) whose data names the call
///   the person is asked about: `{"toolCallId", "path", "toolName",
///   "input"}`;
/// - a handoff to another agent ([`AgentEvent::Handoff`]) as a
///   `data-agent` chunk (id `agent`, so the next handoff's replaces it)
///   whose data is `{"name": ...}`: who answers from there;
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
#[derive(Default)]
pub struct UiAdapter {
    /// What the response shows next, whatever the protocol.
    track: Track,
    /// The open text or reasoning part's id.
    part: String,
    /// Parts opened so far, for their ids.
    parts: usize,
    /// How images and files are linked: data URLs up to a size, and where
    /// bigger ones are served, if anywhere.
    links: FileLinks,
}

impl std::fmt::Debug for UiAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiAdapter").field("parts", &self.parts).finish_non_exhaustive()
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
        Self { track: Track::resuming(), ..Self::default() }
    }

    /// The same adapter, sending images and files of up to `bytes` bytes
    /// in the stream as data URLs (`data:image/png;base64,...`); bigger
    /// ones, given as bytes, are linked where [`Self::with_file_urls`]
    /// says, else left out of the stream (a part given as a URL is always
    /// sent, as its URL).
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
        self.links.max_inline = bytes;
        self
    }

    /// The same adapter, linking images and files bigger than the inline
    /// size to `{base}/{file id}` (the file id: the call's id and the
    /// part's index in its result, `{call id}-{index}`), where a server
    /// serves them. [`ChatServer`](crate::ChatServer) does, under the
    /// chat: `/api/chat/{id}/files/{file id}`.
    ///
    /// ```
    /// use toolcall_agent::AgentEvent;
    /// use toolcall_core::{Media, Outcome, Part, ToolResult};
    /// use toolcall_ui::{UiAdapter, UiChunk};
    ///
    /// let mut result = ToolResult::new("call_1", "chart", "The chart:", Outcome::Success);
    /// result.parts.push(Part::Image(Media::bytes(vec![0; 300 * 1024], "image/png")));
    /// let mut adapter = UiAdapter::new().with_file_urls("/api/chat/chat-1/files");
    /// let chunks = adapter.push(&AgentEvent::ToolResult(result));
    /// let file = UiChunk::File { url: "/api/chat/chat-1/files/call_1-0".into(), media_type: "image/png".into() };
    /// assert_eq!(chunks[2], file);
    /// ```
    #[must_use]
    pub fn with_file_urls(mut self, base: impl Into<String>) -> Self {
        self.links.base = Some(base.into());
        self
    }

    /// The same adapter, linking images and files as `links` says.
    pub(crate) fn with_links(mut self, links: FileLinks) -> Self {
        self.links = links;
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
    /// use toolcall_agent::{Agent};
    /// use toolcall_agent::testing::{ScriptedModel};
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
        let Self { track, part, parts, links } = self;
        track.push(event, |show| render(show, part, parts, links, &mut out));
        out
    }
}

/// What to show as its chunks: `part` is the open text or reasoning part's id,
/// `parts` how many were opened.
fn render(show: Show<'_>, part: &mut String, parts: &mut usize, links: &FileLinks, out: &mut Vec<UiChunk>) {
    let mut open = |kind: &str| {
        *parts += 1;
        *part = format!("{kind}-{parts}");
        part.clone()
    };
    match show {
        Show::StepStart => out.push(UiChunk::StartStep),
        Show::StepEnd => out.push(UiChunk::FinishStep),
        Show::TextStart => out.push(UiChunk::TextStart { id: open("text") }),
        Show::Text(delta) => out.push(UiChunk::TextDelta { id: part.clone(), delta: delta.to_owned() }),
        Show::TextEnd => out.push(UiChunk::TextEnd { id: std::mem::take(part) }),
        Show::ReasoningStart => out.push(UiChunk::ReasoningStart { id: open("reasoning") }),
        Show::Reasoning(delta) => {
            out.push(UiChunk::ReasoningDelta { id: part.clone(), delta: delta.to_owned() });
        }
        Show::ReasoningEnd => out.push(UiChunk::ReasoningEnd { id: std::mem::take(part) }),
        Show::CallStart { id, name } => {
            out.push(UiChunk::ToolInputStart { tool_call_id: id, tool_name: name });
        }
        Show::CallArgs { id, delta } => {
            out.push(UiChunk::ToolInputDelta { tool_call_id: id, input_text_delta: delta });
        }
        // The call's part takes its input whole, with `tool-input-available`.
        Show::CallArgsEnd { .. } => {}
        Show::Call { call, .. } => {
            let input = serde_json::from_str(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            out.push(UiChunk::ToolInputAvailable {
                tool_call_id: call.id.to_string(),
                tool_name: call.name.to_string(),
                input,
            });
        }
        Show::Approval { id, call_id, inner } => {
            // What a sub-agent asks about, which the page never saw: its
            // call beside the request, under the approval's id.
            let asked = inner.map(|pending| {
                let input = serde_json::from_str(&pending.call.arguments)
                    .unwrap_or_else(|_| Value::String(pending.call.arguments.clone()));
                let data = serde_json::json!({
                    "toolCallId": call_id,
                    "path": pending.path,
                    "toolName": pending.call.name,
                    "input": input,
                });
                UiChunk::data("approval", id.clone(), data)
            });
            out.push(UiChunk::ToolApprovalRequest { approval_id: id, tool_call_id: call_id.to_owned() });
            out.extend(asked);
        }
        Show::Result(result) => {
            out.push(output(result));
            out.extend(extras(result, links));
        }
        Show::Answer(answer) => out.push(UiChunk::data("answer", "answer", answer.clone())),
        // One part, replaced at each handoff: who answers now.
        Show::Agent(name) => out.push(UiChunk::data("agent", "agent", serde_json::json!({ "name": name }))),
        Show::End(Ok(result)) => {
            out.push(UiChunk::Finish { finish_reason: Some(finish_reason(&result.stop)) });
        }
        Show::End(Err(error)) => out.push(UiChunk::Error { error_text: error.to_string() }),
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
/// chunk for each image and file part that can be linked (its URL, bytes
/// up to the inline size as a data URL, bigger bytes at a URL of the chat
/// where one is served), then the artifact as the `data-{tool}` part whose
/// id is the call's.
pub(crate) fn extras(result: &ToolResult, links: &FileLinks) -> Vec<UiChunk> {
    if !result.outcome.is_success() {
        return Vec::new();
    }
    let mut out: Vec<UiChunk> = result
        .parts
        .iter()
        .enumerate()
        .filter_map(|(index, part)| match part {
            Part::Image(media) | Part::File(media) => {
                let url = links.url(media, &result.id, index)?;
                Some(UiChunk::File { url, media_type: media.media_type.clone() })
            }
            _ => None,
        })
        .collect();
    if let Some(artifact) = &result.artifact {
        out.push(UiChunk::data(result.name.as_str(), result.id.as_str(), artifact.clone()));
    }
    out
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
