//! The method form: the impl's type keeps its fields as state and may supply
//! its own spec, built at runtime.
#![deny(warnings, missing_docs)]

use toolcall::{Tool, ToolContext, ToolSpec, tool};

/// The request.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct SearchRequest {
    /// What to look for.
    pub query: String,
}

/// A search tool with an API key and a spec of its own.
pub struct Search {
    key: String,
    spec: ToolSpec,
}

impl Search {
    /// A search tool under a name chosen at runtime.
    pub fn new(key: &str, name: &'static str) -> Self {
        Self { key: key.to_owned(), spec: Self::tool_spec().with_name(name) }
    }
}

#[tool]
impl Search {
    /// Search the web.
    #[tool(name = "search", spec = self.spec, open_world)]
    pub async fn search(&self, req: SearchRequest) -> anyhow::Result<String> {
        anyhow::ensure!(!req.query.is_empty(), "empty query");
        Ok(format!("{}:{}", self.key, req.query))
    }

    /// Other methods stay as they are.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// A stateful tool with a spec built once, from the attribute.
pub struct Counter {
    start: u32,
}

#[tool]
impl Counter {
    /// Count up from the start.
    #[tool(args)]
    async fn count(&self, _ctx: &ToolContext, by: u32) -> u32 {
        self.start + by
    }
}

fn main() {
    let search = Search::new("k", "web_lookup");
    assert_eq!(search.spec().name(), "web_lookup");
    assert_eq!(search.spec().description(), "Search the web.");
    assert_eq!(search.spec().annotations().open_world, Some(true));
    assert_eq!(search.key(), "k");
    let ctx = ToolContext::new();
    let out = futures::executor::block_on(search.call_text(&ctx, r#"{"query":"rust"}"#)).unwrap();
    assert_eq!(out, "k:rust");
    let err = futures::executor::block_on(search.call_text(&ctx, r#"{"query":""}"#)).unwrap_err();
    assert_eq!(err.model_content(), r#"{"error":"empty query"}"#);
    let counter = Counter { start: 40 };
    assert_eq!(counter.spec().name(), "count");
    assert_eq!(futures::executor::block_on(counter.call_text(&ctx, r#"{"by":2}"#)).unwrap(), "42");
}
