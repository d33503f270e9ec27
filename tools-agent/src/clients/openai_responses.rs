//! OpenAI Responses, `POST {base}/responses`.
//!
//! - The request and the response:
//!   <https://platform.openai.com/docs/api-reference/responses/create>
//!   (`instructions`, `input` items: messages, `function_call` and
//!   `function_call_output`; `tools` with the native `web_search`,
//!   `tool_choice`, `parallel_tool_calls`, `max_output_tokens`,
//!   `temperature`, `store`; the `output` items: `message` with
//!   `output_text` parts, `function_call`; `usage.input_tokens`,
//!   `usage.output_tokens`). `tool_choice` and `parallel_tool_calls` come
//!   from `Dialect::tool_choice`, which cites their pages.
//! - The stream: <https://platform.openai.com/docs/api-reference/responses-streaming>
//!   (`response.output_text.delta`, `response.output_item.added`,
//!   `response.function_call_arguments.delta` keyed by `output_index`,
//!   `response.completed` with the whole response, `response.incomplete`,
//!   `response.failed`, `error`).
//! - Tool calls and their results: the `OpenAiResponses` dialect of
//!   `tools-provider` (<https://platform.openai.com/docs/guides/function-calling>).
//!
//! Requests say `store: false`: the transcript is the state, sent whole
//! each turn, and nothing is kept on OpenAI's side.

use eventsource_stream::Event;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tools_provider::Dialect;

use super::openai_common::{
    Connection, Decode, error_text, event_json, malformed, model_stream, stream_ended, usage,
};
use crate::model::{ModelEvent, ModelRequest, ModelResponse, ModelStream};
use crate::{ApiKey, Message, Model, ModelError, RetryPolicy};

/// A [`Model`] over OpenAI's Responses API.
///
/// ```
/// use tools_agent::{ApiKey, Model, OpenAiResponses};
///
/// // `OpenAiResponses::new` reads OPENAI_API_KEY and OPENAI_BASE_URL.
/// let model = OpenAiResponses::from_values("gpt-4.1-mini", Some(ApiKey::new("sk-...")), None);
/// assert_eq!((model.provider(), model.model()), ("openai", "gpt-4.1-mini"));
/// assert!(!format!("{model:?}").contains("sk-"));
/// ```
#[derive(Clone)]
pub struct OpenAiResponses {
    connection: Connection,
}

impl OpenAiResponses {
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

    /// Send to this base URL (`.../v1`); `responses` is appended.
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.connection.set_base_url(&url.into());
        self
    }

    /// Send the function tools in strict mode
    /// (`Dialect::OpenAiResponsesStrict`).
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
        if self.connection.strict { Dialect::OpenAiResponsesStrict } else { Dialect::OpenAiResponses }
    }

    /// The request body: <https://platform.openai.com/docs/api-reference/responses/create>.
    fn body(&self, request: &ModelRequest<'_>, stream: bool) -> Result<Value, ModelError> {
        let dialect = self.dialect();
        let mut input = Vec::with_capacity(request.messages.len());
        for message in request.messages {
            match message {
                Message::User { text } => {
                    input.push(json!({"type": "message", "role": "user", "content": text}));
                }
                Message::Assistant { text, calls } => {
                    if !text.is_empty() {
                        input.push(json!({"type": "message", "role": "assistant", "content": text}));
                    }
                    input.extend(calls.iter().map(|call| {
                        json!({"type": "function_call", "call_id": call.id, "name": call.name,
                               "arguments": call.arguments})
                    }));
                }
                // A part the dialect cannot send is refused, naming the
                // dialect, the tool and the part.
                Message::Tool { results } => input.extend(
                    dialect.format_results(results).map_err(|error| ModelError::Config(error.to_string()))?,
                ),
            }
        }
        let mut body = json!({"model": self.connection.model, "input": input, "store": false});
        if let Some(instructions) = request.instructions {
            body["instructions"] = json!(instructions);
        }
        let settings = request.settings;
        for (field, value) in super::tool_fields(dialect, request)? {
            body[field.as_str()] = value;
        }
        if let Some(tokens) = settings.max_tokens {
            body["max_output_tokens"] = json!(tokens);
        }
        if let Some(temperature) = settings.temperature {
            body["temperature"] = json!(temperature);
        }
        if stream {
            body["stream"] = json!(true);
        }
        Ok(body)
    }
}

/// A response object (the plain answer, or the one `response.completed`
/// carries): the `output_text` (and `refusal`) parts of its `message`
/// items, its `function_call` items, its usage.
fn read(dialect: Dialect, body: &Value) -> Result<ModelResponse, ModelError> {
    let Some(output) = body.get("output").and_then(Value::as_array) else {
        return Err(malformed(body, "no `output` array"));
    };
    let mut text = String::new();
    let messages = output.iter().filter(|item| item.get("type").and_then(Value::as_str) == Some("message"));
    for part in messages.filter_map(|item| item.get("content").and_then(Value::as_array)).flatten() {
        let piece = match part.get("type").and_then(Value::as_str) {
            Some("output_text") => part.get("text"),
            Some("refusal") => part.get("refusal"),
            _ => None,
        };
        text.push_str(piece.and_then(Value::as_str).unwrap_or_default());
    }
    let calls = dialect.parse_calls(body).map_err(|error| malformed(body, error))?;
    Ok(ModelResponse { text, calls, usage: usage(body.get("usage"), "input_tokens", "output_tokens") })
}

impl std::fmt::Debug for OpenAiResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.connection.debug("OpenAiResponses", f)
    }
}

impl Model for OpenAiResponses {
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
            let url = self.connection.url("responses");
            let timeout = request.settings.request_timeout;
            let answer = self.connection.endpoint.post_json(&url, headers, &body, timeout).await?;
            read(self.dialect(), &answer)
        })
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let opening = Box::pin(async move {
            let body = self.body(&request, true)?;
            let headers = self.connection.headers()?;
            let url = self.connection.url("responses");
            let timeout = request.settings.request_timeout;
            self.connection.endpoint.post_events(&url, headers, &body, timeout).await
        });
        model_stream(opening, ResponsesDecoder { dialect: self.dialect(), calls: Vec::new() })
    }
}

/// What a streamed response said so far: the output indexes of its
/// function calls, whose position is the call's index in the turn.
struct ResponsesDecoder {
    dialect: Dialect,
    calls: Vec<u64>,
}

impl Decode for ResponsesDecoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError> {
        if event.data.trim().is_empty() {
            return Ok(None);
        }
        let data = event_json(event)?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(event.event.as_str());
        let text = |name: &str| data.get(name).and_then(Value::as_str);
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(delta) = text("delta").filter(|delta| !delta.is_empty()) {
                    out.push(ModelEvent::TextDelta(delta.to_owned()));
                }
            }
            "response.output_item.added" => {
                let Some(item) = data.get("item") else {
                    return Err(malformed(&data, "`response.output_item.added` without its `item`"));
                };
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    let output_index = data.get("output_index").and_then(Value::as_u64).unwrap_or(u64::MAX);
                    let field = |name: &str| item.get(name).and_then(Value::as_str);
                    self.calls.push(output_index);
                    out.push(ModelEvent::CallDelta {
                        index: self.calls.len() - 1,
                        id: field("call_id").map(str::to_owned),
                        name: field("name").map(str::to_owned),
                        arguments: field("arguments").unwrap_or_default().to_owned(),
                    });
                }
            }
            "response.function_call_arguments.delta" => {
                let output_index = data.get("output_index").and_then(Value::as_u64);
                let position = self.calls.iter().position(|index| Some(*index) == output_index);
                // Arguments of an item that is not a function call (a custom
                // tool's input) are not ours to show.
                if let (Some(index), Some(delta)) = (position, text("delta")) {
                    out.push(ModelEvent::CallDelta {
                        index,
                        id: None,
                        name: None,
                        arguments: delta.to_owned(),
                    });
                }
            }
            // The whole response: what it holds is authoritative. An
            // incomplete one (cut by `max_output_tokens`) still ends the turn.
            "response.completed" | "response.incomplete" => {
                let Some(response) = data.get("response") else {
                    return Err(malformed(&data, format!("`{kind}` without its `response`")));
                };
                return read(self.dialect, response).map(Some);
            }
            "response.failed" => {
                let error = data.pointer("/response/error");
                return Err(stream_ended(format!("the response failed: {}", error_text(error))));
            }
            "error" => {
                let error = data.get("error").filter(|error| error.is_object()).unwrap_or(&data);
                return Err(stream_ended(format!("the server sent an error: {}", error_text(Some(error)))));
            }
            _ => {}
        }
        Ok(None)
    }

    fn missing(&self) -> &'static str {
        "no `response.completed` event"
    }
}
