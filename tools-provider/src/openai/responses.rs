//! Responses: flat function tools (`strict` defaults to true there, so a
//! non-strict one says `"strict": false`), the native `web_search` tool, the
//! `function_call` output items, and one `function_call_output` input item
//! per result, keyed by `call_id`:
//! <https://platform.openai.com/docs/api-reference/responses/create>,
//! <https://platform.openai.com/docs/guides/tools-web-search>.

use serde::Deserialize;
use serde_json::{Value, json};

use super::parameters;
use crate::payload::{list, read};
use crate::{Dialect, DialectError, MessageError};
use tools_core::toolset::{RESERVED_WEB_SEARCH, WebSearch};
use tools_core::{Tool, ToolCall, ToolResult};

/// A Responses function tool:
/// `{"type": "function", "name", "description", "parameters", "strict"}`.
pub fn function(tool: &dyn Tool, strict: bool) -> Result<Value, DialectError> {
    let dialect = if strict { Dialect::OpenAiResponsesStrict } else { Dialect::OpenAiResponses };
    Ok(json!({
        "type": "function",
        "name": tool.name(),
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
pub fn web_search(search: &WebSearch) -> Result<Value, DialectError> {
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
pub fn parse_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
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
pub fn format_results(results: &[ToolResult]) -> Vec<Value> {
    results
        .iter()
        .map(|r| json!({"type": "function_call_output", "call_id": r.id, "output": r.content}))
        .collect()
}
