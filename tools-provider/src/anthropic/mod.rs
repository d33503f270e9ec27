//! Anthropic: Messages API tools (`input_schema`), strict tool use, the
//! native web search tool, and `tool_use` / `tool_result` blocks, reached
//! through [`Dialect`]'s methods with the `Anthropic` and `AnthropicStrict`
//! dialects.
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
//!   ([`Dialect::format_results`]; the function behind it has the rules and
//!   their sources).
//! - Strict tool use (`"strict": true`) supports a subset of JSON Schema:
//!   types, `enum`, `const`, `anyOf`, `allOf`, local `$ref`/`$defs`, string
//!   formats date-time, time, date, duration, email, hostname, uri, ipv4,
//!   ipv6, uuid, `minItems` of 0 or 1, and every object with
//!   `additionalProperties: false`; not recursion, numerical constraints,
//!   string length constraints; at most 20 strict tools, 24 optional
//!   parameters and 16 union-typed parameters per request:
//!   <https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs>.
//!   (Anthropic's Python SDK, `anthropic.lib.tools.transform_schema`, also
//!   moves unsupported keywords into the description, as the strict
//!   dialect does.)
//! - Web search is `{"type": "web_search_20250305", "name": "web_search",
//!   "max_uses", "allowed_domains" | "blocked_domains"}`, and the two domain
//!   lists cannot be used together:
//!   <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool>.

mod messages;
mod strict;

pub use messages::{COMPACTION, IMAGE_TYPES, NATIVE};
pub(crate) use messages::{content, format_results, messages, parse_calls};
pub(crate) use strict::strict_schema;

use serde_json::{Value, json};

use super::limits::ProviderLimits;
use super::{Dialect, DialectError, Finish};
use toolcall_core::Tool;
use toolcall_core::toolset::{RESERVED_WEB_SEARCH, WebSearch};

/// Anthropic tools outside strict mode.
pub const LIMITS: ProviderLimits = ProviderLimits { max_name_len: 64, ..ProviderLimits::NONE };

/// Strict tool use: the per-request limits of structured outputs.
pub const STRICT_LIMITS: ProviderLimits = ProviderLimits {
    max_tools: Some(20),
    max_optional_params: Some(24),
    max_union_params: Some(16),
    ..LIMITS
};

/// One tool: `{"name", "description", "input_schema"[, "strict": true]}`.
///
/// # Errors
///
/// With `strict`, [`DialectError`] when [`strict_schema`] refuses the schema; never without.
pub(crate) fn tool(tool: &dyn Tool, strict: bool) -> Result<Value, DialectError> {
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
///
/// # Errors
///
/// [`DialectError`] (keyword `allowed_domains`) when both domain lists are set: Anthropic's
/// tool takes one or the other.
pub(crate) fn web_search(search: &WebSearch) -> Result<Value, DialectError> {
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

/// The ending a Messages `stop_reason` says ([`Finish`] has the table):
/// `max_tokens` and `model_context_window_exceeded` are cut off, `refusal`
/// refused, `pause_turn` paused (the turn goes back as it is to continue).
pub(crate) fn finish(stop_reason: &str) -> Finish {
    match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => Finish::truncated(stop_reason),
        "refusal" => Finish::refused(stop_reason),
        "pause_turn" => Finish::Paused { reason: stop_reason.to_owned() },
        _ => Finish::Complete,
    }
}
