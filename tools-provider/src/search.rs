//! The `tool_search` entry in each dialect ([`ToolSearch`]): Anthropic's
//! native tool search, where the deferred tools are sent with
//! `defer_loading: true` and Anthropic searches them
//! (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool>);
//! elsewhere a local function, [`LocalSearch`], whose calls the function the
//! toolset registers for it answers (the agent loop's, BM25), and the
//! deferred tools are left out until a search found them.

use std::sync::LazyLock;

use serde_json::{Value, json};
use toolcall_core::toolset::{RESERVED_TOOL_SEARCH, ToolSearch};
use toolcall_core::{JsonObject, OutputFuture, Parameters, Tool, ToolContext, ToolError, ToolSpec};

/// Anthropic's server-side search over the deferred tools (BM25 over names,
/// descriptions and argument names and descriptions).
pub(crate) fn anthropic_native() -> Value {
    json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
}

/// The local `tool_search` function as the model sees it: the model sends
/// what it wants to do, and reads the definitions of the tools that fit,
/// which it can call from the next turn on. The agent loop registers the
/// function that answers it ([`Toolset::with_search_function`](toolcall_core::Toolset::with_search_function)), which runs
/// like any tool; run by itself, this one says it needs that function.
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

/// The name, description, arguments and hints of the local search.
pub(crate) fn local_spec() -> &'static ToolSpec {
    static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
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
        let schema = match schema {
            Value::Object(object) => object,
            _ => JsonObject::new(),
        };
        let description = "Find tools you do not have yet. More tools exist than are offered to you: search \
            them by what you want to do, and the tools found (their names, descriptions and arguments) can be \
            called from your next turn on.";
        ToolSpec::from_parameters(RESERVED_TOOL_SEARCH, description, Parameters::from_schema(schema))
            .with_read_only(true)
            .with_idempotent(true)
    });
    &SPEC
}

impl Tool for LocalSearch {
    fn spec(&self) -> &ToolSpec {
        local_spec()
    }

    fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> {
        let max = self.max_results;
        Box::pin(async move {
            Err(ToolError::failed(format!(
                "`{RESERVED_TOOL_SEARCH}` (up to {max} tools) is answered by the function the toolset registers \
                 for it (Toolset::with_search_function), which the agent loop does"
            )))
        })
    }
}
