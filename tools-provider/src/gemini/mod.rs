//! Gemini: function declarations in Gemini's OpenAPI subset, Google Search
//! grounding, and `functionCall` / `functionResponse` parts, reached
//! through [`Dialect`]'s methods with the `Gemini` dialect.
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
//!   `anyOf` must stand alone ("When using any_of, it must be the only field
//!   set", <https://github.com/googleapis/python-genai/issues/625>); on the
//!   Developer API
//!   `format` may only be `enum` or `date-time`; an object parameter list
//!   with empty `properties` fails ("should be non-empty for OBJECT type"),
//!   so a tool without arguments has no `parameters`.
//! - Google Search grounding is the tool `{"google_search": {}}`, without
//!   domain filters: <https://ai.google.dev/gemini-api/docs/google-search>.
//! - The model's calls are `functionCall` parts (`name`, `args`), several
//!   in one message, with no call id on most models; the results go back as
//!   `functionResponse` parts (`name`, `response` as an object) in one
//!   message, in the order of the calls. A result's images and files go in
//!   the function response's own `parts` as `inlineData` (Gemini 3 models):
//!   <https://ai.google.dev/gemini-api/docs/function-calling#multimodal>.
//!
//! # The transform
//!
//! What the `Gemini` dialect sends as a function's `parameters`
//! ([`Dialect::function`]) and as a typed answer's schema
//! ([`Dialect::answer_schema`]).
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

mod messages;
mod schema;

use serde_json::{Value, json};

use super::limits::ProviderLimits;
use super::{Definition, Dialect, DialectError, Finish};
use toolcall_core::Tool;
use toolcall_core::toolset::{RESERVED_WEB_SEARCH, WebSearch};

pub use messages::{IMAGE_TYPES, MEDIA_TYPES, SYNTHETIC_ID_PREFIX};
pub(crate) use messages::{content, contents, format_results, parse_calls};
pub(crate) use schema::parameters;

/// At most 128 declarations, names of at most 64 characters.
pub const LIMITS: ProviderLimits =
    ProviderLimits { max_tools: Some(128), max_name_len: 64, ..ProviderLimits::NONE };

/// One function declaration: `{"name", "description"[, "parameters"]}`.
///
/// # Errors
///
/// [`DialectError`] when the name does not start with a letter or `_`, or when [`parameters`]
/// refuses the schema.
pub(crate) fn function_declaration(tool: &dyn Tool) -> Result<Value, DialectError> {
    let name = tool.spec().name();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return Err(DialectError::tool(
            name,
            Dialect::Gemini,
            "name",
            "a Gemini function name must start with a letter or `_`",
        ));
    }
    let mut declaration = json!({"name": name, "description": crate::examples::in_description(tool)});
    if let Some(parameters) = parameters(name, tool.spec().parameters())? {
        declaration["parameters"] = Value::Object(parameters);
    }
    Ok(declaration)
}

/// Google Search grounding, `{"google_search": {}}`. Domain filters are
/// refused (Gemini has none); `max_uses` has no equivalent and is left out.
///
/// # Errors
///
/// [`DialectError`] when the search has allowed or blocked domains: Google Search grounding
/// has no domain filters.
pub(crate) fn google_search(search: &WebSearch) -> Result<Value, DialectError> {
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

/// The ending a candidate's `finishReason` says ([`Finish`] has the table):
/// `MAX_TOKENS` is cut off (thinking counts against it, so a truncated turn
/// may hold no text at all); the safety and policy reasons are refusals; a
/// call Gemini could not read, did not expect or found one too many is
/// malformed (the model is told and tries again).
pub(crate) fn finish(reason: &str) -> Finish {
    match reason {
        "MAX_TOKENS" => Finish::truncated(reason),
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "MODEL_ARMOR"
        | "LANGUAGE" => Finish::refused(reason),
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS" => {
            Finish::Malformed { reason: reason.to_owned() }
        }
        _ => Finish::Complete,
    }
}
