//! Why a request to a model failed, and why a run stopped with an error.

use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

use toolcall_provider::{DialectError, MessageError, ToolChoiceError};

use crate::{ModelName, Transcript};

/// Why a request to a model did not give a response.
///
/// Two errors are equal when they are the same variant with the same
/// fields; an [`Engine`](Self::Engine) failure's source, which has no
/// equality of its own, is compared by what it says.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider refused the key (HTTP 401 or 403).
    #[error("{provider} refused the API key (HTTP {status}): check {variable}")]
    Unauthorized {
        /// The provider's name.
        provider: String,
        /// 401 or 403.
        status: u16,
        /// The environment variable the key is read from.
        variable: &'static str,
    },
    /// The provider refused the request (HTTP 400, 404, 422...), with its message.
    #[error("{provider} rejected the request (HTTP {status}): {message}")]
    Rejected {
        /// The provider's name.
        provider: String,
        /// The status.
        status: u16,
        /// The provider's own message.
        message: String,
    },
    /// Rate limited or overloaded (429, 503, 529...) after every retry.
    #[error("{provider} is rate limited or overloaded (HTTP {status}) after {attempts} attempts")]
    Unavailable {
        /// The provider's name.
        provider: String,
        /// The last status.
        status: u16,
        /// Requests made, the first included.
        attempts: u32,
    },
    /// A server error (500, 502...) after every retry.
    #[error("{provider} failed (HTTP {status}) after {attempts} attempts: {excerpt}")]
    Server {
        /// The provider's name.
        provider: String,
        /// The last status.
        status: u16,
        /// Requests made, the first included.
        attempts: u32,
        /// The provider's message in the last body (`error.message`, or the
        /// body), whole up to 2,000 characters.
        excerpt: String,
    },
    /// A body that is not shaped as the provider documents it.
    #[error("{provider} answered HTTP {status} with a body that could not be read ({problem}): {excerpt}")]
    Malformed {
        /// The provider's name.
        provider: String,
        /// The status.
        status: u16,
        /// What did not fit.
        problem: String,
        /// The start of the body.
        excerpt: String,
    },
    /// The request took longer than its timeout.
    #[error("the request to {provider} timed out after {timeout:?}")]
    Timeout {
        /// The provider's name.
        provider: String,
        /// The timeout that passed.
        timeout: Duration,
    },
    /// The connection failed or broke.
    #[error("could not reach {provider}: {message}")]
    Network {
        /// The provider's name.
        provider: String,
        /// What the HTTP client said.
        message: String,
    },
    /// The provider ended its answer normally with nothing in it: no
    /// text, no call (Gemini sends such a candidate now and then).
    #[error("{provider} sent an empty answer ({reason}): no text and no tool call")]
    Empty {
        /// The provider's name.
        provider: String,
        /// The provider's reason for ending it.
        reason: String,
    },
    /// A stream ended before the provider said it was complete.
    #[error("the stream from {provider} ended early: {message}")]
    StreamEnded {
        /// The provider's name.
        provider: String,
        /// What was missing.
        message: String,
    },
    /// No API key: none was given and its environment variable is unset
    /// or blank. Found before any request is sent.
    ///
    /// ```
    /// use toolcall_agent::{Model, ModelError, ModelRequest, ModelSettings, OpenAiChat};
    /// # futures::executor::block_on(async {
    /// let model = OpenAiChat::from_values("gpt-4.1-mini", None, None);
    /// let request = ModelRequest { instructions: None, messages: &[], tools: None, settings: &ModelSettings::default(), answer: None };
    /// let error = model.request(request).await.unwrap_err();
    /// assert!(matches!(error, ModelError::MissingKey { variable: "OPENAI_API_KEY", .. }), "{error}");
    /// # });
    /// ```
    #[error("no {provider} API key: set {variable} or give one with `with_api_key`")]
    MissingKey {
        /// The provider's name.
        provider: String,
        /// The environment variable the key is read from.
        variable: &'static str,
    },
    /// The API key holds characters an HTTP header cannot carry.
    #[error("the {provider} API key holds characters a header cannot carry")]
    InvalidKey {
        /// The provider's name.
        provider: String,
    },
    /// The request's tools cannot be sent in the model's dialect, naming
    /// the tool and the keyword. [`Agent::new`](crate::Agent::new) refuses
    /// such a toolset before any run; this is the request-time fallback
    /// for a toolset that changes during a run (tools loaded by a search).
    #[error("the tools cannot be sent: {0}")]
    Tools(#[from] DialectError),
    /// The transcript holds something the dialect cannot send, such as an
    /// image type the provider does not read in a tool's result or in a
    /// user message ([`MessageError::refused`] names the message and the
    /// part): found before the request is sent.
    #[error(transparent)]
    Message(#[from] MessageError),
    /// A [`ScriptedModel`](crate::testing::ScriptedModel) was asked once more than
    /// its script has answers.
    #[error("the scripted model has no answer left")]
    ScriptEnded,
    /// The engine a run's steps go through ([`Effects`](crate::Effects))
    /// could not take or give a step (a durable engine's journal refused
    /// it, or the run was cancelled there), or what keeps the run could
    /// not keep it. The engine's own error is the source, whole, so that
    /// a caller can tell its cases apart ([`Self::engine`] makes one).
    ///
    /// ```
    /// use std::io;
    /// use toolcall_agent::ModelError;
    ///
    /// let error = ModelError::engine("restate", io::Error::new(io::ErrorKind::TimedOut, "journal slow"));
    /// assert_eq!(error.to_string(), "the run's engine (restate) failed: journal slow");
    /// let ModelError::Engine { source, .. } = &error else { unreachable!() };
    /// assert_eq!(source.downcast_ref::<io::Error>().map(io::Error::kind), Some(io::ErrorKind::TimedOut));
    /// ```
    #[error("the run's engine ({engine}) failed: {source}")]
    Engine {
        /// Which engine: `restate`, `session`...
        engine: &'static str,
        /// What the engine said, as its own error type: downcast it
        /// (`source.downcast_ref::<E>()`) for its details. Shared, so that
        /// the error stays [`Clone`].
        #[source]
        source: Arc<dyn Error + Send + Sync>,
    },
    /// The settings' tool choice or parallel setting cannot be sent to this
    /// provider, or names a tool the request does not offer: found before
    /// the request is sent.
    ///
    /// ```
    /// use toolcall_agent::{ModelError, ToolChoice};
    /// use toolcall_core::Toolset;
    /// use toolcall_provider::Dialect;
    /// let refused = Dialect::Gemini.tool_choice(&Toolset::new(), &ToolChoice::Auto, Some(false)).unwrap_err();
    /// let error = ModelError::from(refused);
    /// assert!(error.to_string().starts_with("`parallel_tool_calls: false` cannot be sent as gemini"), "{error}");
    /// ```
    #[error(transparent)]
    ToolChoice(#[from] ToolChoiceError),
    /// A setting the provider's API has no field for, a value it does not
    /// take, or a combination of settings it refuses (Anthropic's manual
    /// thinking with a forced tool choice, a stop sequence for OpenAI
    /// Responses...): found before the request is sent. The table of what
    /// each provider takes is on [`ModelSettings`](crate::ModelSettings).
    ///
    /// ```
    /// use toolcall_agent::{Model, ModelError, ModelRequest, ModelSettings, OpenAiResponses};
    /// # futures::executor::block_on(async {
    /// let model = OpenAiResponses::from_values("gpt-5", None, Some("http://localhost:1/v1"));
    /// let settings = ModelSettings::default().with_seed(7);
    /// let request = ModelRequest { instructions: None, messages: &[], tools: None, settings: &settings, answer: None };
    /// let error = model.request(request).await.unwrap_err();
    /// assert!(matches!(error, ModelError::Setting { setting: "seed", .. }));
    /// assert_eq!(error.to_string(), "openai (Responses) cannot take `seed`: the Responses API has no seed");
    /// # });
    /// ```
    #[error("{provider} cannot take `{setting}`: {reason}")]
    Setting {
        /// The provider, and for OpenAI the API (`openai (Responses)`).
        provider: String,
        /// The setting, as [`ModelSettings`](crate::ModelSettings) names it
        /// (`seed`, `reasoning.budget_tokens`...).
        setting: &'static str,
        /// Why, with the value where it matters.
        reason: String,
    },
    /// The models a [`FallbackModel`](crate::FallbackModel) tried each
    /// failed: their errors, in the order they were tried. The last is the
    /// last model's, or one that does not fall over (a 400...), which
    /// ended the chain. A chain that met one error only gives it as it is.
    #[error("{}", fallback_failures(.failures))]
    Fallback {
        /// Each model tried, and its error.
        failures: Vec<(ModelName, ModelError)>,
    },
    /// A paused run was handed to agents ([`Agent::with_handoff`](crate::Agent::with_handoff))
    /// that the agent resuming it does not hand off to: resume it with the
    /// agent it started with. Found before any request.
    #[error(
        "the paused run was handed to `{}`, which this agent does not hand off to: resume it with the agent it started with",
        .path.join("` then `")
    )]
    UnknownAgent {
        /// The names of the agents the run was handed to, in order.
        path: Vec<String>,
    },
}

impl ModelError {
    /// An [`Engine`](Self::Engine) failure of `engine`, with its error
    /// (any error type, or a message) as the source.
    pub fn engine(engine: &'static str, source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        Self::Engine { engine, source: Arc::from(source.into()) }
    }

    /// Whether the error is the provider's state rather than the request's,
    /// so that another model may well answer the same request: rate limited
    /// or overloaded ([`Self::Unavailable`]: 429, 503, 529) or failing
    /// ([`Self::Server`]: 500, 502...), each after the client's own
    /// [`ResendPolicy`](crate::ResendPolicy) ran out, a timeout, a
    /// connection that failed, or a stream that broke. A refused request
    /// (400, 404...), a refused key, a missing one, a setting or a tool the
    /// provider cannot take are not: they are the same for every attempt,
    /// and hiding them behind another model's answer hides a mistake. What
    /// a [`FallbackModel`](crate::FallbackModel) falls over on by default.
    /// A [`Self::Fallback`] is transient if its last error is: the chain
    /// inside ran out of models, rather than stopped at a refusal.
    ///
    /// ```
    /// use toolcall_agent::ModelError;
    /// let overloaded = ModelError::Unavailable { provider: "anthropic".into(), status: 529, attempts: 4 };
    /// let refused = ModelError::Rejected { provider: "anthropic".into(), status: 400, message: "bad".into() };
    /// assert!(overloaded.is_transient());
    /// assert!(!refused.is_transient());
    /// ```
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unavailable { .. }
            | Self::Server { .. }
            | Self::Timeout { .. }
            | Self::Network { .. }
            | Self::StreamEnded { .. } => true,
            Self::Fallback { failures } => failures.last().is_some_and(|(_, error)| error.is_transient()),
            _ => false,
        }
    }
}

// By hand, as the derive would, but for an engine's source: `dyn Error`
// has no equality, so two sources are equal when they are one, or say the
// same. The match is over `self` alone, so a new variant must be added.
impl PartialEq for ModelError {
    fn eq(&self, other: &Self) -> bool {
        use ModelError as E;
        match self {
            E::Unauthorized { provider, status, variable } => matches!(other,
                E::Unauthorized { provider: p, status: s, variable: v }
                    if (provider, status, variable) == (p, s, v)),
            E::Rejected { provider, status, message } => matches!(other,
                E::Rejected { provider: p, status: s, message: m }
                    if (provider, status, message) == (p, s, m)),
            E::Unavailable { provider, status, attempts } => matches!(other,
                E::Unavailable { provider: p, status: s, attempts: a }
                    if (provider, status, attempts) == (p, s, a)),
            E::Server { provider, status, attempts, excerpt } => matches!(other,
                E::Server { provider: p, status: s, attempts: a, excerpt: e }
                    if (provider, status, attempts, excerpt) == (p, s, a, e)),
            E::Malformed { provider, status, problem, excerpt } => matches!(other,
                E::Malformed { provider: p, status: s, problem: r, excerpt: e }
                    if (provider, status, problem, excerpt) == (p, s, r, e)),
            E::Timeout { provider, timeout } => matches!(other,
                E::Timeout { provider: p, timeout: t } if (provider, timeout) == (p, t)),
            E::Network { provider, message } => matches!(other,
                E::Network { provider: p, message: m } if (provider, message) == (p, m)),
            E::Empty { provider, reason } => matches!(other,
                E::Empty { provider: p, reason: r } if (provider, reason) == (p, r)),
            E::StreamEnded { provider, message } => matches!(other,
                E::StreamEnded { provider: p, message: m } if (provider, message) == (p, m)),
            E::MissingKey { provider, variable } => matches!(other,
                E::MissingKey { provider: p, variable: v } if (provider, variable) == (p, v)),
            E::InvalidKey { provider } => matches!(other, E::InvalidKey { provider: p } if provider == p),
            E::Tools(error) => matches!(other, E::Tools(e) if error == e),
            E::Message(error) => matches!(other, E::Message(e) if error == e),
            E::ScriptEnded => matches!(other, E::ScriptEnded),
            E::Engine { engine, source } => matches!(other,
                E::Engine { engine: n, source: s }
                    if engine == n && (Arc::ptr_eq(source, s) || source.to_string() == s.to_string())),
            E::ToolChoice(error) => matches!(other, E::ToolChoice(e) if error == e),
            E::Setting { provider, setting, reason } => matches!(other,
                E::Setting { provider: p, setting: s, reason: r }
                    if (provider, setting, reason) == (p, s, r)),
            E::Fallback { failures } => matches!(other, E::Fallback { failures: f } if failures == f),
            E::UnknownAgent { path } => matches!(other, E::UnknownAgent { path: p } if path == p),
        }
    }
}

impl Eq for ModelError {}

/// Each model tried, and its error, on one line.
fn fallback_failures(failures: &[(ModelName, ModelError)]) -> String {
    let each: Vec<String> = failures.iter().map(|(model, error)| format!("{model}: {error}")).collect();
    format!("{} models failed in turn: {}", failures.len(), each.join("; "))
}

/// A run that stopped because a request failed. The transcript holds
/// everything up to the failed request, so the run can be continued.
#[derive(Clone, Debug, thiserror::Error)]
#[error("the run stopped: {error}")]
pub struct AgentError {
    /// What failed.
    #[source]
    pub error: ModelError,
    /// The run so far.
    pub transcript: Box<Transcript>,
}
