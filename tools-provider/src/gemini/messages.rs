//! The `functionCall` parts of a response read as the turn's calls, and the
//! results written back as `functionResponse` parts:
//! <https://ai.google.dev/gemini-api/docs/function-calling>.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::MessageError;
use crate::payload::{list, read};
use tools_core::{Outcome, ToolCall, ToolResult};

/// The prefix of the call ids [`parse_calls`] makes up for calls that came
/// without one; [`format_results`] leaves such ids out.
pub const SYNTHETIC_ID_PREFIX: &str = "gemini-call-";

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
/// order: `[{"role": "user", "parts": [{"functionResponse": {"name",
/// "response"[, "id"]}}...]}]`, a list of one content so that every
/// dialect's results are appended the same way; empty for a turn without
/// results (Gemini refuses a content with no parts).
///
/// `response` must be an object: content that is a JSON object is sent as
/// it is (the error contract's `{"error": "..."}` among them); anything else
/// is wrapped, as `{"content": ...}` on success and `{"error": ...}`
/// otherwise (JSON values as values, other text as a string).
pub fn format_results(results: &[ToolResult]) -> Vec<Value> {
    if results.is_empty() {
        return Vec::new();
    }
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
    vec![json!({"role": "user", "parts": parts})]
}

fn response_object(content: &str, outcome: Outcome) -> Value {
    let value = serde_json::from_str::<Value>(content).unwrap_or_else(|_| Value::String(content.to_owned()));
    if value.is_object() {
        return value;
    }
    let key = if outcome.is_success() { "content" } else { "error" };
    json!({ key: value })
}
