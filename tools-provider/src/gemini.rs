//! Gemini: function declarations in Gemini's OpenAPI subset, Google Search
//! grounding, and `functionCall` / `functionResponse` parts.
//!
//! Rules, from Google's documentation:
//!
//! - Tools are `[{"functionDeclarations": [{"name", "description",
//!   "parameters"}]}]`; at most 128 declarations; a name starts with a
//!   letter or underscore, then letters, digits, `_`, `.`, `-` (the
//!   Developer API also `:`), at most 64 characters:
//!   <https://ai.google.dev/gemini-api/docs/function-calling>,
//!   <https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/function-calling>.
//! - `parameters` is a `Schema`, "a select subset of an OpenAPI 3.0 schema
//!   object": `type` (one), `format`, `description`, `nullable`, `enum`
//!   (strings), `items`, `properties`, `required`, `minItems`, `maxItems`,
//!   `minProperties`, `maxProperties`, `minLength`, `maxLength`, `pattern`,
//!   `minimum`, `maximum`, `anyOf`, `propertyOrdering`:
//!   <https://ai.google.dev/api/caching#Schema>. Unknown fields fail the
//!   request with 400 "Invalid JSON payload received. Unknown name"; there
//!   is no `$ref`, so references are inlined and recursion cannot be
//!   expressed; a type list fails ("Proto field is not repeating"); an
//!   `anyOf` must stand alone (python-genai #625); on the Developer API
//!   `format` may only be `enum` or `date-time`; an object parameter list
//!   with empty `properties` fails ("should be non-empty for OBJECT type"),
//!   so a tool without arguments has no `parameters`.
//! - Google Search grounding is the tool `{"google_search": {}}`, without
//!   domain filters: <https://ai.google.dev/gemini-api/docs/google-search>.
//! - The model's calls are `functionCall` parts (`name`, `args`), several
//!   in one message, with no call id on most models; the results go back as
//!   `functionResponse` parts (`name`, `response` as an object) in one
//!   message, in the order of the calls.
//!
//! # The transform ([`parameters`])
//!
//! `$ref` is inlined (a recursive schema is refused, naming the
//! definition); `oneOf` becomes `anyOf`; `const` becomes a one-value
//! `enum`; `[T, "null"]` and an `anyOf` branch `{"type": "null"}` become
//! `nullable: true`; an `anyOf` keeps no siblings (its description and
//! nullability move into the branches); `title`, `$schema`, `$defs` and
//! `additionalProperties` are removed (a map's value schema is noted in the
//! description); schemars' numeric widths are dropped; every other keyword
//! Gemini does not know (`default`, `exclusiveMinimum`, `multipleOf`,
//! `uniqueItems`, other formats...) moves into the description as
//! `key: value`. Refused: recursion, non-string enum values, a schema that
//! accepts any value, tuples, `allOf`, `not`, `if`/`then`/`else`,
//! `patternProperties`.

use serde::Deserialize;
use serde_json::{Value, json};

use super::budget::ProviderLimits;
use super::payload::{list, read};
use super::transform::{self, Keyword, Refuse};
use super::{Definition, Dialect, DialectError, MessageError};
use tools_core::toolset::{RESERVED_WEB_SEARCH, WebSearch};
use tools_core::{JsonObject, Outcome, Tool, ToolCall, ToolResult};

/// At most 128 declarations, names of at most 64 characters.
pub const LIMITS: ProviderLimits =
    ProviderLimits { max_tools: Some(128), max_name_len: 64, ..ProviderLimits::NONE };

/// The prefix of call ids this module makes up for calls that came without one.
pub const SYNTHETIC_ID_PREFIX: &str = "gemini-call-";

const KEPT: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "anyOf",
    "propertyOrdering",
];

const DROPPED: &[&str] =
    &["title", "$schema", "$defs", "definitions", "$id", "$comment", "additionalProperties"];

const REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "prefixItems",
    "dependentSchemas",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

const FORMATS: &[&str] = &["enum", "date-time"];

/// One function declaration: `{"name", "description"[, "parameters"]}`.
pub fn function_declaration(tool: &dyn Tool) -> Result<Value, DialectError> {
    let name = tool.name();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return Err(DialectError::tool(
            name,
            Dialect::Gemini,
            "name",
            "a Gemini function name must start with a letter or `_`",
        ));
    }
    let mut declaration = json!({"name": name, "description": tool.description()});
    if let Some(parameters) = parameters(name, tool.parameters())? {
        declaration["parameters"] = Value::Object(parameters);
    }
    Ok(declaration)
}

/// Google Search grounding, `{"google_search": {}}`. Domain filters are
/// refused (Gemini has none); `max_uses` has no equivalent and is left out.
pub fn google_search(search: &WebSearch) -> Result<Value, DialectError> {
    let keyword = if !search.allowed_domains.is_empty() {
        Some("allowed_domains")
    } else if !search.blocked_domains.is_empty() {
        Some("blocked_domains")
    } else {
        None
    };
    if let Some(keyword) = keyword {
        return Err(DialectError::tool(
            RESERVED_WEB_SEARCH,
            Dialect::Gemini,
            keyword,
            "Google Search grounding has no domain filters",
        ));
    }
    Ok(json!({"google_search": {}}))
}

/// The request's `tools`: one `{"functionDeclarations": [...]}` holding every
/// function, then the search tool if there is one.
pub(crate) fn assemble(definitions: Vec<Definition>) -> Value {
    let (search, functions): (Vec<Definition>, Vec<Definition>) =
        definitions.into_iter().partition(|definition| definition.value.get("google_search").is_some());
    let mut tools = Vec::new();
    if !functions.is_empty() {
        let declarations: Vec<Value> = functions.into_iter().map(|definition| definition.value).collect();
        tools.push(json!({"functionDeclarations": declarations}));
    }
    tools.extend(search.into_iter().map(|definition| definition.value));
    Value::Array(tools)
}

/// The Gemini form of a canonical schema (see the [module docs](self));
/// `None` for a tool without arguments.
///
/// ```
/// use tools_provider::gemini;
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Weather { city: String, days: Option<u8> }
/// let schema = tools_core::Parameters::of::<Weather>();
/// let params = gemini::parameters("weather", schema.schema()).unwrap().unwrap();
/// assert_eq!(params["properties"]["days"], serde_json::json!({"type": "integer", "nullable": true, "minimum": 0, "maximum": 255}));
/// ```
pub fn parameters(tool: &str, schema: &JsonObject) -> Result<Option<JsonObject>, DialectError> {
    let refuse = |keyword: &str, problem: String| DialectError::tool(tool, Dialect::Gemini, keyword, problem);
    if let Some(name) = transform::recursive_def(schema) {
        return Err(refuse(
            "$ref",
            format!("the schema is recursive (through `{name}`); Gemini has no references"),
        ));
    }
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut root = Value::Object(schema.clone());
    if let Value::Object(object) = &mut root {
        object.remove("$defs");
    }
    inline(&mut root, &defs, "", &refuse)?;
    convert(&mut root, "", &refuse)?;
    match root {
        Value::Object(object) if object.get("properties").is_some() => Ok(Some(object)),
        Value::Object(_) => Ok(None),
        _ => Err(refuse("type", "the root must be an object schema".into())),
    }
}

fn inline(node: &mut Value, defs: &JsonObject, path: &str, refuse: &Refuse<'_>) -> Result<(), DialectError> {
    let Value::Object(object) = node else { return Ok(()) };
    if let Some(reference) = object.remove("$ref") {
        let name = reference.as_str().and_then(transform::local_def);
        let Some(target) = name.and_then(|name| defs.get(name)) else {
            return Err(refuse(
                "$ref",
                format!("{}: `{reference}` is not a local definition", transform::at(path)),
            ));
        };
        let siblings = std::mem::take(object);
        *node = target.clone();
        if let Value::Object(inlined) = node {
            // The field's own description says more than the type's.
            inlined.extend(siblings);
        }
        return inline(node, defs, path, refuse);
    }
    transform::try_for_each_child(object, |child, segment| {
        inline(child, defs, &transform::join(path, &segment), refuse)
    })
}

fn convert(node: &mut Value, path: &str, refuse: &Refuse<'_>) -> Result<(), DialectError> {
    let any = || format!("{}: a schema that accepts any value has no Gemini type", transform::at(path));
    let object = match node {
        Value::Bool(true) => return Err(refuse("true", any())),
        Value::Object(object) if object.is_empty() => return Err(refuse("{}", any())),
        Value::Object(object) => object,
        _ => return Ok(()),
    };
    if let Some(keyword) = transform::first_present(object, REFUSED) {
        return Err(refuse(keyword, format!("{}: not supported by Gemini", transform::at(path))));
    }
    transform::rename_key(object, "oneOf", "anyOf");
    if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
        let before = branches.len();
        branches.retain(|branch| branch.get("type").and_then(Value::as_str) != Some("null"));
        if branches.len() < before {
            object.insert("nullable".into(), Value::Bool(true));
        }
        let single = object.get("anyOf").and_then(Value::as_array).is_some_and(|b| b.len() == 1);
        if single && let Some(Value::Array(mut branches)) = object.remove("anyOf") {
            let mut merged = match branches.pop() {
                Some(Value::Object(branch)) => branch,
                _ => return Err(refuse("anyOf", any())),
            };
            merged.extend(std::mem::take(object));
            *node = Value::Object(merged);
            return convert(node, path, refuse);
        }
    }
    if let Some(Value::Array(types)) = object.get("type").cloned() {
        let kinds: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if kinds.len() < types.len() {
            object.insert("nullable".into(), Value::Bool(true));
        }
        match kinds.as_slice() {
            [one] => {
                object.insert("type".into(), one.clone());
            }
            _ => {
                object.remove("type");
                let branches: Vec<Value> = kinds.into_iter().map(|kind| json!({"type": kind})).collect();
                object.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    if let Some(value) = object.remove("const") {
        object.insert("enum".into(), Value::Array(vec![value]));
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        if values.iter().any(Value::is_null) {
            values.retain(|v| !v.is_null());
            object.insert("nullable".into(), Value::Bool(true));
        }
        if let Some(Value::Array(values)) = object.get("enum")
            && let Some(bad) = values.iter().find(|v| !v.is_string())
        {
            return Err(refuse(
                "enum",
                format!("{}: Gemini enums hold strings only, not {bad}", transform::at(path)),
            ));
        }
        object.entry("type").or_insert_with(|| Value::String("string".into()));
        object.insert("format".into(), Value::String("enum".into()));
    }
    transform::try_for_each_child(object, |child, segment| {
        convert(child, &transform::join(path, &segment), refuse)
    })?;
    if let Some(branches) = object.remove("anyOf") {
        // anyOf must stand alone: what applied to the union applies to each branch.
        let mut branches = match branches {
            Value::Array(branches) => branches,
            _ => Vec::new(),
        };
        for branch in branches.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(description) = object.get("description")
                && !branch.contains_key("description")
            {
                branch.insert("description".into(), description.clone());
            }
            if object.get("nullable") == Some(&Value::Bool(true)) {
                branch.insert("nullable".into(), Value::Bool(true));
            }
        }
        *object = JsonObject::new();
        object.insert("anyOf".into(), Value::Array(branches));
        return Ok(());
    }
    // A map's value schema is dropped with `additionalProperties` below, but
    // what the values must be still matters to the model.
    let mut notes = Vec::new();
    if let Some(map) = object.get("additionalProperties").filter(|v| v.is_object()).cloned() {
        notes.push(("additionalProperties".to_owned(), map));
    }
    let empty_properties =
        object.get("properties").and_then(Value::as_object).is_some_and(JsonObject::is_empty);
    if empty_properties && !path.is_empty() {
        object.remove("properties");
    }
    let names: Vec<String> = object
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(Value::Array(required)) = object.get_mut("required") {
        required.retain(|name| name.as_str().is_some_and(|name| names.iter().any(|n| n == name)));
        if required.is_empty() {
            object.remove("required");
        }
    }
    if empty_properties && path.is_empty() {
        object.remove("properties");
    }
    transform::keep_or_note(object, notes, |key, value| match key {
        "format" => transform::format_rule(value, FORMATS),
        other if DROPPED.contains(&other) => Keyword::Drop,
        other if KEPT.contains(&other) => Keyword::Keep,
        _ => Keyword::Note,
    });
    Ok(())
}

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
/// use tools_provider::gemini;
/// let response = serde_json::json!({"candidates": [{"content": {"role": "model", "parts": [
///     {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]}}]});
/// let calls = gemini::parse_calls(&response).unwrap();
/// assert_eq!((calls[0].id.as_str(), calls[0].arguments.as_str()), ("gemini-call-0-get_weather", r#"{"city":"Paris"}"#));
/// ```
pub fn parse_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
    let parts = parts_of(response)?;
    let mut calls = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        let Some(call) = part.get("functionCall") else { continue };
        let call: FunctionCall = read(RESPONSE, call).map_err(|e| {
            MessageError::new(RESPONSE, format!("parts[{index}].functionCall: {}", e.problem))
        })?;
        let arguments = match call.args {
            None | Some(Value::Null) => "{}".to_owned(),
            Some(args) => args.to_string(),
        };
        let id = call.id.unwrap_or_else(|| format!("{SYNTHETIC_ID_PREFIX}{}-{}", calls.len(), call.name));
        calls.push(ToolCall::new(id, call.name, arguments));
    }
    Ok(calls)
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

/// The turn's results as one content of `functionResponse` parts, in call
/// order: `{"role": "user", "parts": [{"functionResponse": {"name",
/// "response"[, "id"]}}]}`.
///
/// `response` must be an object: content that is a JSON object is sent as
/// it is (the error contract's `{"error": "..."}` among them); anything else
/// is wrapped, as `{"content": ...}` on success and `{"error": ...}`
/// otherwise (JSON values as values, other text as a string).
pub fn format_results(results: &[ToolResult]) -> Value {
    let parts: Vec<Value> = results
        .iter()
        .map(|result| {
            let mut response =
                json!({"name": result.name, "response": response_object(&result.content, result.outcome)});
            if !result.id.starts_with(SYNTHETIC_ID_PREFIX) {
                response["id"] = Value::String(result.id.clone());
            }
            json!({"functionResponse": response})
        })
        .collect();
    json!({"role": "user", "parts": parts})
}

fn response_object(content: &str, outcome: Outcome) -> Value {
    let value = serde_json::from_str::<Value>(content).unwrap_or_else(|_| Value::String(content.to_owned()));
    if value.is_object() {
        return value;
    }
    let key = if outcome.is_success() { "content" } else { "error" };
    json!({ key: value })
}
