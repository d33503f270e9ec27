//! OpenAI: Chat Completions and Responses function tools, strict mode, native
//! web search, and the tool-call messages of both APIs.
//!
//! Rules, from OpenAI's documentation:
//!
//! - Function tools and their messages (Chat: `tools[].function`,
//!   `message.tool_calls[]` with string `arguments`, `role: "tool"` replies;
//!   Responses: flat `{"type": "function", ...}`, `function_call` output items
//!   answered by `function_call_output` items keyed by `call_id`):
//!   <https://platform.openai.com/docs/guides/function-calling>,
//!   <https://platform.openai.com/docs/api-reference/chat/create>,
//!   <https://platform.openai.com/docs/api-reference/responses/create>.
//!   Chat Completions accepts at most 128 functions; names match
//!   `^[a-zA-Z0-9_-]{1,64}$`. In the Responses API `strict` defaults to
//!   true, so a non-strict function says `"strict": false`.
//! - Strict mode ("Supported schemas",
//!   <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>):
//!   the root is an object and not `anyOf`; every object has
//!   `additionalProperties: false` and lists every property in `required`
//!   (optional values are expressed as a union with `null`); the keywords
//!   are `type`, `properties`, `required`, `additionalProperties`, `items`,
//!   `enum`, `const`, `anyOf`, `$ref`/`$defs` (recursion allowed),
//!   `description`, `title`; for strings `pattern` and `format` (date-time,
//!   time, date, duration, email, hostname, ipv4, ipv6, uuid); for numbers
//!   `multipleOf`, `minimum`, `maximum`, `exclusiveMinimum`,
//!   `exclusiveMaximum`; for arrays `minItems`, `maxItems`. `allOf`, `not`,
//!   `if`/`then`/`else`, `dependentRequired`, `dependentSchemas` are not
//!   supported. Limits: 5000 properties, 10 levels of nesting, 1000 enum
//!   values, 120,000 characters of names, enum values and consts.
//! - Web search is a Responses tool, `{"type": "web_search"}` with
//!   `filters.allowed_domains` (at most 100):
//!   <https://platform.openai.com/docs/guides/tools-web-search>.
//!
//! # The strict transform ([`strict_schema`])
//!
//! From the canonical schema, on every subschema:
//! - `oneOf` becomes `anyOf` (serde's tagged enums are disjoint by their tag,
//!   so nothing is lost), and a `$ref` with siblings is wrapped as
//!   `anyOf: [{"$ref": ...}]`, keeping its description;
//! - every object gets `additionalProperties: false` and all its properties
//!   in `required`. An `Option` field is already `[T, "null"]` (or `anyOf`
//!   with null) in the canonical schema, so it stays optional: the model sends
//!   `null`, which serde reads as `None` exactly as it reads an absent field.
//!   A field that is optional only through `#[serde(default)]` becomes
//!   required *without* null, because its deserializer would refuse `null`;
//!   its default is kept in the description;
//! - every keyword strict mode does not allow (`default`, `minLength`,
//!   `maxLength`, `uniqueItems`, `minProperties`, an unsupported `format`...)
//!   is removed and appended to the description as `key: value`, so the model
//!   still sees it (and our validator still enforces it). schemars' integer
//!   and float widths (`format: "uint8"`, `"double"`) are dropped: the
//!   bounds carry them;
//! - refused, naming the keyword: an open map (`additionalProperties` other
//!   than false, `patternProperties`), a schema that accepts any value (a
//!   `serde_json::Value` field), tuples (`prefixItems`), and `allOf`, `not`,
//!   `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, `contains`,
//!   `propertyNames`, `unevaluated*`.
//!
//! Outside strict mode the canonical schema is sent as it is.

use serde::Deserialize;
use serde_json::{Value, json};

use super::budget::ProviderLimits;
use super::payload::{list, read};
use super::transform::{self, Keyword, Refuse};
use super::{Dialect, DialectError, MessageError};
use tools_core::toolset::WebSearch;
use tools_core::{JsonObject, Tool, ToolCall, ToolResult};

/// Chat Completions and Responses, outside strict mode.
pub const LIMITS: ProviderLimits =
    ProviderLimits { max_tools: Some(128), max_name_len: 64, ..ProviderLimits::NONE };

/// Strict mode: the structured-outputs limits as well.
pub const STRICT_LIMITS: ProviderLimits = ProviderLimits {
    max_properties: Some(5000),
    max_nesting: Some(10),
    max_enum_values: Some(1000),
    max_schema_chars: Some(120_000),
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
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

const STRICT_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

const STRICT_REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "prefixItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// A Chat Completions function tool:
/// `{"type": "function", "function": {"name", "description", "parameters"[, "strict": true]}}`.
pub fn chat_function(tool: &dyn Tool, strict: bool) -> Result<Value, DialectError> {
    let dialect = if strict { Dialect::OpenAiChatStrict } else { Dialect::OpenAiChat };
    let mut function = json!({
        "name": tool.name(),
        "description": tool.description(),
        "parameters": parameters(tool, strict, dialect)?,
    });
    if strict {
        function["strict"] = Value::Bool(true);
    }
    Ok(json!({"type": "function", "function": function}))
}

/// A Responses function tool:
/// `{"type": "function", "name", "description", "parameters", "strict"}`.
pub fn responses_function(tool: &dyn Tool, strict: bool) -> Result<Value, DialectError> {
    let dialect = if strict { Dialect::OpenAiResponsesStrict } else { Dialect::OpenAiResponses };
    Ok(json!({
        "type": "function",
        "name": tool.name(),
        "description": tool.description(),
        "parameters": parameters(tool, strict, dialect)?,
        "strict": strict,
    }))
}

fn parameters(tool: &dyn Tool, strict: bool, dialect: Dialect) -> Result<Value, DialectError> {
    if strict {
        strict_schema(tool.name(), tool.parameters(), dialect).map(Value::Object)
    } else {
        Ok(Value::Object(tool.parameters().clone()))
    }
}

/// The Responses native web search: `{"type": "web_search"}`, with
/// `filters.allowed_domains` when domains are allowed.
///
/// Refused with blocked domains: the tool has no block list, and dropping
/// one silently would search what the user excluded. `max_uses` has no
/// equivalent on the tool (the request's `max_tool_calls` bounds all tools)
/// and is left out.
pub fn web_search(search: &WebSearch) -> Result<Value, DialectError> {
    if !search.blocked_domains.is_empty() {
        return Err(DialectError::tool(
            tools_core::toolset::RESERVED_WEB_SEARCH,
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

/// The strict-mode form of a canonical schema (see the [module docs](self)).
///
/// ```
/// use tools_provider::{Dialect, openai};
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Weather { city: String, days: Option<u8> }
/// let schema = tools_core::Parameters::of::<Weather>();
/// let strict = openai::strict_schema("weather", schema.schema(), Dialect::OpenAiChatStrict).unwrap();
/// assert_eq!(strict["required"], serde_json::json!(["city", "days"]));
/// assert_eq!(strict["additionalProperties"], false);
/// ```
pub fn strict_schema(tool: &str, schema: &JsonObject, dialect: Dialect) -> Result<JsonObject, DialectError> {
    if schema.contains_key("anyOf") || schema.contains_key("oneOf") {
        return Err(DialectError::tool(
            tool,
            dialect,
            "anyOf",
            "the root of a strict schema must be an object, not a union",
        ));
    }
    let mut root = Value::Object(schema.clone());
    strict_node(&mut root, "", &|keyword, problem| DialectError::tool(tool, dialect, keyword, problem))?;
    match root {
        Value::Object(object) => Ok(object),
        _ => Err(DialectError::tool(tool, dialect, "type", "the root must be an object schema")),
    }
}

fn strict_node(node: &mut Value, path: &str, refuse: &Refuse<'_>) -> Result<(), DialectError> {
    let object = match node {
        Value::Bool(true) => {
            return Err(refuse(
                "true",
                format!("{}: a schema that accepts any value cannot be strict", transform::at(path)),
            ));
        }
        Value::Object(object) => object,
        _ => return Ok(()),
    };
    if object.is_empty() {
        return Err(refuse(
            "{}",
            format!("{}: a schema that accepts any value cannot be strict", transform::at(path)),
        ));
    }
    if let Some(keyword) = transform::first_present(object, STRICT_REFUSED) {
        return Err(refuse(keyword, format!("{}: not supported in strict mode", transform::at(path))));
    }
    transform::rename_key(object, "oneOf", "anyOf");
    if object.len() > 1
        && let Some(reference) = object.remove("$ref")
    {
        let rest = std::mem::take(object);
        object.insert("anyOf".into(), json!([{"$ref": reference}]));
        object.extend(rest);
    }
    let is_object = object.contains_key("properties")
        || match object.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
            _ => false,
        };
    if is_object {
        transform::refuse_open_map(object, path, refuse)?;
        let properties = object.entry("properties").or_insert_with(|| Value::Object(JsonObject::new()));
        let names: Vec<Value> = properties
            .as_object()
            .map(|p| p.keys().cloned().map(Value::String).collect())
            .unwrap_or_default();
        object.insert("required".into(), Value::Array(names));
        object.insert("additionalProperties".into(), Value::Bool(false));
    }
    transform::try_for_each_child(object, |child, segment| {
        strict_node(child, &transform::join(path, &segment), refuse)
    })?;
    transform::keep_or_note(object, Vec::new(), |key, value| match key {
        "format" => transform::format_rule(value, STRICT_FORMATS),
        other if STRICT_KEYWORDS.contains(&other) => Keyword::Keep,
        _ => Keyword::Note,
    });
    Ok(())
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
const RESPONSES: &str = "openai responses output";

/// The tool calls of a Chat Completions response (the whole response, or
/// its `choices[0].message`), in order. Tools of another `type` than
/// `function` (custom tools) are skipped.
///
/// ```
/// use tools_provider::openai;
/// let response = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": null,
///     "tool_calls": [{"id": "call_1", "type": "function",
///                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}]});
/// let calls = openai::parse_chat_calls(&response).unwrap();
/// assert_eq!(calls[0].arguments, r#"{"city":"Paris"}"#);
/// ```
pub fn parse_chat_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
    let message: ChatMessage = if response.get("choices").is_some() {
        let response: ChatResponse = read(CHAT, response)?;
        match response.choices.into_iter().next() {
            Some(choice) => choice.message,
            None => return Err(MessageError::new(CHAT, "`choices` is empty")),
        }
    } else {
        read(CHAT, response)?
    };
    let calls = message.tool_calls.unwrap_or_default();
    let mut out = Vec::with_capacity(calls.len());
    for (index, call) in calls.into_iter().enumerate() {
        if call.kind.as_deref().is_some_and(|kind| kind != "function") {
            continue;
        }
        let Some(function) = call.function else {
            return Err(MessageError::new(
                CHAT,
                format!("tool call {index} (`{}`) has no `function`", call.id),
            ));
        };
        out.push(ToolCall::new(call.id, function.name, function.arguments));
    }
    Ok(out)
}

/// The turn's results as Chat Completions messages, one
/// `{"role": "tool", "tool_call_id", "content"}` per result, in order.
pub fn format_chat_results(results: &[ToolResult]) -> Vec<Value> {
    results.iter().map(|r| json!({"role": "tool", "tool_call_id": r.id, "content": r.content})).collect()
}

#[derive(Deserialize)]
struct FunctionCallItem {
    call_id: String,
    name: String,
    arguments: String,
}

/// The `function_call` items of a Responses response (the whole response,
/// or its `output` array), in order; other items (messages, reasoning, web
/// search calls) are skipped.
pub fn parse_responses_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
    let output = list(RESPONSES, response, "output", "expected a response object or its `output` array")?;
    let mut calls = Vec::new();
    for (index, item) in output.iter().enumerate() {
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            continue;
        }
        let call: FunctionCallItem = read(RESPONSES, item)
            .map_err(|e| MessageError::new(RESPONSES, format!("output item {index}: {}", e.problem)))?;
        calls.push(ToolCall::new(call.call_id, call.name, call.arguments));
    }
    Ok(calls)
}

/// The turn's results as Responses input items, one
/// `{"type": "function_call_output", "call_id", "output"}` per result.
pub fn format_responses_results(results: &[ToolResult]) -> Vec<Value> {
    results
        .iter()
        .map(|r| json!({"type": "function_call_output", "call_id": r.id, "output": r.content}))
        .collect()
}
