//! OpenAI Chat Completions, `POST {base}/chat/completions`, and every
//! server that speaks it (Ollama, llama.cpp, vLLM, LM Studio...).
//!
//! - The request and the response:
//!   <https://platform.openai.com/docs/api-reference/chat/create> (messages
//!   `system`/`user`/`assistant` with `tool_calls`/`tool`; `tools`,
//!   `tool_choice`, `parallel_tool_calls`, `max_completion_tokens`,
//!   `temperature`; `choices[0].message`, `usage.prompt_tokens`,
//!   `usage.completion_tokens`). `tool_choice` and `parallel_tool_calls`
//!   come from `Dialect::tool_choice`, which cites their pages.
//! - The stream: <https://platform.openai.com/docs/api-reference/chat-streaming>
//!   (`chat.completion.chunk` objects in `data:` lines, `choices[0].delta`
//!   with `content` and `tool_calls[]` pieces keyed by `index`, a
//!   `finish_reason` on the last choice chunk, with `stream_options:
//!   {"include_usage": true}` a last chunk with empty `choices` and the
//!   `usage`, then `data: [DONE]`).
//! - Tool calls and their results: the `OpenAiChat` dialect of
//!   `tools-provider` (<https://platform.openai.com/docs/guides/function-calling>).

use eventsource_stream::Event;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tools_provider::Dialect;

use super::openai_common::{
    Connection, Decode, error_text, event_json, malformed, model_stream, stream_ended, usage,
};
use crate::model::{CallAssembler, ModelEvent, ModelRequest, ModelResponse, ModelStream, Usage};
use crate::{ApiKey, Message, Model, ModelError, RetryPolicy};

/// A [`Model`] over OpenAI's Chat Completions API, or any server that
/// speaks it.
///
/// ```
/// use tools_agent::{ApiKey, Model, OpenAiChat};
///
/// // OpenAI itself, the key given (`OpenAiChat::new` reads OPENAI_API_KEY).
/// let openai = OpenAiChat::from_values("gpt-4.1-mini", Some(ApiKey::new("sk-...")), None).strict(true);
/// assert_eq!(openai.base_url(), "https://api.openai.com/v1");
/// // A local server: no key, no Authorization header.
/// let local = OpenAiChat::from_values("llama3.2", None, Some("http://localhost:11434/v1"));
/// assert_eq!((local.provider(), local.model()), ("openai", "llama3.2"));
/// assert!(!format!("{openai:?}").contains("sk-"));
/// ```
#[derive(Clone)]
pub struct OpenAiChat {
    connection: Connection,
}

impl OpenAiChat {
    /// A client of this model, with the key in `OPENAI_API_KEY` and the
    /// base URL in `OPENAI_BASE_URL` (default `https://api.openai.com/v1`).
    /// With a base URL and no key, requests go without an `Authorization`
    /// header, as local servers expect.
    pub fn new(model: impl Into<String>) -> Self {
        Self { connection: Connection::from_env(model.into()) }
    }

    /// A client from these values rather than the environment: what
    /// [`Self::new`] does with the two variables' values (a blank base URL
    /// is the default one).
    pub fn from_values(model: impl Into<String>, api_key: Option<ApiKey>, base_url: Option<&str>) -> Self {
        Self { connection: Connection::from_values(model.into(), api_key, base_url) }
    }

    /// Use this key.
    pub fn with_api_key(mut self, key: ApiKey) -> Self {
        self.connection.key = Some(key);
        self
    }

    /// Send to this base URL (`.../v1`); `chat/completions` is appended.
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.connection.set_base_url(&url.into());
        self
    }

    /// Send the tools in strict mode (`Dialect::OpenAiChatStrict`): the
    /// model's arguments then follow the schemas exactly.
    pub fn strict(mut self, strict: bool) -> Self {
        self.connection.strict = strict;
        self
    }

    /// Retry rate limits and server errors with this policy.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.connection.endpoint.retry = policy;
        self
    }

    /// Send with this HTTP client (proxies, TLS roots, pools).
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.connection.endpoint.client = client;
        self
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &str {
        &self.connection.base_url
    }

    fn dialect(&self) -> Dialect {
        if self.connection.strict { Dialect::OpenAiChatStrict } else { Dialect::OpenAiChat }
    }

    /// The request body: <https://platform.openai.com/docs/api-reference/chat/create>.
    fn body(&self, request: &ModelRequest<'_>, stream: bool) -> Result<Value, ModelError> {
        let dialect = self.dialect();
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(instructions) = request.instructions {
            messages.push(json!({"role": "system", "content": instructions}));
        }
        for message in request.messages {
            match message {
                Message::User { text } => messages.push(json!({"role": "user", "content": text})),
                Message::Assistant { text, calls } => {
                    let content = if text.is_empty() { Value::Null } else { Value::String(text.clone()) };
                    let mut assistant = json!({"role": "assistant", "content": content});
                    if !calls.is_empty() {
                        assistant["tool_calls"] = calls
                            .iter()
                            .map(|call| {
                                json!({"id": call.id, "type": "function",
                                       "function": {"name": call.name, "arguments": call.arguments}})
                            })
                            .collect();
                    }
                    messages.push(assistant);
                }
                Message::Tool { results } => {
                    // A part the dialect cannot send is refused, naming the
                    // dialect, the tool and the part.
                    let formatted = dialect.format_results(results);
                    messages.extend(formatted.map_err(|error| ModelError::Config(error.to_string()))?)
                }
            }
        }
        let mut body = json!({"model": self.connection.model, "messages": messages});
        let settings = request.settings;
        for (field, value) in super::tool_fields(dialect, request)? {
            body[field.as_str()] = value;
        }
        // `max_tokens` is deprecated for Chat Completions in favour of
        // `max_completion_tokens` (which also bounds reasoning tokens, and
        // is the only one o-series and later models accept):
        // <https://platform.openai.com/docs/api-reference/chat/create#chat-create-max_completion_tokens>.
        if let Some(tokens) = settings.max_tokens {
            body["max_completion_tokens"] = json!(tokens);
        }
        if let Some(temperature) = settings.temperature {
            body["temperature"] = json!(temperature);
        }
        if stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        Ok(body)
    }

    /// The response: text from `choices[0].message.content` (or its
    /// `refusal`), calls through the dialect, the usage.
    fn read(&self, body: &Value) -> Result<ModelResponse, ModelError> {
        let Some(message) = body.pointer("/choices/0/message") else {
            return Err(malformed(body, "no `choices[0].message`"));
        };
        let text = [message.get("content"), message.get("refusal")]
            .into_iter()
            .flatten()
            .find_map(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let calls = self.dialect().parse_calls(body).map_err(|error| malformed(body, error))?;
        Ok(ModelResponse {
            text,
            calls,
            usage: usage(body.get("usage"), "prompt_tokens", "completion_tokens"),
        })
    }
}

impl std::fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.connection.debug("OpenAiChat", f)
    }
}

impl Model for OpenAiChat {
    fn provider(&self) -> &str {
        super::openai_common::PROVIDER
    }

    fn model(&self) -> &str {
        &self.connection.model
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let body = self.body(&request, false)?;
            let headers = self.connection.headers()?;
            let url = self.connection.url("chat/completions");
            let timeout = request.settings.request_timeout;
            let answer = self.connection.endpoint.post_json(&url, headers, &body, timeout).await?;
            self.read(&answer)
        })
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let opening = Box::pin(async move {
            let body = self.body(&request, true)?;
            let headers = self.connection.headers()?;
            let url = self.connection.url("chat/completions");
            let timeout = request.settings.request_timeout;
            self.connection.endpoint.post_events(&url, headers, &body, timeout).await
        });
        model_stream(opening, ChatDecoder::default())
    }
}

/// The pieces of one streamed response so far.
#[derive(Default)]
struct ChatDecoder {
    text: String,
    calls: CallAssembler,
    usage: Usage,
    finished: bool,
}

impl Decode for ChatDecoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            if !self.finished {
                return Err(stream_ended("`data: [DONE]` came before a `finish_reason`"));
            }
            let mut calls = std::mem::take(&mut self.calls).finish();
            // A compatible server that leaves an id out still gets one,
            // so that its result can answer it.
            for (index, call) in calls.iter_mut().enumerate() {
                if call.id.is_empty() {
                    call.id = format!("call_{index}").into();
                }
            }
            return Ok(Some(ModelResponse {
                text: std::mem::take(&mut self.text),
                calls,
                usage: self.usage,
            }));
        }
        if data.is_empty() {
            return Ok(None);
        }
        let chunk = event_json(event)?;
        if let Some(error) = chunk.get("error") {
            return Err(stream_ended(format!("the server sent an error: {}", error_text(Some(error)))));
        }
        if let Some(counts) = chunk.get("usage").filter(|counts| counts.is_object()) {
            self.usage = usage(Some(counts), "prompt_tokens", "completion_tokens");
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(None);
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|text| !text.is_empty()) {
                self.text.push_str(text);
                out.push(ModelEvent::TextDelta(text.to_owned()));
            }
            for (position, call) in
                delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate()
            {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .and_then(|index| usize::try_from(index).ok())
                    .unwrap_or(position);
                let id = call.get("id").and_then(Value::as_str);
                let name = call.pointer("/function/name").and_then(Value::as_str);
                let arguments =
                    call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or_default();
                self.calls.push(index, id, name, arguments);
                out.push(ModelEvent::CallDelta {
                    index,
                    id: id.map(str::to_owned),
                    name: name.map(str::to_owned),
                    arguments: arguments.to_owned(),
                });
            }
        }
        if choice.get("finish_reason").is_some_and(|reason| !reason.is_null()) {
            self.finished = true;
        }
        Ok(None)
    }

    fn missing(&self) -> &'static str {
        if self.finished { "no `data: [DONE]`" } else { "no `finish_reason` and no `data: [DONE]`" }
    }
}
