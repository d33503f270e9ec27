//! The `tool_search` entry in each dialect ([`ToolSearch`]): Anthropic's
//! native tool search, where the deferred tools are sent with
//! `defer_loading: true` and Anthropic searches them
//! (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool>);
//! elsewhere a local function, [`LocalSearch`], whose calls the agent loop
//! answers, and the deferred tools are left out until a search found them.

use std::sync::LazyLock;

use serde_json::{Value, json};
use tools_core::toolset::{RESERVED_TOOL_SEARCH, ToolSearch};
use tools_core::{Annotations, JsonObject, Tool, ToolContext, ToolError, ToolFuture};

/// Anthropic's server-side search over the deferred tools (BM25 over names,
/// descriptions and argument names and descriptions).
pub fn anthropic_native() -> Value {
    json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
}

/// The local `tool_search` function: the model sends what it wants to do,
/// and reads the definitions of the tools that fit, which it can call from
/// the next turn on. Its calls are answered by the agent loop (which knows
/// the toolset); run by itself it says so.
#[derive(Debug)]
pub struct LocalSearch {
    max_results: usize,
}

impl LocalSearch {
    /// The function for this search setting.
    pub fn new(search: &ToolSearch) -> Self {
        Self { max_results: search.max_results() }
    }
}

static PARAMETERS: LazyLock<JsonObject> = LazyLock::new(|| {
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What you want to do, in a few words: the product and the action, e.g. \"create a Jira issue\"."
            }
        },
        "required": ["query"],
        "additionalProperties": false
    });
    match schema {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
});

static DESCRIPTION: LazyLock<String> = LazyLock::new(|| {
    "Find tools you do not have yet. More tools exist than are offered to you: search them by what you \
     want to do, and the tools found (their names, descriptions and arguments) can be called from your \
     next turn on."
        .to_owned()
});

impl Tool for LocalSearch {
    fn name(&self) -> &str {
        RESERVED_TOOL_SEARCH
    }

    fn description(&self) -> &str {
        &DESCRIPTION
    }

    fn parameters(&self) -> &JsonObject {
        &PARAMETERS
    }

    fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> ToolFuture<'a> {
        let max = self.max_results;
        Box::pin(async move {
            Err(ToolError::failed(format!(
                "`{RESERVED_TOOL_SEARCH}` (up to {max} tools) is answered by the agent loop, which knows the toolset"
            )))
        })
    }

    fn annotations(&self) -> &Annotations {
        static HINTS: Annotations = Annotations {
            title: None,
            read_only: Some(true),
            destructive: None,
            idempotent: Some(true),
            open_world: None,
        };
        &HINTS
    }
}
