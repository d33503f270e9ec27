//! The built-in model clients: one skeleton, [`Client`], holds what every
//! provider shares (model, key, base URL, extra headers, resend policy, the
//! HTTP endpoint with its status mapping, the one server-sent events loop),
//! and each provider module supplies a [`Provider`]: its URL and headers,
//! its request body, its response reader and its stream event reader. The
//! messages themselves (user, assistant, calls, results) are written by the
//! provider's module in `toolcall-provider`.

mod anthropic;
mod body;
mod gemini;
pub(crate) mod http;
mod openai;

pub use anthropic::Anthropic;
pub use gemini::Gemini;
pub use http::{ApiKey, ResendPolicy};
pub use openai::{OpenAiChat, OpenAiResponses};

use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use toolcall_provider::Dialect;

use crate::model::{ModelRequest, ModelResponse, ModelSettings, ModelStream};
use crate::{Model, ModelError};
use http::{Decode, Endpoint, model_stream};

/// What one provider's API adds to the shared [`Client`]: where requests
/// go, its own headers, its request body, and its readers of a response
/// and of a stream's events. Implemented by the built-in providers only.
pub trait Provider: Clone + Default + Send + Sync + 'static {
    /// The provider's name, in errors and spans ("openai", "anthropic"...).
    const NAME: &'static str;
    /// The client type's name, for `Debug`.
    const CLIENT: &'static str;
    /// Where the key is read from.
    const KEY_VARIABLE: &'static str;
    /// Where another base URL is read from.
    const BASE_URL_VARIABLE: &'static str;
    /// The provider's own base URL.
    const DEFAULT_BASE_URL: &'static str;
    /// The header the key goes in, and what comes before the key there.
    const KEY_HEADER: (&'static str, &'static str);

    /// The stream event reader.
    type Events: Decode + 'static;

    /// Whether this model takes a typed answer's schema natively together
    /// with tools ([`Model::native_answers`]): yes, but where the
    /// provider says otherwise.
    fn native_answers(&self, _model: &str) -> bool {
        true
    }

    /// The dialect the tools (and calls and results) are written in.
    fn dialect(&self) -> Dialect;

    /// The URL of a request, plain or streamed.
    fn url(&self, base_url: &str, model: &str, stream: bool) -> String;

    /// The provider's own fixed headers (a version), besides the key's.
    fn headers(&self, _headers: &mut HeaderMap) {}

    /// Headers that depend on the request's settings (Anthropic's betas
    /// for its context management), added last.
    fn settings_headers(&self, _settings: &ModelSettings, _headers: &mut HeaderMap) {}

    /// Whether a request without a key is refused before it is sent: by
    /// default always; OpenAI only for its own base URL (local servers
    /// that speak its API need none).
    fn needs_key(&self, _base_url: &str) -> bool {
        true
    }

    /// The request body.
    fn body(&self, model: &str, request: &ModelRequest<'_>, stream: bool) -> Result<Value, ModelError>;

    /// Read a whole (non-streamed) response.
    fn read(&self, body: &Value) -> Result<ModelResponse, ModelError>;

    /// A reader for one streamed response.
    fn events(&self) -> Self::Events;

    /// A provider's own reading of an HTTP error (Gemini refuses a bad key
    /// with a 400).
    fn refine(&self, error: ModelError) -> ModelError {
        error
    }
}

/// A provider with a strict mode for its tool definitions.
pub trait Strict {
    /// Send the tools in strict mode, or not.
    fn set_strict(&mut self, strict: bool);
}

/// A model client: the connection settings every provider shares, over
/// one provider's API. Use it through [`OpenAiChat`], [`OpenAiResponses`],
/// [`Anthropic`] and [`Gemini`].
///
/// ```
/// use std::time::Duration;
/// use reqwest::header::{HeaderName, HeaderValue};
/// use toolcall_agent::{Anthropic, ApiKey, Model, ResendPolicy};
///
/// let model = Anthropic::from_values("claude-sonnet-4-5", Some(ApiKey::new("sk-ant-...")), None)
///     .with_base_url("http://proxy.local/")
///     .with_resend(ResendPolicy::default().with_max_attempts(2))
///     .with_header(HeaderName::from_static("anthropic-beta"), HeaderValue::from_static("x"));
/// assert_eq!((model.provider(), model.model(), model.base_url()), ("anthropic", "claude-sonnet-4-5", "http://proxy.local"));
/// assert_eq!(model.resend().max_attempts, 2);
/// // Every request is bounded by default: 10 minutes for a plain one, 5
/// // of silence for a stream.
/// assert_eq!(model.request_timeout(), Some(Duration::from_secs(600)));
/// assert_eq!(model.stream_idle_timeout(), Some(Duration::from_secs(300)));
/// let patient = model.with_request_timeout(Some(Duration::from_secs(1800))).with_stream_idle_timeout(None);
/// assert_eq!((patient.request_timeout(), patient.stream_idle_timeout()), (Some(Duration::from_secs(1800)), None));
/// ```
#[derive(Clone)]
pub struct Client<P> {
    model: String,
    base_url: String,
    key: Option<ApiKey>,
    headers: HeaderMap,
    endpoint: Endpoint,
    provider: P,
}

impl<P: Provider> Client<P> {
    /// A client of this model, with the key in the provider's variable
    /// (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`) and the
    /// base URL in its other (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`,
    /// `GEMINI_BASE_URL`), else the provider's own. Without a key, requests
    /// fail with [`ModelError::MissingKey`] before they are sent (but for
    /// an OpenAI-compatible server at another base URL, which gets no
    /// `Authorization` header).
    pub fn new(model: impl Into<String>) -> Self {
        let base_url = std::env::var(P::BASE_URL_VARIABLE).ok();
        Self::from_values(model, ApiKey::from_env(P::KEY_VARIABLE), base_url.as_deref())
    }

    /// A client from these values rather than the environment: what
    /// [`Self::new`] does with the two variables' values (a blank base URL
    /// is the default one).
    pub fn from_values(model: impl Into<String>, api_key: Option<ApiKey>, base_url: Option<&str>) -> Self {
        let base_url = base_url.map(str::trim).filter(|url| !url.is_empty()).unwrap_or(P::DEFAULT_BASE_URL);
        Self {
            model: model.into(),
            base_url: base_url.trim_end_matches('/').to_owned(),
            key: api_key,
            headers: HeaderMap::new(),
            endpoint: Endpoint::new(P::NAME, P::KEY_VARIABLE),
            provider: P::default(),
        }
    }

    /// The same client with this key.
    pub fn with_api_key(mut self, key: ApiKey) -> Self {
        self.key = Some(key);
        self
    }

    /// The same client sending to this base URL (OpenAI's `.../v1`, to
    /// which `chat/completions` or `responses` is added; Anthropic's and
    /// Gemini's root, to which `/v1/messages` or `/v1beta/models/...` is).
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim().trim_end_matches('/').to_owned();
        self
    }

    /// The same client resending a request that met a rate limit or a server
    /// error by this policy.
    pub fn with_resend(mut self, policy: ResendPolicy) -> Self {
        self.endpoint.resend = policy;
        self
    }

    /// The same client bounding a plain request by `timeout` in all
    /// (`None`: no bound), where the request's
    /// [`ModelSettings::request_timeout`] gives none: by default 10
    /// minutes, the providers' own SDKs' default (a reasoning model may
    /// think for minutes before a plain answer's first byte). A request past it fails
    /// with [`ModelError::Timeout`] and is not resent. A stream has no
    /// bound in all but the settings' (a long generation streams for
    /// minutes): its silences are bounded instead
    /// ([`Self::with_stream_idle_timeout`]).
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.endpoint.request_timeout = timeout;
        self
    }

    /// The same client ending a stream that stays silent for `timeout`
    /// (`None`: never), waiting for the answer's headers or between two
    /// chunks, with [`ModelError::Timeout`]: by default 5 minutes (a
    /// reasoning model may send nothing while it thinks). It is the client's
    /// rather than a [`ModelSettings`] field, as the resend policy is:
    /// how long a connection may be silent is the provider's and the
    /// network's way (a proxy that buffers, a model that thinks before its
    /// first token), the same for every request to it, and a setting would
    /// be one that only the HTTP clients read.
    pub fn with_stream_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.endpoint.stream_idle_timeout = timeout;
        self
    }

    /// The same client over this HTTP client (proxies, TLS roots, pools).
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.endpoint.client = client;
        self
    }

    /// The same client sending this header with every request (an
    /// organization, a beta flag); it replaces a provider header of the
    /// same name, but not the key's.
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// How a request is resent ([`ResendPolicy`]).
    pub fn resend(&self) -> ResendPolicy {
        self.endpoint.resend
    }

    /// The bound on a plain request whose settings give none
    /// ([`Self::with_request_timeout`]).
    pub fn request_timeout(&self) -> Option<Duration> {
        self.endpoint.request_timeout
    }

    /// The longest silence of a stream ([`Self::with_stream_idle_timeout`]).
    pub fn stream_idle_timeout(&self) -> Option<Duration> {
        self.endpoint.stream_idle_timeout
    }

    /// The request headers: the provider's, the extra ones, and the key's
    /// (none without a key where the provider allows it).
    fn request_headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        self.provider.headers(&mut headers);
        headers.extend(self.headers.clone());
        match &self.key {
            Some(key) => {
                let (name, prefix) = P::KEY_HEADER;
                let value =
                    key.header(prefix).map_err(|_| ModelError::InvalidKey { provider: P::NAME.into() })?;
                headers.insert(HeaderName::from_static(name), value);
            }
            None if self.provider.needs_key(&self.base_url) => {
                return Err(ModelError::MissingKey { provider: P::NAME.into(), variable: P::KEY_VARIABLE });
            }
            None => {}
        }
        Ok(headers)
    }

    fn url(&self, stream: bool) -> String {
        self.provider.url(&self.base_url, &self.model, stream)
    }
}

impl<P: Provider + Strict> Client<P> {
    /// Send the tools in strict mode (`Dialect::OpenAiChatStrict`,
    /// `OpenAiResponsesStrict`, `AnthropicStrict`): the model's arguments
    /// then follow the schemas exactly.
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.provider.set_strict(strict);
        self
    }
}

impl<P: Provider> std::fmt::Debug for Client<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(P::CLIENT)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.key.as_ref().map(|_| "***"))
            .field("dialect", &self.provider.dialect())
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("resend", &self.endpoint.resend)
            .field("request_timeout", &self.endpoint.request_timeout)
            .field("stream_idle_timeout", &self.endpoint.stream_idle_timeout)
            .finish()
    }
}

impl<P: Provider> Model for Client<P> {
    fn provider(&self) -> &str {
        P::NAME
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn dialect(&self) -> Option<Dialect> {
        Some(self.provider.dialect())
    }

    fn native_answers(&self) -> bool {
        self.provider.native_answers(&self.model)
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let body = self.provider.body(&self.model, &request, false)?;
            let mut headers = self.request_headers()?;
            self.provider.settings_headers(request.settings, &mut headers);
            let timeout = request.settings.request_timeout;
            let answer = self.endpoint.post_json(&self.url(false), headers, &body, timeout).await;
            self.provider.read(&answer.map_err(|error| self.provider.refine(error))?)
        })
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let opening = Box::pin(async move {
            let body = self.provider.body(&self.model, &request, true)?;
            let mut headers = self.request_headers()?;
            self.provider.settings_headers(request.settings, &mut headers);
            let timeout = request.settings.request_timeout;
            let events = self.endpoint.post_events(&self.url(true), headers, &body, timeout).await;
            events.map_err(|error| self.provider.refine(error))
        });
        model_stream(opening, self.provider.events())
    }
}

/// The request fields that offer the tools (`tools`) and say which the
/// model may call (the dialect's tool choice fields); none without tools,
/// since providers refuse an empty `tools` array, and a choice needs tools
/// to name.
///
/// The dialect refuses a toolset it cannot express when the agent is built
/// (`Agent::new`); the refusal here is the fallback for what can change
/// after that: the toolset of a turn is prepared per turn, and a tool
/// search loads deferred tools during the run.
fn tool_fields(dialect: Dialect, request: &ModelRequest<'_>) -> Result<Map<String, Value>, ModelError> {
    let mut fields = Map::new();
    let Some(toolset) = request.tools else { return Ok(fields) };
    let tools = dialect.tools(toolset)?;
    if tools.as_array().is_some_and(|tools| !tools.is_empty()) {
        fields.insert("tools".into(), tools);
        let settings = request.settings;
        fields.extend(dialect.tool_choice(toolset, &settings.tool_choice, settings.parallel_tool_calls)?);
    }
    Ok(fields)
}

/// The response's id in `field` of `value`, if it is a string that says
/// something (a compatible server may send `""`).
fn response_id(value: &Value, field: &str) -> Option<String> {
    value.get(field).and_then(Value::as_str).filter(|id| !id.is_empty()).map(str::to_owned)
}
