//! The request fields of the [`ModelSettings`], one function per provider:
//! sampling, stop sequences, seed and reasoning, each sent as the provider
//! documents it, and what a provider cannot take, or a combination it
//! refuses, returned as [`ModelError::Setting`] before anything is sent.
//! The tables of what goes where are on [`ModelSettings`] and
//! [`ReasoningSettings`]; the extra JSON is merged by each body last
//! ([`merge_extra`]). A setting that is not set costs a test of its
//! `Option` and nothing else.

use serde_json::{Map, Value, json};

use crate::model::ModelSettings;
pub(crate) use crate::settings::merge_extra;
use crate::settings::refused;
use crate::{ModelError, ReasoningEffort, ReasoningSettings};

/// The names [`ModelError::Setting`] gives the four APIs.
pub(crate) const CHAT: &str = "openai (Chat Completions)";
/// OpenAI Responses.
pub(crate) const RESPONSES: &str = "openai (Responses)";
/// Anthropic Messages.
pub(crate) const ANTHROPIC: &str = "anthropic";
/// Gemini generateContent.
pub(crate) const GEMINI: &str = "gemini";

/// Put `value` at `name` if it is set.
fn put(body: &mut Map<String, Value>, name: &str, value: Option<Value>) {
    if let Some(value) = value {
        body.insert(name.to_owned(), value);
    }
}

/// The stop sequences as a JSON array, if any.
fn stops(settings: &ModelSettings) -> Option<Value> {
    (!settings.stop_sequences.is_empty()).then(|| json!(settings.stop_sequences))
}

/// An effort of `None` contradicts a budget wherever a budget is taken.
fn off_with_budget(api: &str, reasoning: &ReasoningSettings) -> Result<(), ModelError> {
    match (reasoning.effort, reasoning.budget_tokens) {
        (Some(ReasoningEffort::None), Some(budget)) => Err(refused(
            api,
            "reasoning.budget_tokens",
            format!("effort `none` turns reasoning off, and a budget of {budget} tokens turns it on"),
        )),
        _ => Ok(()),
    }
}

/// Chat Completions (<https://platform.openai.com/docs/api-reference/chat/create>):
/// `max_completion_tokens` (which bounds the reasoning tokens too;
/// `max_tokens` "is now deprecated in favor of `max_completion_tokens`, and
/// is not compatible with o-series models":
/// <https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_completion_tokens>), `temperature`, `top_p`, `stop` (up to 4 for OpenAI;
/// not taken by o3 and o4-mini), `seed` (beta), `reasoning_effort`. No
/// `top_k`, no thinking budget, no reasoning summary: refused, since
/// OpenAI answers an unknown field with a 400 (a compatible server that
/// takes `top_k` gets it through the extra JSON).
pub(crate) fn openai_chat(settings: &ModelSettings, body: &mut Map<String, Value>) -> Result<(), ModelError> {
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
pub(crate) fn openai_responses(
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

/// Anthropic's `max_tokens`, which the API requires: the settings', else
/// 4,096 plus the thinking budget if there is one (so that the budget,
/// which must be below it, leaves room for the answer).
pub(crate) fn anthropic_max_tokens(settings: &ModelSettings, default: u32) -> u32 {
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
pub(crate) fn anthropic_sampling(model: &str) -> Sampling {
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
pub(crate) fn anthropic(
    model: &str,
    settings: &ModelSettings,
    body: &mut Map<String, Value>,
) -> Result<(), ModelError> {
    if settings.seed.is_some() {
        return Err(refused(ANTHROPIC, "seed", "the Messages API has no seed"));
    }
    put(body, "stop_sequences", stops(settings));
    let thinking = match &settings.reasoning {
        Some(reasoning) => anthropic_thinking(reasoning, body)?,
        None => false,
    };
    let sampling = anthropic_sampling(model);
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

/// Anthropic's `thinking` and `output_config.effort`, checked against the
/// body's `max_tokens` and `tool_choice` (a forced choice is refused with
/// thinking of either kind); whether thinking is on.
fn anthropic_thinking(
    reasoning: &ReasoningSettings,
    body: &mut Map<String, Value>,
) -> Result<bool, ModelError> {
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
pub(crate) fn gemini(settings: &ModelSettings, body: &mut Map<String, Value>) -> Result<(), ModelError> {
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
