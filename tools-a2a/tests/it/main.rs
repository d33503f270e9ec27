//! The A2A server and client over loopback, offline: raw JSON-RPC with
//! reqwest against `A2aServer` (a scripted model behind it), and
//! `A2aAgent` against it and against peers that fail.

mod approval;
mod client;
mod connections;
mod owners;
mod replicas;
mod server;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolcall_a2a::A2aServer;
use toolcall_agent::Agent;
use toolcall_agent::testing::ScriptedModel;
use toolcall_core::{ToolContext, ToolError, Toolset};

/// The paths `remove_dir` removed, for the tests to check which ran.
pub(crate) static REMOVED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Remove a directory.
#[toolcall_macros::tool(args, needs_approval, crate = "toolcall_core")]
async fn remove_dir(_ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    REMOVED.lock().unwrap().push(path.clone());
    Ok(format!("removed {path}"))
}

/// Serve `router` on a loopback port; its base URL.
pub(crate) async fn serve_router(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// An A2A server for this model, with `remove_dir`; its base URL.
pub(crate) async fn serve(model: ScriptedModel) -> String {
    serve_shared(Arc::new(model)).await
}

/// [`serve`], the model kept by the test too (to read what it was sent).
pub(crate) async fn serve_shared(model: Arc<ScriptedModel>) -> String {
    let tools = Toolset::builder().add(RemoveDir).build().unwrap();
    let agent = Agent::from_shared(model, tools).unwrap();
    let server = A2aServer::new(agent).with_name("janitor").with_description("Cleans up.");
    serve_router(server.router()).await
}

/// One JSON-RPC call; the whole answer.
pub(crate) async fn rpc(url: &str, method: &str, params: Value) -> Value {
    let response = post_rpc(url, None, method, params).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// One JSON-RPC call, as `user` says who it is (in `x-user`) if given;
/// the response as it came.
pub(crate) async fn post_rpc(
    url: &str,
    user: Option<&str>,
    method: &str,
    params: Value,
) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let mut request = reqwest::Client::new().post(format!("{url}/")).header("A2A-Version", "1.0").json(&body);
    if let Some(user) = user {
        request = request.header("x-user", user);
    }
    request.send().await.unwrap()
}

/// A user message with these parts, on `task` if given.
pub(crate) fn message(parts: Value, task: Option<&str>) -> Value {
    let mut message = json!({"messageId": "m-1", "role": "ROLE_USER", "parts": parts});
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    json!({"message": message})
}
