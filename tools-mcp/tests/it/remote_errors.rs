//! A remote tool's errors through this SDK's `McpClient`, from this SDK's
//! server: each ends as it would have locally (bad arguments are not a
//! failure), and the model reads the same text, not wrapped twice.

use serde_json::Value;
use toolcall_core::{Outcome, ToolCall, ToolContext, ToolError, Toolset};
use toolcall_macros::tool;
use toolcall_mcp::{McpClient, McpServer};

/// Divide `a` by `b`.
#[tool(args)]
async fn divide(a: i64, b: i64) -> Result<String, ToolError> {
    match b {
        0 => Err(ToolError::failed("division by \"zero\"")),
        1 => Err(ToolError::retry("dividing by 1 changes nothing: pick another b")),
        _ => Ok((a / b).to_string()),
    }
}

/// Delete a file.
#[tool(args, needs_approval)]
async fn delete_file(path: String) -> String {
    format!("deleted {path}")
}

fn served() -> Toolset {
    Toolset::builder().add(Divide).add(DeleteFile).build().expect("a toolset")
}

/// A client of an in-process server of `served()`, its tools in a toolset.
async fn remote() -> Toolset {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(McpServer::new(served()), server_side).await {
            let _ = running.waiting().await;
        }
    });
    let client = McpClient::connect(client_side).await.expect("connected");
    let mut tools = Toolset::new();
    client.register(&mut tools).await.expect("registered");
    tools
}

#[tokio::test]
async fn a_remote_error_ends_and_reads_as_the_same_local_one() {
    let (local, remote) = (served(), remote().await);
    let ctx = ToolContext::new();
    let cases = [
        (r#"{"a":6,"b":"two"}"#, Outcome::InvalidArguments),
        (r#"{"a":6}"#, Outcome::InvalidArguments),
        (r#"{"a":6,"b":0}"#, Outcome::Failed),
        (r#"{"a":6,"b":1}"#, Outcome::Retry),
        (r#"{"a":6,"b":2}"#, Outcome::Success),
    ];
    for (arguments, outcome) in cases {
        let call = ToolCall::new("1", "divide", arguments);
        let (here, there) = (local.call(&ctx, &call).await, remote.call(&ctx, &call).await);
        assert_eq!(here.outcome, outcome, "{arguments}: {}", here.content);
        assert_eq!((there.outcome, &there.content), (here.outcome, &here.content), "{arguments}");
    }
    // Refused by the server (this client cannot ask a person): denied,
    // and the model reads the server's error object, once.
    let call = ToolCall::new("2", "delete_file", r#"{"path":"/tmp/x"}"#);
    let denied = remote.call(&ctx, &call).await;
    assert_eq!(denied.outcome, Outcome::Denied, "{}", denied.content);
    let object: Value = serde_json::from_str(&denied.content).expect("an error object");
    let message = object["error"].as_str().expect("its message is text");
    assert!(message.starts_with("tool `delete_file` needs a person's approval"), "{}", denied.content);
    assert!(!message.contains("error"), "wrapped twice: {}", denied.content);
}
