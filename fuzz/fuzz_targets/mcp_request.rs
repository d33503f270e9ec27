//! The MCP request path: a line read from a transport, parsed as rmcp parses
//! client messages, and a `tools/call` among them run through the toolset as
//! the bridge runs it (arguments re-serialized, the contract applied).
//! Nothing panics, and every call ends in a result of the contract.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use toolcall::{Outcome, ToolCall, ToolContext, Toolset, tool};

/// Adds two numbers.
#[tool(args)]
async fn add(a: i64, b: i64) -> String {
    a.saturating_add(b).to_string()
}

static TOOLS: LazyLock<Toolset> = LazyLock::new(|| Toolset::builder().add(Add).build().expect("a valid tool"));

fuzz_target!(|data: &[u8]| {
    let Ok(JsonRpcMessage::Request(request)) = serde_json::from_slice::<ClientJsonRpcMessage>(data) else {
        return;
    };
    let ClientRequest::CallToolRequest(call) = request.request else { return };
    let arguments = match &call.params.arguments {
        Some(arguments) => serde_json::Value::Object(arguments.clone()).to_string(),
        None => String::from("{}"),
    };
    let call = ToolCall::new(request.id.to_string(), call.params.name.as_ref(), arguments);
    let result = futures::executor::block_on(TOOLS.call(&ToolContext::new(), &call));
    assert!(
        matches!(result.outcome, Outcome::Success | Outcome::InvalidArguments | Outcome::NotFound),
        "{result:?}"
    );
});
