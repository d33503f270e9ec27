//! What the loop asks of a model: one request, one response, or the same
//! as a stream of events.

use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use serde::{Deserialize, Serialize};
use tools_core::{ToolCall, Toolset};
use tools_provider::Dialect;

use crate::{Message, ModelError};

/// Which tools the model may or must call: `tools_provider::ToolChoice`,
/// the one choice every client turns into its provider's fields through
/// [`Dialect::tool_choice`](tools_provider::Dialect::tool_choice).
pub use tools_provider::ToolChoice;

/// How a request is made, beyond its messages and tools.
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
    /// The most tokens the answer may have; some providers require it.
    pub max_tokens: Option<u32>,
    /// The sampling temperature.
    pub temperature: Option<f32>,
    /// How long one HTTP request may take, retries aside.
    pub request_timeout: Option<Duration>,
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

/// Tokens spent by one request, or by a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read (the prompt, the tools, the transcript).
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
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
