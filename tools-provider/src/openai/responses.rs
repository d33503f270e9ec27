//! Responses: flat function tools (`strict` defaults to true there, so a
//! non-strict one says `"strict": false`), the native `web_search` tool, the
//! `function_call` output items, and one `function_call_output` input item
//! per result, keyed by `call_id` (its `output` an array of text, images and
//! files when the result has parts:
//! [`Dialect::format_results`](crate::Dialect::format_results)):
//! <https://platform.openai.com/docs/api-reference/responses/create>,
//! <https://platform.openai.com/docs/guides/tools-web-search>. The
//! functions are reached through [`Dialect`]'s methods with
//! [`OpenAiResponses`](crate::Dialect::OpenAiResponses) and
//! [`OpenAiResponsesStrict`](crate::Dialect::OpenAiResponsesStrict).

use serde::Deserialize;
use serde_json::{Value, json};

use super::parameters;
use crate::parts;
use crate::payload::{list, read};
use crate::transcript::only_text;
use crate::{Content, Dialect, DialectError, Finish, Message, MessageError, PartOf, Reasoning, calls_of};
use toolcall_core::toolset::{RESERVED_WEB_SEARCH, WebSearch};
use toolcall_core::{Part, Tool, ToolCall, ToolResult};

/// A Responses function tool:
/// `{"type": "function", "name", "description", "parameters", "strict"}`.
///
/// # Errors
///
/// With `strict`, [`DialectError`] when [`strict_schema`](super::strict_schema) refuses the
/// schema; never without.
pub(crate) fn function(tool: &dyn Tool, strict: bool) -> Result<Value, DialectError> {
    let dialect = if strict { Dialect::OpenAiResponsesStrict } else { Dialect::OpenAiResponses };
    Ok(json!({
        "type": "function",
        "name": tool.spec().name(),
        "description": crate::examples::in_description(tool),
        "parameters": parameters(tool, strict, dialect)?,
        "strict": strict,
    }))
}

/// The Responses native web search: `{"type": "web_search"}`, with
/// `filters.allowed_domains` when domains are allowed.
///
/// Refused with blocked domains: the tool has no block list, and dropping
/// one silently would search what the user excluded. `max_uses` has no
/// equivalent on the tool (the request's `max_tool_calls` bounds all tools)
/// and is left out.
///
/// # Errors
///
/// [`DialectError`] (keyword `blocked_domains`) when domains are blocked; list the allowed
/// domains instead.
pub(crate) fn web_search(search: &WebSearch) -> Result<Value, DialectError> {
    if !search.blocked_domains.is_empty() {
        return Err(DialectError::tool(
            RESERVED_WEB_SEARCH,
            Dialect::OpenAiResponses,
            "blocked_domains",
            "OpenAI's web search has no block list (only filters.allowed_domains)",
        ));
    }
    let mut tool = json!({"type": "web_search"});
    if !search.allowed_domains.is_empty() {
        tool["filters"] = json!({"allowed_domains": search.allowed_domains});
    }
    Ok(tool)
}

const RESPONSES: &str = "openai responses output";

#[derive(Deserialize)]
struct FunctionCallItem {
    call_id: String,
    name: String,
    arguments: String,
}

/// The `function_call` items of a Responses response (the whole response,
/// or its `output` array), in order; other items (messages, reasoning, web
/// search calls) are skipped.
///
/// # Errors
///
/// Those of [`content`]: [`MessageError`] when the response is neither a response object nor
/// its `output` array, or an item is malformed.
pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
    Ok(calls_of(&content(response)?).cloned().collect())
}

/// The output of a Responses response (the whole response, or its `output`
/// array) as content, in order: `reasoning` items (id, summary texts,
/// encrypted content), the `output_text` and `refusal` parts of `message`
/// items, `function_call` items, and `compaction` items (server-side
/// compaction's opaque `encrypted_content`, kept as a [`Content::Native`]
/// item of [`NATIVE`]: [`input`] sends it back). Other items (web search
/// calls) are skipped. Reasoning items go back before the calls they came
/// with, as a stateless (`store: false`) conversation needs them:
/// <https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context>.
///
/// ```
/// use toolcall_provider::{Content, Dialect, Reasoning};
/// let response = serde_json::json!({"output": [
///     {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Weather first."}],
///      "encrypted_content": "gAAA"},
///     {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather", "arguments": "{}"}]});
/// let content = Dialect::OpenAiResponses.content(&response).unwrap();
/// assert_eq!(content[0], Content::Reasoning(Reasoning::Item {
///     id: "rs_1".into(), summary: vec!["Weather first.".into()], encrypted_content: Some("gAAA".into()) }));
/// assert!(matches!(&content[1], Content::Call(call) if call.id == "call_1"));
/// ```
///
/// # Errors
///
/// [`MessageError`] when the response is neither a response object nor its `output` array,
/// or a `function_call`, `reasoning` or `compaction` item lacks a field (the error names it).
pub(crate) fn content(response: &Value) -> Result<Vec<Content>, MessageError> {
    let output = list(RESPONSES, response, "output", "expected a response object or its `output` array")?;
    let mut content = Vec::with_capacity(output.len());
    for (index, item) in output.iter().enumerate() {
        let problem =
            |e: MessageError| MessageError::new(RESPONSES, format!("output item {index}: {}", e.problem));
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                let call: FunctionCallItem = read(RESPONSES, item).map_err(problem)?;
                content.push(Content::Call(ToolCall::new(call.call_id, call.name, call.arguments)));
            }
            Some("reasoning") => {
                let item: ReasoningItem = read(RESPONSES, item).map_err(problem)?;
                let summary = item.summary.into_iter().map(|part| part.text).collect();
                let encrypted_content = item.encrypted_content;
                content.push(Content::Reasoning(Reasoning::Item { id: item.id, summary, encrypted_content }));
            }
            Some(COMPACTION) => {
                let compaction: CompactionItem = read(RESPONSES, item).map_err(problem)?;
                let mut item = json!({"type": COMPACTION, "encrypted_content": compaction.encrypted_content});
                if let Some(id) = compaction.id {
                    item["id"] = Value::String(id);
                }
                content.push(Content::Native { provider: NATIVE.into(), item });
            }
            Some("message") => {
                for part in item.get("content").and_then(Value::as_array).into_iter().flatten() {
                    let text = match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => part.get("text"),
                        Some("refusal") => part.get("refusal"),
                        _ => None,
                    };
                    match text.and_then(Value::as_str) {
                        Some(text) if !text.is_empty() => content.push(Content::text(text)),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(content)
}

/// The name [`Content::Native`] items of the Responses API carry: its
/// `compaction` items, which only the Responses API takes back.
pub const NATIVE: &str = "openai_responses";

/// The type of the item server-side compaction returns, an opaque
/// `{"type": "compaction", "id", "encrypted_content"}`:
/// <https://developers.openai.com/api/docs/guides/compaction> and the
/// `ResponseCompactionItem` type of the official SDK.
pub const COMPACTION: &str = "compaction";

/// A `compaction` output item, as much of it as goes back: the input item
/// takes `type`, `encrypted_content` and `id` (`created_by` is the output's
/// alone).
#[derive(Deserialize)]
struct CompactionItem {
    #[serde(default)]
    id: Option<String>,
    encrypted_content: String,
}

#[derive(Deserialize)]
struct ReasoningItem {
    id: String,
    #[serde(default)]
    summary: Vec<SummaryText>,
    #[serde(default)]
    encrypted_content: Option<String>,
}

#[derive(Deserialize)]
struct SummaryText {
    text: String,
}

/// The transcript as Responses `input` items: `message` items for the user
/// (a string `content` for text, `input_text`, `input_image` and
/// `input_file` items with images and files, as the function outputs'
/// parts are written: [`format_results`]) and for the model's text (none for an empty text), a `function_call`
/// item per call (`call_id`, `name`, string `arguments`), each `reasoning`
/// item where it came (`id`, `summary`, `encrypted_content`; other
/// providers' reasoning is left out), and each turn's results as
/// [`format_results`] writes them, in `dialect` (named by a refused part's
/// error). The instructions go in the request's own
/// `instructions` field: <https://platform.openai.com/docs/api-reference/responses/create>.
///
/// A `compaction` item (server-side compaction, [`content`]) goes back as
/// it came, and the items before the latest one are left out: "you can drop
/// items that came before the most recent compaction item ... The latest
/// compaction item carries the necessary context to continue the
/// conversation" (<https://developers.openai.com/api/docs/guides/compaction>).
/// The transcript itself keeps them.
///
/// ```
/// use toolcall_provider::{Content, Dialect, Message, openai};
/// let compaction = serde_json::json!({"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA"});
/// let transcript = [
///     Message::user("A long question."),
///     Message::Assistant { content: vec![
///         Content::Native { provider: openai::responses::NATIVE.into(), item: compaction.clone() },
///         Content::text("A long answer."),
///     ]},
///     Message::user("And now?"),
/// ];
/// let input = Dialect::OpenAiResponses.messages(&transcript).unwrap();
/// assert_eq!(input.len(), 3);
/// assert_eq!(input[0], compaction);
/// assert_eq!(input[2]["content"], "And now?");
/// ```
///
/// # Errors
///
/// [`MessageError`] for a part of a user message or of a tool's result that `dialect` cannot
/// send, named in [`refused`](MessageError::refused).
pub(crate) fn input(dialect: Dialect, transcript: &[Message]) -> Result<Vec<Value>, MessageError> {
    let mut input = Vec::with_capacity(transcript.len());
    for (at, message) in transcript.iter().enumerate() {
        match message {
            Message::User { parts: user_parts } => {
                // One text part is the `content` string, as it always was;
                // with images and files, a list of input items.
                let content = match only_text(user_parts) {
                    Some(text) => Value::String(text.to_owned()),
                    None => {
                        let of = || PartOf::UserMessage { message: at };
                        Value::Array(parts::encode_all(dialect, of, user_parts, input_item)?)
                    }
                };
                input.push(json!({"type": "message", "role": "user", "content": content}));
            }
            Message::Assistant { content } => input.extend(content.iter().filter_map(item)),
            // A part the dialect cannot send is refused, naming the
            // dialect, the tool and the part.
            Message::Tool { results } => input.extend(dialect.format_results(results)?),
            Message::Summary { .. } => input.push(
                json!({"type": "message", "role": "user", "content": message.summary_text().unwrap_or_default()}),
            ),
        }
    }
    let compacted =
        input.iter().rposition(|item| item.get("type").and_then(Value::as_str) == Some(COMPACTION));
    if let Some(at) = compacted {
        input.drain(..at);
    }
    Ok(input)
}

/// One piece of an assistant message as its input item, if it is sent.
fn item(piece: &Content) -> Option<Value> {
    Some(match piece {
        Content::Text { text } if text.is_empty() => return None,
        Content::Text { text } => json!({"type": "message", "role": "assistant", "content": text}),
        Content::Call(call) => {
            json!({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments})
        }
        Content::Reasoning(Reasoning::Item { id, summary, encrypted_content }) => {
            let summary: Vec<Value> =
                summary.iter().map(|text| json!({"type": "summary_text", "text": text})).collect();
            let mut item = json!({"type": "reasoning", "id": id, "summary": summary});
            if let Some(encrypted) = encrypted_content {
                item["encrypted_content"] = Value::from(encrypted.as_str());
            }
            item
        }
        Content::Native { provider, item } if provider == NATIVE => item.clone(),
        Content::Reasoning(_) | Content::Native { .. } => return None,
    })
}

/// The turn's results as Responses input items, one
/// `{"type": "function_call_output", "call_id", "output"}` per result.
///
/// A result of text alone has its content as the `output` string. A result
/// with [parts](ToolResult::parts) has an `output` array, which the API
/// documents as "text, image, or file output of the function tool call"
/// (`input_text`, `input_image`, `input_file` items):
/// <https://platform.openai.com/docs/api-reference/responses/create>
/// (`input` > function tool call output > `output`), and
/// <https://platform.openai.com/docs/guides/function-calling> ("files and
/// images as tool call outputs"). In order:
///
/// - the content, then each text part: `{"type": "input_text", "text"}`
///   (empty texts are left out); a JSON part is its JSON text there;
/// - an image: `{"type": "input_image", "image_url", "detail": "auto"}`, a data URL
///   (`data:image/png;base64,...`) for bytes or the URL itself, as "a fully
///   qualified URL or base64 encoded image in a data URL"; PNG, JPEG, WebP
///   or GIF ([`IMAGE_TYPES`](super::IMAGE_TYPES)), other types are refused:
///   <https://platform.openai.com/docs/guides/images-vision>;
/// - a file: `{"type": "input_file", "filename", "file_data"}` with a data
///   URL for bytes, or `{"type": "input_file", "file_url"}` (and its
///   `filename` if it has one) for a URL: the file inputs guide,
///   <https://platform.openai.com/docs/guides/pdf-files>, which lists the
///   types the API reads (PDF, text and code, documents, presentations,
///   spreadsheets) and checks them itself. A file without a name is named
///   `file-<index>` with its type's extension, which the API reads the
///   type from.
///
/// Fails with a [`MessageError`] naming the dialect, the tool and the part
/// for an image of another type or a part of an unknown kind.
///
/// ```
/// use toolcall_core::{Media, Outcome, Part, ToolResult};
/// let mut result = ToolResult::new("call_1", "chart", "The chart:", Outcome::Success);
/// result.parts.push(Part::Image(Media::url("https://example.com/chart.png", "image/png")));
/// let items = toolcall_provider::Dialect::OpenAiResponses.format_results(&[result]).unwrap();
/// assert_eq!(items[0]["output"], serde_json::json!([
///     {"type": "input_text", "text": "The chart:"},
///     {"type": "input_image", "image_url": "https://example.com/chart.png", "detail": "auto"}]));
/// ```
///
/// # Errors
///
/// [`MessageError`], with [`refused`](MessageError::refused) naming the tool and the part, for
/// an image of another type or a part of an unknown kind.
pub(crate) fn format_results(results: &[ToolResult]) -> Result<Vec<Value>, MessageError> {
    results
        .iter()
        .map(|r| {
            let output = if r.parts.is_empty() { Value::String(r.content.clone()) } else { output(r)? };
            Ok(json!({"type": "function_call_output", "call_id": r.id, "output": output}))
        })
        .collect()
}

/// The `output` array of a result with parts: its content, then each
/// part ([`input_item`]).
fn output(result: &ToolResult) -> Result<Value, MessageError> {
    let mut items = Vec::with_capacity(result.parts.len() + 1);
    if !result.content.is_empty() {
        items.push(json!({"type": "input_text", "text": result.content}));
    }
    let of = || parts::of_result(result);
    items.extend(parts::encode_all(Dialect::OpenAiResponses, of, &result.parts, input_item)?);
    Ok(Value::Array(items))
}

/// One part as an input item, the same in a function call's `output` and
/// in a user message's `content` (`None`: an empty text, left out), or
/// why it cannot be one:
///
/// - text: `{"type": "input_text", "text"}`; JSON as its JSON text;
/// - an image: `{"type": "input_image", "image_url", "detail": "auto"}`, a
///   data URL (`data:image/png;base64,...`) for bytes or the URL itself, as
///   "a fully qualified URL or base64 encoded image in a data URL"; PNG,
///   JPEG, WebP or GIF ([`IMAGE_TYPES`](super::IMAGE_TYPES)):
///   <https://platform.openai.com/docs/guides/images-vision>. `detail` is
///   the documented default, which a user message's image must state
///   (`ResponseInputImage` requires it; a function output's may);
/// - a file: `{"type": "input_file", "filename", "file_data"}` with a data
///   URL for bytes, or `{"type": "input_file", "file_url"}` (and its
///   `filename` if it has one) for a URL:
///   <https://platform.openai.com/docs/guides/pdf-files>, which lists the
///   types the API reads and checks them itself.
fn input_item(index: usize, part: &Part) -> Result<Option<Value>, &'static str> {
    Ok(Some(match part {
        Part::Text { text } if text.is_empty() => return Ok(None),
        Part::Text { text } => json!({"type": "input_text", "text": text}),
        Part::Json { value } => json!({"type": "input_text", "text": value.to_string()}),
        Part::Image(media) => {
            if !parts::is_one_of(media, &super::IMAGE_TYPES) {
                return Err("OpenAI reads PNG, JPEG, WebP and non-animated GIF images");
            }
            let url = parts::data_url(media).or_else(|| media.url_text().map(str::to_owned));
            json!({"type": "input_image", "image_url": url, "detail": "auto"})
        }
        Part::File(media) => {
            let mut item = json!({"type": "input_file"});
            match (parts::data_url(media), media.url_text()) {
                (Some(data), _) => {
                    item["filename"] = Value::String(parts::file_name(media, index));
                    item["file_data"] = Value::String(data);
                }
                (None, url) => {
                    if let Some(name) = &media.name {
                        item["filename"] = Value::String(name.clone());
                    }
                    item["file_url"] = json!(url);
                }
            }
            item
        }
        _ => return Err(parts::UNKNOWN_KIND),
    }))
}

/// The ending the `incomplete_details.reason` of an `incomplete` response
/// says ([`Finish`] has the table; the client reads `status` first, and
/// passes `"incomplete"` when no reason came): refused by `content_filter`,
/// else cut off (`max_output_tokens`).
pub(crate) fn finish(incomplete_reason: &str) -> Finish {
    match incomplete_reason {
        "content_filter" => Finish::refused(incomplete_reason),
        reason => Finish::truncated(reason),
    }
}
