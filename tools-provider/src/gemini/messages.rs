//! The `functionCall` parts of a response read as the turn's calls, and the
//! results written back as `functionResponse` parts (with their images and
//! files as the function response's own parts: [`format_results`]):
//! <https://ai.google.dev/gemini-api/docs/function-calling>.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::payload::{list, read};
use crate::transcript::only_text;
use crate::{Content, Dialect, Message, MessageError, PartOf, Reasoning, calls_of, parts};
use toolcall_core::{Media, Outcome, Part, ToolCall, ToolResult};

/// The prefix of the call ids [`Dialect::parse_calls`] (and
/// [`Dialect::content`]) make up for Gemini calls that came without one;
/// [`Dialect::format_results`] and [`Dialect::messages`] leave such ids out.
pub const SYNTHETIC_ID_PREFIX: &str = "gemini-call-";

#[derive(Deserialize)]
struct FunctionCall {
    name: String,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    id: Option<String>,
}

const RESPONSE: &str = "gemini response";

/// The `functionCall` parts of a `generateContent` response (the whole
/// response, a candidate's `content`, or its `parts` array), in order.
///
/// Gemini gives most calls no id: each such call gets a stable one,
/// `gemini-call-{index}-{name}` (its position among the message's calls),
/// and [`format_results`] answers by name, in the same order, leaving those
/// ids out. An id Gemini did send is kept and echoed.
///
/// ```
/// use toolcall_provider::Dialect;
/// let response = serde_json::json!({"candidates": [{"content": {"role": "model", "parts": [
///     {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]}}]});
/// let calls = Dialect::Gemini.parse_calls(&response).unwrap();
/// assert_eq!((calls[0].id.as_str(), calls[0].arguments.as_str()), ("gemini-call-0-get_weather", r#"{"city":"Paris"}"#));
/// ```
///
/// # Errors
///
/// Those of [`content`]: [`MessageError`] when the response has no parts (`candidates` empty,
/// or a candidate without `content`) or a `functionCall` is malformed.
pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
    Ok(calls_of(&content(response)?).cloned().collect())
}

/// The parts of a `generateContent` response (the whole response, a
/// candidate's `content`, or its `parts` array) as content, in order: text,
/// calls ([`parse_calls`] says how they are named), thought summaries
/// (`thought: true` parts), and each `thoughtSignature` as a
/// [`Reasoning::ThoughtSignature`] just before the piece of the part it
/// came on, which is where [`contents`] puts it back:
/// <https://ai.google.dev/gemini-api/docs/thought-signatures>. A part
/// with only a signature (an empty text) keeps its signature.
///
/// ```
/// use toolcall_provider::{Content, Dialect, Reasoning};
/// let parts = serde_json::json!([
///     {"text": "Let me think.", "thought": true},
///     {"functionCall": {"name": "a", "args": {}}, "thoughtSignature": "c2ln"},
///     {"functionCall": {"name": "b", "args": {}}}]);
/// let content = Dialect::Gemini.content(&parts).unwrap();
/// assert_eq!(content[0], Content::Reasoning(Reasoning::Thought { text: "Let me think.".into() }));
/// assert_eq!(content[1], Content::Reasoning(Reasoning::ThoughtSignature { signature: "c2ln".into() }));
/// assert!(matches!(&content[2], Content::Call(call) if call.name == "a"));
/// ```
///
/// # Errors
///
/// [`MessageError`] when `candidates` is empty, its first candidate has no `content` (stopped
/// for safety or length: read its `finishReason`), there is no `parts` array, or a
/// `functionCall` is malformed.
pub(crate) fn content(response: &Value) -> Result<Vec<Content>, MessageError> {
    let parts = parts_of(response)?;
    let mut content = Vec::with_capacity(parts.len());
    let mut calls = 0;
    for (index, part) in parts.iter().enumerate() {
        if let Some(signature) = part.get("thoughtSignature").and_then(Value::as_str) {
            content.push(Content::Reasoning(Reasoning::ThoughtSignature { signature: signature.to_owned() }));
        }
        if let Some(call) = part.get("functionCall") {
            let call: FunctionCall = read(RESPONSE, call).map_err(|e| {
                MessageError::new(RESPONSE, format!("parts[{index}].functionCall: {}", e.problem))
            })?;
            let arguments = match call.args {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(args) => args.to_string(),
            };
            let id = call.id.unwrap_or_else(|| format!("{SYNTHETIC_ID_PREFIX}{calls}-{}", call.name));
            calls += 1;
            content.push(Content::Call(ToolCall::new(id, call.name, arguments)));
            continue;
        }
        let text = part.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
        if text.is_empty() {
            continue;
        }
        content.push(match part.get("thought").and_then(Value::as_bool) {
            Some(true) => Content::Reasoning(Reasoning::Thought { text }),
            _ => Content::Text { text },
        });
    }
    Ok(content)
}

fn parts_of(response: &Value) -> Result<&[Value], MessageError> {
    let content = match response.get("candidates") {
        Some(Value::Array(candidates)) => match candidates.first() {
            Some(candidate) => match candidate.get("content") {
                Some(content) => content,
                // A candidate stopped by safety or length has no content.
                None => return Err(MessageError::new(RESPONSE, "`candidates[0]` has no `content`")),
            },
            None => return Err(MessageError::new(RESPONSE, "`candidates` is empty")),
        },
        Some(_) => return Err(MessageError::new(RESPONSE, "`candidates` is not an array")),
        None => response,
    };
    list(RESPONSE, content, "parts", "expected a response, a content object or a parts array")
}

/// The media types a function response's parts take: PNG, JPEG and WebP
/// images, PDF and plain text documents ("Multimodal function responses"):
/// <https://ai.google.dev/gemini-api/docs/function-calling#multimodal>.
pub const MEDIA_TYPES: [&str; 5] = ["image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"];

/// The turn's results as one content of `functionResponse` parts, in call
/// order: `[{"role": "user", "parts": [{"functionResponse": {"name",
/// "response"[, "id"]}}...]}]`, a list of one content so that every
/// dialect's results are appended the same way; empty for a turn without
/// results (Gemini refuses a content with no parts).
///
/// `response` must be an object: content that is a JSON object is sent as
/// it is (the error contract's `{"error": "..."}` among them); anything else
/// is wrapped, as `{"content": ...}` on success and `{"error": ...}`
/// otherwise (JSON values as values, other text as a string).
///
/// A result with [parts](ToolResult::parts) is a multimodal function
/// response (Gemini 3 models; earlier ones refuse it), as "Multimodal
/// function responses" documents it:
/// <https://ai.google.dev/gemini-api/docs/function-calling#multimodal>,
/// <https://ai.google.dev/api/caching#FunctionResponse>.
///
/// - its `response` is `{"content": [...]}` (`"error"` for an outcome other
///   than success): the content (a JSON value as a value, other text as a
///   string; left out when empty), then each part in order: a text part as
///   a string, a JSON part as its value, an image or a file as `{"$ref":
///   "<displayName>"}`, the reference the documentation gives;
/// - each image or file is a part of the function response,
///   `{"inlineData": {"mimeType", "data", "displayName"}}`, with the bytes
///   in base64; its display name is the file's name, or `image_<index>` /
///   `file_<index>` (the part's index), made unique within the result;
/// - the types are PNG, JPEG and WebP images, PDF and plain text
///   ([`MEDIA_TYPES`]); others are refused, and so is a URL: the URI-based
///   `fileData` of a function response part is "not supported in Gemini
///   API" (Vertex AI only).
///
/// Fails with a [`MessageError`] naming the dialect, the tool and the part
/// for a type outside [`MEDIA_TYPES`], a URL, or a part of an unknown kind.
///
/// ```
/// use toolcall_core::{Media, Outcome, Part, ToolResult};
/// use serde_json::json;
/// let mut result = ToolResult::new("fc-1", "chart", "The chart:", Outcome::Success);
/// result.parts.push(Part::Image(Media::bytes(vec![1, 2, 3], "image/png").with_name("chart.png")));
/// let contents = toolcall_provider::Dialect::Gemini.format_results(&[result]).unwrap();
/// assert_eq!(contents[0]["parts"][0]["functionResponse"], json!({
///     "name": "chart", "id": "fc-1",
///     "response": {"content": ["The chart:", {"$ref": "chart.png"}]},
///     "parts": [{"inlineData": {"mimeType": "image/png", "data": "AQID", "displayName": "chart.png"}}]}));
/// ```
///
/// # Errors
///
/// [`MessageError`], with [`refused`](MessageError::refused) naming the tool and the part, for
/// a part of a type outside [`MEDIA_TYPES`], at a URL, or of an unknown kind.
pub(crate) fn format_results(results: &[ToolResult]) -> Result<Vec<Value>, MessageError> {
    if results.is_empty() {
        return Ok(Vec::new());
    }
    let parts = results
        .iter()
        .map(|result| {
            let mut response = if result.parts.is_empty() {
                json!({"name": result.name, "response": response_object(&result.content, result.outcome)})
            } else {
                multimodal(result)?
            };
            if !result.id.starts_with(SYNTHETIC_ID_PREFIX) {
                response["id"] = Value::from(result.id.as_str());
            }
            Ok(json!({"functionResponse": response}))
        })
        .collect::<Result<Vec<Value>, MessageError>>()?;
    Ok(vec![json!({"role": "user", "parts": parts})])
}

/// The `functionResponse` of a result with parts: `name`, `response` and
/// the media `parts`.
fn multimodal(result: &ToolResult) -> Result<Value, MessageError> {
    let mut content = Vec::with_capacity(result.parts.len() + 1);
    if !result.content.is_empty() {
        content.push(json_or_text(&result.content));
    }
    let mut media_parts = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (index, part) in result.parts.iter().enumerate() {
        let refuse = |problem: &str| {
            parts::refuse(Dialect::Gemini, parts::of_result(result), &result.parts, index, problem)
        };
        let (kind, media) = match part {
            Part::Text { text } => {
                content.push(Value::String(text.clone()));
                continue;
            }
            Part::Json { value } => {
                content.push(value.clone());
                continue;
            }
            Part::Image(media) => ("image", media),
            Part::File(media) => ("file", media),
            _ => return Err(refuse(parts::UNKNOWN_KIND)),
        };
        if !parts::is_one_of(media, &MEDIA_TYPES) {
            return Err(refuse(
                "a Gemini function response takes PNG, JPEG and WebP images, PDF and plain text files",
            ));
        }
        let Some(data) = media.base64() else {
            return Err(refuse("a Gemini API function response takes the bytes (`inlineData`), not a URL"));
        };
        let mut name = media.name.clone().unwrap_or_else(|| format!("{kind}_{index}"));
        if names.contains(&name) {
            name = format!("{name}_{index}");
        }
        content.push(json!({"$ref": name}));
        let mut inline = inline_data(media, data);
        inline["displayName"] = Value::String(name.clone());
        media_parts.push(json!({"inlineData": inline}));
        names.push(name);
    }
    let key = if result.outcome.is_success() { "content" } else { "error" };
    let mut response = json!({"name": result.name, "response": {key: content}});
    if !media_parts.is_empty() {
        response["parts"] = Value::Array(media_parts);
    }
    Ok(response)
}

/// The image types Gemini reads: PNG, JPEG, WebP, HEIC and HEIF
/// ("Supported image formats"): <https://ai.google.dev/gemini-api/docs/vision>.
pub const IMAGE_TYPES: [&str; 5] = ["image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"];

/// A `Blob`: the media type and the bytes in base64.
fn inline_data(media: &Media, data: String) -> Value {
    json!({"mimeType": parts::media_type(media), "data": data})
}

/// One part of a user message as a `Part` (`None`: an empty text, left
/// out), or why it cannot be one: <https://ai.google.dev/api/caching#Part>.
///
/// - text: `{"text"}`; JSON as its JSON text;
/// - bytes: `{"inlineData": {"mimeType", "data"}}`, base64;
/// - a URL: `{"fileData": {"mimeType", "fileUri"}}`: a Files API URI, or
///   a public or signed HTTPS URL, which the API fetches ("File input
///   methods": <https://ai.google.dev/gemini-api/docs/file-input-methods>);
/// - an image is PNG, JPEG, WebP, HEIC or HEIF ([`IMAGE_TYPES`]); a file's
///   type (PDF, text, audio, video) is checked by the API, which documents
///   its types per modality and refuses others.
fn user_part(_index: usize, part: &Part) -> Result<Option<Value>, &'static str> {
    let media = match part {
        Part::Text { text } if text.is_empty() => return Ok(None),
        Part::Text { text } => return Ok(Some(json!({"text": text}))),
        Part::Json { value } => return Ok(Some(json!({"text": value.to_string()}))),
        Part::Image(media) if !parts::is_one_of(media, &IMAGE_TYPES) => {
            return Err("Gemini reads PNG, JPEG, WebP, HEIC and HEIF images");
        }
        Part::Image(media) | Part::File(media) => media,
        _ => return Err(parts::UNKNOWN_KIND),
    };
    Ok(Some(match (media.base64(), media.url_text()) {
        (Some(data), _) => json!({"inlineData": inline_data(media, data)}),
        (None, url) => json!({"fileData": {"mimeType": parts::media_type(media), "fileUri": url}}),
    }))
}

/// The text as JSON when it is JSON, else as a string.
fn json_or_text(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn response_object(content: &str, outcome: Outcome) -> Value {
    let value = json_or_text(content);
    if value.is_object() {
        return value;
    }
    let key = if outcome.is_success() { "content" } else { "error" };
    json!({ key: value })
}

/// The transcript as `contents`: user messages (`text` parts; bytes as
/// `inlineData` `{"mimeType", "data"}`; a URL as `fileData` `{"mimeType",
/// "fileUri"}`, a Files API URI or a public or signed HTTPS URL the API
/// fetches: <https://ai.google.dev/gemini-api/docs/file-input-methods>;
/// images of the [`IMAGE_TYPES`], a file's type checked by the API),
/// `model` contents of the assistant's pieces in order (text,
/// `functionCall` parts with `name`, an object `args`: [`args`], and the
/// `id` when Gemini sent one, not a
/// [synthetic](SYNTHETIC_ID_PREFIX) one; thought summaries as `thought`
/// parts; each thought signature on the part after it, as it came, or on
/// an empty text part when nothing follows), and each turn's results as
/// [`format_results`] writes them. Other providers' reasoning is left out.
/// A model content without parts is left out, as Gemini refuses it. The
/// instructions go in the request's own `systemInstruction`:
/// <https://ai.google.dev/api/generate-content>.
///
/// Gemini 3 refuses a turn's function calls without their signatures
/// ("Function call is missing a thought_signature"), so they travel in the
/// transcript, and a saved run resumed elsewhere sends them back:
/// <https://ai.google.dev/gemini-api/docs/thought-signatures>.
///
/// ```
/// use toolcall_core::ToolCall;
/// use toolcall_provider::{Content, Dialect, Message, Reasoning};
/// let content = vec![
///     Content::Reasoning(Reasoning::ThoughtSignature { signature: "c2ln".into() }),
///     Content::Call(ToolCall::new("gemini-call-0-now", "now", "{}")),
/// ];
/// let transcript = [Message::user("Time?"), Message::Assistant { content }];
/// let contents = Dialect::Gemini.messages(&transcript).unwrap();
/// assert_eq!(contents[1]["parts"][0], serde_json::json!(
///     {"functionCall": {"name": "now", "args": {}}, "thoughtSignature": "c2ln"}));
/// ```
///
/// # Errors
///
/// [`MessageError`] for a part of a user message or of a tool's result that Gemini cannot
/// take, named in [`refused`](MessageError::refused).
pub(crate) fn contents(transcript: &[Message]) -> Result<Vec<Value>, MessageError> {
    let mut out = Vec::new();
    for (at, message) in transcript.iter().enumerate() {
        match message {
            Message::User { parts: user_parts } => {
                let parts = match only_text(user_parts) {
                    Some(text) => vec![json!({"text": text})],
                    None => {
                        let of = || PartOf::UserMessage { message: at };
                        parts::encode_all(Dialect::Gemini, of, user_parts, user_part)?
                    }
                };
                out.push(json!({"role": "user", "parts": parts}));
            }
            Message::Assistant { content } => {
                let parts = model_parts(content);
                // Gemini refuses a content without parts.
                if !parts.is_empty() {
                    out.push(json!({"role": "model", "parts": parts}));
                }
            }
            Message::Tool { results } => out.extend(Dialect::Gemini.format_results(results)?),
            Message::Summary { .. } => {
                out.push(
                    json!({"role": "user", "parts": [{"text": message.summary_text().unwrap_or_default()}]}),
                );
            }
        }
    }
    Ok(out)
}

/// An assistant message's pieces as `model` parts.
fn model_parts(content: &[Content]) -> Vec<Value> {
    let mut parts = Vec::with_capacity(content.len());
    let mut signature = None;
    for piece in content {
        let mut part = match piece {
            Content::Reasoning(Reasoning::ThoughtSignature { signature: next }) => {
                signature = Some(next.as_str());
                continue;
            }
            Content::Text { text } if text.is_empty() => continue,
            Content::Text { text } => json!({"text": text}),
            Content::Reasoning(Reasoning::Thought { text }) => json!({"text": text, "thought": true}),
            Content::Call(call) => {
                let mut function_call = json!({"name": call.name, "args": args(&call.arguments)});
                // A synthetic id is the dialect's own, made up for a call
                // Gemini sent without one: it is not sent back.
                if !call.id.starts_with(SYNTHETIC_ID_PREFIX) {
                    function_call["id"] = Value::from(call.id.as_str());
                }
                json!({"functionCall": function_call})
            }
            Content::Reasoning(_) | Content::Native { .. } => continue,
        };
        if let Some(signature) = signature.take() {
            part["thoughtSignature"] = Value::from(signature);
        }
        parts.push(part);
    }
    if let Some(signature) = signature {
        parts.push(json!({"text": "", "thoughtSignature": signature}));
    }
    parts
}

/// A call's arguments as the `args` object a `functionCall` part needs.
///
/// Arguments that are not a JSON object (a model that wrote broken JSON, a
/// transcript from another provider) are sent as `{}`: Gemini refuses
/// `args` that are not an object (a `Struct`), and the tool has already
/// answered the call with an invalid-arguments result, which is what tells
/// the model to fix it. Failing the request would end a run the model can
/// still repair.
///
/// ```
/// use serde_json::json;
/// use toolcall_core::ToolCall;
/// use toolcall_provider::{Dialect, Message};
/// let args = |arguments: &str| {
///     let transcript = [Message::assistant("", [ToolCall::new("fc-1", "weather", arguments)])];
///     Dialect::Gemini.messages(&transcript).unwrap()[0]["parts"][0]["functionCall"]["args"].clone()
/// };
/// assert_eq!(args(r#"{"city":"Oslo"}"#), json!({"city": "Oslo"}));
/// assert_eq!(args("not json"), json!({}));
/// ```
pub(crate) fn args(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(serde_json::Map::new()),
    }
}
