//! What OpenAI's two APIs (Chat Completions and Responses) share: the key
//! and the base URL (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, or given), the
//! bearer header (none for a keyless local server), the errors a response
//! body turns into, and the loop that reads server-sent events into
//! [`ModelEvent`]s.
//!
//! Authentication is `Authorization: Bearer <key>`:
//! <https://platform.openai.com/docs/api-reference/authentication>.

use std::collections::VecDeque;

use eventsource_stream::Event;
use futures::future::BoxFuture;
use futures::{StreamExt, stream};
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::Value;

use crate::http::{Endpoint, Events, excerpt};
use crate::model::{ModelEvent, ModelResponse, ModelStream, Usage};
use crate::{ApiKey, ModelError};

/// The provider's name, in errors and spans.
pub(crate) const PROVIDER: &str = "openai";
/// Where the key is read from.
pub(crate) const KEY_VARIABLE: &str = "OPENAI_API_KEY";
/// Where another base URL (a local or compatible server) is read from.
pub(crate) const BASE_URL_VARIABLE: &str = "OPENAI_BASE_URL";
/// OpenAI's own API.
pub(crate) const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A client's connection: model, base URL, key, dialect strictness, HTTP side.
#[derive(Clone)]
pub(crate) struct Connection {
    pub(crate) model: String,
    pub(crate) base_url: String,
    pub(crate) key: Option<ApiKey>,
    pub(crate) strict: bool,
    pub(crate) endpoint: Endpoint,
}

impl Connection {
    /// From the environment: `OPENAI_API_KEY` and `OPENAI_BASE_URL`.
    pub(crate) fn from_env(model: String) -> Self {
        let base_url = std::env::var(BASE_URL_VARIABLE).ok();
        Self::from_values(model, ApiKey::from_env(KEY_VARIABLE), base_url.as_deref())
    }

    /// From given values: a blank base URL is the default one, and a
    /// trailing slash is dropped.
    pub(crate) fn from_values(model: String, key: Option<ApiKey>, base_url: Option<&str>) -> Self {
        let base_url = base_url.map(str::trim).filter(|url| !url.is_empty()).unwrap_or(DEFAULT_BASE_URL);
        Self {
            model,
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
            strict: false,
            endpoint: Endpoint::new(PROVIDER, KEY_VARIABLE),
        }
    }

    pub(crate) fn set_base_url(&mut self, url: &str) {
        self.base_url = url.trim().trim_end_matches('/').to_owned();
    }

    /// `{base}/{path}`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url)
    }

    /// The bearer header when there is a key; none for another base URL
    /// without a key (Ollama, llama.cpp, vLLM and LM Studio need none); an
    /// error for OpenAI's own API without a key, before any request.
    pub(crate) fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        match &self.key {
            Some(key) => {
                headers.insert(AUTHORIZATION, key.header("Bearer ")?);
            }
            None if self.base_url == DEFAULT_BASE_URL => {
                return Err(ModelError::Config(format!(
                    "no OpenAI API key: set {KEY_VARIABLE} or give one with `with_api_key` \
                     (a local server without keys needs a base URL: {BASE_URL_VARIABLE} or `with_base_url`)"
                )));
            }
            None => {}
        }
        Ok(headers)
    }

    pub(crate) fn debug(&self, name: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(name)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.key.as_ref().map(|_| "***"))
            .field("strict", &self.strict)
            .field("retry", &self.endpoint.retry)
            .finish()
    }
}

/// A successful body that is not shaped as documented.
pub(crate) fn malformed(body: &Value, problem: impl std::fmt::Display) -> ModelError {
    ModelError::Malformed {
        provider: PROVIDER.into(),
        status: 200,
        problem: problem.to_string(),
        excerpt: excerpt(&body.to_string()),
    }
}

/// A stream that stopped before its end, with what the provider said.
pub(crate) fn stream_ended(message: impl Into<String>) -> ModelError {
    ModelError::StreamEnded { provider: PROVIDER.into(), message: message.into() }
}

/// The `{"code", "message"}` of an error object, as one line.
pub(crate) fn error_text(error: Option<&Value>) -> String {
    let field = |name: &str| error.and_then(|error| error.get(name)).and_then(Value::as_str);
    match (field("code"), field("message")) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (None, Some(message)) => message.to_owned(),
        (Some(code), None) => code.to_owned(),
        (None, None) => error.map_or_else(|| "no details".to_owned(), |error| excerpt(&error.to_string())),
    }
}

/// Token counts from a `usage` object under the API's two names; zero
/// where a (compatible) server leaves them out.
pub(crate) fn usage(usage: Option<&Value>, input: &str, output: &str) -> Usage {
    let count = |name: &str| usage.and_then(|usage| usage.get(name)).and_then(Value::as_u64).unwrap_or(0);
    Usage { input_tokens: count(input), output_tokens: count(output) }
}

/// The JSON of one event's data; not JSON is `Malformed`.
pub(crate) fn event_json(event: &Event) -> Result<Value, ModelError> {
    serde_json::from_str(&event.data).map_err(|error| ModelError::Malformed {
        provider: PROVIDER.into(),
        status: 200,
        problem: format!("a streamed event is not JSON ({error})"),
        excerpt: excerpt(&event.data),
    })
}

/// One API's reading of its server-sent events.
pub(crate) trait Decode: Send {
    /// Read one event: the model events it gives go to `out`; the response
    /// when the event ends the stream.
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError>;

    /// What the provider did not send when the stream ends without its end.
    fn missing(&self) -> &'static str;
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
                Source::Open(mut events) => match events.next().await {
                    None => {
                        queue.push_back(Err(stream_ended(decoder.missing())));
                        Source::Over
                    }
                    Some(Err(error)) => {
                        queue.push_back(Err(error));
                        Source::Over
                    }
                    Some(Ok(event)) => {
                        let mut out = Vec::new();
                        let decoded = decoder.decode(&event, &mut out);
                        queue.extend(out.into_iter().map(Ok));
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
                },
            };
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_values_choose_the_base_url_and_the_key() {
        let openai = Connection::from_values("m".into(), Some(ApiKey::new("sk-1")), None);
        assert_eq!(openai.url("chat/completions"), "https://api.openai.com/v1/chat/completions");
        assert!(openai.headers().unwrap().get(AUTHORIZATION).is_some());

        // A local server: no key, no header.
        let local = Connection::from_values("llama".into(), None, Some(" http://localhost:11434/v1/ "));
        assert_eq!(local.url("responses"), "http://localhost:11434/v1/responses");
        assert!(local.headers().unwrap().is_empty());

        // OpenAI itself without a key: refused before any request, naming the variable.
        let blank = Connection::from_values("m".into(), None, Some("  "));
        assert_eq!(blank.base_url, DEFAULT_BASE_URL);
        let error = blank.headers().unwrap_err();
        assert!(matches!(&error, ModelError::Config(message) if message.contains(KEY_VARIABLE)), "{error}");
    }

    #[test]
    fn error_objects_read_as_one_line() {
        let error = serde_json::json!({"code": "server_error", "message": "boom"});
        assert_eq!(error_text(Some(&error)), "server_error: boom");
        assert_eq!(error_text(None), "no details");
    }
}
