//! OpenAI's settings fields, for Chat Completions and Responses: sampling,
//! stop sequences, seed and reasoning, the prompt cache, Responses'
//! compaction, a typed answer.

use serde_json::{Map, Value, json};
use toolcall_provider::Dialect;

use super::super::body::{CHAT, RESPONSES, describe, patch, put, refused, stops};
use crate::{AnswerType, CacheSettings, ModelError, ModelSettings};

/// Chat Completions (<https://platform.openai.com/docs/api-reference/chat/create>):
/// `max_completion_tokens` (which bounds the reasoning tokens too;
/// `max_tokens` "is now deprecated in favor of `max_completion_tokens`, and
/// is not compatible with o-series models":
/// <https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_completion_tokens>), `temperature`, `top_p`, `stop` (up to 4 for OpenAI;
/// not taken by o3 and o4-mini), `seed` (beta), `reasoning_effort`. No
/// `top_k`, no thinking budget, no reasoning summary: refused, since
/// OpenAI answers an unknown field with a 400 (a compatible server that
/// takes `top_k` gets it through the extra JSON).
pub(crate) fn chat(settings: &ModelSettings, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    if settings.top_k.is_some() {
        let reason = "Chat Completions has no `top_k` (a server that takes one gets it through `with_extra`)";
        return Err(refused(CHAT, "top_k", reason));
    }
    put(body, "max_completion_tokens", settings.max_tokens.map(Value::from));
    put(body, "temperature", settings.temperature.map(Value::from));
    put(body, "top_p", settings.top_p.map(Value::from));
    put(body, "stop", stops(settings));
    put(body, "seed", settings.seed.map(Value::from));
    if let Some(reasoning) = &settings.reasoning {
        if reasoning.budget_tokens.is_some() {
            let reason = "Chat Completions takes an effort (`reasoning_effort`), not a budget of tokens";
            return Err(refused(CHAT, "reasoning.budget_tokens", reason));
        }
        if reasoning.summary.is_some() {
            let reason = "Chat Completions returns no reasoning summary (OpenAI Responses does)";
            return Err(refused(CHAT, "reasoning.summary", reason));
        }
        put(body, "reasoning_effort", reasoning.effort.map(|effort| json!(effort.as_str())));
    }
    Ok(())
}

/// Model families of OpenAI without reasoning, which refuse `include:
/// ["reasoning.encrypted_content"]` with a 400 ("Encrypted content is not
/// supported with this model").
const WITHOUT_REASONING: [&str; 3] = ["gpt-3.5", "gpt-4", "chatgpt-4o"];

/// Responses (<https://platform.openai.com/docs/api-reference/responses/create>):
/// `max_output_tokens`, `temperature`, `top_p`, `reasoning: {effort,
/// summary}`; no stop sequences, seed or `top_k` (refused). The request
/// says `store: false`, so the reasoning items a model returns reach the
/// next turn only as encrypted content, which `include:
/// ["reasoning.encrypted_content"]` asks for
/// (<https://platform.openai.com/docs/guides/reasoning>, encrypted
/// reasoning items): every request has it, but for the model families
/// without reasoning, which refuse it.
pub(crate) fn responses(
    model: &str,
    settings: &ModelSettings,
    body: &mut Map<String, Value>,
) -> Result<(), ModelError> {
    if settings.top_k.is_some() {
        return Err(refused(RESPONSES, "top_k", "the Responses API has no `top_k`"));
    }
    if !settings.stop_sequences.is_empty() {
        return Err(refused(RESPONSES, "stop_sequences", "the Responses API has no stop sequences"));
    }
    if settings.seed.is_some() {
        return Err(refused(RESPONSES, "seed", "the Responses API has no seed"));
    }
    put(body, "max_output_tokens", settings.max_tokens.map(Value::from));
    put(body, "temperature", settings.temperature.map(Value::from));
    put(body, "top_p", settings.top_p.map(Value::from));
    if let Some(reasoning) = &settings.reasoning {
        if reasoning.budget_tokens.is_some() {
            let reason = "the Responses API takes an effort (`reasoning.effort`), not a budget of tokens";
            return Err(refused(RESPONSES, "reasoning.budget_tokens", reason));
        }
        let mut fields = Map::new();
        put(&mut fields, "effort", reasoning.effort.map(|effort| json!(effort.as_str())));
        put(&mut fields, "summary", reasoning.summary.map(|summary| json!(summary.as_str())));
        if !fields.is_empty() {
            body.insert("reasoning".into(), Value::Object(fields));
        }
    }
    let stored = body.get("store").and_then(Value::as_bool).unwrap_or(true);
    if !stored && !WITHOUT_REASONING.iter().any(|family| model.starts_with(family)) {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    Ok(())
}

/// Chat Completions and Responses (<https://platform.openai.com/docs/guides/prompt-caching>):
/// caching is automatic; `prompt_cache_key` and `prompt_cache_retention`
/// when set (<https://platform.openai.com/docs/api-reference/chat/create>,
/// <https://platform.openai.com/docs/api-reference/responses/create>). A
/// TTL is Anthropic's: refused.
pub(crate) fn cache(
    api: &str,
    cache: &CacheSettings,
    body: &mut Map<String, Value>,
) -> Result<(), ModelError> {
    if let Some(ttl) = cache.ttl {
        let reason = format!(
            "OpenAI caches without breakpoints and takes no TTL ({} was set); its `prompt_cache_retention` \
             is `CacheSettings::with_retention`",
            ttl.as_str()
        );
        return Err(refused(api, "cache.ttl", reason));
    }
    if let Some(key) = &cache.key {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    if let Some(retention) = cache.retention {
        body.insert("prompt_cache_retention".into(), json!(retention.as_str()));
    }
    Ok(())
}

/// The Responses API's `context_management: [{"type": "compaction",
/// "compact_threshold"}]` (<https://developers.openai.com/api/docs/guides/compaction>;
/// the SDK's `response_create_params.ContextManagement`): server-side
/// compaction, its only mechanism, so Anthropic's clearing options are
/// refused.
pub(crate) fn responses_native_context(
    settings: &ModelSettings,
    body: &mut Map<String, Value>,
) -> Result<(), ModelError> {
    let Some(native) = &settings.native_context else { return Ok(()) };
    let anthropic_only = [
        ("native_context.keep_tool_uses", native.keep_tool_uses.is_some()),
        ("native_context.clear_at_least", native.clear_at_least.is_some()),
        ("native_context.exclude_tools", !native.exclude_tools.is_empty()),
        ("native_context.keep_thinking", native.keep_thinking.is_some()),
    ];
    if let Some((option, _)) = anthropic_only.into_iter().find(|(_, set)| *set) {
        let reason = format!(
            "the Responses API manages the context by compaction alone, and `{option}` is an option of \
             Anthropic's context editing"
        );
        return Err(refused(RESPONSES, option, reason));
    }
    let mut compaction = json!({"type": "compaction"});
    if let Some(threshold) = native.trigger_tokens {
        compaction["compact_threshold"] = json!(threshold);
    }
    body.insert("context_management".into(), json!([compaction]));
    Ok(())
}

/// Chat Completions: `response_format`, strict
/// (<https://platform.openai.com/docs/guides/structured-outputs>).
pub(crate) fn chat_answer(answer: &AnswerType, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    let mut format =
        json!({"name": answer.name(), "schema": answer.schema(Dialect::OpenAiChat)?, "strict": true});
    describe(answer, &mut format);
    patch(body, &json!({"response_format": {"type": "json_schema", "json_schema": format}}));
    Ok(())
}

/// Responses: `text.format`, strict
/// (<https://platform.openai.com/docs/api-reference/responses/create#responses-create-text>).
pub(crate) fn responses_answer(answer: &AnswerType, body: &mut Map<String, Value>) -> Result<(), ModelError> {
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
