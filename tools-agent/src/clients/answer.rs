//! The request fields that ask for a typed answer natively, one function
//! per provider (the table is on [`AnswerMode`](crate::AnswerMode)). Each
//! merges into what the settings wrote (Anthropic's `output_config` may
//! hold an effort, Gemini's `generationConfig` the sampling).

use serde_json::{Map, Value, json};
use toolcall_provider::Dialect;

use crate::settings::patch;
use crate::{AnswerType, ModelError};

/// Chat Completions: `response_format`, strict
/// (<https://platform.openai.com/docs/guides/structured-outputs>).
pub(crate) fn openai_chat(answer: &AnswerType, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    let mut format =
        json!({"name": answer.name(), "schema": answer.schema(Dialect::OpenAiChat)?, "strict": true});
    describe(answer, &mut format);
    patch(body, &json!({"response_format": {"type": "json_schema", "json_schema": format}}));
    Ok(())
}

/// Responses: `text.format`, strict
/// (<https://platform.openai.com/docs/api-reference/responses/create#responses-create-text>).
pub(crate) fn openai_responses(answer: &AnswerType, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    let mut format = json!({
        "type": "json_schema",
        "name": answer.name(),
        "schema": answer.schema(Dialect::OpenAiResponses)?,
        "strict": true,
    });
    describe(answer, &mut format);
    patch(body, &json!({"text": {"format": format}}));
    Ok(())
}

/// Anthropic: `output_config.format`
/// (<https://platform.claude.com/docs/en/build-with-claude/structured-outputs>).
pub(crate) fn anthropic(answer: &AnswerType, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    let schema = answer.schema(Dialect::Anthropic)?;
    patch(body, &json!({"output_config": {"format": {"type": "json_schema", "schema": schema}}}));
    Ok(())
}

/// Gemini: `generationConfig.responseMimeType` and `responseSchema`, the
/// schema subset its function parameters use
/// (<https://ai.google.dev/gemini-api/docs/structured-output>).
pub(crate) fn gemini(answer: &AnswerType, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    let schema = answer.schema(Dialect::Gemini)?;
    patch(
        body,
        &json!({"generationConfig": {"responseMimeType": "application/json", "responseSchema": schema}}),
    );
    Ok(())
}

/// OpenAI's formats carry the description, which the model reads.
fn describe(answer: &AnswerType, format: &mut Value) {
    if !answer.description().is_empty() {
        format["description"] = json!(answer.description());
    }
}
