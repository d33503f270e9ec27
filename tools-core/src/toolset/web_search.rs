//! The reserved `web_search` entry: the provider's native search, with an
//! optional function for the providers that have none.

use std::sync::Arc;

use crate::Tool;

/// The provider-native web search entry, and the function that stands in for
/// it where a provider has no native search.
///
/// ```
/// use toolcall_core::toolset::{Toolset, WebSearch};
/// let mut tools = Toolset::new();
/// tools.add_web_search(WebSearch::new().with_max_uses(3).with_allowed_domains(["docs.rs"])).unwrap();
/// assert_eq!(tools.web_search().unwrap().max_uses, Some(3));
/// ```
#[derive(Clone, Default)]
pub struct WebSearch {
    /// Only results from these domains.
    pub allowed_domains: Vec<String>,
    /// Never results from these domains.
    pub blocked_domains: Vec<String>,
    /// The most searches the provider may run in one request.
    pub max_uses: Option<u32>,
    /// The function registered under `web_search`, for dialects without native search.
    pub fallback: Option<Arc<dyn Tool>>,
}

impl WebSearch {
    /// Native search with no options and no fallback.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allow only these domains.
    pub fn with_allowed_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.allowed_domains = domains.into_iter().map(Into::into).collect();
        self
    }

    /// Never use these domains.
    pub fn with_blocked_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.blocked_domains = domains.into_iter().map(Into::into).collect();
        self
    }

    /// Limit the searches per request.
    pub fn with_max_uses(mut self, max_uses: u32) -> Self {
        self.max_uses = Some(max_uses);
        self
    }

    /// The function to call where a provider has no native search; it is
    /// registered under the name `web_search`, whatever its own name.
    pub fn with_fallback(mut self, tool: impl Tool + 'static) -> Self {
        self.fallback = Some(Arc::new(tool));
        self
    }
}

impl std::fmt::Debug for WebSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSearch")
            .field("allowed_domains", &self.allowed_domains)
            .field("blocked_domains", &self.blocked_domains)
            .field("max_uses", &self.max_uses)
            .field("fallback", &self.fallback.as_ref().map(|tool| tool.spec().name().to_owned()))
            .finish()
    }
}
