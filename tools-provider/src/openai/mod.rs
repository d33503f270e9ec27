//! OpenAI: Chat Completions ([`chat`]) and Responses ([`responses`])
//! function tools, strict mode (the strict transform below), the Responses
//! native web search, and the tool-call messages of both APIs. They are
//! reached through [`Dialect`]'s methods, with the `OpenAiChat`,
//! `OpenAiChatStrict`, `OpenAiResponses` and `OpenAiResponsesStrict`
//! dialects.
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
//! - A tool's result can carry images and files besides its text (the
//!   [`toolcall_core::Part`]s of a result): Responses takes them in the
//!   `function_call_output`'s `output` array, Chat Completions only in a
//!   user message (a tool message is text); [`Dialect::format_results`]
//!   sums it up, and the functions behind it have the details and their
//!   sources.
//!   Images are PNG, JPEG, WebP or non-animated GIF ([`IMAGE_TYPES`]).
//! - Web search is a Responses tool, `{"type": "web_search"}` with
//!   `filters.allowed_domains` (at most 100):
//!   <https://platform.openai.com/docs/guides/tools-web-search>.
//!
//! # The strict transform
//!
//! What the strict dialects send as a function's `parameters`
//! ([`Dialect::function`]), and every dialect of OpenAI as a typed answer's
//! schema ([`Dialect::answer_schema`]).
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
//!   required *and nullable* (`[T, "null"]`, or `anyOf` with null), so the
//!   model can still leave it out: `toolcall-core` reads a `null` where the
//!   canonical schema has an optional field that takes none as "not
//!   given", the field's default. Its default is kept in the description;
//! - every keyword strict mode does not allow (`default`, `minLength`,
//!   `maxLength`, `uniqueItems`, `minProperties`, an unsupported `format`...)
//!   is removed and appended to the description as `key: value`, so the model
//!   still sees it (and the argument check in `toolcall-core`, which validates
//!   against the canonical schema, still enforces it). schemars' integer
//!   and float widths (`format: "uint8"`, `"double"`) are dropped: the
//!   bounds carry them;
//! - refused, naming the keyword: an open map (`additionalProperties` other
//!   than false, `patternProperties`), a schema that accepts any value (a
//!   `serde_json::Value` field), tuples (`prefixItems`), and `allOf`, `not`,
//!   `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, `contains`,
//!   `propertyNames`, `unevaluated*`.
//!
//! Outside strict mode the canonical schema is sent as it is.

mod strict;

pub mod chat;
pub mod responses;

use serde_json::Value;

use super::limits::ProviderLimits;
use super::{Dialect, DialectError};
use toolcall_core::Tool;

pub(crate) use strict::strict_schema;

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

/// The image types OpenAI models read, in both APIs ("Image input
/// requirements": PNG, JPEG, WEBP, non-animated GIF):
/// <https://platform.openai.com/docs/guides/images-vision#image-input-requirements>.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// A function's `parameters`: the strict form in strict mode, else the
/// canonical schema as it is.
fn parameters(tool: &dyn Tool, strict: bool, dialect: Dialect) -> Result<Value, DialectError> {
    if strict {
        strict_schema(tool.spec().name(), tool.spec().parameters(), dialect).map(Value::Object)
    } else {
        Ok(Value::Object(tool.spec().parameters().clone()))
    }
}
