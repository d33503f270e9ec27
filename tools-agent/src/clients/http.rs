//! What every client does over HTTP: keys that never show, retries with
//! backoff that honours `Retry-After`, the provider's status codes turned
//! into [`ModelError`]s, and server-sent events read as they arrive, each
//! provider's reader ([`Decode`]) turning them into [`ModelEvent`]s.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::future::BoxFuture;
use futures::stream::{self, BoxStream};
use futures::{StreamExt, TryStreamExt};
use reqwest::header::{HeaderMap, HeaderValue, InvalidHeaderValue, RETRY_AFTER};
use serde_json::Value;

use crate::ModelError;
use crate::model::{ModelEvent, ModelResponse, ModelStream};

/// An API key: sent in a header, never shown in `Debug` output, errors or logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key given as it is.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key in this environment variable, if it is set and not blank.
    pub fn from_env(variable: &str) -> Option<Self> {
        std::env::var(variable).ok().filter(|key| !key.trim().is_empty()).map(Self)
    }

    /// The key as a header value, marked sensitive so that reqwest and
    /// tracing never print it.
    pub(crate) fn header(&self, prefix: &str) -> Result<HeaderValue, InvalidHeaderValue> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", self.0))?;
        value.set_sensitive(true);
        Ok(value)
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// How often, and how long, a request that met a rate limit, an overloaded
/// server or a server error is sent again. ("Retry" is the model's word: a
/// tool asks the model to retry with [`ToolError::retry`](toolcall_core::ToolError::retry).)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResendPolicy {
    /// Requests in all, the first included (at least one).
    pub max_attempts: u32,
    /// The wait before the first resend; it doubles after each.
    pub initial_backoff: Duration,
    /// The longest wait between two attempts, `Retry-After` included.
    pub max_backoff: Duration,
    /// The most time all attempts may take together.
    pub max_total: Duration,
}

impl Default for ResendPolicy {
    /// 4 attempts, from 500 ms doubling up to 8 s, 60 s in all.
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_total: Duration::from_secs(60),
        }
    }
}

impl ResendPolicy {
    /// Never resend.
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// The same policy with another number of attempts.
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The same policy with another first wait.
    pub fn with_initial_backoff(mut self, wait: Duration) -> Self {
        self.initial_backoff = wait;
        self
    }

    /// The same policy with another bound on all attempts together.
    pub fn with_max_total(mut self, total: Duration) -> Self {
        self.max_total = total;
        self
    }
}

/// The longest a plain (non-streamed) request may take by default, resends
/// aside: 10 minutes. A plain request sends nothing until the whole answer
/// is written, and a reasoning model can think for minutes before that;
/// it is the default of the providers' own SDKs (OpenAI's Python SDK:
/// `DEFAULT_TIMEOUT = httpx.Timeout(timeout=600.0, connect=5.0)`;
/// Anthropic's: 10 minutes, past which it asks for streaming), so a
/// request that passes through them passes here.
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// The longest a stream may stay silent by default: 5 minutes, from the
/// request to its answer's headers, and from one chunk of the stream to
/// the next. A stream has no total bound by default (a long generation
/// streams for many minutes), so this is what ends one whose connection
/// hung. The providers send something every few seconds while they
/// generate (Anthropic also `ping` events), but a reasoning model may send
/// nothing while it thinks (Chat Completions streams no reasoning): 5
/// minutes is half the plain request's bound, long enough for that, and a
/// hung stream still ends in minutes rather than never.
pub(crate) const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// One provider's HTTP side: its name, the variable its key comes from,
/// the client, the resend policy and the timeouts.
#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    pub(crate) provider: &'static str,
    pub(crate) key_variable: &'static str,
    pub(crate) client: reqwest::Client,
    pub(crate) resend: ResendPolicy,
    /// A plain request's bound, when its settings give none.
    pub(crate) request_timeout: Option<Duration>,
    /// A stream's longest silence.
    pub(crate) stream_idle_timeout: Option<Duration>,
}

/// A server-sent event stream, each event's data as text.
pub(crate) type Events = BoxStream<'static, Result<Event, ModelError>>;

impl Endpoint {
    pub(crate) fn new(provider: &'static str, key_variable: &'static str) -> Self {
        Self {
            provider,
            key_variable,
            client: reqwest::Client::new(),
            resend: ResendPolicy::default(),
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            stream_idle_timeout: Some(DEFAULT_STREAM_IDLE_TIMEOUT),
        }
    }

    /// POST `body` and read the JSON answer, within `timeout` (the
    /// request's own, else the endpoint's).
    pub(crate) async fn post_json(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
        timeout: Option<Duration>,
    ) -> Result<Value, ModelError> {
        let timeout = timeout.or(self.request_timeout);
        let response = self.send(url, headers, body, timeout, None).await?;
        let status = response.status().as_u16();
        // The bytes as they came: the providers send UTF-8 JSON, and
        // decoding to text first would copy the body once more.
        let bytes = response.bytes().await.map_err(|error| self.transport(error, timeout))?;
        serde_json::from_slice(&bytes).map_err(|error| ModelError::Malformed {
            provider: self.provider.into(),
            status,
            problem: error.to_string(),
            excerpt: excerpt(&String::from_utf8_lossy(&bytes)),
        })
    }

    /// POST `body` and read the answer as server-sent events. Retries
    /// happen before the first byte of the stream, never inside it. The
    /// stream is bound by `timeout` in all (the request's own; none by
    /// default) and by the endpoint's idle timeout between its chunks, so
    /// that a connection that hangs ends with [`ModelError::Timeout`].
    pub(crate) async fn post_events(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
        timeout: Option<Duration>,
    ) -> Result<Events, ModelError> {
        let idle = self.stream_idle_timeout;
        let response = self.send(url, headers, body, timeout, idle).await?;
        let provider = self.provider;
        // Bytes rather than events are timed, so that a keep-alive comment
        // (`: ping`), which makes no event, shows the connection is alive.
        let chunks = stream::unfold(Some(response.bytes_stream()), move |chunks| async move {
            let mut chunks = chunks?;
            let next = match idle {
                Some(idle) => match tokio::time::timeout(idle, chunks.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        let silent = ModelError::Timeout { provider: provider.into(), timeout: idle };
                        return Some((Err(silent), None));
                    }
                },
                None => chunks.next().await,
            };
            let chunk = next?.map_err(|error| match (error.is_timeout(), timeout) {
                (true, Some(timeout)) => ModelError::Timeout { provider: provider.into(), timeout },
                _ => ModelError::StreamEnded { provider: provider.into(), message: error.to_string() },
            });
            Some((chunk, Some(chunks)))
        });
        let events = chunks.eventsource().map_err(move |error| match error {
            EventStreamError::Transport(error) => error,
            other => ModelError::StreamEnded { provider: provider.into(), message: other.to_string() },
        });
        Ok(events.boxed())
    }

    /// Send until a success, a status that retrying cannot fix, or the
    /// policy's end.
    async fn send(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
        timeout: Option<Duration>,
        headers_within: Option<Duration>,
    ) -> Result<reqwest::Response, ModelError> {
        let started = Instant::now();
        let mut backoff = self.resend.initial_backoff;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = self.client.post(url).headers(headers.clone()).json(body);
            if let Some(timeout) = timeout {
                request = request.timeout(timeout);
            }
            let sent = match headers_within {
                Some(bound) => tokio::time::timeout(bound, request.send()).await.map_err(|_| bound),
                None => Ok(request.send().await),
            };
            // No answer's headers within the bound: a timeout, kept as
            // the request's own timeout is.
            let sent =
                sent.map_err(|bound| ModelError::Timeout { provider: self.provider.into(), timeout: bound })?;
            let (retryable, wait_hint) = match sent {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let hint = retry_after(response.headers());
                    let text = response.text().await.unwrap_or_default();
                    let error = self.status_error(status, &text, attempt);
                    if !resendable(status, &text) {
                        return Err(error);
                    }
                    (error, hint)
                }
                // A connection that failed before any answer may be tried
                // again; a timeout is not: it is the bound on the request
                // (the client's default, or the settings'), and a resend
                // would wait as long again (the resend policy's 60 s in
                // all are spent by then anyway). It stays transient
                // (`ModelError::is_transient`): a fallback model may answer.
                Err(error) if error.is_connect() => (self.transport(error, timeout), None),
                Err(error) => return Err(self.transport(error, timeout)),
            };
            let wait = wait_hint.unwrap_or(backoff).min(self.resend.max_backoff);
            if attempt >= self.resend.max_attempts || started.elapsed() + wait > self.resend.max_total {
                return Err(retryable);
            }
            tracing::warn!(
                provider = self.provider,
                attempt,
                wait_ms = wait.as_millis() as u64,
                "resending the model request"
            );
            tokio::time::sleep(wait).await;
            backoff = backoff.saturating_mul(2);
        }
    }

    fn status_error(&self, status: u16, body: &str, attempts: u32) -> ModelError {
        let provider = self.provider.to_owned();
        match status {
            401 | 403 => ModelError::Unauthorized { provider, status, variable: self.key_variable },
            429 | 503 | 529 => ModelError::Unavailable { provider, status, attempts },
            500..=599 => ModelError::Server { provider, status, attempts, excerpt: provider_message(body) },
            _ => ModelError::Rejected { provider, status, message: provider_message(body) },
        }
    }

    fn transport(&self, error: reqwest::Error, timeout: Option<Duration>) -> ModelError {
        let provider = self.provider.to_owned();
        match (error.is_timeout(), timeout) {
            (true, Some(timeout)) => ModelError::Timeout { provider, timeout },
            // reqwest prints the URL, never the headers, so the key stays out.
            _ => ModelError::Network { provider, message: error.to_string() },
        }
    }
}

/// One provider's reading of its server-sent events: the one stream loop
/// ([`model_stream`]) feeds it each event and ends the stream with its
/// response or its first error.
pub trait Decode: Send {
    /// Read one event: the model events it gives go to `out`; the response
    /// when the event ends the stream.
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError>;

    /// The stream closed without an event that ends it: the response, for
    /// a provider whose stream ends so (Gemini), else what was missing.
    fn end(&mut self) -> Result<ModelResponse, ModelError>;
}

/// Where the events come from, as the stream goes.
enum Source<'a> {
    Opening(BoxFuture<'a, Result<Events, ModelError>>),
    Open(Events),
    Over,
}

/// The model stream of a request: opened by `opening` (which retries
/// before the first byte), read with `decoder`, ending with `Done` or the
/// first error.
pub(crate) fn model_stream<'a, D: Decode + 'a>(
    opening: BoxFuture<'a, Result<Events, ModelError>>,
    decoder: D,
) -> ModelStream<'a> {
    let state = (Source::Opening(opening), decoder, VecDeque::new());
    stream::unfold(state, |(mut source, mut decoder, mut queue)| async move {
        loop {
            if let Some(item) = queue.pop_front() {
                return Some((item, (source, decoder, queue)));
            }
            source = match source {
                Source::Over => return None,
                Source::Opening(opening) => match opening.await {
                    Ok(events) => Source::Open(events),
                    Err(error) => return Some((Err(error), (Source::Over, decoder, queue))),
                },
                Source::Open(mut events) => {
                    let decoded = match events.next().await {
                        None => decoder.end().map(Some),
                        Some(Err(error)) => Err(error),
                        Some(Ok(event)) => {
                            let mut out = Vec::new();
                            let decoded = decoder.decode(&event, &mut out);
                            queue.extend(out.into_iter().map(Ok));
                            decoded
                        }
                    };
                    match decoded {
                        Ok(None) => Source::Open(events),
                        Ok(Some(response)) => {
                            queue.push_back(Ok(ModelEvent::Done(response)));
                            Source::Over
                        }
                        Err(error) => {
                            queue.push_back(Err(error));
                            Source::Over
                        }
                    }
                }
            };
        }
    })
    .boxed()
}

/// A body that answered 200 but is not shaped as the provider documents it.
pub(crate) fn malformed(provider: &str, body: &str, problem: impl std::fmt::Display) -> ModelError {
    ModelError::Malformed {
        provider: provider.into(),
        status: 200,
        problem: problem.to_string(),
        excerpt: excerpt(body),
    }
}

/// The wait a `Retry-After` header asks for, in seconds (the form the
/// providers send).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers.get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// The provider's own message in an error body: OpenAI, Anthropic and
/// Gemini all answer `{"error": {"message": "..."}}`; anything else is
/// shown as an excerpt. An empty message says nothing, so the next place
/// is read (llama-cpp-python answers a failed assertion with
/// `"message": ""`: the whole `error` object is shown instead).
fn provider_message(body: &str) -> String {
    const MAX: usize = 2_000;
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    // OpenAI, Anthropic and Gemini put it in `error.message`; compatible
    // servers also in `message`, or FastAPI's `detail` (llama-cpp-python).
    let says_something = |found: &&Value| match found {
        Value::Null => false,
        Value::String(text) => !text.trim().is_empty(),
        _ => true,
    };
    let message = parsed.as_ref().and_then(|value| {
        ["/error/message", "/message", "/error", "/detail"]
            .iter()
            .filter_map(|pointer| value.pointer(pointer))
            .find(says_something)
    });
    match message {
        Some(Value::String(message)) => bounded(message, MAX),
        Some(other) => bounded(&other.to_string(), MAX),
        None => bounded(body, MAX),
    }
}

/// Whether a failed request may pass if sent again: a timeout, a conflict,
/// a rate limit, an overloaded or failing server (408, 409, 429, 500, 502,
/// 503, 504, 529). Any other status, and a 500 whose body says the request
/// failed validation (the answer of compatible servers such as
/// llama-cpp-python to a request they cannot read), is the same answer
/// every time.
fn resendable(status: u16, body: &str) -> bool {
    match status {
        500 => !body.to_ascii_lowercase().contains("validation"),
        408 | 409 | 429 | 502 | 503 | 504 | 529 => true,
        _ => false,
    }
}

/// The start of a body, for an error message: at most 200 characters, cut
/// at a character boundary.
pub(crate) fn excerpt(body: &str) -> String {
    bounded(body, 200)
}

/// `text` trimmed, and cut at `max` characters (on a character boundary).
fn bounded(text: &str, max: usize) -> String {
    let trimmed = text.trim();
    match trimmed.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &trimmed[..cut]),
        None => trimmed.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_show() {
        let key = ApiKey::new("sk-secret");
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        let header = key.header("Bearer ").unwrap();
        assert!(header.is_sensitive());
        assert!(!format!("{header:?}").contains("sk-secret"));
    }

    #[test]
    fn the_providers_message_is_read_from_an_error_body() {
        let body =
            r#"{"error":{"message":"Invalid schema for function 'x'","type":"invalid_request_error"}}"#;
        assert_eq!(provider_message(body), "Invalid schema for function 'x'");
        assert_eq!(provider_message("<html>bad gateway</html>"), "<html>bad gateway</html>");
        // An empty message (llama-cpp-python's failed assertion): the error object.
        let empty = r#"{"error":{"message":"","type":"internal_server_error","param":null,"code":null}}"#;
        assert_eq!(
            provider_message(empty),
            r#"{"message":"","type":"internal_server_error","param":null,"code":null}"#
        );
        assert_eq!(excerpt(&"é".repeat(300)).chars().count(), 201);
    }

    #[test]
    fn retry_after_is_read_in_seconds() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&headers), None);
    }
}
