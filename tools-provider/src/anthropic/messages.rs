//! Anthropic's conversation: `tool_use` blocks read from a response, the
//! turn's `tool_result` blocks, and a whole transcript as Messages API
//! `messages` (the rules and their sources are in the module above).

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::parts;
use crate::payload::{list, read};
use crate::transcript::only_text;
use crate::{Content, Dialect, Message, MessageError, PartOf, Reasoning, calls_of};
use toolcall_core::{Part, ToolCall, ToolResult};

#[derive(Deserialize)]
struct ToolUse {
    id: String,
    name: String,
    input: Value,
}

const RESPONSE: &str = "anthropic response";

/// The `tool_use` blocks of a Messages response (the whole response, or
/// its `content` array), in order; `input` is serialized to the arguments
/// string. Other blocks (text, thinking, server tool use) are skipped.
///
/// ```
/// use toolcall_provider::Dialect;
/// let response = serde_json::json!({"role": "assistant", "content": [
///     {"type": "text", "text": "Checking."},
///     {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}]});
/// let calls = Dialect::Anthropic.parse_calls(&response).unwrap();
/// assert_eq!((calls[0].id.as_str(), calls[0].arguments.as_str()), ("toolu_01", r#"{"city":"Paris"}"#));
/// ```
///
/// # Errors
///
/// Those of [`content`]: [`MessageError`] when the response is neither a message nor a
/// `content` array, or a block is malformed.
pub(crate) fn parse_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
    Ok(calls_of(&content(response)?).cloned().collect())
}

/// The content of a Messages response (the whole response, or its
/// `content` array), in order: `text` blocks, `tool_use` blocks (their
/// `input` serialized to the arguments string), `thinking` blocks (text and
/// signature) and `redacted_thinking` blocks (`data`): what
/// [`messages`] sends back, unchanged, when the turn continues, as
/// <https://platform.claude.com/docs/en/build-with-claude/extended-thinking#preserving-thinking-blocks>
/// requires; a server tool's use and result as [`Content::Native`] items,
/// sent back whole too (a `pause_turn` continues only so); a `compaction`
/// block (server-side compaction, the `compact_20260112` edit: its
/// summary, `encrypted_content` and `signature`, which "users should
/// round-trip ... to subsequent requests":
/// <https://platform.claude.com/docs/en/build-with-claude/compaction>) as a
/// [`Content::Native`] item too, so that the API, which "drops all message
/// blocks prior to the compaction block", continues from it. Other blocks
/// are skipped.
///
/// ```
/// use toolcall_provider::{Content, Dialect, Reasoning};
/// let response = serde_json::json!({"role": "assistant", "content": [
///     {"type": "thinking", "thinking": "Paris first.", "signature": "EqQB"},
///     {"type": "redacted_thinking", "data": "EmwK"},
///     {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}]});
/// let content = Dialect::Anthropic.content(&response).unwrap();
/// assert_eq!(content[1], Content::Reasoning(Reasoning::RedactedThinking { data: "EmwK".into() }));
/// assert!(matches!(&content[2], Content::Call(call) if call.name == "get_weather"));
/// ```
///
/// # Errors
///
/// [`MessageError`] when the response is neither a message object nor its `content` array,
/// or a `tool_use`, `thinking` or `redacted_thinking` block lacks a field (the error names it).
pub(crate) fn content(response: &Value) -> Result<Vec<Content>, MessageError> {
    let blocks = list(RESPONSE, response, "content", "expected a message object or its `content` array")?;
    let mut content = Vec::with_capacity(blocks.len());
    for (index, block) in blocks.iter().enumerate() {
        let problem =
            |e: MessageError| MessageError::new(RESPONSE, format!("content[{index}]: {}", e.problem));
        let piece = match block.get("type").and_then(Value::as_str) {
            Some("text") => match block.get("text").and_then(Value::as_str) {
                Some(text) if !text.is_empty() => Content::text(text),
                _ => continue,
            },
            Some("tool_use") => {
                let call: ToolUse = read(RESPONSE, block).map_err(problem)?;
                let arguments = match call.input {
                    // Older models sent an absent input for a tool without parameters.
                    Value::Null => "{}".to_owned(),
                    input => input.to_string(),
                };
                Content::Call(ToolCall::new(call.id, call.name, arguments))
            }
            Some("thinking") => {
                let thinking: Thinking = read(RESPONSE, block).map_err(problem)?;
                Content::Reasoning(Reasoning::Thinking {
                    thinking: thinking.thinking,
                    signature: thinking.signature,
                })
            }
            Some("redacted_thinking") => {
                let redacted: Redacted = read(RESPONSE, block).map_err(problem)?;
                Content::Reasoning(Reasoning::RedactedThinking { data: redacted.data })
            }
            Some(kind) if is_server_tool(kind) || kind == COMPACTION => {
                Content::Native { provider: NATIVE.into(), item: block.clone() }
            }
            _ => continue,
        };
        content.push(piece);
    }
    Ok(content)
}

/// The name [`Content::Native`] items of Anthropic's carry.
pub const NATIVE: &str = "anthropic";

/// The type of the block server-side compaction returns:
/// <https://platform.claude.com/docs/en/build-with-claude/compaction>.
pub const COMPACTION: &str = "compaction";

/// A server tool's blocks: its use, and its result (`web_search_tool_result`,
/// `web_fetch_tool_result`, `code_execution_tool_result`...):
/// <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool>.
fn is_server_tool(kind: &str) -> bool {
    kind == "server_tool_use" || kind.ends_with("_tool_result")
}

#[derive(Deserialize)]
struct Thinking {
    thinking: String,
    #[serde(default)]
    signature: String,
}

#[derive(Deserialize)]
struct Redacted {
    data: String,
}

/// The image types Anthropic reads: JPEG, PNG, GIF, WebP (the
/// `media_type` of a base64 image source):
/// <https://docs.anthropic.com/en/docs/build-with-claude/vision>.
pub const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The turn's results as the one user message Anthropic expects, in call
/// order: `[{"role": "user", "content": [{"type": "tool_result",
/// "tool_use_id", "content"[, "is_error": true]}...]}]`, a list of one
/// message so that every dialect's results are appended the same way; empty
/// for a turn without results (Anthropic refuses a message with no content).
/// `is_error` is set for every outcome but success.
///
/// A result of text alone has its content as the `content` string. A result
/// with [parts](ToolResult::parts) has a `content` array of blocks, which a
/// `tool_result` takes ("a string or list of nested content blocks": text,
/// image, document):
/// <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>,
/// <https://docs.anthropic.com/en/api/messages>. In order:
///
/// - the content, then each text part: `{"type": "text", "text"}` (empty
///   texts are left out: the API refuses empty text blocks); a JSON part is
///   its JSON text there, Anthropic has no JSON block;
/// - an image: `{"type": "image", "source": {"type": "base64",
///   "media_type", "data"}}` for bytes, `{"type": "image", "source":
///   {"type": "url", "url"}}` for a URL; JPEG, PNG, GIF or WebP
///   ([`IMAGE_TYPES`]): <https://docs.anthropic.com/en/docs/build-with-claude/vision>;
/// - a PDF file: `{"type": "document", "source": {"type": "base64",
///   "media_type": "application/pdf", "data"}}`, or `{"type": "url", "url"}`
///   as its source for a URL:
///   <https://docs.anthropic.com/en/docs/build-with-claude/pdf-support>;
/// - a text file (any `text/*` type, UTF-8): `{"type": "document",
///   "source": {"type": "text", "media_type": "text/plain", "data"}}`, the
///   plain text document source:
///   <https://docs.anthropic.com/en/docs/build-with-claude/citations>;
/// - a document has the file's name as its `title`.
///
/// Fails with a [`MessageError`] naming the dialect, the tool and the part
/// for an image of another type, a file that is neither a PDF nor text, a
/// text file at a URL or not in UTF-8, or a part of an unknown kind.
///
/// ```
/// use toolcall_core::{Media, Outcome, Part, ToolResult};
/// let result = ToolResult::new("toolu_01", "get_weather", "21°C", Outcome::Success);
/// use toolcall_provider::Dialect;
/// let messages = Dialect::Anthropic.format_results(&[result]).unwrap();
/// assert_eq!(messages[0]["content"][0]["tool_use_id"], "toolu_01");
/// assert!(Dialect::Anthropic.format_results(&[]).unwrap().is_empty());
///
/// let mut chart = ToolResult::new("toolu_02", "chart", "The chart:", Outcome::Success);
/// chart.parts.push(Part::Image(Media::bytes(vec![1, 2, 3], "image/png")));
/// let messages = Dialect::Anthropic.format_results(&[chart]).unwrap();
/// assert_eq!(messages[0]["content"][0]["content"][1], serde_json::json!(
///     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AQID"}}));
/// ```
///
/// # Errors
///
/// [`MessageError`], with [`refused`](MessageError::refused) naming the tool and the part, for
/// a part Anthropic cannot take (listed above).
pub(crate) fn format_results(results: &[ToolResult]) -> Result<Vec<Value>, MessageError> {
    if results.is_empty() {
        return Ok(Vec::new());
    }
    let blocks = results
        .iter()
        .map(|r| {
            let content =
                if r.parts.is_empty() { Value::String(r.content.clone()) } else { result_blocks(r)? };
            let mut block = json!({"type": "tool_result", "tool_use_id": r.id, "content": content});
            if !r.outcome.is_success() {
                block["is_error"] = Value::Bool(true);
            }
            Ok(block)
        })
        .collect::<Result<Vec<Value>, MessageError>>()?;
    Ok(vec![json!({"role": "user", "content": blocks})])
}

/// The `content` blocks of a result with parts: its content, then each
/// part ([`content_block`]).
fn result_blocks(result: &ToolResult) -> Result<Value, MessageError> {
    let mut blocks = Vec::with_capacity(result.parts.len() + 1);
    if !result.content.is_empty() {
        blocks.push(json!({"type": "text", "text": result.content}));
    }
    let of = || parts::of_result(result);
    blocks.extend(parts::encode_all(Dialect::Anthropic, of, &result.parts, content_block)?);
    Ok(Value::Array(blocks))
}

/// One part as a content block, the same in a `tool_result`'s content and
/// in a user message (`None`: an empty text, which the API refuses, left
/// out), or why it cannot be one ([`format_results`] lists the blocks and
/// their sources).
fn content_block(_index: usize, part: &Part) -> Result<Option<Value>, &'static str> {
    Ok(Some(match part {
        Part::Text { text } if text.is_empty() => return Ok(None),
        Part::Text { text } => json!({"type": "text", "text": text}),
        Part::Json { value } => json!({"type": "text", "text": value.to_string()}),
        Part::Image(media) => {
            if !parts::is_one_of(media, &IMAGE_TYPES) {
                return Err("Anthropic reads JPEG, PNG, GIF and WebP images");
            }
            let source = match (media.base64(), media.url_text()) {
                (Some(data), _) => {
                    json!({"type": "base64", "media_type": parts::media_type(media), "data": data})
                }
                (None, url) => json!({"type": "url", "url": url}),
            };
            json!({"type": "image", "source": source})
        }
        Part::File(media) => {
            let media_type = parts::media_type(media);
            let source = if media_type == "application/pdf" {
                match (media.base64(), media.url_text()) {
                    (Some(data), _) => json!({"type": "base64", "media_type": media_type, "data": data}),
                    (None, url) => json!({"type": "url", "url": url}),
                }
            } else if media_type.starts_with("text/") {
                let Some(bytes) = media.data() else {
                    return Err("Anthropic takes a text document's text, not a URL (URL documents are PDFs)");
                };
                let Ok(data) = std::str::from_utf8(bytes) else {
                    return Err("a text document must be UTF-8");
                };
                json!({"type": "text", "media_type": "text/plain", "data": data})
            } else {
                return Err(
                    "Anthropic documents are PDFs or plain text (send other formats' text as a text part)",
                );
            };
            let mut document = json!({"type": "document", "source": source});
            if let Some(name) = &media.name {
                document["title"] = Value::String(name.clone());
            }
            document
        }
        _ => return Err(parts::UNKNOWN_KIND),
    }))
}

/// The transcript as Messages API `messages`, consecutive turns of one role
/// merged into one message (the API combines them too; merging here keeps
/// `tool_result` blocks first in their user message, as the tool-use guide
/// asks): user text, and a user message's images and files as the blocks a
/// `tool_result` holds ([`format_results`] lists them), the assistant's content in its order (`text` and
/// `tool_use` blocks, an object `input`: [`tool_input`]; `thinking` and
/// `redacted_thinking` blocks unchanged; other providers' reasoning left
/// out, as no other provider's signature is valid here), and each turn's
/// results as [`format_results`] writes them, in `dialect` (named by a
/// refused part's error). An assistant turn with nothing in it is left
/// out, as the API refuses empty content. The instructions go in the request's own `system` field:
/// <https://docs.anthropic.com/en/api/messages>.
///
/// ```
/// use toolcall_provider::{Dialect, Message};
/// let transcript = [
///     Message::user("a"),
///     Message::assistant("", []),
///     Message::user("b"),
/// ];
/// let messages = Dialect::Anthropic.messages(&transcript).unwrap();
/// assert_eq!(messages, [serde_json::json!({"role": "user", "content": [
///     {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})]);
/// ```
///
/// # Errors
///
/// [`MessageError`] for a part of a user message or of a tool's result that `dialect` cannot
/// send, named in [`refused`](MessageError::refused).
pub(crate) fn messages(dialect: Dialect, transcript: &[Message]) -> Result<Vec<Value>, MessageError> {
    let mut out: Vec<Value> = Vec::new();
    for (at, message) in transcript.iter().enumerate() {
        match message {
            Message::User { parts: user_parts } => {
                let content = match only_text(user_parts) {
                    Some(text) => Value::String(text.to_owned()),
                    None => {
                        let of = || PartOf::UserMessage { message: at };
                        Value::Array(parts::encode_all(dialect, of, user_parts, content_block)?)
                    }
                };
                push(&mut out, "user", content);
            }
            Message::Assistant { content } => {
                let blocks: Vec<Value> = content.iter().filter_map(block).collect();
                // An assistant turn with nothing in it (a tool-less last
                // request answered empty) is left out: the API refuses
                // empty content, and the user turns around it merge.
                if !blocks.is_empty() {
                    push(&mut out, "assistant", Value::Array(blocks));
                }
            }
            Message::Tool { results } => {
                for message in dialect.format_results(results)? {
                    let role = message.get("role").and_then(Value::as_str).unwrap_or("user").to_owned();
                    let content = message.get("content").cloned().unwrap_or(Value::Array(Vec::new()));
                    push(&mut out, &role, content);
                }
            }
            Message::Summary { .. } => {
                push(&mut out, "user", Value::String(message.summary_text().unwrap_or_default()));
            }
        }
    }
    Ok(out)
}

/// One piece of an assistant message as its block, if it is sent.
fn block(piece: &Content) -> Option<Value> {
    Some(match piece {
        // The API refuses empty text blocks.
        Content::Text { text } if text.is_empty() => return None,
        Content::Text { text } => json!({"type": "text", "text": text}),
        Content::Call(call) => {
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(&call.arguments)})
        }
        // A thinking block without its signature (a stream cut before
        // it) is refused: leaving it out is what can still be sent.
        Content::Reasoning(Reasoning::Thinking { signature, .. }) if signature.is_empty() => return None,
        Content::Reasoning(Reasoning::Thinking { thinking, signature }) => {
            json!({"type": "thinking", "thinking": thinking, "signature": signature})
        }
        Content::Reasoning(Reasoning::RedactedThinking { data }) => {
            json!({"type": "redacted_thinking", "data": data})
        }
        Content::Native { provider, item } if provider == NATIVE => item.clone(),
        Content::Reasoning(_) | Content::Native { .. } => return None,
    })
}

/// Append a message, or merge it into the last one when the role is the same.
fn push(out: &mut Vec<Value>, role: &str, content: Value) {
    if let Some(last) = out.last_mut().filter(|last| last.get("role").and_then(Value::as_str) == Some(role)) {
        let mut blocks = blocks_of(last.get("content").cloned().unwrap_or(Value::Null));
        blocks.extend(blocks_of(content));
        last["content"] = Value::Array(blocks);
        return;
    }
    out.push(json!({"role": role, "content": content}));
}

fn blocks_of(content: Value) -> Vec<Value> {
    match content {
        Value::Array(blocks) => blocks,
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        _ => Vec::new(),
    }
}

/// A call's arguments as the `input` object a `tool_use` block needs.
///
/// Arguments that are not a JSON object (a stream cut short, a model that
/// wrote broken JSON, a transcript from another provider) are sent as `{}`:
/// the API refuses a `tool_use` block whose `input` is not an object, and
/// the tool has already answered that call with an invalid-arguments
/// result, which is what tells the model to fix it. Failing the request
/// instead would end a run the model can still repair.
///
/// ```
/// use serde_json::json;
/// use toolcall_core::ToolCall;
/// use toolcall_provider::{Dialect, Message};
/// let input = |arguments: &str| {
///     let transcript = [Message::assistant("", [ToolCall::new("toolu_01", "weather", arguments)])];
///     Dialect::Anthropic.messages(&transcript).unwrap()[0]["content"][0]["input"].clone()
/// };
/// assert_eq!(input(r#"{"city":"Oslo"}"#), json!({"city": "Oslo"}));
/// assert_eq!(input("{\"city\":"), json!({}));
/// assert_eq!(input("[1]"), json!({}));
/// ```
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Map::new()),
    }
}
