//! The built-in model clients, one module per provider API, each over the
//! shared HTTP side (`crate::http`) and its provider's dialect.

mod anthropic;
mod gemini;
pub(crate) mod openai_chat;
mod openai_common;
pub(crate) mod openai_responses;

pub use anthropic::Anthropic;
pub use gemini::Gemini;
pub use openai_chat::OpenAiChat;
pub use openai_responses::OpenAiResponses;

use serde_json::{Map, Value};
use tools_provider::Dialect;

use crate::ModelError;
use crate::model::ModelRequest;

/// The request fields that offer the tools (`tools`) and say which the
/// model may call (the dialect's tool choice fields); none without tools,
/// since providers refuse an empty `tools` array, and a choice needs tools
/// to name.
fn tool_fields(dialect: Dialect, request: &ModelRequest<'_>) -> Result<Map<String, Value>, ModelError> {
    let mut fields = Map::new();
    let Some(toolset) = request.tools else { return Ok(fields) };
    let tools = dialect.tools(toolset).map_err(|error| {
        ModelError::Config(format!("the tools cannot be sent to {}: {error}", dialect.name()))
    })?;
    if tools.as_array().is_some_and(|tools| !tools.is_empty()) {
        fields.insert("tools".into(), tools);
        let settings = request.settings;
        fields.extend(dialect.tool_choice(toolset, &settings.tool_choice, settings.parallel_tool_calls)?);
    }
    Ok(fields)
}
