//! Anthropic: Messages API tools (`input_schema`), strict tool use, the
//! native web search tool, and `tool_use` / `tool_result` blocks.
//!
//! Rules, from Anthropic's documentation:
//!
//! - A tool is `{"name", "description", "input_schema"}`; `input_schema` is
//!   a JSON Schema whose root has `type: "object"`; names match
//!   `^[a-zA-Z0-9_-]{1,64}$`:
//!   <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>.
//!   Outside strict mode no further subset is published, so the canonical
//!   schema is sent as it is.
//! - The model's calls are `tool_use` content blocks with an object `input`;
//!   the results go back in *one* user message of `tool_result` blocks
//!   (`tool_use_id`, `content`, `is_error`), before any other content:
//!   <https://docs.anthropic.com/en/api/messages>. A result's images and
//!   files are `image` and `document` blocks in its `content`
//!   ([`format_results`] has the rules and their sources).
//! - Strict tool use (`"strict": true`) supports a subset of JSON Schema:
//!   types, `enum`, `const`, `anyOf`, `allOf`, local `$ref`/`$defs`, string
//!   formats date-time, time, date, duration, email, hostname, uri, ipv4,
//!   ipv6, uuid, `minItems` of 0 or 1, and every object with
//!   `additionalProperties: false`; not recursion, numerical constraints,
//!   string length constraints; at most 20 strict tools, 24 optional
//!   parameters and 16 union-typed parameters per request:
//!   <https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs>.
//!   (Anthropic's Python SDK, `anthropic.lib.tools.transform_schema`, also
//!   moves unsupported keywords into the description, as [`strict_schema`]
//!   does.)
//! - Web search is `{"type": "web_search_20250305", "name": "web_search",
//!   "max_uses", "allowed_domains" | "blocked_domains"}`, and the two domain
//!   lists cannot be used together:
//!   <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool>.

use serde::Deserialize;
use serde_json::{Value, json};

use super::limits::ProviderLimits;
use super::parts;
use super::payload::{list, read};
use super::transform::{self, Keyword, Refuse};
use super::{Dialect, DialectError, Message, MessageError};
use serde_json::Map;
use tools_core::toolset::{RESERVED_WEB_SEARCH, WebSearch};
use tools_core::{JsonObject, Part, Tool, ToolCall, ToolResult};

/// Anthropic tools outside strict mode.
pub const LIMITS: ProviderLimits = ProviderLimits { max_name_len: 64, ..ProviderLimits::NONE };

/// Strict tool use: the per-request limits of structured outputs.
pub const STRICT_LIMITS: ProviderLimits = ProviderLimits {
    max_tools: Some(20),
    max_optional_params: Some(24),
    max_union_params: Some(16),
    ..LIMITS
};

const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "description",
    "title",
    "format",
    "minItems",
];

const STRICT_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];

const STRICT_REFUSED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "patternProperties",
    "prefixItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// One tool: `{"name", "description", "input_schema"[, "strict": true]}`.
pub fn tool(tool: &dyn Tool, strict: bool) -> Result<Value, DialectError> {
    let schema = if strict {
        strict_schema(tool.spec().name(), tool.spec().parameters())?
    } else {
        tool.spec().parameters().clone()
    };
    let mut definition =
        json!({"name": tool.spec().name(), "description": tool.spec().description(), "input_schema": schema});
    if strict {
        definition["strict"] = Value::Bool(true);
    }
    if !tool.spec().examples().is_empty() {
        // Anthropic's own field for them:
        // <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-use-examples>.
        definition["input_examples"] = Value::Array(tool.spec().examples().to_vec());
    }
    Ok(definition)
}

/// The native web search tool, `web_search_20250305`.
pub fn web_search(search: &WebSearch) -> Result<Value, DialectError> {
    if !search.allowed_domains.is_empty() && !search.blocked_domains.is_empty() {
        return Err(DialectError::tool(
            RESERVED_WEB_SEARCH,
            Dialect::Anthropic,
            "allowed_domains",
            "allowed_domains and blocked_domains cannot be used together",
        ));
    }
    let mut tool = json!({"type": "web_search_20250305", "name": RESERVED_WEB_SEARCH});
    if let Some(max_uses) = search.max_uses {
        tool["max_uses"] = json!(max_uses);
    }
    if !search.allowed_domains.is_empty() {
        tool["allowed_domains"] = json!(search.allowed_domains);
    }
    if !search.blocked_domains.is_empty() {
        tool["blocked_domains"] = json!(search.blocked_domains);
    }
    Ok(tool)
}

/// The strict form of a canonical schema: `oneOf` becomes `anyOf`, every
/// object gets `additionalProperties: false` (an open map is refused),
/// keywords outside the strict subset (numeric bounds, lengths, `pattern`,
/// `default`, `minItems` above 1, other formats) move into the description,
/// and a recursive schema is refused. `required` is left as it is: Anthropic
/// does not ask for every property, so `Option` fields stay optional.
pub fn strict_schema(tool: &str, schema: &JsonObject) -> Result<JsonObject, DialectError> {
    let refuse =
        |keyword: &str, problem: String| DialectError::tool(tool, Dialect::AnthropicStrict, keyword, problem);
    if let Some(name) = transform::recursive_def(schema) {
        return Err(refuse(
            "$ref",
            format!("the schema is recursive (through `{name}`), which strict mode refuses"),
        ));
    }
    let mut root = Value::Object(schema.clone());
    strict_node(&mut root, "", &refuse)?;
    match root {
        Value::Object(object) => Ok(object),
        _ => Err(refuse("type", "the root must be an object schema".into())),
    }
}

fn strict_node(node: &mut Value, path: &str, refuse: &Refuse<'_>) -> Result<(), DialectError> {
    let Value::Object(object) = node else { return Ok(()) };
    if let Some(keyword) = transform::first_present(object, STRICT_REFUSED) {
        return Err(refuse(keyword, format!("{}: not supported by strict tool use", transform::at(path))));
    }
    transform::rename_key(object, "oneOf", "anyOf");
    let is_object =
        object.contains_key("properties") || object.get("type").and_then(Value::as_str) == Some("object");
    if is_object {
        transform::refuse_open_map(object, path, refuse)?;
        object.insert("additionalProperties".into(), Value::Bool(false));
    }
    transform::try_for_each_child(object, |child, segment| {
        strict_node(child, &transform::join(path, &segment), refuse)
    })?;
    transform::keep_or_note(object, Vec::new(), |key, value| match key {
        "format" => transform::format_rule(value, STRICT_FORMATS),
        "minItems" if value.as_u64().is_some_and(|n| n <= 1) => Keyword::Keep,
        "minItems" => Keyword::Note,
        other if STRICT_KEYWORDS.contains(&other) => Keyword::Keep,
        _ => Keyword::Note,
    });
    Ok(())
}

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
/// use tools_provider::anthropic;
/// let response = serde_json::json!({"role": "assistant", "content": [
///     {"type": "text", "text": "Checking."},
///     {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}]});
/// let calls = anthropic::parse_calls(&response).unwrap();
/// assert_eq!((calls[0].id.as_str(), calls[0].arguments.as_str()), ("toolu_01", r#"{"city":"Paris"}"#));
/// ```
pub fn parse_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
    let content = list(RESPONSE, response, "content", "expected a message object or its `content` array")?;
    let mut calls = Vec::new();
    for (index, block) in content.iter().enumerate() {
        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        let call: ToolUse = read(RESPONSE, block)
            .map_err(|e| MessageError::new(RESPONSE, format!("content[{index}]: {}", e.problem)))?;
        let arguments = match call.input {
            // Older models sent an absent input for a tool without parameters.
            Value::Null => "{}".to_owned(),
            input => input.to_string(),
        };
        calls.push(ToolCall::new(call.id, call.name, arguments));
    }
    Ok(calls)
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
/// use tools_core::{Media, Outcome, Part, ToolResult};
/// let result = ToolResult::new("toolu_01", "get_weather", "21°C", Outcome::Success);
/// let messages = tools_provider::anthropic::format_results(&[result]).unwrap();
/// assert_eq!(messages[0]["content"][0]["tool_use_id"], "toolu_01");
/// assert!(tools_provider::anthropic::format_results(&[]).unwrap().is_empty());
///
/// let mut chart = ToolResult::new("toolu_02", "chart", "The chart:", Outcome::Success);
/// chart.parts.push(Part::Image(Media::bytes(vec![1, 2, 3], "image/png")));
/// let messages = tools_provider::anthropic::format_results(&[chart]).unwrap();
/// assert_eq!(messages[0]["content"][0]["content"][1], serde_json::json!(
///     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AQID"}}));
/// ```
pub fn format_results(results: &[ToolResult]) -> Result<Vec<Value>, MessageError> {
    if results.is_empty() {
        return Ok(Vec::new());
    }
    let blocks = results
        .iter()
        .map(|r| {
            let content = if r.parts.is_empty() { Value::String(r.content.clone()) } else { content(r)? };
            let mut block = json!({"type": "tool_result", "tool_use_id": r.id, "content": content});
            if !r.outcome.is_success() {
                block["is_error"] = Value::Bool(true);
            }
            Ok(block)
        })
        .collect::<Result<Vec<Value>, MessageError>>()?;
    Ok(vec![json!({"role": "user", "content": blocks})])
}

/// The `content` blocks of a result with parts.
fn content(result: &ToolResult) -> Result<Value, MessageError> {
    let text = |text: &str| json!({"type": "text", "text": text});
    let mut blocks = Vec::with_capacity(result.parts.len() + 1);
    if !result.content.is_empty() {
        blocks.push(text(&result.content));
    }
    for (index, part) in result.parts.iter().enumerate() {
        let refuse = |problem: &str| parts::refuse(Dialect::Anthropic, result, index, problem);
        match part {
            Part::Text { text: t } if t.is_empty() => {}
            Part::Text { text: t } => blocks.push(text(t)),
            Part::Json { value } => blocks.push(text(&value.to_string())),
            Part::Image(media) => {
                if !parts::is_one_of(media, &IMAGE_TYPES) {
                    return Err(refuse("Anthropic reads JPEG, PNG, GIF and WebP images"));
                }
                let source = match (media.base64(), media.url_text()) {
                    (Some(data), _) => {
                        json!({"type": "base64", "media_type": parts::media_type(media), "data": data})
                    }
                    (None, url) => json!({"type": "url", "url": url}),
                };
                blocks.push(json!({"type": "image", "source": source}));
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
                        return Err(refuse(
                            "Anthropic takes a text document's text, not a URL (URL documents are PDFs)",
                        ));
                    };
                    let Ok(data) = std::str::from_utf8(bytes) else {
                        return Err(refuse("a text document must be UTF-8"));
                    };
                    json!({"type": "text", "media_type": "text/plain", "data": data})
                } else {
                    return Err(refuse(
                        "Anthropic documents are PDFs or plain text (send other formats' text as a text part)",
                    ));
                };
                let mut document = json!({"type": "document", "source": source});
                if let Some(name) = &media.name {
                    document["title"] = Value::String(name.clone());
                }
                blocks.push(document);
            }
            _ => return Err(refuse("this version of tools-provider does not know how to send it")),
        }
    }
    Ok(Value::Array(blocks))
}

/// The transcript as Messages API `messages`, consecutive turns of one role
/// merged into one message (the API combines them too; merging here keeps
/// `tool_result` blocks first in their user message, as the tool-use guide
/// asks): user text, assistant `text` and `tool_use` blocks (an object
/// `input`: [`tool_input`]), and each turn's results as [`format_results`]
/// writes them, in `dialect` (named by a refused part's error). An
/// assistant turn with nothing in it is left out, as the API refuses empty
/// content. The instructions go in the request's own `system` field:
/// <https://docs.anthropic.com/en/api/messages>.
///
/// ```
/// use tools_provider::{Dialect, Message, anthropic};
/// let transcript = [
///     Message::user("a"),
///     Message::Assistant { text: String::new(), calls: Vec::new() },
///     Message::user("b"),
/// ];
/// let messages = anthropic::messages(Dialect::Anthropic, &transcript).unwrap();
/// assert_eq!(messages, [serde_json::json!({"role": "user", "content": [
///     {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})]);
/// ```
pub fn messages(dialect: Dialect, transcript: &[Message]) -> Result<Vec<Value>, MessageError> {
    let mut out: Vec<Value> = Vec::new();
    for message in transcript {
        match message {
            Message::User { text } => push(&mut out, "user", Value::String(text.clone())),
            Message::Assistant { text, calls } => {
                let mut blocks = Vec::new();
                // The API refuses empty text blocks.
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in calls {
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(&call.arguments)}));
                }
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
        }
    }
    Ok(out)
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
/// use tools_provider::anthropic::tool_input;
/// assert_eq!(tool_input(r#"{"city":"Oslo"}"#), json!({"city": "Oslo"}));
/// assert_eq!(tool_input("{\"city\":"), json!({}));
/// assert_eq!(tool_input("[1]"), json!({}));
/// ```
pub fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Map::new()),
    }
}
