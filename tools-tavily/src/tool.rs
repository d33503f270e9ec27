//! The tool: its state (key, options, HTTP client), how it is built, and
//! its one `run`.

use std::time::Duration;

use reqwest::{Client, Url};
use schemars::JsonSchema;
use serde::Deserialize;
use toolcall_core::{ToolContext, ToolError, ToolSpec};
use toolcall_macros::tool;

use crate::api::Search;
use crate::key::{ApiKey, REDACTED};
use crate::{SearchOptions, SearchResponse, TavilyError};

/// The name the tool is registered under unless renamed.
pub const DEFAULT_NAME: &str = "tavily_web_search";
/// The environment variable [`Tavily::new`] reads the key from.
pub const API_KEY_VAR: &str = "TAVILY_API_KEY";
/// Where the API lives.
pub const DEFAULT_BASE_URL: &str = "https://api.tavily.com";
/// How long one search may take, unless the call's deadline is sooner.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

// The doc comments below are the schema's descriptions: the model reads them.
/// The arguments of one web search.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct Request {
    /// The search query, as you would type it into a search engine: short and specific, under 400 characters.
    pub query: String,
}

/// Tavily web search as a tool: state (the key, the options, an HTTP client)
/// and one `run`. Build it once and share it; it is cheap to clone.
///
/// ```no_run
/// use toolcall_core::toolset::{Toolset, WebSearch};
/// use toolcall_tavily::{SearchDepth, SearchOptions, Tavily};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let tavily = Tavily::new()? // reads TAVILY_API_KEY
///     .with_search_opts(SearchOptions::new().with_search_depth(SearchDepth::Advanced).with_max_results(8))?;
///
/// let mut tools = Toolset::new();
/// tools.add(tavily.clone())?; // as `tavily_web_search`
/// let mut native = Toolset::new();
/// // or as `web_search`: the function for providers with no native search
/// native.add_web_search(WebSearch::new().with_fallback(tavily))?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Tavily {
    spec: ToolSpec,
    key: ApiKey,
    options: SearchOptions,
    endpoint: Url,
    client: Client,
    timeout: Duration,
}

impl Tavily {
    /// A tool with the key from `TAVILY_API_KEY` and the default options.
    ///
    /// Fails if the variable is unset or blank (the error names it) or if the
    /// HTTP client cannot be built.
    ///
    /// # Errors
    ///
    /// [`TavilyError::MissingApiKey`] when `TAVILY_API_KEY` is unset or blank,
    /// [`TavilyError::MalformedApiKey`] when it holds characters a header cannot carry,
    /// [`TavilyError::HttpClient`] when the HTTP client cannot be built.
    pub fn new() -> Result<Self, TavilyError> {
        Self::from_env(API_KEY_VAR)
    }

    /// A tool with this key and the default options.
    ///
    /// ```
    /// let tavily = toolcall_tavily::Tavily::from_api_key("tvly-dev-123").unwrap();
    /// assert_eq!(toolcall_core::Tool::spec(&tavily).name(), "tavily_web_search");
    /// assert!(!format!("{tavily:?}").contains("tvly-dev-123"));
    /// ```
    ///
    /// # Errors
    ///
    /// [`TavilyError::EmptyApiKey`] for a blank key, [`TavilyError::MalformedApiKey`] for one
    /// with characters a header cannot carry, [`TavilyError::HttpClient`] when the HTTP client
    /// cannot be built.
    pub fn from_api_key(key: impl Into<String>) -> Result<Self, TavilyError> {
        let client = Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("tools-tavily/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(TavilyError::HttpClient)?;
        Ok(Self {
            spec: Self::tool_spec(),
            key: ApiKey::new(key.into())?,
            options: SearchOptions::default(),
            endpoint: endpoint(DEFAULT_BASE_URL)?,
            client,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    fn from_env(var: &'static str) -> Result<Self, TavilyError> {
        match std::env::var(var) {
            Ok(key) if !key.trim().is_empty() => Self::from_api_key(key),
            _ => Err(TavilyError::MissingApiKey { var }),
        }
    }

    /// The same tool under another name (stored history keeps names: choose once).
    pub fn with_name(mut self, name: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        self.spec = self.spec.with_name(name);
        self
    }

    /// The same tool with another description for the model.
    pub fn with_description(mut self, description: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        self.spec = self.spec.with_description(description);
        self
    }

    /// The options of every search, checked against the API's limits.
    ///
    /// # Errors
    ///
    /// [`TavilyError::InvalidOption`] for the first option out of the API's limits
    /// ([`SearchOptions::validate`]).
    pub fn with_search_opts(mut self, options: SearchOptions) -> Result<Self, TavilyError> {
        options.validate()?;
        self.options = options;
        Ok(self)
    }

    /// Another server speaking the Tavily API (a proxy, a test server); the
    /// search goes to `<base_url>/search`.
    ///
    /// # Errors
    ///
    /// [`TavilyError::InvalidBaseUrl`] when `base_url` is not an absolute `http` or `https` URL
    /// with a host.
    pub fn with_base_url(mut self, base_url: &str) -> Result<Self, TavilyError> {
        self.endpoint = endpoint(base_url)?;
        Ok(self)
    }

    /// Send the searches through this client (proxies, pools, TLS settings of
    /// the caller's). The per-search timeout still applies.
    pub fn with_http_client(mut self, client: Client) -> Self {
        self.client = client;
        self
    }

    /// How long one search may take (default [`DEFAULT_TIMEOUT`]); a call's
    /// own deadline, if sooner, wins.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The options every search sends.
    pub fn search_opts(&self) -> &SearchOptions {
        &self.options
    }

    /// Where the searches go.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }
}

/// `<base>/search`, keeping any path the base has.
fn endpoint(base: &str) -> Result<Url, TavilyError> {
    let invalid = |reason: &str| TavilyError::InvalidBaseUrl { url: base.to_owned(), reason: reason.into() };
    let mut url = Url::parse(base.trim()).map_err(|error| invalid(&error.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(invalid("expected an http or https URL with a host"));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url.join("search").map_err(|error| invalid(&error.to_string()))
}

// `#[tool]` makes `Tavily` a TypedTool; `spec = self.spec` lets the builder
// methods rename and re-describe it at run time.
#[tool]
impl Tavily {
    /// Search the web for current information and for facts you do not know.
    /// Returns the most relevant pages (title, url, content excerpt, relevance score from 0 to 1) and,
    /// when there is one, a short answer written from them. Cite the urls of the pages you use.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] for an empty query; a retryable error
    /// when Tavily limits the rate (with its wait); a failure for a refused
    /// key, a spent plan, another HTTP error, an answer that does not read,
    /// a timeout or a cancelled call. (The model does not read this section:
    /// a tool's description ends at the doc comment's first heading.)
    #[tool(name = "tavily_web_search", title = "Tavily web search", read_only, open_world, spec = self.spec)]
    pub async fn search(&self, ctx: &ToolContext, req: Request) -> Result<SearchResponse, ToolError> {
        let query = req.query.trim();
        if query.is_empty() {
            return Err(ToolError::invalid_arguments("`query` is empty: give the words to search for"));
        }
        let timeout = ctx.remaining().map_or(self.timeout, |left| left.min(self.timeout));
        let search = Search {
            client: &self.client,
            endpoint: &self.endpoint,
            key: &self.key,
            options: &self.options,
            timeout,
        };
        tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => Err(ToolError::failed("the search was cancelled")),
            result = search.run(query) => result,
        }
    }
}

impl std::fmt::Debug for Tavily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tavily")
            .field("name", &self.spec.name())
            .field("api_key", &REDACTED)
            .field("endpoint", &self.endpoint.as_str())
            .field("options", &self.options)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolcall_core::TypedTool;

    #[test]
    fn a_missing_variable_is_named() {
        let err = Tavily::from_env("TOOLS_TAVILY_TEST_SURELY_UNSET").unwrap_err();
        assert!(matches!(err, TavilyError::MissingApiKey { var: "TOOLS_TAVILY_TEST_SURELY_UNSET" }));
        assert!(err.to_string().starts_with("TOOLS_TAVILY_TEST_SURELY_UNSET is not set"), "{err}");
    }

    #[test]
    fn endpoints_keep_the_base_path() {
        let at = |base| endpoint(base).unwrap().to_string();
        assert_eq!(at("https://api.tavily.com"), "https://api.tavily.com/search");
        assert_eq!(at("http://127.0.0.1:8080/"), "http://127.0.0.1:8080/search");
        assert_eq!(at("https://proxy.example/tavily"), "https://proxy.example/tavily/search");
        assert!(endpoint("ftp://x").unwrap_err().to_string().contains("http or https"));
        assert!(endpoint("not a url").is_err());
    }

    #[test]
    fn builders_update_the_spec_and_defaults_hold() {
        let tavily =
            Tavily::from_api_key("tvly-k").unwrap().with_name("search").with_description("Find pages.");
        assert_eq!(tavily.spec().name(), "search");
        assert_eq!(tavily.spec().description(), "Find pages.");
        assert_eq!(tavily.search_opts(), &SearchOptions::default());
        assert_eq!(tavily.endpoint().as_str(), "https://api.tavily.com/search");
        assert_eq!(tavily.spec().annotations().read_only, Some(true));
        let err = tavily.with_search_opts(SearchOptions::new().with_max_results(50)).unwrap_err();
        assert!(err.to_string().contains("max_results"), "{err}");
    }
}
