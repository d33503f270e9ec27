//! Anthropic's settings fields: `max_tokens` (required), sampling by
//! model, stop sequences, thinking, the prompt cache's breakpoints, context
//! editing and compaction with their betas, a typed answer.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use toolcall_provider::Dialect;

use super::super::body::{ANTHROPIC, SETTING, off_with_budget, patch, put, refused, stops};
use crate::context::KeepThinking;
use crate::{AnswerType, CacheSettings, ModelError, ModelSettings, ReasoningEffort, ReasoningSettings};

/// Messages (<https://docs.anthropic.com/en/api/messages>): `temperature`,
/// `top_p`, `top_k`, `stop_sequences`; no seed (refused). `max_tokens` is
/// written with the body ([`anthropic_max_tokens`]), and read here.
///
/// The sampling settings by what `model` takes of them
/// ([`anthropic_sampling`]): a model that takes none gets none of them,
/// each set dropped with a warning (target `toolcall_agent::settings`) rather
/// than the API's 400, so that settings made for other models (a
/// [`FallbackModel`](crate::FallbackModel)'s, an agent's) still run on it;
/// a model that takes a temperature or a `top_p` has both refused.
///
/// Reasoning is `thinking`: `{"type": "enabled", "budget_tokens"}` with a
/// budget (at least 1,024 and below `max_tokens`:
/// <https://platform.claude.com/docs/en/build-with-claude/extended-thinking>),
/// else `{"type": "adaptive"}`
/// (<https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking>),
/// `display: "summarized"` for a summary; the effort is
/// `output_config.effort`, `low` to `max`
/// (<https://platform.claude.com/docs/en/build-with-claude/effort>), and
/// an effort of `None` is `{"type": "disabled"}`. Thinking "isn't
/// compatible with temperature or top_k modifications as well as forced
/// tool use", and takes a `top_p` between 0.95 and 1 (the same page,
/// feature compatibility; the API's words: "`temperature` may only be set
/// to 1 when thinking is enabled or in adaptive mode"); tool use with
/// thinking "only supports `tool_choice: {"type": "auto"}` (the default)
/// or `tool_choice: {"type": "none"}`" (the same page, extended thinking
/// with tool use), which holds for adaptive thinking as for manual: the
/// API answers a forced choice with either "Thinking may not be enabled
/// when tool_choice forces tool use." Each is refused before sending.
pub(crate) fn fields(
    model: &str,
    settings: &ModelSettings,
    body: &mut Map<String, Value>,
) -> Result<(), ModelError> {
    if settings.seed.is_some() {
        return Err(refused(ANTHROPIC, "seed", "the Messages API has no seed"));
    }
    put(body, "stop_sequences", stops(settings));
    let thinking = match &settings.reasoning {
        Some(reasoning) => thinking(reasoning, body)?,
        None => false,
    };
    let sampling = sampling(model);
    if sampling == Sampling::None {
        let set: Vec<&str> = [
            ("temperature", settings.temperature.is_some()),
            ("top_p", settings.top_p.is_some()),
            ("top_k", settings.top_k.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect();
        if !set.is_empty() {
            let dropped = set.join(", ");
            tracing::warn!(target: "toolcall_agent::settings", model, dropped,
                "{model} takes no sampling settings (the API refuses them): {dropped} not sent");
        }
        return Ok(());
    }
    if thinking {
        if let Some(temperature) = settings.temperature.filter(|temperature| *temperature != 1.0) {
            let reason = format!("thinking takes no temperature but 1, and {temperature} was set");
            return Err(refused(ANTHROPIC, "temperature", reason));
        }
        if let Some(k) = settings.top_k {
            return Err(refused(ANTHROPIC, "top_k", format!("thinking takes no `top_k`, and {k} was set")));
        }
        if let Some(p) = settings.top_p.filter(|p| !(0.95..=1.0).contains(p)) {
            let reason = format!("thinking takes a `top_p` between 0.95 and 1, and {p} was set");
            return Err(refused(ANTHROPIC, "top_p", reason));
        }
    }
    if let (Sampling::OneOf, Some(temperature), Some(p)) = (sampling, settings.temperature, settings.top_p) {
        let reason =
            format!("{model} takes a temperature or a `top_p`, not both ({temperature} and {p} were set)");
        return Err(refused(ANTHROPIC, "top_p", reason));
    }
    put(body, "temperature", settings.temperature.map(Value::from));
    put(body, "top_p", settings.top_p.map(Value::from));
    put(body, "top_k", settings.top_k.map(Value::from));
    Ok(())
}

/// Anthropic's `max_tokens`, which the API requires: the settings', else
/// 4,096 plus the thinking budget if there is one (so that the budget,
/// which must be below it, leaves room for the answer).
pub(crate) fn max_tokens(settings: &ModelSettings, default: u32) -> u32 {
    let budget = settings.reasoning.as_ref().and_then(|reasoning| reasoning.budget_tokens);
    settings.max_tokens.unwrap_or_else(|| default.saturating_add(budget.unwrap_or(0)))
}

/// What a Claude model takes of the sampling settings (`temperature`,
/// `top_p`, `top_k`) under the `anthropic-version` the client sends
/// (`2023-06-01`), by its family and version as the model's name says
/// them (`claude-opus-4-7`, `claude-sonnet-4-5-20250929`, Bedrock's
/// `anthropic.claude-…-v1:0`, Vertex's `claude-…@date`):
///
/// - [`Sampling::None`]: Claude Opus 4.7 and later, Sonnet 5, Haiku 5.5,
///   Fable and Mythos (and any Claude of version 5 or more) take none: their
///   migration guides list the sampling parameters as removed, a
///   non-default `temperature`, `top_p` or `top_k` answered with a 400
///   (<https://platform.claude.com/docs/en/about-claude/models/migration-guide>,
///   Opus 4.7; <https://platform.claude.com/docs/en/models/sonnet-5/migration-guide>;
///   <https://platform.claude.com/docs/en/models/haiku-5-5/migration-guide>).
///   The API's words: "`temperature` is deprecated for this model."
/// - [`Sampling::OneOf`]: Claude Opus 4.1 to 4.6, Sonnet 4.5 and 4.6,
///   Haiku 4.5 take a temperature or a `top_p`, not both (a breaking change
///   from Claude Sonnet 3.7:
///   <https://platform.claude.com/docs/en/about-claude/models/migrating-to-claude-4>);
///   the API's words: "temperature and top_p cannot both be specified for
///   this model".
/// - [`Sampling::All`]: the models before them (Claude 3, Sonnet 4 and
///   Opus 4), and a name that is not Claude's (a compatible server's).
///
/// The official SDKs' request types (anthropic-sdk-python 2.x, which sends
/// `anthropic-version: 2026-10-21`) have no sampling fields at all: that
/// API version refuses them on every model, even at their defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sampling {
    /// `temperature`, `top_p` and `top_k`, together.
    All,
    /// `temperature` or `top_p`, not both; `top_k`.
    OneOf,
    /// None of them.
    None,
}

/// What `model` takes of the sampling settings ([`Sampling`]).
pub(crate) fn sampling(model: &str) -> Sampling {
    let model = model.to_ascii_lowercase();
    let Some(at) = model.find("claude-") else {
        return Sampling::All;
    };
    let mut words = model[at + "claude-".len()..].split(|c: char| !c.is_ascii_alphanumeric());
    let family = words.next().unwrap_or_default();
    if family.is_empty() || family.starts_with(|c: char| c.is_ascii_digit()) {
        // `claude-3-5-sonnet-…`, `claude-2.1`: the old names, before Claude 4.
        return Sampling::All;
    }
    if matches!(family, "fable" | "mythos") {
        return Sampling::None;
    }
    let number = |word: Option<&str>, digits: std::ops::RangeInclusive<usize>| {
        word.filter(|word| digits.contains(&word.len()) && word.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|word| word.parse::<u32>().ok())
    };
    let Some(major) = number(words.next(), 1..=2) else {
        return Sampling::All;
    };
    // A minor version of one or two digits; a date (`20250514`) is none.
    let minor = number(words.next(), 1..=2).unwrap_or(0);
    match (family, major, minor) {
        (_, 5.., _) | ("opus", 4, 7..) => Sampling::None,
        ("opus", 4, 1..) | ("sonnet" | "haiku", 4, 5..) => Sampling::OneOf,
        _ => Sampling::All,
    }
}

/// Anthropic's `thinking` and `output_config.effort`, checked against the
/// body's `max_tokens` and `tool_choice` (a forced choice is refused with
/// thinking of either kind); whether thinking is on.
fn thinking(reasoning: &ReasoningSettings, body: &mut Map<String, Value>) -> Result<bool, ModelError> {
    off_with_budget(ANTHROPIC, reasoning)?;
    let effort = match reasoning.effort {
        Some(ReasoningEffort::None) => {
            if reasoning.summary.is_some() {
                let reason = "effort `none` turns thinking off, and a summary of it was asked for";
                return Err(refused(ANTHROPIC, "reasoning.summary", reason));
            }
            body.insert("thinking".into(), json!({"type": "disabled"}));
            return Ok(false);
        }
        Some(ReasoningEffort::Minimal) => {
            let reason = "Anthropic's efforts are low, medium, high, xhigh and max, not minimal";
            return Err(refused(ANTHROPIC, "reasoning.effort", reason));
        }
        effort => effort,
    };
    let mut thinking = Map::new();
    match reasoning.budget_tokens {
        Some(budget) => {
            if budget < 1024 {
                let reason =
                    format!("the thinking budget must be at least 1024 tokens, and {budget} was set");
                return Err(refused(ANTHROPIC, "reasoning.budget_tokens", reason));
            }
            let max_tokens = body.get("max_tokens").and_then(Value::as_u64).unwrap_or(0);
            if u64::from(budget) >= max_tokens {
                let reason =
                    format!("the thinking budget ({budget}) must be below `max_tokens` ({max_tokens})");
                return Err(refused(ANTHROPIC, "reasoning.budget_tokens", reason));
            }
            thinking.insert("type".into(), json!("enabled"));
            thinking.insert("budget_tokens".into(), json!(budget));
        }
        None => {
            thinking.insert("type".into(), json!("adaptive"));
        }
    }
    let forced = body.get("tool_choice").and_then(|choice| choice.get("type")).and_then(Value::as_str);
    if let Some(forced @ ("any" | "tool")) = forced {
        let kind = if reasoning.budget_tokens.is_some() {
            "manual thinking (a budget)"
        } else {
            "adaptive thinking"
        };
        let reason = format!(
            "{kind} takes the tool choice `auto` or `none`, not `{forced}` (the settings' tool choice \
             forces a call)"
        );
        return Err(refused(ANTHROPIC, "tool_choice", reason));
    }
    if reasoning.summary.is_some() {
        thinking.insert("display".into(), json!("summarized"));
    }
    body.insert("thinking".into(), Value::Object(thinking));
    if let Some(effort) = effort {
        body.insert("output_config".into(), json!({"effort": effort.as_str()}));
    }
    Ok(true)
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
pub(crate) fn cache(cache: &CacheSettings, body: &mut Map<String, Value>) -> Result<(), ModelError> {
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

/// The beta of context editing (`clear_tool_uses_20250919`,
/// `clear_thinking_20251015`):
/// <https://platform.claude.com/docs/en/build-with-claude/context-editing>.
const CONTEXT_MANAGEMENT_BETA: &str = "context-management-2025-06-27";

/// The beta of server-side compaction (`compact_20260112`):
/// <https://platform.claude.com/docs/en/build-with-claude/compaction>.
const COMPACT_BETA: &str = "compact-2026-01-12";

/// The least trigger compaction takes: "Must be at least 50,000 tokens"
/// (the compaction page's parameters).
const LEAST_COMPACTION_TRIGGER: u64 = 50_000;

/// Anthropic's `context_management: {"edits": [...]}`
/// (<https://platform.claude.com/docs/en/build-with-claude/context-editing>,
/// <https://platform.claude.com/docs/en/build-with-claude/compaction>; the
/// SDK's `BetaContextManagementConfigParam`): `clear_thinking_20251015`
/// first when asked for (the context editing page: it "must be listed
/// first" among several edits; thinking must be on, which the body's
/// `thinking`, written before, says), then `clear_tool_uses_20250919`,
/// then `compact_20260112`. Each edit's trigger is
/// `{"type": "input_tokens", "value"}`.
pub(crate) fn native_context(
    settings: &ModelSettings,
    body: &mut Map<String, Value>,
) -> Result<(), ModelError> {
    let Some(native) = &settings.native_context else { return Ok(()) };
    let trigger = native.trigger_tokens.map(|value| json!({"type": "input_tokens", "value": value}));
    let mut edits = Vec::new();
    if let Some(keep) = native.keep_thinking {
        let thinking = body.get("thinking").and_then(|thinking| thinking.get("type")).and_then(Value::as_str);
        if !matches!(thinking, Some("enabled" | "adaptive")) {
            let reason = "clearing thinking blocks (`clear_thinking_20251015`) needs thinking on: set \
                          `ModelSettings::with_reasoning`";
            return Err(refused(ANTHROPIC, "native_context.keep_thinking", reason));
        }
        let keep = match keep {
            KeepThinking::Turns(turns) => json!({"type": "thinking_turns", "value": turns}),
            KeepThinking::All => json!("all"),
        };
        edits.push(json!({"type": "clear_thinking_20251015", "keep": keep}));
    }
    if native.clears_tool_uses() {
        let mut edit = Map::new();
        edit.insert("type".into(), json!("clear_tool_uses_20250919"));
        if let Some(trigger) = &trigger {
            edit.insert("trigger".into(), trigger.clone());
        }
        if let Some(keep) = native.keep_tool_uses {
            edit.insert("keep".into(), json!({"type": "tool_uses", "value": keep}));
        }
        if let Some(least) = native.clear_at_least {
            edit.insert("clear_at_least".into(), json!({"type": "input_tokens", "value": least}));
        }
        if !native.exclude_tools.is_empty() {
            edit.insert("exclude_tools".into(), json!(native.exclude_tools));
        }
        edits.push(Value::Object(edit));
    } else if native.keep_tool_uses.is_some()
        || native.clear_at_least.is_some()
        || !native.exclude_tools.is_empty()
    {
        let reason = "the tool use clearing options are set, and tool use clearing is off";
        return Err(refused(ANTHROPIC, "native_context.clear_tool_uses", reason));
    }
    if native.compaction {
        let mut edit = json!({"type": "compact_20260112"});
        if let Some(tokens) = native.trigger_tokens {
            if tokens < LEAST_COMPACTION_TRIGGER {
                let reason = format!(
                    "compaction's trigger must be at least {LEAST_COMPACTION_TRIGGER} tokens, and {tokens} was \
                     set (the policy's budget, unless `NativeContext::with_trigger_tokens` sets one)"
                );
                return Err(refused(ANTHROPIC, "native_context.trigger_tokens", reason));
            }
            edit["trigger"] = json!({"type": "input_tokens", "value": tokens});
        }
        edits.push(edit);
    }
    if edits.is_empty() {
        let reason = "no edit is left: tool use clearing is off, and neither compaction nor thinking \
                      clearing is asked for";
        return Err(refused(ANTHROPIC, SETTING, reason));
    }
    body.insert("context_management".into(), json!({"edits": edits}));
    Ok(())
}

/// The `anthropic-beta` values the request needs: context editing's for
/// its clearing edits, compaction's for `compact_20260112`, added to
/// those already in the header (an application's own betas), comma
/// separated, as <https://platform.claude.com/docs/en/api/beta-headers>
/// sends several.
pub(crate) fn native_context_headers(settings: &ModelSettings, headers: &mut HeaderMap) {
    let Some(native) = &settings.native_context else { return };
    let mut betas = Vec::new();
    if native.clears_tool_uses() || native.keep_thinking.is_some() {
        betas.push(CONTEXT_MANAGEMENT_BETA);
    }
    if native.compaction {
        betas.push(COMPACT_BETA);
    }
    let name = HeaderName::from_static("anthropic-beta");
    let earlier = headers.get(&name).and_then(|value| value.to_str().ok()).unwrap_or_default();
    let mut values: Vec<&str> = earlier.split(',').map(str::trim).filter(|value| !value.is_empty()).collect();
    for beta in betas {
        if !values.contains(&beta) {
            values.push(beta);
        }
    }
    if let Ok(value) = HeaderValue::from_str(&values.join(",")) {
        headers.insert(name, value);
    }
}

/// Anthropic: `output_config.format`
/// (<https://platform.claude.com/docs/en/build-with-claude/structured-outputs>).
pub(crate) fn answer(answer: &AnswerType, body: &mut Map<String, Value>) -> Result<(), ModelError> {
    let schema = answer.schema(Dialect::Anthropic)?;
    patch(body, &json!({"output_config": {"format": {"type": "json_schema", "schema": schema}}}));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CacheTtl, NativeContext};

    fn marked(body: Value, settings: &CacheSettings) -> Result<Value, ModelError> {
        let Value::Object(mut body) = body else { unreachable!("an object") };
        cache(settings, &mut body).map(|()| Value::Object(body))
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
    fn betas_are_added_to_the_applications_own() {
        let settings =
            ModelSettings::default().with_native_context(NativeContext::new().with_compaction(true));
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-beta", HeaderValue::from_static("files-api-2025-04-14"));
        native_context_headers(&settings, &mut headers);
        assert_eq!(
            headers["anthropic-beta"],
            "files-api-2025-04-14,context-management-2025-06-27,compact-2026-01-12"
        );
        native_context_headers(&settings, &mut headers);
        assert_eq!(
            headers["anthropic-beta"],
            "files-api-2025-04-14,context-management-2025-06-27,compact-2026-01-12"
        );
    }
}
