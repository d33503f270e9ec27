//! Google's Gemini API: `POST {base}/v1beta/models/{model}:generateContent`,
//! and `:streamGenerateContent?alt=sse` for a stream.
//!
//! The shapes this client relies on, from Google's documentation:
//!
//! - The request (`contents` of `{role: "user" | "model", parts}`,
//!   `systemInstruction`, `tools`, `toolConfig`, `generationConfig` with
//!   `maxOutputTokens` and `temperature`), the response
//!   (`candidates[0].content.parts`, `finishReason`, `usageMetadata` with
//!   `promptTokenCount`, `candidatesTokenCount`, `thoughtsTokenCount`), and
//!   the stream, whose every event is a whole `GenerateContentResponse`:
//!   <https://ai.google.dev/api/generate-content>.
//! - The key in the `x-goog-api-key` header: <https://ai.google.dev/api>.
//! - `functionCall` parts (`name`, `args`, and an `id` on some models),
//!   answered by `functionResponse` parts (`name`, `response`, the `id` if
//!   there was one) in a user content, in call order:
//!   <https://ai.google.dev/gemini-api/docs/function-calling>.
//!   `toolConfig.functionCallingConfig` (`mode` `AUTO`, `ANY`, `NONE` or
//!   `VALIDATED`, `allowedFunctionNames`) comes from `Dialect::tool_choice`,
//!   which cites its pages; Gemini has no switch for parallel calls, so
//!   `parallel_tool_calls: Some(false)` fails the request before it is sent
//!   (but with `ToolChoice::None`, which makes no calls).
//! - `thoughtSignature`: a model that thinks signs its function call parts,
//!   and the signature must be sent back with the part in the next turns:
//!   <https://ai.google.dev/gemini-api/docs/thought-signatures>. The
//!   transcript has no field for it, so the client keeps the signatures it
//!   received, by call, and puts them back on the calls it sends again.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use futures::{StreamExt, stream};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use tools_core::ToolCall;
use tools_provider::Dialect;
use tools_provider::gemini::SYNTHETIC_ID_PREFIX;

use crate::http::{Endpoint, Events, excerpt};
use crate::model::{ModelEvent, ModelRequest, ModelResponse, ModelStream, Usage};
use crate::{ApiKey, Message, Model, ModelError, RetryPolicy};

const PROVIDER: &str = "gemini";
const KEY_VARIABLE: &str = "GEMINI_API_KEY";
const BASE_URL_VARIABLE: &str = "GEMINI_BASE_URL";
const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";

/// The thought signatures received, by call (`id`, `name`, `arguments`).
type Signatures = Arc<Mutex<HashMap<String, String>>>;

/// A client of the Gemini API (Google AI Studio keys).
///
/// ```no_run
/// use tools_agent::{Agent, Gemini};
/// use tools_core::Toolset;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // The key from GEMINI_API_KEY, the base URL from GEMINI_BASE_URL if set.
/// let model = Gemini::new("gemini-2.5-flash");
/// let answer = Agent::new(model, Toolset::new()).run("Hello").await?.answer;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Gemini {
    model: String,
    key: Option<ApiKey>,
    base_url: String,
    endpoint: Endpoint,
    signatures: Signatures,
}

impl Gemini {
    /// A client of this model, its key read from `GEMINI_API_KEY` and its
    /// base URL from `GEMINI_BASE_URL` (else
    /// `https://generativelanguage.googleapis.com`). Without a key,
    /// requests fail with [`ModelError::Config`] until
    /// [`Self::with_api_key`] gives one.
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
            endpoint: Endpoint::new(PROVIDER, KEY_VARIABLE),
            signatures: Signatures::default(),
        }
    }

    /// The same client with this key.
    pub fn with_api_key(mut self, key: ApiKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The same client sending to this base URL (`/v1beta/models/...` is added).
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
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

    fn url(&self, stream: bool) -> String {
        let method = if stream { "streamGenerateContent?alt=sse" } else { "generateContent" };
        format!("{}/v1beta/models/{}:{method}", self.base_url, self.model)
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let key = self.key.as_ref().ok_or_else(|| {
            ModelError::Config(format!("no Gemini API key: set {KEY_VARIABLE} or call with_api_key"))
        })?;
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-goog-api-key"), key.header("")?);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(headers)
    }

    /// The request body, as <https://ai.google.dev/api/generate-content> shows it.
    fn body(&self, request: &ModelRequest<'_>) -> Result<Value, ModelError> {
        let settings = request.settings;
        let mut body = Map::new();
        if let Some(system) = request.instructions.filter(|system| !system.is_empty()) {
            body.insert("systemInstruction".into(), json!({"parts": [{"text": system}]}));
        }
        body.insert("contents".into(), Value::Array(self.contents(request.messages)?));
        // `tools`, and `toolConfig` for the function declarations.
        body.extend(super::tool_fields(Dialect::Gemini, request)?);
        let mut generation = Map::new();
        if let Some(max_tokens) = settings.max_tokens {
            generation.insert("maxOutputTokens".into(), json!(max_tokens));
        }
        if let Some(temperature) = settings.temperature {
            generation.insert("temperature".into(), json!(temperature));
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
        Ok(Value::Object(body))
    }

    /// The transcript as `contents`.
    fn contents(&self, transcript: &[Message]) -> Result<Vec<Value>, ModelError> {
        let signatures = self.signatures.lock().map(|map| map.clone()).unwrap_or_default();
        let mut out = Vec::new();
        for message in transcript {
            match message {
                Message::User { text } => out.push(json!({"role": "user", "parts": [{"text": text}]})),
                Message::Assistant { text, calls } => {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({"text": text}));
                    }
                    for call in calls {
                        let mut function_call = json!({"name": call.name, "args": args(&call.arguments)});
                        // A synthetic id is the dialect's own, made up for a
                        // call Gemini sent without one: it is not sent back.
                        if !call.id.starts_with(SYNTHETIC_ID_PREFIX) {
                            function_call["id"] = Value::from(call.id.as_str());
                        }
                        let mut part = json!({"functionCall": function_call});
                        if let Some(signature) = signatures.get(&signature_key(call)) {
                            part["thoughtSignature"] = Value::String(signature.clone());
                        }
                        parts.push(part);
                    }
                    // Gemini refuses a content without parts.
                    if !parts.is_empty() {
                        out.push(json!({"role": "model", "parts": parts}));
                    }
                }
                Message::Tool { results } => {
                    out.extend(
                        Dialect::Gemini
                            .format_results(results)
                            .map_err(|error| ModelError::Config(error.to_string()))?,
                    );
                }
            }
        }
        Ok(out)
    }

    /// Keep the thought signatures of these calls, from the parts they came in.
    fn remember(&self, signed: Vec<(ToolCall, String)>) {
        if signed.is_empty() {
            return;
        }
        if let Ok(mut map) = self.signatures.lock() {
            for (call, signature) in signed {
                map.insert(signature_key(&call), signature);
            }
        }
    }
}

impl std::fmt::Debug for Gemini {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gemini")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("key", &self.key.as_ref().map(|_| "***"))
            .field("retry", &self.endpoint.retry)
            .finish_non_exhaustive()
    }
}

impl Model for Gemini {
    fn provider(&self) -> &str {
        PROVIDER
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let body = self.body(&request)?;
            let headers = self.headers()?;
            let value = self
                .endpoint
                .post_json(&self.url(false), headers, &body, request.settings.request_timeout)
                .await
                .map_err(key_refused)?;
            let chunk = read_chunk(&value)?;
            if chunk.finish.is_none() && chunk.parts.is_empty() {
                return Err(malformed(&value, "no candidate content and no finishReason"));
            }
            let calls = number_calls(chunk.calls, 0);
            self.remember(signed(&calls, &chunk.signatures));
            Ok(ModelResponse { text: chunk.text, calls, usage: chunk.usage.unwrap_or_default() })
        })
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let opened = async move {
            let body = self.body(&request)?;
            let headers = self.headers()?;
            self.endpoint
                .post_events(&self.url(true), headers, &body, request.settings.request_timeout)
                .await
                .map_err(key_refused)
        };
        let signatures = self.signatures.clone();
        stream::once(opened)
            .flat_map(move |opened| match opened {
                Ok(events) => decode(events, signatures.clone()).boxed(),
                Err(error) => stream::iter([Err(error)]).boxed(),
            })
            .boxed()
    }
}

/// Gemini refuses a bad key with HTTP 400 `INVALID_ARGUMENT`, "API key not
/// valid" (reason `API_KEY_INVALID`), not 401:
/// <https://ai.google.dev/gemini-api/docs/troubleshooting>. It is the same
/// mistake as a 401, so it is told the same way, naming the variable.
fn key_refused(error: ModelError) -> ModelError {
    match error {
        ModelError::Rejected { provider, status: 400, message } if message.contains("API key not valid") => {
            ModelError::Unauthorized { provider, status: 400, variable: KEY_VARIABLE }
        }
        other => other,
    }
}

fn signature_key(call: &ToolCall) -> String {
    format!("{}\u{0}{}\u{0}{}", call.id, call.name, call.arguments)
}

/// A call's arguments as the `args` object a `functionCall` part needs.
///
/// Arguments that are not a JSON object (a model that wrote broken JSON, a
/// transcript from another provider) are sent as `{}`: Gemini refuses
/// `args` that are not an object (a `Struct`), and the tool has already
/// answered the call with an invalid-arguments result, which is what tells
/// the model to fix it. Failing the request would end a run the model can
/// still repair.
fn args(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => Value::Object(Map::new()),
    }
}

/// One `GenerateContentResponse`, read.
struct Chunk {
    text: String,
    calls: Vec<ToolCall>,
    /// The thought signature of each call that had one, by its position.
    signatures: Vec<(usize, String)>,
    parts: Vec<Value>,
    finish: Option<String>,
    usage: Option<Usage>,
}

fn read_chunk(value: &Value) -> Result<Chunk, ModelError> {
    if let Some(error) = value.get("error") {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("no message");
        let status = error.get("code").and_then(Value::as_u64).and_then(|code| u16::try_from(code).ok());
        return Err(ModelError::Rejected {
            provider: PROVIDER.into(),
            status: status.unwrap_or(200),
            message: message.to_owned(),
        });
    }
    let candidate = value.pointer("/candidates/0");
    if candidate.is_none()
        && let Some(reason) = value.pointer("/promptFeedback/blockReason").and_then(Value::as_str)
    {
        return Err(ModelError::Rejected {
            provider: PROVIDER.into(),
            status: 200,
            message: format!("the prompt was blocked ({reason})"),
        });
    }
    let finish = candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str).map(str::to_owned);
    let parts = candidate
        .and_then(|c| c.pointer("/content/parts"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text: String = parts
        .iter()
        // Thought summaries are not the answer.
        .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    let calls = Dialect::Gemini
        .parse_calls(&Value::Array(parts.clone()))
        .map_err(|error| malformed(value, &error.to_string()))?;
    let signatures = parts
        .iter()
        .filter(|part| part.get("functionCall").is_some())
        .enumerate()
        .filter_map(|(index, part)| {
            part.get("thoughtSignature")
                .and_then(Value::as_str)
                .map(|signature| (index, signature.to_owned()))
        })
        .collect();
    let usage = value.get("usageMetadata").map(|usage| {
        let tokens = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
        // Thinking tokens are billed as output.
        Usage {
            input_tokens: tokens("promptTokenCount"),
            output_tokens: tokens("candidatesTokenCount") + tokens("thoughtsTokenCount"),
        }
    });
    Ok(Chunk { text, calls, signatures, parts, finish, usage })
}

/// The synthetic ids of calls that came without one, numbered from `first`
/// across the chunks of a stream, so that no two calls of a turn share one.
fn number_calls(calls: Vec<ToolCall>, first: usize) -> Vec<ToolCall> {
    calls
        .into_iter()
        .enumerate()
        .map(|(offset, mut call)| {
            if call.id.starts_with(SYNTHETIC_ID_PREFIX) {
                call.id = format!("{SYNTHETIC_ID_PREFIX}{}-{}", first + offset, call.name).into();
            }
            call
        })
        .collect()
}

fn signed(calls: &[ToolCall], signatures: &[(usize, String)]) -> Vec<(ToolCall, String)> {
    signatures
        .iter()
        .filter_map(|(index, signature)| calls.get(*index).map(|call| (call.clone(), signature.clone())))
        .collect()
}

fn malformed(value: &Value, problem: &str) -> ModelError {
    ModelError::Malformed {
        provider: PROVIDER.into(),
        status: 200,
        problem: problem.to_owned(),
        excerpt: excerpt(&value.to_string()),
    }
}

/// What a stream has said so far.
struct Decoder {
    events: Events,
    signatures: Signatures,
    pending: VecDeque<Result<ModelEvent, ModelError>>,
    text: String,
    calls: Vec<ToolCall>,
    usage: Usage,
    finished: bool,
    over: bool,
}

fn decode(
    events: Events,
    signatures: Signatures,
) -> impl futures::Stream<Item = Result<ModelEvent, ModelError>> + Send {
    let decoder = Decoder {
        events,
        signatures,
        pending: VecDeque::new(),
        text: String::new(),
        calls: Vec::new(),
        usage: Usage::default(),
        finished: false,
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
                Some(Ok(event)) => decoder.chunk(&event.data),
                Some(Err(error)) => decoder.fail(error),
                None if decoder.finished => decoder.done(),
                None => decoder.fail(ModelError::StreamEnded {
                    provider: PROVIDER.into(),
                    message: "the stream closed before a chunk with a finishReason".into(),
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

    fn chunk(&mut self, data: &str) {
        let value: Value = match serde_json::from_str(data) {
            Ok(value) => value,
            Err(error) => {
                return self.fail(ModelError::Malformed {
                    provider: PROVIDER.into(),
                    status: 200,
                    problem: error.to_string(),
                    excerpt: excerpt(data),
                });
            }
        };
        let chunk = match read_chunk(&value) {
            Ok(chunk) => chunk,
            Err(error) => return self.fail(error),
        };
        if !chunk.text.is_empty() {
            self.text.push_str(&chunk.text);
            self.pending.push_back(Ok(ModelEvent::TextDelta(chunk.text)));
        }
        // A function call arrives whole, in one chunk.
        let first = self.calls.len();
        let calls = number_calls(chunk.calls, first);
        let signed = signed(&calls, &chunk.signatures);
        if !signed.is_empty()
            && let Ok(mut map) = self.signatures.lock()
        {
            for (call, signature) in signed {
                map.insert(signature_key(&call), signature);
            }
        }
        for (offset, call) in calls.into_iter().enumerate() {
            self.pending.push_back(Ok(ModelEvent::CallDelta {
                index: first + offset,
                id: Some(call.id.to_string()),
                name: Some(call.name.to_string()),
                arguments: call.arguments.clone(),
            }));
            self.calls.push(call);
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage;
        }
        // Usage may come in a chunk after the one that finishes, so the
        // response is given when the stream closes.
        if chunk.finish.is_some() {
            self.finished = true;
        }
    }

    fn done(&mut self) {
        let response = ModelResponse {
            text: std::mem::take(&mut self.text),
            calls: std::mem::take(&mut self.calls),
            usage: self.usage,
        };
        self.pending.push_back(Ok(ModelEvent::Done(response)));
        self.over = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_and_base_url_come_from_the_variables_values() {
        let client =
            Gemini::from_values("gemini-x".into(), Some("AIza-x".into()), Some("http://proxy/".into()));
        assert_eq!(client.key, Some(ApiKey::new("AIza-x")));
        assert_eq!(client.url(false), "http://proxy/v1beta/models/gemini-x:generateContent");
        assert_eq!(client.url(true), "http://proxy/v1beta/models/gemini-x:streamGenerateContent?alt=sse");
        let client = Gemini::from_values("m".into(), None, Some(String::new()));
        assert_eq!(client.key, None);
        assert!(client.url(false).starts_with("https://generativelanguage.googleapis.com/v1beta/"));
        let error = client.headers().unwrap_err();
        assert!(error.to_string().contains(KEY_VARIABLE), "{error}");
        assert!(
            !format!("{:?}", Gemini::from_values("m".into(), Some("AIza-x".into()), None)).contains("AIza-x")
        );
    }

    #[test]
    fn arguments_that_are_not_an_object_are_sent_as_empty_args() {
        assert_eq!(args(r#"{"city":"Oslo"}"#), json!({"city": "Oslo"}));
        assert_eq!(args("not json"), json!({}));
    }

    #[test]
    fn thought_signatures_go_back_on_their_calls() {
        let client = Gemini::from_values("m".into(), Some("k".into()), None);
        let value = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "a", "args": {}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "b", "args": {}}}]}, "finishReason": "STOP"}]});
        let chunk = read_chunk(&value).unwrap();
        let calls = number_calls(chunk.calls, 0);
        client.remember(signed(&calls, &chunk.signatures));
        let contents = client.contents(&[Message::Assistant { text: String::new(), calls }]).unwrap();
        assert_eq!(contents[0]["parts"][0]["thoughtSignature"], "c2ln");
        assert!(contents[0]["parts"][1].get("thoughtSignature").is_none());
    }
}
