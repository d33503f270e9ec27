//! Why a [`Tavily`](crate::Tavily) could not be built. Errors of a search
//! itself are [`ToolError`](toolcall_core::ToolError)s, made in `api.rs`.

/// Why a [`Tavily`](crate::Tavily) tool could not be built or configured.
/// No variant ever holds the API key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TavilyError {
    /// The environment variable that should hold the key is unset or blank.
    #[error(
        "{var} is not set: put your Tavily API key (tvly-...) in it, or pass the key to Tavily::from_api_key"
    )]
    MissingApiKey {
        /// The variable's name.
        var: &'static str,
    },
    /// The key given to [`Tavily::from_api_key`](crate::Tavily::from_api_key) is blank.
    #[error("the Tavily API key is empty")]
    EmptyApiKey,
    /// The key holds characters an HTTP header cannot carry.
    #[error("the Tavily API key holds characters that cannot be sent in an HTTP header")]
    MalformedApiKey,
    /// A search option is outside what the API accepts.
    #[error("invalid Tavily search option `{option}`: {reason}")]
    InvalidOption {
        /// The option's name, as the API spells it.
        option: &'static str,
        /// What was expected, and what came instead.
        reason: String,
    },
    /// The base URL is not an absolute `http` or `https` URL.
    #[error("invalid Tavily base URL `{url}`: {reason}")]
    InvalidBaseUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be built (its TLS setup failed).
    #[error("could not build the HTTP client for Tavily")]
    HttpClient(#[source] reqwest::Error),
}
