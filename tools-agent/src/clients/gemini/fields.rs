//! Gemini's settings fields: `generationConfig` (sampling, stop
//! sequences, seed, thinking), no prompt cache fields, a typed answer.

use serde_json::{Map, Value, json};
use toolcall_provider::Dialect;

use super::super::body::{GEMINI, off_with_budget, patch, put, refused, stops};
use crate::{AnswerType, CacheSettings, ModelError, ModelSettings, ReasoningEffort};

/// generateContent's `generationConfig`
/// (<https://ai.google.dev/api/generate-content#generationconfig>):
/// `maxOutputTokens`, `temperature`, `topP`, `topK`, `stopSequences` (up
/// to 5), `seed`, and `thinkingConfig`
/// (<https://ai.google.dev/api/generate-content#ThinkingConfig>):
/// `thinkingLevel` (`MINIMAL` to `HIGH`, Gemini 3), `thinkingBudget`
/// (Gemini 2.5; 0 turns thinking off where the model can), `includeThoughts`
/// for thought summaries (<https://ai.google.dev/gemini-api/docs/thinking>).
/// A level and a budget together are refused: "You cannot use both
/// thinking_level and the legacy thinking_budget parameter in the same
/// request" (<https://ai.google.dev/gemini-api/docs/gemini-3>). The
/// object is left out when nothing is set.
pub(crate) fn fields(settings: &ModelSettings, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    let mut generation = Map::new();
    put(&mut generation, "maxOutputTokens", settings.max_tokens.map(Value::from));
    put(&mut generation, "temperature", settings.temperature.map(Value::from));
    put(&mut generation, "topP", settings.top_p.map(Value::from));
    put(&mut generation, "topK", settings.top_k.map(Value::from));
    put(&mut generation, "stopSequences", stops(settings));
    put(&mut generation, "seed", settings.seed.map(Value::from));
    if let Some(reasoning) = &settings.reasoning {
        off_with_budget(GEMINI, reasoning)?;
        let mut thinking = Map::new();
        let level = match reasoning.effort {
            None => None,
            Some(ReasoningEffort::None) => {
                thinking.insert("thinkingBudget".into(), json!(0));
                None
            }
            Some(ReasoningEffort::Minimal) => Some("MINIMAL"),
            Some(ReasoningEffort::Low) => Some("LOW"),
            Some(ReasoningEffort::Medium) => Some("MEDIUM"),
            Some(ReasoningEffort::High) => Some("HIGH"),
            Some(effort @ (ReasoningEffort::XHigh | ReasoningEffort::Max)) => {
                let reason = format!(
                    "Gemini's thinking levels are minimal, low, medium and high, not {}",
                    effort.as_str()
                );
                return Err(refused(GEMINI, "reasoning.effort", reason));
            }
        };
        if let (Some(level), Some(budget)) = (level, reasoning.budget_tokens) {
            let reason = format!(
                "Gemini takes a thinking level or a budget, not both (level {level}, budget {budget})"
            );
            return Err(refused(GEMINI, "reasoning.budget_tokens", reason));
        }
        put(&mut thinking, "thinkingLevel", level.map(Value::from));
        put(&mut thinking, "thinkingBudget", reasoning.budget_tokens.map(Value::from));
        if reasoning.summary.is_some() {
            thinking.insert("includeThoughts".into(), Value::Bool(true));
        }
        if !thinking.is_empty() {
            generation.insert("thinkingConfig".into(), Value::Object(thinking));
        }
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    Ok(())
}

/// Gemini caches implicitly (<https://ai.google.dev/gemini-api/docs/caching>):
/// nothing to send. Its explicit caches (`cachedContent`) are made ahead
/// by another API and are not this setting: a key, a retention or a TTL
/// is refused.
pub(crate) fn cache(cache: &CacheSettings) -> Result<(), ModelError> {
    let why = "Gemini's implicit cache takes no settings (explicit caches, `cachedContent`, are made ahead \
               and named through `with_extra`)";
    if cache.key.is_some() {
        return Err(refused(GEMINI, "cache.key", why));
    }
    if cache.retention.is_some() {
        return Err(refused(GEMINI, "cache.retention", why));
    }
    if cache.ttl.is_some() {
        return Err(refused(GEMINI, "cache.ttl", why));
    }
    Ok(())
}

/// Gemini: `generationConfig.responseMimeType` and `responseSchema`, the
/// schema subset its function parameters use
/// (<https://ai.google.dev/gemini-api/docs/structured-output>).
pub(crate) fn answer(answer: &AnswerType, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    let schema = answer.schema(Dialect::Gemini)?;
    patch(
        body,
        &json!({"generationConfig": {"responseMimeType": "application/json", "responseSchema": schema}}),
    );
    Ok(())
}
