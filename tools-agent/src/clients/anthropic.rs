//! Anthropic's Messages API: `POST {base}/v1/messages`, plain and streamed.
//!
//! The shapes this client relies on, from Anthropic's documentation:
//!
//! - The request (`model`, `max_tokens` (required), `system`, `messages`,
//!   `tools`, `tool_choice`, `temperature`, `stream`), the headers
//!   (`x-api-key`, `anthropic-version: 2023-06-01`), and the response
//!   (`content` blocks, `usage.input_tokens` / `usage.output_tokens`):
//!   <https://docs.anthropic.com/en/api/messages>. The messages (merged
//!   turns of one role, `tool_use` and `tool_result` blocks) are written by
//!   `tools_provider::anthropic::messages`.
//! - `tool_use` blocks (`id`, `name`, object `input`), the answering user
//!   message of `tool_result` blocks (`tool_use_id`):
//!   <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>.
//!   `tool_choice` (`auto`, `any`, `tool` with `name`, `none`, and
//!   `disable_parallel_tool_use` inside it) comes from `Dialect::tool_choice`,
//!   which cites its pages.
//! - A request may leave `tools` out although its messages hold
//!   `tool_use` / `tool_result` blocks (since February 27th, 2025), which the
//!   loop's last, tool-less request does:
//!   <https://docs.anthropic.com/en/release-notes/api>.
//! - Streaming: `message_start` (with `message.usage`), `content_block_start`
//!   (a `text` or `tool_use` block at `index`), `content_block_delta`
//!   (`text_delta` with `text`, `input_json_delta` with `partial_json`),
//!   `content_block_stop`, `message_delta` (`usage.output_tokens`,
//!   `delta.stop_reason`), `message_stop`, `ping` and `error`; other event
//!   types may be added and are to be ignored:
//!   <https://docs.anthropic.com/en/docs/build-with-claude/streaming>.
//! - HTTP 529 is `overloaded_error` (retried by the shared HTTP side):
//!   <https://docs.anthropic.com/en/api/errors>.

use eventsource_stream::Event;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use tools_provider::{Dialect, Finish, anthropic};

use super::{Client, Provider, Strict, fields};
use crate::ModelError;
use crate::http::{Decode, excerpt};
use crate::model::{CallAssembler, ModelEvent, ModelRequest, ModelResponse, Usage};

const PROVIDER: &str = "anthropic";
const VERSION: &str = "2023-06-01";
/// What `max_tokens` is when the settings give none (plus the thinking
/// budget, if any): the API requires it.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A client of Anthropic's Messages API.
///
/// ```no_run
/// use tools_agent::{Agent, Anthropic};
/// use tools_core::Toolset;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // The key from ANTHROPIC_API_KEY, the base URL from ANTHROPIC_BASE_URL if set.
/// let model = Anthropic::new("claude-sonnet-4-5");
/// let answer = Agent::new(model, Toolset::new())?.run("Hello").await?.answer;
/// # Ok(()) }
/// ```
pub type Anthropic = Client<AnthropicApi>;

/// The Messages API, as the [`Anthropic`] client speaks it: whether its
/// tools are strict.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnthropicApi {
    strict: bool,
}

impl Strict for AnthropicApi {
    fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }
}

impl Provider for AnthropicApi {
    const NAME: &'static str = PROVIDER;
    const CLIENT: &'static str = "Anthropic";
    const KEY_VARIABLE: &'static str = "ANTHROPIC_API_KEY";
    const BASE_URL_VARIABLE: &'static str = "ANTHROPIC_BASE_URL";
    const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";
    const KEY_HEADER: (&'static str, &'static str) = ("x-api-key", "");
    type Events = Decoder;

    fn dialect(&self) -> Dialect {
        if self.strict { Dialect::AnthropicStrict } else { Dialect::Anthropic }
    }

    /// `{base}/v1/messages`.
    fn url(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        format!("{base_url}/v1/messages")
    }

    fn headers(&self, headers: &mut HeaderMap) {
        headers.insert(HeaderName::from_static("anthropic-version"), HeaderValue::from_static(VERSION));
    }

    /// The request body, as <https://docs.anthropic.com/en/api/messages> shows it;
    /// the settings' fields (thinking among them) from `fields::anthropic`,
    /// the extra JSON last.
    fn body(&self, model: &str, request: &ModelRequest<'_>, stream: bool) -> Result<Value, ModelError> {
        let settings = request.settings;
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        body.insert("max_tokens".into(), json!(fields::anthropic_max_tokens(settings, DEFAULT_MAX_TOKENS)));
        if let Some(system) = request.instructions.filter(|system| !system.is_empty()) {
            body.insert("system".into(), json!(system));
        }
        let messages = anthropic::messages(self.dialect(), request.messages)?;
        body.insert("messages".into(), Value::Array(messages));
        body.extend(super::tool_fields(self.dialect(), request)?);
        fields::anthropic(settings, &mut body)?;
        if stream {
            body.insert("stream".into(), Value::Bool(true));
        }
        fields::merge_extra(fields::ANTHROPIC, &mut body, settings.extra.as_ref())?;
        Ok(Value::Object(body))
    }

    /// Read a whole Messages response.
    fn read(&self, value: &Value) -> Result<ModelResponse, ModelError> {
        let content = value
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| malformed(value, "no `content` array"))?;
        let text: String = content
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        let calls = self.dialect().parse_calls(value).map_err(|error| malformed(value, error))?;
        let usage = value.get("usage").map(read_usage).unwrap_or_default();
        let finish =
            value.get("stop_reason").and_then(Value::as_str).map(anthropic::finish).unwrap_or_default();
        Ok(ModelResponse { text, calls, usage, finish })
    }

    fn events(&self) -> Decoder {
        Decoder::default()
    }
}

/// A `usage` object as [`Usage`] counts it: Anthropic's `input_tokens` are
/// only those after the last cache breakpoint, so the input is that plus
/// the tokens read from and written to the cache
/// (<https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching>).
fn read_usage(usage: &Value) -> Usage {
    let tokens = |field: &str| usage.get(field).and_then(Value::as_u64);
    let (read, written) = (tokens("cache_read_input_tokens"), tokens("cache_creation_input_tokens"));
    Usage {
        input_tokens: tokens("input_tokens").map(|input| input + read.unwrap_or(0) + written.unwrap_or(0)),
        output_tokens: tokens("output_tokens"),
        cache_read_tokens: read,
        cache_write_tokens: written,
        reasoning_tokens: None,
    }
}

/// `later`'s counts over `usage`'s where it has them: a stream's
/// `message_delta` counts are cumulative, and may carry only the output.
fn update(usage: &mut Usage, later: Usage) {
    let fields = [
        (&mut usage.input_tokens, later.input_tokens),
        (&mut usage.output_tokens, later.output_tokens),
        (&mut usage.cache_read_tokens, later.cache_read_tokens),
        (&mut usage.cache_write_tokens, later.cache_write_tokens),
    ];
    for (field, later) in fields {
        if later.is_some() {
            *field = later;
        }
    }
}

fn malformed(value: &Value, problem: impl std::fmt::Display) -> ModelError {
    crate::http::malformed(PROVIDER, &value.to_string(), problem)
}

/// An error event of a stream, as its `error.type` says
/// (<https://docs.anthropic.com/en/api/errors>).
fn stream_error(data: &Value) -> ModelError {
    let kind = data.pointer("/error/type").and_then(Value::as_str).unwrap_or("error");
    let message = data.pointer("/error/message").and_then(Value::as_str).unwrap_or("no message");
    let provider = PROVIDER.to_owned();
    match kind {
        "overloaded_error" => ModelError::Unavailable { provider, status: 529, attempts: 1 },
        "api_error" => ModelError::Server { provider, status: 500, attempts: 1, excerpt: excerpt(message) },
        _ => ModelError::Rejected {
            provider,
            status: 200,
            message: format!("{kind} in the stream: {message}"),
        },
    }
}

/// What a stream has said so far.
#[derive(Default)]
pub struct Decoder {
    text: String,
    calls: CallAssembler,
    /// The content block index of each `tool_use` block, by call index.
    tool_blocks: Vec<usize>,
    usage: Usage,
    finish: Finish,
}

impl Decode for Decoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError> {
        let name = event.event.as_str();
        let data: Value = serde_json::from_str(&event.data).map_err(|error| {
            crate::http::malformed(PROVIDER, &event.data, format!("event `{name}`: {error}"))
        })?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(name);
        let index = data.get("index").and_then(Value::as_u64).map(|index| index as usize);
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.usage = read_usage(usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                match (block.get("type").and_then(Value::as_str), index) {
                    (Some("tool_use"), Some(index)) => {
                        let call = self.tool_blocks.len();
                        self.tool_blocks.push(index);
                        let id = block.get("id").and_then(Value::as_str);
                        let name = block.get("name").and_then(Value::as_str);
                        self.calls.push(call, id, name, "");
                        out.push(ModelEvent::CallDelta {
                            index: call,
                            id: id.map(str::to_owned),
                            name: name.map(str::to_owned),
                            arguments: String::new(),
                        });
                    }
                    (Some("text"), _) => {
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        self.text_delta(text, out);
                    }
                    // Thinking, server tool use and its results: not part of
                    // the answer's text or calls.
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let text = delta.get("text").and_then(Value::as_str).unwrap_or("");
                        self.text_delta(text, out);
                    }
                    Some("input_json_delta") => {
                        let call =
                            index.and_then(|index| self.tool_blocks.iter().position(|block| *block == index));
                        let partial = delta.get("partial_json").and_then(Value::as_str).unwrap_or("");
                        if let Some(call) = call {
                            self.calls.push(call, None, None, partial);
                            out.push(ModelEvent::CallDelta {
                                index: call,
                                id: None,
                                name: None,
                                arguments: partial.to_owned(),
                            });
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(usage) = data.get("usage") {
                    update(&mut self.usage, read_usage(usage));
                }
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish = anthropic::finish(reason);
                }
            }
            "message_stop" => {
                let mut calls = std::mem::take(&mut self.calls).finish();
                // A tool without parameters streams no `input_json_delta`.
                for call in &mut calls {
                    if call.arguments.trim().is_empty() {
                        call.arguments = "{}".into();
                    }
                }
                let text = std::mem::take(&mut self.text);
                let finish = std::mem::take(&mut self.finish);
                return Ok(Some(ModelResponse { text, calls, usage: self.usage, finish }));
            }
            "error" => return Err(stream_error(&data)),
            // `ping`, `content_block_stop`, and event types added later.
            _ => {}
        }
        Ok(None)
    }

    fn end(&mut self) -> Result<ModelResponse, ModelError> {
        Err(ModelError::StreamEnded {
            provider: PROVIDER.into(),
            message: "the stream closed before `message_stop`".into(),
        })
    }
}

impl Decoder {
    fn text_delta(&mut self, text: &str, out: &mut Vec<ModelEvent>) {
        if !text.is_empty() {
            self.text.push_str(text);
            out.push(ModelEvent::TextDelta(text.to_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ApiKey;

    #[test]
    fn the_key_and_base_url_come_from_the_variables_values() {
        let client = Anthropic::from_values("m", Some(ApiKey::new("sk-ant-x")), Some("http://proxy/"));
        assert_eq!(client.key, Some(ApiKey::new("sk-ant-x")));
        assert_eq!(client.url(false), "http://proxy/v1/messages");
        assert_eq!(client.request_headers().unwrap()["anthropic-version"], VERSION);
        let client = Anthropic::from_values("m", None, None);
        assert_eq!(client.key, None);
        assert_eq!(client.url(false), "https://api.anthropic.com/v1/messages");
        let error = client.request_headers().unwrap_err();
        assert!(error.to_string().contains("ANTHROPIC_API_KEY"), "{error}");
        assert!(
            !format!("{:?}", Anthropic::from_values("m", Some(ApiKey::new("sk-ant-x")), None))
                .contains("sk-ant-x")
        );
    }
}
