//! Anthropic's Messages API: `POST {base}/v1/messages`, plain and streamed.
//!
//! The shapes this client relies on, from Anthropic's documentation:
//!
//! - The request (`model`, `max_tokens` (required), `system`, `messages`,
//!   `tools`, `tool_choice`, `temperature`, `stream`), the headers
//!   (`x-api-key`, `anthropic-version: 2023-06-01`), and the response
//!   (`content` blocks, `usage.input_tokens` / `usage.output_tokens`):
//!   <https://docs.anthropic.com/en/api/messages>. Consecutive turns of
//!   the same role are combined by the API; this client merges them itself,
//!   so that `tool_result` blocks stay first in their user message as the
//!   tool-use guide asks.
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

use std::collections::VecDeque;

use futures::future::BoxFuture;
use futures::{StreamExt, stream};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use tools_provider::Dialect;

use crate::http::{Endpoint, Events, excerpt};
use crate::model::{CallAssembler, ModelEvent, ModelRequest, ModelResponse, ModelStream, Usage};
use crate::{ApiKey, Message, Model, ModelError, RetryPolicy};

const PROVIDER: &str = "anthropic";
const KEY_VARIABLE: &str = "ANTHROPIC_API_KEY";
const BASE_URL_VARIABLE: &str = "ANTHROPIC_BASE_URL";
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const VERSION: &str = "2023-06-01";
/// What `max_tokens` is when the settings give none: the API requires it.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A client of Anthropic's Messages API.
///
/// ```no_run
/// use tools_agent::{Agent, Anthropic};
/// use tools_core::Toolset;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // The key from ANTHROPIC_API_KEY, the base URL from ANTHROPIC_BASE_URL if set.
/// let model = Anthropic::new("claude-sonnet-4-5");
/// let answer = Agent::new(model, Toolset::new()).run("Hello").await?.answer;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Anthropic {
    model: String,
    key: Option<ApiKey>,
    base_url: String,
    dialect: Dialect,
    endpoint: Endpoint,
}

impl Anthropic {
    /// A client of this model, its key read from `ANTHROPIC_API_KEY` and
    /// its base URL from `ANTHROPIC_BASE_URL` (else
    /// `https://api.anthropic.com`). Without a key, requests fail with
    /// [`ModelError::Config`] until [`Self::with_api_key`] gives one.
    pub fn new(model: impl Into<String>) -> Self {
        Self::from_values(
            model.into(),
            std::env::var(KEY_VARIABLE).ok(),
            std::env::var(BASE_URL_VARIABLE).ok(),
        )
    }

    /// The client [`Self::new`] makes from these variable values.
    fn from_values(model: String, key: Option<String>, base_url: Option<String>) -> Self {
        Self {
            model,
            key: key.filter(|key| !key.trim().is_empty()).map(ApiKey::new),
            base_url: base_url.filter(|url| !url.trim().is_empty()).map_or_else(
                || DEFAULT_BASE_URL.to_owned(),
                |url| url.trim().trim_end_matches('/').to_owned(),
            ),
            dialect: Dialect::Anthropic,
            endpoint: Endpoint::new(PROVIDER, KEY_VARIABLE),
        }
    }

    /// The same client with this key.
    pub fn with_api_key(mut self, key: ApiKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The same client sending to this base URL (`/v1/messages` is added).
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// Whether tools are sent with `strict: true` ([`Dialect::AnthropicStrict`]).
    pub fn strict(mut self, strict: bool) -> Self {
        self.dialect = if strict { Dialect::AnthropicStrict } else { Dialect::Anthropic };
        self
    }

    /// The same client with this retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.endpoint.retry = retry;
        self
    }

    /// The same client over this HTTP client (proxies, TLS, pools).
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.endpoint.client = client;
        self
    }

    fn url(&self) -> String {
        format!("{}/v1/messages", self.base_url)
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let key = self.key.as_ref().ok_or_else(|| {
            ModelError::Config(format!("no Anthropic API key: set {KEY_VARIABLE} or call with_api_key"))
        })?;
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-api-key"), key.header("")?);
        headers.insert(HeaderName::from_static("anthropic-version"), HeaderValue::from_static(VERSION));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(headers)
    }

    /// The request body, as <https://docs.anthropic.com/en/api/messages> shows it.
    fn body(&self, request: &ModelRequest<'_>, stream: bool) -> Result<Value, ModelError> {
        let settings = request.settings;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("max_tokens".into(), json!(settings.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)));
        if let Some(system) = request.instructions.filter(|system| !system.is_empty()) {
            body.insert("system".into(), json!(system));
        }
        body.insert("messages".into(), Value::Array(messages(self.dialect, request.messages)?));
        body.extend(super::tool_fields(self.dialect, request)?);
        if let Some(temperature) = settings.temperature {
            body.insert("temperature".into(), json!(temperature));
        }
        if stream {
            body.insert("stream".into(), Value::Bool(true));
        }
        Ok(Value::Object(body))
    }

    /// Read a whole Messages response.
    fn response(&self, value: &Value) -> Result<ModelResponse, ModelError> {
        let content = value
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| malformed(value, "no `content` array"))?;
        let text: String = content
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        let calls = self.dialect.parse_calls(value).map_err(|error| malformed(value, &error.to_string()))?;
        let usage = value.get("usage").map(read_usage).unwrap_or_default();
        Ok(ModelResponse { text, calls, usage })
    }
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("dialect", &self.dialect)
            .field("key", &self.key.as_ref().map(|_| "***"))
            .field("retry", &self.endpoint.retry)
            .finish_non_exhaustive()
    }
}

impl Model for Anthropic {
    fn provider(&self) -> &str {
        PROVIDER
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let body = self.body(&request, false)?;
            let headers = self.headers()?;
            let value = self
                .endpoint
                .post_json(&self.url(), headers, &body, request.settings.request_timeout)
                .await?;
            self.response(&value)
        })
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let opened = async move {
            let body = self.body(&request, true)?;
            let headers = self.headers()?;
            self.endpoint.post_events(&self.url(), headers, &body, request.settings.request_timeout).await
        };
        stream::once(opened)
            .flat_map(|opened| match opened {
                Ok(events) => decode(events).boxed(),
                Err(error) => stream::iter([Err(error)]).boxed(),
            })
            .boxed()
    }
}

/// The transcript as Messages API `messages`, consecutive turns of one role
/// merged into one message.
fn messages(dialect: Dialect, transcript: &[Message]) -> Result<Vec<Value>, ModelError> {
    let mut out: Vec<Value> = Vec::new();
    for message in transcript {
        match message {
            Message::User { text } => push(&mut out, "user", Value::String(text.clone())),
            Message::Assistant { text, calls } => {
                let mut blocks = Vec::new();
                // The API refuses empty text blocks.
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in calls {
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input(&call.arguments)}));
                }
                // An assistant turn with nothing in it (a tool-less last
                // request answered empty) is left out: the API refuses
                // empty content, and the user turns around it merge.
                if !blocks.is_empty() {
                    push(&mut out, "assistant", Value::Array(blocks));
                }
            }
            Message::Tool { results } => {
                let formatted =
                    dialect.format_results(results).map_err(|error| ModelError::Config(error.to_string()))?;
                for message in formatted {
                    let role = message.get("role").and_then(Value::as_str).unwrap_or("user").to_owned();
                    let content = message.get("content").cloned().unwrap_or(Value::Array(Vec::new()));
                    push(&mut out, &role, content);
                }
            }
        }
    }
    Ok(out)
}

/// Append a message, or merge it into the last one when the role is the same.
fn push(out: &mut Vec<Value>, role: &str, content: Value) {
    if let Some(last) = out.last_mut().filter(|last| last.get("role").and_then(Value::as_str) == Some(role)) {
        let mut blocks = blocks_of(last.get("content").cloned().unwrap_or(Value::Null));
        blocks.extend(blocks_of(content));
        last["content"] = Value::Array(blocks);
        return;
    }
    out.push(json!({"role": role, "content": content}));
}

fn blocks_of(content: Value) -> Vec<Value> {
    match content {
        Value::Array(blocks) => blocks,
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        _ => Vec::new(),
    }
}

/// A call's arguments as the `input` object a `tool_use` block needs.
///
/// Arguments that are not a JSON object (a stream cut short, a model that
/// wrote broken JSON, a transcript from another provider) are sent as `{}`:
/// the API refuses a `tool_use` block whose `input` is not an object, and
/// the tool has already answered that call with an invalid-arguments
/// result, which is what tells the model to fix it. Failing the request
/// instead would end a run the model can still repair.
fn input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Map::new()),
    }
}

fn read_usage(usage: &Value) -> Usage {
    let tokens = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
    Usage { input_tokens: tokens("input_tokens"), output_tokens: tokens("output_tokens") }
}

fn malformed(value: &Value, problem: &str) -> ModelError {
    ModelError::Malformed {
        provider: PROVIDER.into(),
        status: 200,
        problem: problem.to_owned(),
        excerpt: excerpt(&value.to_string()),
    }
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
struct Decoder {
    events: Events,
    pending: VecDeque<Result<ModelEvent, ModelError>>,
    text: String,
    calls: CallAssembler,
    /// The content block index of each `tool_use` block, by call index.
    tool_blocks: Vec<usize>,
    usage: Usage,
    over: bool,
}

fn decode(events: Events) -> impl futures::Stream<Item = Result<ModelEvent, ModelError>> + Send {
    let decoder = Decoder {
        events,
        pending: VecDeque::new(),
        text: String::new(),
        calls: CallAssembler::new(),
        tool_blocks: Vec::new(),
        usage: Usage::default(),
        over: false,
    };
    stream::unfold(decoder, |mut decoder| async move {
        loop {
            if let Some(next) = decoder.pending.pop_front() {
                return Some((next, decoder));
            }
            if decoder.over {
                return None;
            }
            match decoder.events.next().await {
                Some(Ok(event)) => decoder.event(&event.event, &event.data),
                Some(Err(error)) => decoder.fail(error),
                None => decoder.fail(ModelError::StreamEnded {
                    provider: PROVIDER.into(),
                    message: "the stream closed before `message_stop`".into(),
                }),
            }
        }
    })
}

impl Decoder {
    fn fail(&mut self, error: ModelError) {
        self.pending.push_back(Err(error));
        self.over = true;
    }

    fn event(&mut self, name: &str, data: &str) {
        let data: Value = match serde_json::from_str(data) {
            Ok(data) => data,
            Err(error) => {
                return self.fail(ModelError::Malformed {
                    provider: PROVIDER.into(),
                    status: 200,
                    problem: format!("event `{name}`: {error}"),
                    excerpt: excerpt(data),
                });
            }
        };
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(name);
        let index = data.get("index").and_then(Value::as_u64).map(|index| index as usize);
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.usage.input_tokens = read_usage(usage).input_tokens;
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
                        self.pending.push_back(Ok(ModelEvent::CallDelta {
                            index: call,
                            id: id.map(str::to_owned),
                            name: name.map(str::to_owned),
                            arguments: String::new(),
                        }));
                    }
                    (Some("text"), _) => {
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        self.text_delta(text);
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
                        self.text_delta(text);
                    }
                    Some("input_json_delta") => {
                        let call =
                            index.and_then(|index| self.tool_blocks.iter().position(|block| *block == index));
                        let partial = delta.get("partial_json").and_then(Value::as_str).unwrap_or("");
                        if let Some(call) = call {
                            self.calls.push(call, None, None, partial);
                            self.pending.push_back(Ok(ModelEvent::CallDelta {
                                index: call,
                                id: None,
                                name: None,
                                arguments: partial.to_owned(),
                            }));
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(output) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.usage.output_tokens = output;
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
                let response =
                    ModelResponse { text: std::mem::take(&mut self.text), calls, usage: self.usage };
                self.pending.push_back(Ok(ModelEvent::Done(response)));
                self.over = true;
            }
            "error" => self.fail(stream_error(&data)),
            // `ping`, `content_block_stop`, and event types added later.
            _ => {}
        }
    }

    fn text_delta(&mut self, text: &str) {
        if !text.is_empty() {
            self.text.push_str(text);
            self.pending.push_back(Ok(ModelEvent::TextDelta(text.to_owned())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_and_base_url_come_from_the_variables_values() {
        let client =
            Anthropic::from_values("m".into(), Some("sk-ant-x".into()), Some("http://proxy/".into()));
        assert_eq!(client.key, Some(ApiKey::new("sk-ant-x")));
        assert_eq!(client.url(), "http://proxy/v1/messages");
        let client = Anthropic::from_values("m".into(), Some("  ".into()), None);
        assert_eq!(client.key, None);
        assert_eq!(client.url(), "https://api.anthropic.com/v1/messages");
        let error = client.headers().unwrap_err();
        assert!(error.to_string().contains(KEY_VARIABLE), "{error}");
        assert!(
            !format!("{:?}", Anthropic::from_values("m".into(), Some("sk-ant-x".into()), None))
                .contains("sk-ant-x")
        );
    }

    #[test]
    fn arguments_that_are_not_an_object_are_sent_as_an_empty_input() {
        assert_eq!(input(r#"{"city":"Oslo"}"#), json!({"city": "Oslo"}));
        assert_eq!(input("{\"city\":"), json!({}));
        assert_eq!(input("[1]"), json!({}));
    }

    #[test]
    fn turns_of_one_role_are_merged() {
        let transcript = [
            Message::user("a"),
            Message::Assistant { text: String::new(), calls: Vec::new() },
            Message::user("b"),
        ];
        let messages = messages(Dialect::Anthropic, &transcript).unwrap();
        assert_eq!(
            messages,
            [
                json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
            ]
        );
    }
}
