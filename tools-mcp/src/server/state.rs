//! What a server holds between calls: the toolset of now, the clients to
//! tell when it changes, and each version's listing and validators built once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use rmcp::{Peer, RoleServer};
use tokio::sync::watch;

use crate::approval::NEEDS_APPROVAL;
use toolcall_core::{Tool, Toolset};
use toolcall_provider::Dialect;

pub(super) struct Shared {
    pub(super) state: RwLock<Arc<State>>,
    /// Sessions of clients that initialized (protocol versions up to
    /// 2025-11-25): told of changes directly.
    pub(super) peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Bumped on every change: each `subscriptions/listen` stream (protocol
    /// 2026-07-28, which has no sessions) waits on it.
    pub(super) changes: watch::Sender<u64>,
}

/// One version of the toolset, with its `tools/list` answer and its
/// output schemas' validators built once.
pub(super) struct State {
    pub(super) toolset: Toolset,
    pub(super) listed: Vec<rmcp::model::Tool>,
    /// Each tool with an output schema, by name: the validator its
    /// structured content must pass, or `None` for a schema that does not
    /// compile (then any JSON object is sent, as for a tool without one).
    pub(super) outputs: HashMap<String, Option<jsonschema::Validator>>,
}

impl State {
    pub(super) fn new(toolset: Toolset) -> Arc<Self> {
        let listed = toolset.iter().filter_map(|tool| mcp_tool(tool.as_ref())).collect();
        let outputs = toolset
            .iter()
            .filter_map(|tool| {
                let schema = serde_json::Value::Object(tool.spec().output_schema()?.clone());
                let validator = jsonschema::options().should_validate_formats(false).build(&schema);
                if let Err(error) = &validator {
                    tracing::warn!(tool = tool.spec().name(), %error, "the output schema does not compile");
                }
                Some((tool.spec().name().to_owned(), validator.ok()))
            })
            .collect();
        Arc::new(Self { toolset, listed, outputs })
    }

    /// Whether `value` may be the structured content of `tool`'s result:
    /// it fits the tool's output schema, when it has one.
    pub(super) fn fits(&self, tool: &str, value: &serde_json::Value) -> bool {
        match self.outputs.get(tool) {
            Some(Some(validator)) => validator.is_valid(value),
            Some(None) | None => true,
        }
    }
}

/// How a tool is listed: name, title, description, input and output schema,
/// annotations; in `_meta`, whether its every call needs approval. `None`,
/// with a warning, for a tool the MCP dialect refuses (examples that do not
/// fit its schema): it is not listed, as no client could be told of it
/// rightly, and `export` and the model dialects refuse it too.
fn mcp_tool(tool: &dyn Tool) -> Option<rmcp::model::Tool> {
    // One definition of a listed tool: the MCP dialect's, read into rmcp's type.
    let definition = match Dialect::Mcp.function(tool) {
        Ok(definition) => definition,
        Err(error) => {
            tracing::warn!(tool = tool.spec().name(), %error, "the tool is not listed");
            return None;
        }
    };
    let mut listed: rmcp::model::Tool = serde_json::from_value(definition)
        .expect("the MCP dialect writes rmcp's tool shape: strings and JSON objects");
    if tool.spec().needs_approval() {
        let meta = listed.meta.get_or_insert_with(Default::default);
        meta.0.insert(NEEDS_APPROVAL.to_owned(), serde_json::Value::Bool(true));
    }
    Some(listed)
}
