//! The provider's own context management ([`NativeContext`](crate::NativeContext), carried by
//! [`ModelSettings::native_context`]), one function per provider: the
//! request fields and headers each documents, and what a provider cannot
//! take refused before anything is sent ([`ModelError::Setting`]). The
//! table of what goes where is on [`NativeContext`](crate::NativeContext).

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::fields::{ANTHROPIC, CHAT, GEMINI, RESPONSES};
use crate::context::KeepThinking;
use crate::settings::refused;
use crate::{ModelError, ModelSettings};

/// The setting's name in a refusal.
const SETTING: &str = "native_context";

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
pub(crate) fn anthropic(settings: &ModelSettings, body: &mut Map<String, Value>) -> Result<(), ModelError> {
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
pub(crate) fn anthropic_headers(settings: &ModelSettings, headers: &mut HeaderMap) {
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

/// The Responses API's `context_management: [{"type": "compaction",
/// "compact_threshold"}]` (<https://developers.openai.com/api/docs/guides/compaction>;
/// the SDK's `response_create_params.ContextManagement`): server-side
/// compaction, its only mechanism, so Anthropic's clearing options are
/// refused.
pub(crate) fn openai_responses(
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

/// Chat Completions and Gemini have no context management of their own:
/// the setting is refused (a [`ContextPolicy`](crate::ContextPolicy)
/// with other strategies beside [`Strategy::Native`](crate::Strategy::Native)
/// applies those instead, and never sets it for these clients).
pub(crate) fn unsupported(api: &str, settings: &ModelSettings) -> Result<(), ModelError> {
    if settings.native_context.is_none() {
        return Ok(());
    }
    let reason = match api {
        CHAT => "Chat Completions has no context management of its own (OpenAI Responses has compaction)",
        GEMINI => "Gemini has no context management of its own",
        _ => "the API has no context management of its own",
    };
    Err(refused(
        api,
        SETTING,
        format!(
            "{reason}; give the context policy a model-agnostic strategy after `Strategy::Native` \
             (`ClearToolResults`, `DropOldestTurns`, `Summarize`) to keep the context on this client"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NativeContext;

    #[test]
    fn betas_are_added_to_the_applications_own() {
        let settings =
            ModelSettings::default().with_native_context(NativeContext::new().with_compaction(true));
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-beta", HeaderValue::from_static("files-api-2025-04-14"));
        anthropic_headers(&settings, &mut headers);
        assert_eq!(
            headers["anthropic-beta"],
            "files-api-2025-04-14,context-management-2025-06-27,compact-2026-01-12"
        );
        anthropic_headers(&settings, &mut headers);
        assert_eq!(
            headers["anthropic-beta"],
            "files-api-2025-04-14,context-management-2025-06-27,compact-2026-01-12"
        );
    }
}
