//! A scripted agent served over A2A on loopback, for the official SDKs'
//! clients (tests/a2a/client.py, tests/a2a/client.mjs), offline.
//!
//! ```sh
//! cargo run -p toolcall-a2a --example a2a_server   # prints the URL, then serves
//! ```
//!
//! The agent answers "Hello from toolcall." to any prompt; a prompt that
//! contains "clean" makes it call `remove_dir`, which needs approval, so
//! the task waits `input-required` until the client approves or denies.
//! Its model is scripted per prompt, so that clients can send any number
//! of tasks in any order.

use std::sync::Arc;

use futures::future::BoxFuture;
use toolcall_agent::{Agent, Message, Model, ModelError, ModelRequest, ModelResponse};
use toolcall_core::{ToolCall, ToolContext, ToolError, Toolset};

/// Remove a directory (it only says so).
#[toolcall_macros::tool(args, needs_approval, crate = "toolcall_core")]
async fn remove_dir(_ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    Ok(format!("removed {path}"))
}

/// A model that reads the conversation: a tool result answers it, a
/// prompt about cleaning calls the tool, anything else is greeted.
#[derive(Debug)]
struct Scripted;

impl Model for Scripted {
    fn provider(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "a2a-example"
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let last = request.messages.last();
            let response = match last {
                Some(Message::Tool { results }) => {
                    let result = results.first().map(|r| r.content.clone()).unwrap_or_default();
                    ModelResponse::new(format!("Done: {result}."), [])
                }
                Some(message) if message.text().to_lowercase().contains("clean") => ModelResponse::new(
                    "",
                    [ToolCall::new("call-1", "remove_dir", r#"{"path":"/tmp/build"}"#)],
                ),
                _ => ModelResponse::new("Hello from toolcall.", []),
            };
            Ok(response)
        })
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let tools = Toolset::builder().add(RemoveDir).build().expect("one tool");
    let agent = Agent::from_shared(Arc::new(Scripted), tools).expect("any dialect takes remove_dir");
    let server = toolcall_a2a::A2aServer::new(agent)
        .with_name("toolcall-example")
        .with_description("A scripted toolcall agent: greets, and removes directories with approval.")
        .with_version("0.1.0");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    // The first line is the URL; the clients read it.
    println!("http://{}", listener.local_addr()?);
    server.serve(listener).await
}
