//! What the loop asks of a model: one request, one response, or the same
//! as a stream of events.

use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use serde::{Deserialize, Serialize};
use tools_core::{ToolCall, Toolset};
use tools_provider::{Dialect, Finish};

use crate::{Message, ModelError};

/// Which tools the model may or must call: `tools_provider::ToolChoice`,
/// the one choice every client turns into its provider's fields through
/// [`Dialect::tool_choice`](tools_provider::Dialect::tool_choice).
pub use tools_provider::ToolChoice;

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
/// | `temperature` | `temperature` | `temperature` | `temperature` (only 1 with thinking) | `temperature` |
/// | `top_p` | `top_p` | `top_p` | `top_p` (0.95 to 1 with thinking) | `topP` |
/// | `top_k` | refused | refused | `top_k` (refused with thinking) | `topK` |
/// | `stop_sequences` | `stop` | refused | `stop_sequences` | `stopSequences` |
/// | `seed` | `seed` | refused | refused | `seed` |
/// | `reasoning` | `reasoning_effort` | `reasoning` (and `include`, below) | `thinking`, `output_config.effort` | `thinkingConfig` |
/// | `extra` | merged into the body | merged | merged | merged |
///
/// [`ReasoningSettings`](crate::ReasoningSettings) has the reasoning fields'
/// own table. A field the SDK does not model goes through `extra`
/// ([`Self::with_extra`]): `top_k` for a compatible server that takes it
/// (`with_extra(json!({"top_k": 40}))`), Anthropic's `thinking.display:
/// "omitted"`.
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
/// <https://ai.google.dev/api/generate-content#generationconfig>.
///
/// ```
/// use std::time::Duration;
/// use tools_agent::{ModelSettings, ReasoningEffort, ReasoningSettings, ToolChoice};
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
/// | `cache_write_tokens`: of the input, written to the cache | (not reported) | (not reported) | `cache_creation_input_tokens` | (not reported) |
/// | `reasoning_tokens`: of the output, reasoning | `completion_tokens_details.reasoning_tokens` | `output_tokens_details.reasoning_tokens` | (not broken out) | `thoughtsTokenCount` |
///
/// Sources: <https://platform.openai.com/docs/api-reference/chat/object>
/// (`usage`), <https://platform.openai.com/docs/api-reference/responses/object>
/// (`usage`), <https://docs.anthropic.com/en/api/messages> (`usage`) and
/// <https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching>
/// (Anthropic's `input_tokens` counts only the tokens after the last cache
/// breakpoint), <https://ai.google.dev/api/generate-content#UsageMetadata>.
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelResponse {
    /// The answer's text (empty when it only calls tools).
    pub text: String,
    /// The tool calls, in the model's order.
    pub calls: Vec<ToolCall>,
    /// The tokens the request spent.
    pub usage: Usage,
    /// How the model ended it: finished, cut off or refused, with the
    /// provider's reason.
    pub finish: Finish,
}

/// A piece of a streamed response.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// More of the answer's text.
    TextDelta(String),
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

    /// Send one request and read the whole response.
    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;

    /// Send one request and read the response as it arrives.
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        stream::once(self.request(request))
            .flat_map(|result| {
                let events = match result {
                    Ok(response) if response.text.is_empty() => vec![Ok(ModelEvent::Done(response))],
                    Ok(response) => {
                        vec![Ok(ModelEvent::TextDelta(response.text.clone())), Ok(ModelEvent::Done(response))]
                    }
                    Err(error) => vec![Err(error)],
                };
                stream::iter(events)
            })
            .boxed()
    }
}

/// Tool calls put together from their streamed pieces, by index: pieces of
/// several calls may interleave, and an argument may be split anywhere.
#[derive(Clone, Debug, Default)]
pub struct CallAssembler {
    calls: Vec<(usize, ToolCall)>,
}

impl CallAssembler {
    /// No calls yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one piece.
    pub fn push(&mut self, index: usize, id: Option<&str>, name: Option<&str>, arguments: &str) {
        let position = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(position) => position,
            None => {
                self.calls.push((index, ToolCall::new("", "", "")));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[position].1;
        if let Some(id) = id.filter(|id| !id.is_empty()) {
            call.id = id.into();
        }
        if let Some(name) = name.filter(|name| !name.is_empty()) {
            call.name = name.into();
        }
        call.arguments.push_str(arguments);
    }

    /// The calls, in index order.
    pub fn finish(mut self) -> Vec<ToolCall> {
        self.calls.sort_by_key(|(index, _)| *index);
        self.calls.into_iter().map(|(_, call)| call).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_pieces_assemble_by_index() {
        let mut calls = CallAssembler::new();
        calls.push(1, Some("b"), Some("time"), "{\"tz\":");
        calls.push(0, Some("a"), Some("weather"), "{\"ci");
        calls.push(1, None, None, "\"UTC\"}");
        calls.push(0, None, Some(""), "ty\":\"Oslo\"}");
        let calls = calls.finish();
        assert_eq!(calls[0], ToolCall::new("a", "weather", r#"{"city":"Oslo"}"#));
        assert_eq!(calls[1], ToolCall::new("b", "time", r#"{"tz":"UTC"}"#));
    }
}
