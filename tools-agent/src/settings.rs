//! How a request is made, beyond its messages and tools: the setters of
//! [`ModelSettings`], the reasoning it asks for ([`ReasoningSettings`]),
//! and the extra JSON merged into a request body for the fields the SDK
//! does not model. Each client turns them into its provider's fields, and
//! refuses what its provider cannot take ([`ModelError::Setting`](crate::ModelError::Setting)) before
//! anything is sent; the table of what goes where is on [`ModelSettings`].

use std::time::Duration;

use serde_json::Value;

use crate::model::{ModelSettings, ToolChoice};

impl ModelSettings {
    /// Which tools the model may or must call.
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// Whether the model may call several tools in one turn.
    pub fn with_parallel_tool_calls(mut self, yes: bool) -> Self {
        self.parallel_tool_calls = Some(yes);
        self
    }

    /// The most tokens one answer may have, reasoning included.
    pub fn with_max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = Some(tokens);
        self
    }

    /// The sampling temperature (not sent to the Claude models that take
    /// no sampling: see the table on [`ModelSettings`]).
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Nucleus sampling: sample from the tokens of this much probability.
    pub fn with_top_p(mut self, top_p: f64) -> Self {
        self.top_p = Some(top_p);
        self
    }

    /// Sample from the `k` likeliest tokens only (Anthropic, Gemini).
    pub fn with_top_k(mut self, k: u32) -> Self {
        self.top_k = Some(k);
        self
    }

    /// Stop the answer where the model writes one of these.
    pub fn with_stop_sequences(mut self, stops: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.stop_sequences = stops.into_iter().map(Into::into).collect();
        self
    }

    /// Sample as repeatably as the provider can (OpenAI Chat, Gemini).
    pub fn with_seed(mut self, seed: i32) -> Self {
        self.seed = Some(seed);
        self
    }

    /// How much the model reasons before it answers, and what of it comes back.
    pub fn with_reasoning(mut self, reasoning: ReasoningSettings) -> Self {
        self.reasoning = Some(reasoning);
        self
    }

    /// How the provider's prompt cache is used ([`CacheSettings`]): by
    /// default, Anthropic requests mark their breakpoints.
    pub fn with_cache(mut self, cache: CacheSettings) -> Self {
        self.cache = cache;
        self
    }

    /// The provider's own context management ([`NativeContext`](crate::NativeContext)):
    /// what a [`ContextPolicy`](crate::ContextPolicy) with
    /// [`Strategy::Native`](crate::Strategy::Native) sets on each request;
    /// set it here to ask for it on requests made without the agent.
    /// Anthropic and OpenAI Responses take it, Chat Completions and Gemini
    /// refuse it ([`ModelError::Setting`](crate::ModelError::Setting)).
    ///
    /// ```
    /// use toolcall_agent::{ModelSettings, NativeContext};
    ///
    /// let settings = ModelSettings::default()
    ///     .with_native_context(NativeContext::new().with_trigger_tokens(100_000));
    /// assert_eq!(settings.native_context.unwrap().trigger_tokens(), Some(100_000));
    /// ```
    pub fn with_native_context(mut self, native: crate::NativeContext) -> Self {
        self.native_context = Some(native);
        self
    }

    /// How long one HTTP request may take, resends aside.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// Fields to merge into every request body, for what the SDK does not
    /// model (a provider's new field, a compatible server's own): a JSON
    /// object merged as a JSON Merge Patch
    /// ([RFC 7396](https://www.rfc-editor.org/rfc/rfc7396)) after the
    /// client has written the body. The extra wins: an object is merged
    /// into the body's object of the same name, key by key, recursively;
    /// anything else (a number, a string, an array) replaces the body's
    /// value; `null` removes the field. A second `with_extra` is merged
    /// into the first the same way, except that its nulls are kept, so
    /// that they still remove fields from the body. What comes from the
    /// extra is not checked: it goes as it is, even over the fields the
    /// client needs (`messages`, `stream`), and a value that is not an
    /// object fails the request ([`ModelError::Setting`](crate::ModelError::Setting)).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolcall_agent::ModelSettings;
    ///
    /// let settings = ModelSettings::default()
    ///     .with_temperature(0.2)
    ///     // OpenAI Chat: a field the SDK does not model.
    ///     .with_extra(json!({"service_tier": "flex"}))
    ///     // Gemini: one more field inside `generationConfig`, the rest kept.
    ///     .with_extra(json!({"generationConfig": {"responseMimeType": "application/json"}}));
    /// assert_eq!(settings.extra, Some(json!({"service_tier": "flex",
    ///     "generationConfig": {"responseMimeType": "application/json"}})));
    /// ```
    pub fn with_extra(mut self, extra: Value) -> Self {
        self.extra = Some(match self.extra.take() {
            Some(mut earlier) => {
                compose(&mut earlier, extra);
                earlier
            }
            None => extra,
        });
        self
    }
}

/// How much a model reasons (thinks) before it answers, and what of its
/// reasoning comes back: one setting for the four providers, each field
/// sent as its provider says it, or refused before anything is sent
/// ([`ModelError::Setting`](crate::ModelError::Setting), naming the provider and the field) where the
/// provider has no such thing. Setting it at all turns reasoning on
/// where a provider needs it turned on (Anthropic); `ReasoningSettings::new()`
/// asks for reasoning with the provider's own defaults.
///
/// | field | OpenAI Chat | OpenAI Responses | Anthropic | Gemini `thinkingConfig` |
/// |---|---|---|---|---|
/// | (set at all) | nothing more | nothing more (every request has `include: ["reasoning.encrypted_content"]`, but for models without reasoning: see [`ModelSettings`]) | `thinking: {"type": "adaptive"}` without a budget | nothing more |
/// | `effort` | `reasoning_effort` | `reasoning.effort` | `output_config.effort` (`low` to `max`; `None`: `thinking: {"type": "disabled"}`) | `thinkingLevel` (`MINIMAL` to `HIGH`; `None`: `thinkingBudget: 0`) |
/// | `budget_tokens` | refused | refused | `thinking: {"type": "enabled", "budget_tokens"}`: at least 1,024 and below `max_tokens` | `thinkingBudget` (not with a level) |
/// | `summary` | refused | `reasoning.summary` | `thinking.display: "summarized"` | `includeThoughts: true` |
///
/// Anthropic and Gemini have one kind of summary: any [`ReasoningSummary`]
/// asks for it. With Anthropic thinking on (enabled or adaptive), a
/// temperature other than 1, a `top_k`, or a `top_p` below 0.95 is refused
/// (on the models that take sampling at all: see [`ModelSettings`]), and so
/// is a tool choice that forces a call (`Required`, a named tool), with
/// manual thinking (a budget) and adaptive alike: the API answers it
/// "Thinking may not be enabled when tool_choice forces tool use". Which efforts, budgets and summaries a
/// model takes is the model's: the provider's error says it.
///
/// Sources: <https://platform.openai.com/docs/api-reference/chat/create>
/// (`reasoning_effort`), <https://platform.openai.com/docs/api-reference/responses/create>
/// (`reasoning`, `include`), <https://platform.openai.com/docs/guides/reasoning>,
/// <https://platform.claude.com/docs/en/build-with-claude/extended-thinking>,
/// <https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking>,
/// <https://platform.claude.com/docs/en/build-with-claude/effort>,
/// <https://ai.google.dev/gemini-api/docs/thinking>,
/// <https://ai.google.dev/api/generate-content#ThinkingConfig>.
///
/// ```
/// use toolcall_agent::{ModelSettings, ReasoningEffort, ReasoningSettings, ReasoningSummary};
///
/// // OpenAI, Anthropic (adaptive thinking) and Gemini 3 alike.
/// let settings = ModelSettings::default()
///     .with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::High).with_summary(ReasoningSummary::Auto));
/// // Anthropic manual thinking, or a Gemini 2.5 budget.
/// let budget = ModelSettings::default().with_max_tokens(16_000)
///     .with_reasoning(ReasoningSettings::new().with_budget_tokens(8_000));
/// # let _ = (settings, budget);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReasoningSettings {
    /// How hard the model reasons; the model's default if `None`.
    pub effort: Option<ReasoningEffort>,
    /// The most tokens the model may reason with (Anthropic manual
    /// thinking, Gemini 2.5's `thinkingBudget`).
    pub budget_tokens: Option<u32>,
    /// Whether (and for OpenAI, how) a summary of the reasoning comes back.
    pub summary: Option<ReasoningSummary>,
}

impl ReasoningSettings {
    /// Reasoning on, with the provider's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// How hard the model reasons.
    pub fn with_effort(mut self, effort: ReasoningEffort) -> Self {
        self.effort = Some(effort);
        self
    }

    /// The most tokens the model may reason with.
    pub fn with_budget_tokens(mut self, tokens: u32) -> Self {
        self.budget_tokens = Some(tokens);
        self
    }

    /// Ask for a summary of the reasoning.
    pub fn with_summary(mut self, summary: ReasoningSummary) -> Self {
        self.summary = Some(summary);
        self
    }
}

/// How hard a model reasons, from none to the most a model offers. The
/// values are OpenAI's (`reasoning_effort`, `reasoning.effort`); Anthropic
/// takes `low` to `max` (`output_config.effort`), Gemini `minimal` to
/// `high` (`thinkingLevel`), and each refuses the others before sending.
/// `None` turns reasoning off: OpenAI's `none`, Anthropic's disabled
/// thinking, Gemini's budget of 0 (on the models that can stop thinking).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReasoningEffort {
    /// No reasoning.
    None,
    /// As little as the model can.
    Minimal,
    /// Little.
    Low,
    /// Some.
    Medium,
    /// Much (Anthropic's default).
    High,
    /// More (long agentic work).
    XHigh,
    /// As much as the model can.
    Max,
}

impl ReasoningEffort {
    /// The effort as OpenAI and Anthropic write it (`"xhigh"`...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::XHigh => "xhigh",
            Self::Max => "max",
        }
    }
}

/// How a summary of the reasoning comes back. OpenAI Responses has three
/// (`reasoning.summary`); Anthropic (`thinking.display: "summarized"`)
/// and Gemini (`includeThoughts`) have one, which any of them asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReasoningSummary {
    /// The most detailed summary the model offers.
    Auto,
    /// A short one.
    Concise,
    /// A long one.
    Detailed,
}

impl ReasoningSummary {
    /// The summary as OpenAI writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Concise => "concise",
            Self::Detailed => "detailed",
        }
    }
}

/// How a request uses its provider's prompt cache: the prefix of a request
/// that an earlier one sent the same (tools, instructions, the conversation
/// so far) is read from the cache, at a fraction of the price and time.
/// Every client keeps that prefix the same bytes from turn to turn (the
/// tools in a fixed order, a tool search's finds appended after them); what
/// differs by provider is what a request must say:
///
/// | field | OpenAI Chat | OpenAI Responses | Anthropic | Gemini |
/// |---|---|---|---|---|
/// | (caching) | automatic, from 1,024 tokens | automatic, from 1,024 tokens | `cache_control` breakpoints, on by default: the last tool, the system prompt, the conversation's last block (moving each turn) | implicit (automatic) on Gemini 2.5 and later |
/// | `breakpoints` | (nothing to mark) | (nothing to mark) | `false`: no `cache_control` is sent | (nothing to mark) |
/// | `ttl` | refused | refused | `cache_control.ttl` (`5m`, `1h`) | refused |
/// | `key` | `prompt_cache_key` | `prompt_cache_key` | refused | refused |
/// | `retention` | `prompt_cache_retention` | `prompt_cache_retention` | refused | refused |
///
/// What changes the tools changes every byte after them (the tools come
/// first in each provider's prefix): a prepare step that hides a tool for
/// a turn, a tool search's find (appended, so the tools before it still
/// match), and the loop's last request without tools when `RunLimits::max_turns` is
/// reached.
///
/// Anthropic caches the prefix up to a block marked `cache_control`, in the
/// order tools, system, messages, and at most 4 breakpoints a request; the
/// client marks 3 (those of a request without tools or system, fewer), and
/// writes the system prompt and every message's content as blocks when it
/// marks, so that a message is the same bytes whether it carries the
/// moving breakpoint or not. A prompt below the model's minimum (1,024 to
/// 4,096 tokens) is not cached, marked or not. OpenAI caches prompts of
/// 1,024 tokens and more by their prefix with no field needed; the key
/// routes requests that share a long prefix to the same cache, and the
/// retention keeps it in memory or up to 24 hours (OpenAI now documents
/// `prompt_cache_options` beside it, which goes through
/// [`ModelSettings::with_extra`]). Gemini caches implicitly; its explicit
/// caches (`cachedContent`, made and paid for ahead) are not this setting.
///
/// Sources: <https://platform.claude.com/docs/en/build-with-claude/prompt-caching>,
/// <https://platform.openai.com/docs/guides/prompt-caching>,
/// <https://platform.openai.com/docs/api-reference/chat/create> (`prompt_cache_key`,
/// `prompt_cache_retention`), <https://platform.openai.com/docs/api-reference/responses/create>,
/// <https://ai.google.dev/gemini-api/docs/caching> (implicit caching).
///
/// ```
/// use toolcall_agent::{CacheRetention, CacheSettings, CacheTtl, ModelSettings};
///
/// // Anthropic: the breakpoints kept an hour.
/// let anthropic = ModelSettings::default().with_cache(CacheSettings::new().with_ttl(CacheTtl::OneHour));
/// // OpenAI: one user's requests to one cache, kept up to a day.
/// let openai = ModelSettings::default()
///     .with_cache(CacheSettings::new().with_key("user-42").with_retention(CacheRetention::Day));
/// // Anthropic without breakpoints.
/// let off = ModelSettings::default().with_cache(CacheSettings::off());
/// assert!(ModelSettings::default().cache.breakpoints && !off.cache.breakpoints);
/// # let _ = (anthropic, openai);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheSettings {
    /// Whether requests mark where the cache ends (Anthropic's
    /// `cache_control`); on by default.
    pub breakpoints: bool,
    /// How long the marked prefix stays (Anthropic); the provider's default
    /// (5 minutes) if `None`.
    pub ttl: Option<CacheTtl>,
    /// The key that routes requests sharing a prefix to the same cache
    /// (OpenAI's `prompt_cache_key`).
    pub key: Option<String>,
    /// How long OpenAI keeps the cache (`prompt_cache_retention`); the
    /// organization's default if `None`.
    pub retention: Option<CacheRetention>,
}

impl Default for CacheSettings {
    fn default() -> Self {
        Self { breakpoints: true, ttl: None, key: None, retention: None }
    }
}

impl CacheSettings {
    /// The default: breakpoints on, the provider's defaults for the rest.
    pub fn new() -> Self {
        Self::default()
    }

    /// No breakpoints: Anthropic requests say nothing of the cache (and
    /// read none). OpenAI and Gemini cache on their own all the same.
    pub fn off() -> Self {
        Self { breakpoints: false, ..Self::default() }
    }

    /// Mark the breakpoints, or not.
    pub fn with_breakpoints(mut self, yes: bool) -> Self {
        self.breakpoints = yes;
        self
    }

    /// Keep the marked prefix this long (Anthropic).
    pub fn with_ttl(mut self, ttl: CacheTtl) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Route requests to the cache of this key (OpenAI).
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Keep the cache this long (OpenAI).
    pub fn with_retention(mut self, retention: CacheRetention) -> Self {
        self.retention = Some(retention);
        self
    }
}

/// How long Anthropic keeps a marked prefix after its last use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheTtl {
    /// Five minutes (the default; a write costs 1.25 times the input).
    FiveMinutes,
    /// An hour (a write costs twice the input).
    OneHour,
}

impl CacheTtl {
    /// The TTL as Anthropic writes it (`"5m"`, `"1h"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FiveMinutes => "5m",
            Self::OneHour => "1h",
        }
    }
}

/// How long OpenAI keeps a prompt's cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CacheRetention {
    /// In memory: minutes of inactivity, an hour at most.
    InMemory,
    /// Extended: up to 24 hours.
    Day,
}

impl CacheRetention {
    /// The retention as OpenAI writes it (`"in_memory"`, `"24h"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InMemory => "in_memory",
            Self::Day => "24h",
        }
    }
}

/// A later extra over an earlier one: as the merge, but a null is kept.
fn compose(earlier: &mut Value, later: Value) {
    match (earlier, later) {
        (Value::Object(earlier), Value::Object(later)) => {
            for (name, value) in later {
                match (earlier.get_mut(&name), value) {
                    (Some(slot @ Value::Object(_)), value @ Value::Object(_)) => compose(slot, value),
                    (_, value) => {
                        earlier.insert(name, value);
                    }
                }
            }
        }
        (earlier, later) => *earlier = later,
    }
}
