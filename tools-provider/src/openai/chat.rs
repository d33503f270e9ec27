//! Chat Completions: function tools under `tools[].function`, the calls of
//! `choices[0].message.tool_calls` (string `arguments`), and one
//! `role: "tool"` message per result:
//! <https://platform.openai.com/docs/api-reference/chat/create>.

use serde::Deserialize;
use serde_json::{Value, json};

use super::parameters;
use crate::payload::read;
use crate::{Dialect, DialectError, MessageError};
use tools_core::{Tool, ToolCall, ToolResult};

/// A Chat Completions function tool:
/// `{"type": "function", "function": {"name", "description", "parameters"[, "strict": true]}}`.
pub fn function(tool: &dyn Tool, strict: bool) -> Result<Value, DialectError> {
    let dialect = if strict { Dialect::OpenAiChatStrict } else { Dialect::OpenAiChat };
    let mut function = json!({
        "name": tool.name(),
        "description": crate::examples::in_description(tool),
        "parameters": parameters(tool, strict, dialect)?,
    });
    if strict {
        function["strict"] = Value::Bool(true);
    }
    Ok(json!({"type": "function", "function": function}))
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

/// The tool calls of a Chat Completions response (the whole response, or
/// its `choices[0].message`), in order. Tools of another `type` than
/// `function` (custom tools) are skipped.
///
/// ```
/// use tools_provider::openai;
/// let response = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": null,
///     "tool_calls": [{"id": "call_1", "type": "function",
///                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}]});
/// let calls = openai::chat::parse_calls(&response).unwrap();
/// assert_eq!(calls[0].arguments, r#"{"city":"Paris"}"#);
/// ```
pub fn parse_calls(response: &Value) -> Result<Vec<ToolCall>, MessageError> {
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
pub fn format_results(results: &[ToolResult]) -> Vec<Value> {
    results.iter().map(|r| json!({"role": "tool", "tool_call_id": r.id, "content": r.content})).collect()
}
