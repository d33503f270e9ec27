//! What the loop asks of a model: one request, one response, or the same
//! as a stream of events.

use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use serde::{Deserialize, Serialize};
use toolcall_core::{ToolCall, Toolset};
use toolcall_provider::{Content, Dialect, Finish, calls_of, text_of};

use crate::{AnswerType, Message, ModelError};
#[cfg(test)]
use toolcall_provider::Reasoning;

/// Which tools the model may or must call: `toolcall_provider::ToolChoice`,
/// the one choice every client turns into its provider's fields through
/// [`Dialect::tool_choice`](toolcall_provider::Dialect::tool_choice).
pub use toolcall_provider::ToolChoice;

/// How a request is made, beyond its messages and tools: per request (every
/// [`ModelRequest`] carries one) or per agent ([`Agent::with_settings`](crate::Agent::with_settings)).
/// Each client sends what is set as its provider's fields, and refuses what
/// the provider cannot take, or a combination it refuses, before anything
/// is sent ([`ModelError::Setting`], naming the provider and the setting);
/// what is not set is not sent, and the provider's default holds.
///
/// | setting | OpenAI Chat | OpenAI Responses | Anthropic | Gemini `generationConfig` |
/// |---|---|---|---|---|
/// | `max_tokens` | `max_completion_tokens` | `max_output_tokens` | `max_tokens` (required: 4,096 if unset, plus the thinking budget if there is one) | `maxOutputTokens` |
/// | `temperature` | `temperature` | `temperature` | `temperature` (only 1 with thinking; dropped, with a warning, where the model takes no sampling: below) | `temperature` |
/// | `top_p` | `top_p` | `top_p` | `top_p` (0.95 to 1 with thinking; refused with a temperature where the model takes one of them; dropped where it takes none) | `topP` |
/// | `top_k` | refused | refused | `top_k` (refused with thinking; dropped where the model takes no sampling) | `topK` |
/// | `stop_sequences` | `stop` | refused | `stop_sequences` | `stopSequences` |
/// | `seed` | `seed` | refused | refused | `seed` |
/// | `reasoning` | `reasoning_effort` | `reasoning` (and `include`, below) | `thinking`, `output_config.effort` | `thinkingConfig` |
/// | `cache` (on by default) | `prompt_cache_key`, `prompt_cache_retention` | `prompt_cache_key`, `prompt_cache_retention` | `cache_control` on the last tool, the system prompt and the last message's last block (`ttl`) | nothing: implicit caching (key, retention, TTL refused) |
/// | `native_context` | refused | `context_management` (compaction) | `context_management.edits`, `anthropic-beta` | refused |
/// | `extra` | merged into the body | merged | merged | merged |
///
/// [`ReasoningSettings`](crate::ReasoningSettings) has the reasoning fields'
/// own table, [`CacheSettings`](crate::CacheSettings) the cache's. A field the SDK does not model goes through `extra`
/// ([`Self::with_extra`]): `top_k` for a compatible server that takes it
/// (`with_extra(json!({"top_k": 40}))`), Anthropic's `thinking.display:
/// "omitted"`.
///
/// Anthropic's sampling fields, by model family (the client sends
/// `anthropic-version: 2023-06-01`):
///
/// | models | `temperature`, `top_p`, `top_k` |
/// |---|---|
/// | Claude Opus 4.7 and later, Sonnet 5 and later, Haiku 5.5, Fable, Mythos (any `claude-*` of version 5 or more) | none: each set is dropped, with a warning (target `toolcall_agent::settings`), where the API answers 400 ("`temperature` is deprecated for this model") |
/// | Claude Opus 4.1 to 4.6, Sonnet 4.5 and 4.6, Haiku 4.5 | each, but a temperature and a `top_p` together are refused ("temperature and top_p cannot both be specified for this model") |
/// | Claude 3, Sonnet 4, Opus 4, and a model name that is not Claude's | all three |
///
/// The official SDKs' current request types (anthropic-sdk-python 2.x,
/// which sends `anthropic-version: 2026-10-21`, where any sampling field is
/// refused on every model) have none of the three; the conformance suite
/// checks that a model that takes none is sent none.
///
/// OpenAI Responses requests say `store: false`, so a reasoning model's
/// reasoning reaches the next turn only as encrypted content: every
/// request asks for it (`include: ["reasoning.encrypted_content"]`), but
/// for the models that have none and refuse the field (HTTP 400,
/// "Encrypted content is not supported with this model"): `gpt-3.5*`,
/// `gpt-4*` and `chatgpt-4o*`. For another model without reasoning (a
/// deployment's own name), `with_extra(json!({"include": null}))` leaves
/// it out.
///
/// Sources: <https://platform.openai.com/docs/api-reference/chat/create>,
/// <https://platform.openai.com/docs/api-reference/responses/create>,
/// <https://docs.anthropic.com/en/api/messages>,
/// <https://platform.claude.com/docs/en/build-with-claude/extended-thinking#feature-compatibility>,
/// <https://platform.claude.com/docs/en/about-claude/models/migration-guide> (Opus 4.7),
/// <https://platform.claude.com/docs/en/models/sonnet-5/migration-guide>,
/// <https://platform.claude.com/docs/en/models/haiku-5-5/migration-guide>,
/// <https://platform.claude.com/docs/en/about-claude/models/migrating-to-claude-4>
/// (Sonnet and Haiku 4.5: a temperature or a `top_p`, not both),
/// <https://ai.google.dev/api/generate-content#generationconfig>,
/// <https://platform.claude.com/docs/en/build-with-claude/prompt-caching>,
/// <https://platform.openai.com/docs/guides/prompt-caching>,
/// <https://ai.google.dev/gemini-api/docs/caching>.
///
/// ```
/// use std::time::Duration;
/// use toolcall_agent::{ModelSettings, ReasoningEffort, ReasoningSettings, ToolChoice};
///
/// let settings = ModelSettings::default()
///     .with_tool_choice(ToolChoice::Required)
///     .with_max_tokens(2_000)
///     .with_temperature(0.2)
///     .with_stop_sequences(["\n\nObservation:"])
///     .with_seed(7)
///     .with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::Low))
///     .with_request_timeout(Duration::from_secs(60));
/// assert_eq!(settings.stop_sequences, ["\n\nObservation:"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ModelSettings {
    /// Which tools the model may or must call, sent with every request
    /// that offers tools. A choice the provider cannot express (an allowed
    /// set for Anthropic, `Validated` outside strict mode...) or naming a
    /// tool not offered fails the request before it is sent, with
    /// [`ModelError::ToolChoice`] naming the dialect.
    pub tool_choice: ToolChoice,
    /// Whether the model may call several tools in one turn; the
    /// provider's default (on) if `None`. Gemini has no switch, so `false`
    /// fails its requests (but with [`ToolChoice::None`]).
    pub parallel_tool_calls: Option<bool>,
    /// The most tokens the answer may have, reasoning included; Anthropic
    /// requires it.
    pub max_tokens: Option<u32>,
    /// The sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling: only the tokens of this much probability.
    pub top_p: Option<f64>,
    /// Only the `k` likeliest tokens (Anthropic, Gemini).
    pub top_k: Option<u32>,
    /// Where the answer stops (not OpenAI Responses); none if empty.
    pub stop_sequences: Vec<String>,
    /// A seed for repeatable sampling (OpenAI Chat, Gemini).
    pub seed: Option<i32>,
    /// The reasoning asked for; the provider's default if `None`.
    pub reasoning: Option<crate::ReasoningSettings>,
    /// How the provider's prompt cache is used: Anthropic's breakpoints
    /// (on by default), OpenAI's key and retention ([`crate::CacheSettings`]).
    pub cache: crate::CacheSettings,
    /// The provider's own context management, if asked for
    /// ([`Self::with_native_context`]; the agent sets it from a
    /// [`ContextPolicy`](crate::ContextPolicy) with
    /// [`Strategy::Native`](crate::Strategy::Native)).
    pub native_context: Option<crate::NativeContext>,
    /// How long one HTTP request may take, retries aside.
    pub request_timeout: Option<Duration>,
    /// JSON merged into every request body last, for the fields the SDK
    /// does not model ([`Self::with_extra`]).
    pub extra: Option<serde_json::Value>,
}

/// One request: the instructions, the messages so far, and the tools the
/// model may call (none for the last, tool-less request of a run).
#[derive(Clone, Copy, Debug)]
pub struct ModelRequest<'a> {
    /// The system prompt.
    pub instructions: Option<&'a str>,
    /// The transcript so far.
    pub messages: &'a [Message],
    /// The tools offered; `None` asks for an answer without calls.
    pub tools: Option<&'a Toolset>,
    /// Choice, parallelism, limits.
    pub settings: &'a ModelSettings,
    /// The typed answer asked for natively ([`AnswerMode::Native`](crate::AnswerMode::Native)):
    /// the client sends its schema as the provider's structured output,
    /// and the model's text is the answer. `None` for free text, and when
    /// the answer is a tool (it is then among the tools).
    pub answer: Option<&'a AnswerType>,
}

/// Tokens spent by one request, or by a run. Each count is `None` where
/// the provider did not say (a server that sends no usage, a stream without
/// its usage chunk, a count a provider does not break out), never a zero it
/// did not send. The same meaning for every provider:
///
/// | field | OpenAI Chat | OpenAI Responses | Anthropic | Gemini |
/// |---|---|---|---|---|
/// | `input_tokens`: every input token, cached ones included | `prompt_tokens` | `input_tokens` | `input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens` | `promptTokenCount` |
/// | `output_tokens`: every output token, reasoning included | `completion_tokens` | `output_tokens` | `output_tokens` | `candidatesTokenCount` + `thoughtsTokenCount` |
/// | `cache_read_tokens`: of the input, read from the cache | `prompt_tokens_details.cached_tokens` | `input_tokens_details.cached_tokens` | `cache_read_input_tokens` | `cachedContentTokenCount` |
/// | `cache_write_tokens`: of the input, written to the cache | `prompt_tokens_details.cache_write_tokens` | `input_tokens_details.cache_write_tokens` | `cache_creation_input_tokens` | (not reported) |
/// | `reasoning_tokens`: of the output, reasoning | `completion_tokens_details.reasoning_tokens` | `output_tokens_details.reasoning_tokens` | `output_tokens_details.thinking_tokens` | `thoughtsTokenCount` |
///
/// Sources: <https://platform.openai.com/docs/api-reference/chat/object>
/// (`usage`), <https://platform.openai.com/docs/api-reference/responses/object>
/// (`usage`), <https://docs.anthropic.com/en/api/messages> (`usage`) and
/// <https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching>
/// (Anthropic's `input_tokens` counts only the tokens after the last cache
/// breakpoint), <https://ai.google.dev/api/generate-content#UsageMetadata>.
/// The OpenAI cache writes and Anthropic's thinking count are fields of the
/// official SDKs' usage models, which are generated from the APIs' specs
/// (openai-python's `CompletionUsage` and `ResponseUsage`, anthropic-sdk-python's
/// `Usage` and `MessageDeltaUsage`); `tests/conformance` reads each from
/// replies built with those models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Every input token (the prompt, the tools, the transcript), cached
    /// ones included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Every output token, reasoning included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Of the input, the tokens read from the provider's prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Of the input, the tokens written to the provider's prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Of the output, the model's reasoning (thinking) tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// A count of two requests: what either said, `None` only if neither did.
fn plus(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: plus(self.input_tokens, other.input_tokens),
            output_tokens: plus(self.output_tokens, other.output_tokens),
            cache_read_tokens: plus(self.cache_read_tokens, other.cache_read_tokens),
            cache_write_tokens: plus(self.cache_write_tokens, other.cache_write_tokens),
            reasoning_tokens: plus(self.reasoning_tokens, other.reasoning_tokens),
        }
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), |a, b| a + b)
    }
}

/// What a model answered to one request.
///
/// ```
/// use toolcall_agent::ModelResponse;
/// use toolcall_core::ToolCall;
///
/// let response = ModelResponse::new("Checking.", [ToolCall::new("call_1", "weather", "{}")]);
/// assert_eq!(response.text(), "Checking.");
/// assert_eq!(response.calls().count(), 1);
/// ```
///
/// It serializes losslessly (reasoning state included), so a durable
/// engine can journal it and give it back instead of asking again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// What the model sent, in order: text, tool calls, and the reasoning
    /// state its provider wants back ([`Content`]); the transcript keeps
    /// it as it is.
    pub content: Vec<Content>,
    /// The tokens the request spent.
    pub usage: Usage,
    /// How the model ended it: finished, cut off, refused, paused or with
    /// a malformed call, with the provider's reason.
    pub finish: Finish,
    /// Which model answered, when the model asked stands for others: a
    /// [`FallbackModel`](crate::FallbackModel) names the one of its models
    /// that did. `None` means the model the request was sent to, which the
    /// agent records in its place ([`RunResult::models`](crate::RunResult::models)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelName>,
    /// The provider's id of the response (OpenAI's `chatcmpl-...` and
    /// `resp_...`, Anthropic's `msg_...`, Gemini's `responseId`), when it
    /// sent one: the request span's `gen_ai.response.id`.
    pub id: Option<String>,
}

/// A model as its provider and name ([`Model::provider`], [`Model::model`]):
/// which model answered a request. Shown as `provider:model`.
///
/// ```
/// use toolcall_agent::{ApiKey, ModelName, OpenAiChat};
///
/// let model = OpenAiChat::from_values("gpt-4.1", Some(ApiKey::new("sk-...")), None);
/// let name = ModelName::of(&model);
/// assert_eq!(name, ModelName::new("openai", "gpt-4.1"));
/// assert_eq!(name.to_string(), "openai:gpt-4.1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelName {
    /// The provider ("openai", "anthropic", "gemini"...).
    pub provider: String,
    /// The model, as the provider knows it.
    pub model: String,
}

impl ModelName {
    /// This provider's model.
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> Self {
        Self { provider: provider.into(), model: model.into() }
    }

    /// The name a [`Model`] gives itself.
    pub fn of(model: &(impl Model + ?Sized)) -> Self {
        Self::new(model.provider(), model.model())
    }
}

impl std::fmt::Display for ModelName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.provider, self.model)
    }
}

impl ModelResponse {
    /// A complete response of text and calls (text first), no reasoning.
    pub fn new(text: impl Into<String>, calls: impl IntoIterator<Item = ToolCall>) -> Self {
        let text: String = text.into();
        let text = (!text.is_empty()).then_some(Content::Text { text });
        Self {
            content: text.into_iter().chain(calls.into_iter().map(Content::Call)).collect(),
            ..Self::default()
        }
    }

    /// The answer's text: the text pieces joined (empty when the model
    /// only called tools).
    pub fn text(&self) -> String {
        text_of(&self.content)
    }

    /// The tool calls, in the model's order.
    pub fn calls(&self) -> impl Iterator<Item = &ToolCall> {
        calls_of(&self.content)
    }
}

/// A piece of a streamed response.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// More of the answer's text.
    TextDelta(String),
    /// More of the model's visible reasoning (thinking, a summary).
    ReasoningDelta(String),
    /// More of one tool call: its id and name when they first arrive, and
    /// the next piece of its argument text.
    CallDelta {
        /// The call's position in the turn.
        index: usize,
        /// The call's id, once known.
        id: Option<String>,
        /// The tool's name, once known.
        name: Option<String>,
        /// The next piece of the argument text (possibly empty).
        arguments: String,
    },
    /// The whole response, assembled: always the last event.
    Done(ModelResponse),
}

/// A streamed response.
pub type ModelStream<'a> = BoxStream<'a, Result<ModelEvent, ModelError>>;

/// A model the agent loop can talk to: one request, one response.
///
/// The built-in clients implement it over HTTP; a test or an example can
/// implement it with scripted answers. `stream` defaults to the plain
/// request, as one text delta and the response.
pub trait Model: Send + Sync {
    /// The provider's name, for spans and errors ("openai", "anthropic"...).
    fn provider(&self) -> &str;

    /// The model's name, as the provider knows it.
    fn model(&self) -> &str;

    /// The dialect the model's requests write their tools in, if any: the
    /// [`Agent`](crate::Agent) refuses a toolset it cannot express when it
    /// is built. `None` (the default) for a model without one, such as a
    /// scripted model, whose toolsets are not checked.
    fn dialect(&self) -> Option<Dialect> {
        None
    }

    /// Every dialect the model's requests may be written in: the
    /// [`Agent`](crate::Agent) checks the toolset, and a typed answer's
    /// schema, against each when it is built. The [`dialect`](Self::dialect)
    /// alone by default; a model that stands for others
    /// ([`FallbackModel`](crate::FallbackModel)) has each of theirs.
    fn dialects(&self) -> Vec<Dialect> {
        self.dialect().into_iter().collect()
    }

    /// Whether the model takes a typed answer's schema natively
    /// ([`ModelRequest::answer`]) in requests that also offer tools: what
    /// [`AnswerMode::Auto`](crate::AnswerMode::Auto) asks. `false` (the
    /// default) for a model that does not read the field, such as a
    /// scripted one, which is then offered the answer as a tool.
    fn native_answers(&self) -> bool {
        false
    }

    /// Send one request and read the whole response.
    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// Send one request and read the response as it arrives.
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        stream::once(self.request(request))
            .flat_map(|result| {
                let events = match result {
                    Ok(response) => {
                        let text = response.text();
                        let text = (!text.is_empty()).then_some(Ok(ModelEvent::TextDelta(text)));
                        text.into_iter().chain([Ok(ModelEvent::Done(response))]).collect()
                    }
                    Err(error) => vec![Err(error)],
                };
                stream::iter(events)
            })
            .boxed()
    }
}

/// A response's content put together from its streamed pieces, in the
/// order each piece first came: text joins the text just before it, a
/// call's pieces join by the call's index (pieces of several calls may
/// interleave, and an argument may be split anywhere), and another piece
/// (reasoning, a provider's item) is found again by the slot the provider
/// numbers it with (a content block's or an output item's index).
#[derive(Clone, Debug, Default)]
pub struct ContentAssembler {
    content: Vec<Content>,
    /// Where each call is in `content`, by call index.
    calls: Vec<(usize, usize)>,
    /// Where each piece found by slot is in `content`.
    slots: Vec<(usize, usize)>,
}

impl ContentAssembler {
    /// Nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// More text.
    pub fn text(&mut self, piece: &str) {
        if piece.is_empty() {
            return;
        }
        match self.content.last_mut() {
            Some(Content::Text { text }) => text.push_str(piece),
            _ => self.content.push(Content::text(piece)),
        }
    }

    /// More of the call at `index`: its id and name when they come, the
    /// next piece of its arguments.
    pub fn call(&mut self, index: usize, id: Option<&str>, name: Option<&str>, arguments: &str) {
        let position = match self.calls.iter().find(|(i, _)| *i == index) {
            Some((_, position)) => *position,
            None => {
                self.content.push(Content::Call(ToolCall::new("", "", "")));
                self.calls.push((index, self.content.len() - 1));
                self.content.len() - 1
            }
        };
        let Some(Content::Call(call)) = self.content.get_mut(position) else { return };
        if let Some(id) = id.filter(|id| !id.is_empty()) {
            call.id = id.into();
        }
        if let Some(name) = name.filter(|name| !name.is_empty()) {
            call.name = name.into();
        }
        call.arguments.push_str(arguments);
    }

    /// The piece at `slot` (reasoning, a provider's item), made by
    /// `start` the first time.
    pub fn piece(&mut self, slot: usize, start: impl FnOnce() -> Content) -> &mut Content {
        let position = match self.slots.iter().find(|(s, _)| *s == slot) {
            Some((_, position)) => *position,
            None => {
                self.content.push(start());
                self.slots.push((slot, self.content.len() - 1));
                self.content.len() - 1
            }
        };
        &mut self.content[position]
    }

    /// A piece as it came, whole.
    pub fn push(&mut self, piece: Content) {
        self.content.push(piece);
    }

    /// The content. A call whose arguments never came (a tool without
    /// parameters) has `{}`; one that came without an id gets
    /// `call_{index}`, so that its result can answer it.
    pub fn finish(mut self) -> Vec<Content> {
        for (index, position) in self.calls {
            if let Some(Content::Call(call)) = self.content.get_mut(position) {
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".into();
                }
                if call.id.is_empty() {
                    call.id = format!("call_{index}").into();
                }
            }
        }
        self.content
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A durable engine journals responses as JSON: every piece of
    /// reasoning state a provider wants back, the finish and the model
    /// that answered come back as they were.
    #[test]
    fn a_response_reads_back_from_its_json_as_it_was() {
        let reasoning = [
            Reasoning::Thinking { thinking: "Oslo first.".into(), signature: "sig-a".into() },
            Reasoning::RedactedThinking { data: "opaque".into() },
            Reasoning::ThoughtSignature { signature: "sig-g".into() },
            Reasoning::Thought { text: "A summary.".into() },
            Reasoning::Item {
                id: "rs_1".into(),
                summary: vec!["Looked it up.".into()],
                encrypted_content: Some("gAAA".into()),
            },
            Reasoning::ReasoningContent { text: "Hmm.".into() },
        ];
        let mut response =
            ModelResponse::new("Checking.", [ToolCall::new("c1", "weather", r#"{"city":"Oslo"}"#)]);
        response.content.extend(reasoning.map(Content::Reasoning));
        response.usage = Usage { input_tokens: Some(12), reasoning_tokens: Some(3), ..Usage::default() };
        response.finish = Finish::Truncated { reason: "length".into() };
        response.model = Some(ModelName::new("openai", "gpt-4.1"));
        let json = serde_json::to_string(&response).unwrap();
        assert_eq!(serde_json::from_str::<ModelResponse>(&json).unwrap(), response);
        let plain = ModelResponse::new("Hi.", []);
        let json = serde_json::to_string(&plain).unwrap();
        assert_eq!(serde_json::from_str::<ModelResponse>(&json).unwrap(), plain);
    }

    #[test]
    fn interleaved_pieces_assemble_in_the_order_they_first_came() {
        let mut content = ContentAssembler::new();
        let thinking =
            || Content::Reasoning(Reasoning::Thinking { thinking: String::new(), signature: String::new() });
        content.piece(4, thinking);
        content.text("Check");
        content.call(1, Some("b"), Some("time"), "{\"tz\":");
        content.call(0, Some("a"), Some("weather"), "{\"ci");
        if let Content::Reasoning(Reasoning::Thinking { signature, .. }) = content.piece(4, thinking) {
            signature.push_str("sig");
        }
        content.call(1, None, None, "\"UTC\"}");
        content.call(0, None, Some(""), "ty\":\"Oslo\"}");
        content.call(2, None, Some("now"), "");
        let content = content.finish();
        assert_eq!(
            content[0],
            Content::Reasoning(Reasoning::Thinking { thinking: String::new(), signature: "sig".into() })
        );
        assert_eq!(content[1], Content::text("Check"));
        assert_eq!(content[2], Content::Call(ToolCall::new("b", "time", r#"{"tz":"UTC"}"#)));
        assert_eq!(content[3], Content::Call(ToolCall::new("a", "weather", r#"{"city":"Oslo"}"#)));
        assert_eq!(content[4], Content::Call(ToolCall::new("call_2", "now", "{}")));
    }
}
