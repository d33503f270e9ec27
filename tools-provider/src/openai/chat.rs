//! Chat Completions: function tools under `tools[].function`, the calls of
//! `choices[0].message.tool_calls` (string `arguments`), and one
//! `role: "tool"` message per result (then a user message for the images and
//! files of the results, which a tool message cannot carry:
//! [`Dialect::format_results`](crate::Dialect::format_results)):
//! <https://platform.openai.com/docs/api-reference/chat/create>. The
//! functions are reached through [`Dialect`]'s methods with
//! [`OpenAiChat`](crate::Dialect::OpenAiChat) and
//! [`OpenAiChatStrict`](crate::Dialect::OpenAiChatStrict).

use serde::Deserialize;
use serde_json::{Value, json};

use super::parameters;
use crate::parts;
use crate::payload::read;
use crate::transcript::only_text;
use crate::{
    Content, Dialect, DialectError, Finish, Message, MessageError, PartOf, Reasoning, calls_of, text_of,
};
use toolcall_core::{Part, Tool, ToolCall, ToolResult};

/// A Chat Completions function tool:
/// `{"type": "function", "function": {"name", "description", "parameters"[, "strict": true]}}`.
///
/// # Errors
///
/// With `strict`, [`DialectError`] when [`strict_schema`](super::strict_schema) refuses the
/// schema; never without.
pub(crate) fn function(tool: &dyn Tool, strict: bool) -> Result<Value, DialectError> {
    let dialect = if strict { Dialect::OpenAiChatStrict } else { Dialect::OpenAiChat };
    let mut function = json!({
        "name": tool.spec().name(),
        "description": crate::examples::in_description(tool),
        "parameters": parameters(tool, strict, dialect)?,
    });
    if strict {
        function["strict"] = Value::Bool(true);
    }
    Ok(json!({"type": "function", "function": function}))
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<ChatChoice>,
}

#[derive(Deserialize)]
struct ChatChoice {
    message: ChatMessage,
}

#[derive(Deserialize)]
struct ChatMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    /// DeepSeek's, llama.cpp's and older vLLM's name for the reasoning.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// Newer vLLM's.
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ChatToolCall>>,
}

#[derive(Deserialize)]
struct ChatToolCall {
    id: String,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    function: Option<ChatFunction>,
}

#[derive(Deserialize)]
struct ChatFunction {
    name: String,
    arguments: String,
}

const CHAT: &str = "openai chat response";

/// The tool calls of a Chat Completions response (the whole response, or
/// its `choices[0].message`), in order. Tools of another `type` than
/// `function` (custom tools) are skipped.
///
/// ```
/// use toolcall_provider::Dialect;
/// let response = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": null,
///     "tool_calls": [{"id": "call_1", "type": "function",
///                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}]});
/// let calls = Dialect::OpenAiChat.parse_calls(&response).unwrap();
/// assert_eq!(calls[0].arguments, r#"{"city":"Paris"}"#);
/// ```
///
/// # Errors
///
/// Those of [`content`]: [`MessageError`] when the response is not a Chat Completions
/// response or message, `choices` is empty, or a function call has no `function`.
pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
    Ok(calls_of(&content(response)?).cloned().collect())
}

/// The message of a Chat Completions response (the whole response, or its
/// `choices[0].message`) as content: the `reasoning_content` (or
/// `reasoning`) that OpenAI-compatible servers send, the text (`content`,
/// or the `refusal` in its place), then the calls
/// ([`parse_calls`]).
///
/// ```
/// use toolcall_provider::{Content, Dialect, Reasoning};
/// let message = serde_json::json!({"role": "assistant", "content": "4", "reasoning_content": "2 + 2"});
/// assert_eq!(Dialect::OpenAiChat.content(&message).unwrap(), [
///     Content::Reasoning(Reasoning::ReasoningContent { text: "2 + 2".into() }), Content::text("4")]);
/// ```
///
/// # Errors
///
/// [`MessageError`] when the response is not a Chat Completions response or message (the
/// problem gives the path), `choices` is empty, or a function call has no `function`.
pub(crate) fn content(response: &Value) -> Result<Vec<Content>, MessageError> {
    let message: ChatMessage = if response.get("choices").is_some() {
        let response: ChatResponse = read(CHAT, response)?;
        match response.choices.into_iter().next() {
            Some(choice) => choice.message,
            None => return Err(MessageError::new(CHAT, "`choices` is empty")),
        }
    } else {
        read(CHAT, response)?
    };
    let mut content = Vec::new();
    if let Some(text) = message.reasoning_content.or(message.reasoning).filter(|text| !text.is_empty()) {
        content.push(Content::Reasoning(Reasoning::ReasoningContent { text }));
    }
    if let Some(text) = message.content.or(message.refusal).filter(|text| !text.is_empty()) {
        content.push(Content::Text { text });
    }
    for (index, call) in message.tool_calls.unwrap_or_default().into_iter().enumerate() {
        if call.kind.as_deref().is_some_and(|kind| kind != "function") {
            continue;
        }
        let Some(function) = call.function else {
            return Err(MessageError::new(
                CHAT,
                format!("tool call {index} (`{}`) has no `function`", call.id),
            ));
        };
        content.push(Content::Call(ToolCall::new(call.id, function.name, function.arguments)));
    }
    Ok(content)
}

/// The transcript as Chat Completions `messages`: `user` messages (a string `content` for text, an
/// array of content parts with images and files), `assistant` messages (`content`
/// the empty string when the model only called tools, its `tool_calls` with
/// string `arguments`), and each turn's results as [`format_results`] writes them,
/// in `dialect` (named by a refused part's error):
/// <https://platform.openai.com/docs/api-reference/chat/create>. The
/// instructions are no part of it: the client writes them as the first
/// message, `{"role": "system", "content": ...}`, in the request's body.
///
/// ```
/// use toolcall_core::ToolCall;
/// use toolcall_provider::{Dialect, Message};
/// let transcript = [Message::user("Weather?"),
///     Message::assistant("", [ToolCall::new("call_1", "weather", "{}")])];
/// let messages = Dialect::OpenAiChat.messages(&transcript).unwrap();
/// assert_eq!(messages[0], serde_json::json!({"role": "user", "content": "Weather?"}));
/// assert_eq!(messages[1]["content"], "");
/// assert_eq!(messages[1]["tool_calls"][0]["function"]["name"], "weather");
/// ```
///
/// # Errors
///
/// [`MessageError`] for a part of a user message or of a tool's result that `dialect` cannot
/// send, named in [`refused`](MessageError::refused).
pub(crate) fn messages(dialect: Dialect, transcript: &[Message]) -> Result<Vec<Value>, MessageError> {
    let mut messages = Vec::with_capacity(transcript.len());
    for (at, message) in transcript.iter().enumerate() {
        match message {
            Message::User { parts } => messages.push(user(dialect, at, parts)?),
            Message::Assistant { content } => {
                // `""`, not `null`, beside calls: OpenAI takes either (the
                // content is a string, required unless there are calls),
                // but llama-cpp-python's server refuses `null` (HTTP 500,
                // a validation error) and llama.cpp's templates need a
                // string; `""` is the one form all of them take.
                let mut assistant = json!({"role": "assistant", "content": text_of(content)});
                let calls: Vec<Value> = calls_of(content)
                    .map(|call| {
                        json!({"id": call.id, "type": "function",
                               "function": {"name": call.name, "arguments": call.arguments}})
                    })
                    .collect();
                if !calls.is_empty() {
                    assistant["tool_calls"] = Value::Array(calls);
                }
                // DeepSeek asks for the reasoning of a tool-use turn back
                // until the turn ends; other servers ignore the field.
                let reasoning: String = content
                    .iter()
                    .filter_map(|piece| match piece {
                        Content::Reasoning(Reasoning::ReasoningContent { text }) => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                if !reasoning.is_empty() {
                    assistant["reasoning_content"] = Value::String(reasoning);
                }
                messages.push(assistant);
            }
            // A part the dialect cannot send is refused, naming the
            // dialect, the tool and the part.
            Message::Tool { results } => messages.extend(dialect.format_results(results)?),
            Message::Summary { .. } => {
                messages.push(json!({"role": "user", "content": message.summary_text().unwrap_or_default()}));
            }
        }
    }
    Ok(messages)
}

/// The ending a Chat Completions `finish_reason` says ([`Finish`] has the
/// table): `length` is cut off, `content_filter` refused.
pub(crate) fn finish(reason: &str) -> Finish {
    match reason {
        "length" => Finish::truncated(reason),
        "content_filter" => Finish::refused(reason),
        _ => Finish::Complete,
    }
}

/// What a tool message says of an image or file it cannot carry.
const MOVED: &str = "follows in a user message";

/// The turn's results as Chat Completions messages, one
/// `{"role": "tool", "tool_call_id", "content"}` per result, in order, then
/// one user message for the images and files of the turn, if any.
///
/// A tool message's content is text only ("string or array of text content
/// parts"), and images and files are content parts of *user* messages
/// (`image_url`, `file`): <https://platform.openai.com/docs/api-reference/chat/create>
/// (`messages` > tool message, user message). So, for a result with
/// [parts](ToolResult::parts):
///
/// - its tool message carries [`ToolResult::text`] (the content, then each
///   text part and each JSON part as JSON text, a line each), then one line
///   per image or file naming it, ``[an image `chart.png` (image/png,
///   bytes) follows in a user message]``;
/// - after the turn's tool messages (which must directly follow the
///   assistant message that made the calls), one `{"role": "user",
///   "content": [...]}` message holds every result's images and files, each
///   result's introduced by a text part naming the tool and the call:
///   - an image: `{"type": "image_url", "image_url": {"url"}}`, a data URL
///     (`data:image/png;base64,...`) for bytes or the URL itself; PNG,
///     JPEG, WebP or GIF ([`IMAGE_TYPES`](super::IMAGE_TYPES)):
///     <https://platform.openai.com/docs/guides/images-vision>;
///   - a file: `{"type": "file", "file": {"filename", "file_data"}}` with a
///     data URL. Chat Completions takes PDF files, as bytes or an uploaded
///     file's id, not a URL: <https://platform.openai.com/docs/guides/pdf-files?api-mode=chat>.
///
/// A turn whose results have no images or files gives the tool messages
/// alone. Fails with a [`MessageError`] naming the dialect, the tool and the
/// part for an image of another type, a file that is not a PDF or is at a
/// URL, or a part of an unknown kind.
///
/// ```
/// use toolcall_core::{Media, Outcome, Part, ToolResult};
/// use serde_json::json;
/// let mut result = ToolResult::new("call_1", "chart", "The chart:", Outcome::Success);
/// result.parts.push(Part::Image(Media::url("https://example.com/chart.png", "image/png")));
/// let messages = toolcall_provider::Dialect::OpenAiChat.format_results(&[result]).unwrap();
/// assert_eq!(messages[0]["content"], "The chart:\n[an image (image/png, at a URL) follows in a user message]");
/// assert_eq!(messages[1]["role"], "user");
/// assert_eq!(messages[1]["content"][1], json!({"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}}));
/// ```
///
/// # Errors
///
/// [`MessageError`], with [`refused`](MessageError::refused) naming the tool and the part, for
/// a part Chat Completions cannot take (listed above).
pub(crate) fn format_results(results: &[ToolResult]) -> Result<Vec<Value>, MessageError> {
    let mut messages = Vec::with_capacity(results.len() + 1);
    let mut attached = Vec::new();
    for result in results {
        let mut content = result.text().into_owned();
        for note in parts::media_notes(result, MOVED) {
            if !content.is_empty() {
                content.push('\n');
            }
            content.push_str(&note);
        }
        messages.push(json!({"role": "tool", "tool_call_id": result.id, "content": content}));
        attached.extend(media_parts(result)?);
    }
    if !attached.is_empty() {
        messages.push(json!({"role": "user", "content": attached}));
    }
    Ok(messages)
}

/// The user message's content parts for one result's images and files
/// ([`content_part`]), after a text part saying whose they are; nothing
/// when it has none.
fn media_parts(result: &ToolResult) -> Result<Vec<Value>, MessageError> {
    let media = |index: usize, part: &Part| match part {
        Part::Text { .. } | Part::Json { .. } => Ok(None),
        _ => content_part(index, part),
    };
    let mut items =
        parts::encode_all(Dialect::OpenAiChat, || parts::of_result(result), &result.parts, media)?;
    if !items.is_empty() {
        let intro =
            format!("The images and files of the result of tool `{}` (call `{}`):", result.name, result.id);
        items.insert(0, json!({"type": "text", "text": intro}));
    }
    Ok(items)
}

/// A user message: its text as the `content` string when it is one text
/// part, else an array of content parts ([`content_part`]), as the user
/// message of <https://platform.openai.com/docs/api-reference/chat/create>
/// takes them. A part the API cannot take is refused, naming the message
/// (`at`, its position in the transcript) and the part.
fn user(dialect: Dialect, at: usize, user_parts: &[Part]) -> Result<Value, MessageError> {
    let content = match only_text(user_parts) {
        Some(text) => Value::String(text.to_owned()),
        None => {
            let of = || PartOf::UserMessage { message: at };
            Value::Array(parts::encode_all(dialect, of, user_parts, content_part)?)
        }
    };
    Ok(json!({"role": "user", "content": content}))
}

/// One part as a content part of a user message (`None`: an empty text,
/// left out), or why it cannot be one:
///
/// - text: `{"type": "text", "text"}`; JSON as its JSON text;
/// - an image: `{"type": "image_url", "image_url": {"url"}}`, a data URL
///   (`data:image/png;base64,...`) for bytes or the URL itself; PNG,
///   JPEG, WebP or GIF ([`IMAGE_TYPES`](super::IMAGE_TYPES)):
///   <https://platform.openai.com/docs/guides/images-vision>;
/// - a file: `{"type": "file", "file": {"filename", "file_data"}}` with a
///   data URL. Chat Completions takes PDF files, as bytes or an uploaded
///   file's id, not a URL:
///   <https://platform.openai.com/docs/guides/pdf-files?api-mode=chat>.
fn content_part(index: usize, part: &Part) -> Result<Option<Value>, &'static str> {
    Ok(Some(match part {
        Part::Text { text } if text.is_empty() => return Ok(None),
        Part::Text { text } => json!({"type": "text", "text": text}),
        Part::Json { value } => json!({"type": "text", "text": value.to_string()}),
        Part::Image(media) => {
            if !parts::is_one_of(media, &super::IMAGE_TYPES) {
                return Err("OpenAI reads PNG, JPEG, WebP and non-animated GIF images");
            }
            let url = parts::data_url(media).or_else(|| media.url_text().map(str::to_owned));
            json!({"type": "image_url", "image_url": {"url": url}})
        }
        Part::File(media) => {
            if !parts::is_one_of(media, &["application/pdf"]) {
                return Err("Chat Completions reads PDF files only (the Responses API reads more types)");
            }
            let Some(data) = parts::data_url(media) else {
                return Err("Chat Completions takes a file's bytes or an uploaded file's id, not a URL \
                            (the Responses API takes `file_url`)");
            };
            json!({"type": "file", "file": {"filename": parts::file_name(media, index), "file_data": data}})
        }
        _ => return Err(parts::UNKNOWN_KIND),
    }))
}
