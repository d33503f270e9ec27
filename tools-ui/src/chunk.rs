//! The chunks of the UI message stream, as the AI SDK's
//! `uiMessageChunkSchema` reads them (`ai` 7.0.173), and how each is framed
//! as a server-sent event.

use serde::Serialize;
use serde_json::Value;

/// One chunk of the UI message stream: a JSON object whose `type` names
/// it, sent as one SSE event (`data: {...}`). Only the chunks an agent run
/// produces are here; the field names are the protocol's.
///
/// ```
/// use toolcall_ui::UiChunk;
///
/// let chunk = UiChunk::TextDelta { id: "text-1".into(), delta: "Hel".into() };
/// assert_eq!(chunk.to_sse(), "data: {\"type\":\"text-delta\",\"id\":\"text-1\",\"delta\":\"Hel\"}\n\n");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum UiChunk {
    /// The assistant message starts (or, resuming, goes on).
    Start {
        /// The message's id; none lets the client keep or make its own.
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    /// A model request starts: a `step-start` part in the message.
    StartStep,
    /// The model request and the calls it made are over.
    FinishStep,
    /// A text part opens.
    TextStart {
        /// The part's id, for its deltas and end.
        id: String,
    },
    /// More of a text part.
    TextDelta {
        /// The part's id.
        id: String,
        /// The next piece of text.
        delta: String,
    },
    /// A text part is complete.
    TextEnd {
        /// The part's id.
        id: String,
    },
    /// A reasoning part opens.
    ReasoningStart {
        /// The part's id.
        id: String,
    },
    /// More of a reasoning part.
    ReasoningDelta {
        /// The part's id.
        id: String,
        /// The next piece of reasoning.
        delta: String,
    },
    /// A reasoning part is complete.
    ReasoningEnd {
        /// The part's id.
        id: String,
    },
    /// A tool call starts (its part is `input-streaming`).
    ToolInputStart {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name (the part's type is `tool-{name}`).
        tool_name: String,
    },
    /// More of a call's argument text.
    ToolInputDelta {
        /// The call's id.
        tool_call_id: String,
        /// The next piece of argument text.
        input_text_delta: String,
    },
    /// A call's arguments are complete (`input-available`).
    ToolInputAvailable {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The arguments as JSON (the raw text, as a string, when they do
        /// not parse).
        input: Value,
    },
    /// The call waits for a person (`approval-requested`); useChat answers
    /// with `addToolApprovalResponse({ id: approvalId, approved })`.
    ToolApprovalRequest {
        /// The id the response names: here, the call's id.
        approval_id: String,
        /// The call's id.
        tool_call_id: String,
    },
    /// The call ran (`output-available`).
    ToolOutputAvailable {
        /// The call's id.
        tool_call_id: String,
        /// The tool's output: the content the model reads, as JSON when it
        /// is a JSON object or array, else as a string.
        output: Value,
    },
    /// The call failed (`output-error`).
    ToolOutputError {
        /// The call's id.
        tool_call_id: String,
        /// What went wrong, as the model reads it.
        error_text: String,
    },
    /// The call was denied and did not run (`output-denied`).
    ToolOutputDenied {
        /// The call's id.
        tool_call_id: String,
    },
    /// A file in the message (a `file` part): an image or file a tool
    /// gave back, shown by the page (`<img src={url}>` for an image).
    File {
        /// Where it is: a URL, or a data URL (`data:image/png;base64,...`).
        url: String,
        /// Its IANA media type: `image/png`, `application/pdf`...
        media_type: String,
    },
    /// The message is complete.
    Finish {
        /// Why: `stop`, `length`, `content-filter`, `tool-calls` (calls
        /// wait for approval), `interrupted`, `other`.
        #[serde(skip_serializing_if = "Option::is_none")]
        finish_reason: Option<&'static str>,
    },
    /// The run failed; the client's chat goes to its error state.
    Error {
        /// What went wrong.
        error_text: String,
    },
    /// Data for the application, typed by its name: a `data-{name}` part
    /// of the message, kept in it (not transient). A later chunk with the
    /// same name and id replaces the part's data in place.
    ///
    /// ```
    /// use toolcall_ui::UiChunk;
    ///
    /// let chunk = UiChunk::data("answer", "answer", serde_json::json!({"city": "Paris"}));
    /// assert_eq!(chunk.to_sse(), "data: {\"type\":\"data-answer\",\"id\":\"answer\",\"data\":{\"city\":\"Paris\"}}\n\n");
    /// ```
    #[serde(untagged)]
    Data {
        /// The part's name: its type is `data-{name}`.
        #[serde(rename = "type", serialize_with = "data_type")]
        name: String,
        /// The part's id, for a later chunk to update it.
        id: String,
        /// The data.
        data: Value,
    },
}

/// A data part's type, `data-{name}`.
fn data_type<S: serde::Serializer>(name: &str, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&format_args!("data-{name}"))
}

/// The stream's last event: `data: [DONE]`.
pub const DONE: &str = "data: [DONE]\n\n";

/// The response headers of a UI message stream, as `ai`'s
/// `UI_MESSAGE_STREAM_HEADERS` has them.
pub const HEADERS: [(&str, &str); 5] = [
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("connection", "keep-alive"),
    ("x-vercel-ai-ui-message-stream", "v1"),
    ("x-accel-buffering", "no"),
];

impl UiChunk {
    /// A `data-{name}` chunk: the part `name`, `id`, holding `data`.
    pub fn data(name: impl Into<String>, id: impl Into<String>, data: Value) -> Self {
        Self::Data { name: name.into(), id: id.into(), data }
    }

    /// The chunk as one server-sent event: `data: {json}` and a blank line.
    pub fn to_sse(&self) -> String {
        // A chunk is strings and JSON values only: serializing cannot fail.
        let json = serde_json::to_string(self).unwrap_or_default();
        format!("data: {json}\n\n")
    }
}
