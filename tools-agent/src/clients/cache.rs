//! The prompt cache fields of [`CacheSettings`], one function per provider,
//! and what a provider cannot take refused before anything is sent
//! ([`ModelError::Setting`]). The table of what goes where is on
//! [`CacheSettings`]. A cache reads a request's prefix that an earlier one
//! sent the same bytes: what is written here is written the same way every
//! turn, so that it does not change the prefix itself.

use serde_json::{Map, Value, json};

use super::fields::{ANTHROPIC, GEMINI};
use crate::settings::refused;
use crate::{CacheSettings, ModelError};

/// Chat Completions and Responses (<https://platform.openai.com/docs/guides/prompt-caching>):
/// caching is automatic; `prompt_cache_key` and `prompt_cache_retention`
/// when set (<https://platform.openai.com/docs/api-reference/chat/create>,
/// <https://platform.openai.com/docs/api-reference/responses/create>). A
/// TTL is Anthropic's: refused.
pub(crate) fn openai(
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

/// Gemini caches implicitly (<https://ai.google.dev/gemini-api/docs/caching>):
/// nothing to send. Its explicit caches (`cachedContent`) are made ahead
/// by another API and are not this setting: a key, a retention or a TTL
/// is refused.
pub(crate) fn gemini(cache: &CacheSettings) -> Result<(), ModelError> {
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

/// Anthropic (<https://platform.claude.com/docs/en/build-with-claude/prompt-caching>):
/// the prefix up to a block marked `cache_control` is cached, in the
/// order tools, system, messages, with at most 4 breakpoints. Three are
/// marked: the last tool (but a deferred one, which is not in the prefix),
/// the system prompt, and the last block of the conversation's last user
/// message, which moves each turn (the cache looks back for the last
/// turn's; a paused turn after it goes back unmarked, as it came). The system prompt and
/// every message's text are written as blocks, so that a message is the
/// same bytes with its breakpoint as without it. Thinking blocks and empty
/// text cannot be marked ("Thinking blocks cannot be explicitly marked
/// with cache_control"). A key or a retention (OpenAI's) is refused.
pub(crate) fn anthropic(cache: &CacheSettings, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    let why = "Anthropic caches up to its breakpoints (`cache_control`), not by a key or a retention";
    if cache.key.is_some() {
        return Err(refused(ANTHROPIC, "cache.key", why));
    }
    if cache.retention.is_some() {
        return Err(refused(ANTHROPIC, "cache.retention", why));
    }
    if !cache.breakpoints {
        if let Some(ttl) = cache.ttl {
            let reason = format!("a TTL ({}) was set for breakpoints that are off", ttl.as_str());
            return Err(refused(ANTHROPIC, "cache.ttl", reason));
        }
        return Ok(());
    }
    let mut mark = json!({"type": "ephemeral"});
    if let Some(ttl) = cache.ttl {
        mark["ttl"] = json!(ttl.as_str());
    }
    if let Some(Value::Array(tools)) = body.get_mut("tools")
        && let Some(tool) =
            tools.iter_mut().rev().find(|tool| tool.get("defer_loading") != Some(&json!(true)))
    {
        tool["cache_control"] = mark.clone();
    }
    if let Some(Value::String(system)) = body.get("system") {
        let system = json!([{"type": "text", "text": system, "cache_control": mark}]);
        body.insert("system".into(), system);
    }
    let Some(Value::Array(messages)) = body.get_mut("messages") else { return Ok(()) };
    for message in messages.iter_mut() {
        if let Some(Value::String(text)) = message.get("content") {
            message["content"] = json!([{"type": "text", "text": text}]);
        }
    }
    // The last user message: a paused turn (`pause_turn`) goes back after
    // it as it came.
    let last = messages
        .iter_mut()
        .rev()
        .find(|message| message.get("role").and_then(Value::as_str) == Some("user"))
        .and_then(|message| message.get_mut("content"))
        .and_then(Value::as_array_mut);
    if let Some(block) = last.and_then(|blocks| blocks.iter_mut().rev().find(|block| markable(block))) {
        block["cache_control"] = mark;
    }
    Ok(())
}

/// Whether a content block can carry `cache_control`.
fn markable(block: &Value) -> bool {
    match block.get("type").and_then(Value::as_str) {
        Some("thinking" | "redacted_thinking") | None => false,
        Some("text") => block.get("text").and_then(Value::as_str).is_some_and(|text| !text.is_empty()),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CacheRetention, CacheTtl};

    fn marked(body: Value, cache: &CacheSettings) -> Result<Value, ModelError> {
        let Value::Object(mut body) = body else { unreachable!("an object") };
        anthropic(cache, &mut body).map(|()| Value::Object(body))
    }

    #[test]
    fn anthropic_marks_the_last_tool_sent_the_system_and_the_last_user_block() {
        let body = json!({
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": "Search the web."},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"},
                    {"type": "tool_use", "id": "toolu_1", "name": "a", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
                    {"type": "text", "text": ""}]},
                // A paused turn goes back last, as it came.
                {"role": "assistant", "content": [{"type": "server_tool_use", "id": "srvtoolu_1"}]}
            ],
            "tools": [{"name": "tool_search_tool_bm25"}, {"name": "a"}, {"name": "b", "defer_loading": true}]
        });
        let mark = json!({"type": "ephemeral", "ttl": "1h"});
        let body = marked(body, &CacheSettings::new().with_ttl(CacheTtl::OneHour)).unwrap();
        assert_eq!(body["tools"][1]["cache_control"], mark);
        assert_eq!(body["system"], json!([{"type": "text", "text": "Be brief.", "cache_control": mark}]));
        assert_eq!(body["messages"][0]["content"], json!([{"type": "text", "text": "Search the web."}]));
        assert_eq!(body["messages"][2]["content"][0]["cache_control"], mark);
        assert_eq!(body.to_string().matches("cache_control").count(), 3, "{body}");
    }

    #[test]
    fn what_a_provider_cannot_take_is_refused() {
        let off = marked(json!({"system": "s", "messages": []}), &CacheSettings::off()).unwrap();
        assert_eq!(off, json!({"system": "s", "messages": []}));
        let refusals = [
            marked(json!({}), &CacheSettings::new().with_key("k")).unwrap_err(),
            marked(json!({}), &CacheSettings::off().with_ttl(CacheTtl::FiveMinutes)).unwrap_err(),
            openai(
                "openai (Chat Completions)",
                &CacheSettings::new().with_ttl(CacheTtl::OneHour),
                &mut Map::new(),
            )
            .unwrap_err(),
            gemini(&CacheSettings::new().with_retention(CacheRetention::InMemory)).unwrap_err(),
        ];
        let settings: Vec<&str> = refusals
            .iter()
            .map(|error| match error {
                ModelError::Setting { setting, .. } => *setting,
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(settings, ["cache.key", "cache.ttl", "cache.ttl", "cache.retention"]);
        assert_eq!(
            refusals[1].to_string(),
            "anthropic cannot take `cache.ttl`: a TTL (5m) was set for breakpoints that are off"
        );
    }
}
