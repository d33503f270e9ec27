//! Anthropic's Messages API: `POST {base}/v1/messages`, plain and streamed.
//!
//! Everything of the client is in this folder: here the URL, headers,
//! body and the response and stream readers, in `fields` the settings'
//! fields. The tools, messages and results it writes are those of
//! `toolcall-provider`'s `Dialect::Anthropic` (and `AnthropicStrict`),
//! whose rules `toolcall_provider::anthropic` documents.
//!
//! The shapes this client relies on, from Anthropic's documentation:
//!
//! - The request (`model`, `max_tokens` (required), `system`, `messages`,
//!   `tools`, `tool_choice`, `temperature`, `stream`; the sampling fields
//!   by what the model takes of them: `fields::anthropic_sampling`), the headers
//!   (`x-api-key`, `anthropic-version: 2023-06-01`), and the response
//!   (`content` blocks, `usage.input_tokens` / `usage.output_tokens`):
//!   <https://docs.anthropic.com/en/api/messages>. The messages (merged
//!   turns of one role, `tool_use` and `tool_result` blocks) are written by
//!   `Dialect::messages`.
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
//! - Prompt caching: `cache_control` breakpoints on the last tool, the
//!   system prompt (then a list of text blocks) and the last user message,
//!   on by default (`CacheSettings`, written by `clients::cache`):
//!   <https://platform.claude.com/docs/en/build-with-claude/prompt-caching>.
//! - Context management (`ModelSettings::native_context`, written by
//!   `clients::native`): `context_management.edits` behind the
//!   `anthropic-beta` header; the response's `context_management.applied_edits`
//!   (on the message, or a stream's `message_delta`) is traced (target
//!   `toolcall_agent::context`), and a `compaction` block (its `content`
//!   streamed as `compaction_delta`s) is kept as a native piece of the
//!   message and sent back:
//!   <https://platform.claude.com/docs/en/build-with-claude/context-editing>,
//!   <https://platform.claude.com/docs/en/build-with-claude/compaction>.

use eventsource_stream::Event;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use toolcall_provider::{Content, Dialect, Finish, Reasoning, anthropic};

pub(super) mod fields;

use crate::ModelError;
use crate::clients::body::{self, ANTHROPIC};
use crate::clients::http::{Decode, excerpt};
use crate::clients::{Client, Provider, Strict, response_id};
use crate::model::{ContentAssembler, ModelEvent, ModelRequest, ModelResponse, Usage};

const PROVIDER: &str = "anthropic";
const VERSION: &str = "2023-06-01";
/// What `max_tokens` is when the settings give none (plus the thinking
/// budget, if any): the API requires it.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A client of Anthropic's Messages API.
///
/// ```no_run
/// use toolcall_agent::{Agent, Anthropic};
/// use toolcall_core::Toolset;
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

    /// The betas of the context management asked for, beside the
    /// application's own `anthropic-beta`.
    fn settings_headers(&self, settings: &crate::ModelSettings, headers: &mut HeaderMap) {
        fields::native_context_headers(settings, headers);
    }

    /// The request body, as <https://docs.anthropic.com/en/api/messages> shows it;
    /// the settings' fields (thinking among them) from `fields::anthropic`,
    /// the extra JSON last.
    fn body(&self, model: &str, request: &ModelRequest<'_>, stream: bool) -> Result<Value, ModelError> {
        let settings = request.settings;
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        body.insert("max_tokens".into(), json!(fields::max_tokens(settings, DEFAULT_MAX_TOKENS)));
        if let Some(system) = request.instructions.filter(|system| !system.is_empty()) {
            body.insert("system".into(), json!(system));
        }
        let messages = self.dialect().messages(request.messages)?;
        body.insert("messages".into(), Value::Array(messages));
        body.extend(super::tool_fields(self.dialect(), request)?);
        fields::fields(model, settings, &mut body)?;
        fields::native_context(settings, &mut body)?;
        if let Some(answer) = request.answer {
            fields::answer(answer, &mut body)?;
        }
        fields::cache(&settings.cache, &mut body)?;
        if stream {
            body.insert("stream".into(), Value::Bool(true));
        }
        body::merge_extra(ANTHROPIC, &mut body, settings.extra.as_ref())?;
        Ok(Value::Object(body))
    }

    /// Read a whole Messages response: its content in order (text, calls,
    /// thinking, server tools: `Dialect::content` of `toolcall-provider`).
    fn read(&self, value: &Value) -> Result<ModelResponse, ModelError> {
        let dialect = self.dialect();
        let content = dialect.content(value).map_err(|error| malformed(value, error))?;
        trace_edits(value);
        let usage = value.get("usage").map(read_usage).unwrap_or_default();
        let stop_reason = value.get("stop_reason").and_then(Value::as_str);
        let finish = stop_reason.map(|reason| dialect.finish(reason)).unwrap_or_default();
        Ok(ModelResponse { content, usage, finish, model: None, id: response_id(value, "id") })
    }

    fn events(&self) -> Decoder {
        Decoder::default()
    }
}

/// A `usage` object as [`Usage`] counts it: Anthropic's `input_tokens` are
/// only those after the last cache breakpoint, so the input is that plus
/// the tokens read from and written to the cache
/// (<https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching>);
/// the reasoning is `output_tokens_details.thinking_tokens`, part of
/// `output_tokens`, where the API breaks it out.
fn read_usage(usage: &Value) -> Usage {
    let tokens = |field: &str| usage.get(field).and_then(Value::as_u64);
    let (read, written) = (tokens("cache_read_input_tokens"), tokens("cache_creation_input_tokens"));
    Usage {
        input_tokens: tokens("input_tokens").map(|input| input + read.unwrap_or(0) + written.unwrap_or(0)),
        output_tokens: tokens("output_tokens"),
        cache_read_tokens: read,
        cache_write_tokens: written,
        reasoning_tokens: usage.pointer("/output_tokens_details/thinking_tokens").and_then(Value::as_u64),
    }
}

/// Trace the context edits the API applied, if it reports any
/// (`context_management.applied_edits` of a message or a `message_delta`:
/// each with its type and the input tokens it cleared).
fn trace_edits(value: &Value) {
    let edits = value.pointer("/context_management/applied_edits").and_then(Value::as_array);
    if let Some(edits) = edits.filter(|edits| !edits.is_empty()) {
        let cleared: u64 =
            edits.iter().filter_map(|edit| edit.get("cleared_input_tokens").and_then(Value::as_u64)).sum();
        let applied = Value::Array(edits.clone());
        tracing::debug!(target: "toolcall_agent::context", cleared_input_tokens = cleared, %applied,
            "the provider edited the context");
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
        (&mut usage.reasoning_tokens, later.reasoning_tokens),
    ];
    for (field, later) in fields {
        if later.is_some() {
            *field = later;
        }
    }
}

fn malformed(value: &Value, problem: impl std::fmt::Display) -> ModelError {
    crate::clients::http::malformed(PROVIDER, &value.to_string(), problem)
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
#[derive(Debug, Default)]
pub struct Decoder {
    content: ContentAssembler,
    /// The content block index of each `tool_use` block, by call index.
    tool_blocks: Vec<usize>,
    /// The `input` JSON of each server tool's use so far, by block index.
    server_inputs: Vec<(usize, String)>,
    usage: Usage,
    finish: Finish,
    /// The message's id, from `message_start`.
    id: Option<String>,
}

impl Decode for Decoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError> {
        let name = event.event.as_str();
        let data: Value = serde_json::from_str(&event.data).map_err(|error| {
            crate::clients::http::malformed(PROVIDER, &event.data, format!("event `{name}`: {error}"))
        })?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(name);
        let index = data.get("index").and_then(Value::as_u64).map(|index| index as usize);
        match kind {
            "message_start" => {
                if let Some(message) = data.get("message") {
                    self.id = response_id(message, "id");
                }
                if let Some(usage) = data.pointer("/message/usage") {
                    self.usage = read_usage(usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let field = |name: &str| block.get(name).and_then(Value::as_str);
                match (field("type"), index) {
                    (Some("tool_use"), Some(index)) => {
                        let call = self.tool_blocks.len();
                        self.tool_blocks.push(index);
                        let (id, name) = (field("id"), field("name"));
                        self.content.call(call, id, name, "");
                        out.push(ModelEvent::CallDelta {
                            index: call,
                            id: id.map(str::to_owned),
                            name: name.map(str::to_owned),
                            arguments: String::new(),
                        });
                    }
                    (Some("text"), _) => self.text_delta(field("text").unwrap_or_default(), out),
                    (Some("thinking"), Some(index)) => {
                        let thinking = field("thinking").unwrap_or_default().to_owned();
                        let signature = field("signature").unwrap_or_default().to_owned();
                        self.content
                            .piece(index, || Content::Reasoning(Reasoning::Thinking { thinking, signature }));
                    }
                    (Some("redacted_thinking"), Some(index)) => {
                        let data = field("data").unwrap_or_default().to_owned();
                        self.content
                            .piece(index, || Content::Reasoning(Reasoning::RedactedThinking { data }));
                    }
                    // A server tool's use (its input streams as JSON, like a
                    // call's) and its result, and a compaction block (its
                    // summary streams as `compaction_delta`s): sent back whole.
                    (Some(kind), Some(index))
                        if kind == "server_tool_use"
                            || kind.ends_with("_tool_result")
                            || kind == anthropic::COMPACTION =>
                    {
                        let item = block.clone();
                        self.content
                            .piece(index, || Content::Native { provider: anthropic::NATIVE.into(), item });
                        if kind == "server_tool_use" {
                            self.server_inputs.push((index, String::new()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let field = |name: &str| delta.get(name).and_then(Value::as_str).unwrap_or_default();
                match (delta.get("type").and_then(Value::as_str), index) {
                    (Some("text_delta"), _) => self.text_delta(field("text"), out),
                    (Some("input_json_delta"), Some(index)) => {
                        self.input_delta(index, field("partial_json"), out)
                    }
                    (Some("thinking_delta"), Some(index)) => {
                        let piece = field("thinking");
                        if let Content::Reasoning(Reasoning::Thinking { thinking, .. }) =
                            self.content.piece(index, thinking_block)
                        {
                            thinking.push_str(piece);
                        }
                        if !piece.is_empty() {
                            out.push(ModelEvent::ReasoningDelta(piece.to_owned()));
                        }
                    }
                    (Some("signature_delta"), Some(index)) => {
                        match self.content.piece(index, thinking_block) {
                            Content::Reasoning(Reasoning::Thinking { signature, .. }) => {
                                signature.push_str(field("signature"));
                            }
                            Content::Native { item, .. } => append(item, "signature", field("signature")),
                            _ => {}
                        }
                    }
                    // A compaction block's summary and opaque content.
                    (Some("compaction_delta"), Some(index)) => {
                        if let Content::Native { item, .. } = self.content.piece(index, compaction_block) {
                            for name in ["content", "encrypted_content"] {
                                if let Some(piece) = delta.get(name).and_then(Value::as_str) {
                                    append(item, name, piece);
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let server = self.server_inputs.iter().position(|(block, _)| Some(*block) == index);
                if let (Some(position), Some(index)) = (server, index) {
                    let (_, input) = self.server_inputs.swap_remove(position);
                    if let Content::Native { item, .. } = self.content.piece(index, || Content::text(""))
                        && let Ok(input) = serde_json::from_str::<Value>(&input)
                    {
                        item["input"] = input;
                    }
                }
            }
            "message_delta" => {
                trace_edits(&data);
                if let Some(usage) = data.get("usage") {
                    update(&mut self.usage, read_usage(usage));
                }
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    // The strict dialect's endings are the same.
                    self.finish = Dialect::Anthropic.finish(reason);
                }
            }
            "message_stop" => {
                let content = std::mem::take(&mut self.content).finish();
                let finish = std::mem::take(&mut self.finish);
                let id = self.id.take();
                return Ok(Some(ModelResponse { content, usage: self.usage, finish, model: None, id }));
            }
            "error" => return Err(stream_error(&data)),
            // `ping`, and event types added later.
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

/// A compaction block not started yet.
fn compaction_block() -> Content {
    Content::Native { provider: anthropic::NATIVE.into(), item: json!({"type": anthropic::COMPACTION}) }
}

/// Add `piece` to the string at `name` of a native item (a `null` or
/// absent one starts empty).
fn append(item: &mut Value, name: &str, piece: &str) {
    if let Some(fields) = item.as_object_mut() {
        let earlier = fields.get(name).and_then(Value::as_str).unwrap_or_default();
        let joined = format!("{earlier}{piece}");
        fields.insert(name.to_owned(), Value::String(joined));
    }
}

/// A thinking block not started yet.
fn thinking_block() -> Content {
    Content::Reasoning(Reasoning::Thinking { thinking: String::new(), signature: String::new() })
}

impl Decoder {
    fn text_delta(&mut self, text: &str, out: &mut Vec<ModelEvent>) {
        if !text.is_empty() {
            self.content.text(text);
            out.push(ModelEvent::TextDelta(text.to_owned()));
        }
    }

    /// More of a call's input, or of a server tool's.
    fn input_delta(&mut self, index: usize, partial: &str, out: &mut Vec<ModelEvent>) {
        if let Some((_, input)) = self.server_inputs.iter_mut().find(|(block, _)| *block == index) {
            input.push_str(partial);
            return;
        }
        if let Some(call) = self.tool_blocks.iter().position(|block| *block == index) {
            self.content.call(call, None, None, partial);
            out.push(ModelEvent::CallDelta {
                index: call,
                id: None,
                name: None,
                arguments: partial.to_owned(),
            });
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

    #[test]
    fn usage_counts_the_cache_in_the_input_and_breaks_out_thinking() {
        let usage = json!({"input_tokens": 256, "cache_read_input_tokens": 1536,
            "cache_creation_input_tokens": 256, "output_tokens": 300,
            "output_tokens_details": {"thinking_tokens": 200}});
        let expected = Usage {
            input_tokens: Some(2048),
            output_tokens: Some(300),
            cache_read_tokens: Some(1536),
            cache_write_tokens: Some(256),
            reasoning_tokens: Some(200),
        };
        assert_eq!(read_usage(&usage), expected);
        // A stream's `message_delta` with only the output keeps the rest.
        let mut streamed = read_usage(&json!({"input_tokens": 256, "cache_read_input_tokens": 1536,
            "cache_creation_input_tokens": 256, "output_tokens": 1}));
        update(
            &mut streamed,
            read_usage(&json!({"output_tokens": 300,
            "output_tokens_details": {"thinking_tokens": 200}})),
        );
        assert_eq!(streamed, expected);
    }
}
