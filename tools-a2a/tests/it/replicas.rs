//! Two servers (replicas) on one SQLite file: a task is the store's, so
//! either server reads it, decides its held call, and runs it once; and
//! another user finds it on neither.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::response::IntoResponse;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use toolcall_a2a::A2aServer;
use toolcall_agent::{Agent, Message, Model, ModelError, ModelRequest, ModelResponse};
use toolcall_core::{ToolCall, ToolContext, ToolError, Toolset};
use toolcall_session::SqlStore;

use crate::{REMOVED, RemoveDir, message, post_rpc, serve_router};

/// Wait `seconds` (what a run stopped midway is busy with).
#[toolcall_macros::tool(args, crate = "toolcall_core")]
async fn wait_long(_ctx: &ToolContext, seconds: u64) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    Ok(format!("waited {seconds} s"))
}

/// A model that reads the conversation, so that any server may ask it
/// at any point: after a tool's result it says it is done; asked to
/// `wait`, it waits a minute; otherwise it removes the directory the user
/// named (a call held for approval).
#[derive(Debug)]
struct Janitor;

impl Model for Janitor {
    fn provider(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "janitor"
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let response = match request.messages.last() {
                Some(Message::Tool { results }) => {
                    let said = results.first().map(|result| result.content.clone()).unwrap_or_default();
                    ModelResponse::new(format!("Done: {said}."), [])
                }
                Some(last) if last.text() == "wait" => {
                    ModelResponse::new("", [ToolCall::new("call-1", "wait_long", r#"{"seconds": 60}"#)])
                }
                Some(last) => {
                    let path = last.text();
                    let arguments = json!({"path": path}).to_string();
                    ModelResponse::new("", [ToolCall::new("call-1", "remove_dir", arguments)])
                }
                None => ModelResponse::new("Nothing to do.", []),
            };
            Ok(response)
        })
    }
}

/// Two servers on one SQLite file, each with its own connection pool as
/// two processes would have, the user from `x-user`; their base URLs.
async fn two_servers() -> (String, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let mut urls = Vec::new();
    for _ in 0..2 {
        let store = SqlStore::sqlite(&path).await.unwrap();
        let tools = Toolset::builder().add(RemoveDir).add(WaitLong).build().unwrap();
        let agent = Agent::from_shared(Arc::new(Janitor), tools).unwrap();
        let server =
            A2aServer::new(agent).with_name("janitor").with_store(Arc::new(store)).with_auth(|parts| {
                let user = parts.headers.get("x-user").and_then(|v| v.to_str().ok()).map(str::to_owned);
                Box::pin(async move { user.ok_or_else(|| StatusCode::UNAUTHORIZED.into_response()) })
            });
        urls.push(serve_router(server.router()).await);
    }
    let two = urls.pop().unwrap();
    (urls.pop().unwrap(), two, dir)
}

/// One JSON-RPC call from `user`; the whole answer.
async fn rpc_as(url: &str, user: &str, method: &str, params: Value) -> Value {
    let response = post_rpc(url, Some(user), method, params).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// How many times `remove_dir` ran on `path`.
fn removed(path: &str) -> usize {
    REMOVED.lock().unwrap().iter().filter(|removed| *removed == path).count()
}

/// Alice's task on `url` to remove `path`, waiting for approval.
async fn held(url: &str, path: &str) -> Value {
    let started = rpc_as(url, "alice", "SendMessage", message(json!([{"text": path}]), None)).await;
    let task = started["result"]["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{started}");
    task
}

/// Bob, on either server, is told there is no such task, whichever way
/// he asks.
async fn bob_finds_nothing(urls: [&str; 2], id: &str) {
    let not_found = json!({"code": -32001, "message": format!("Task not found: {id}")});
    for url in urls {
        let read = rpc_as(url, "bob", "GetTask", json!({"id": id})).await;
        assert_eq!(read["error"], not_found, "{read}");
        let approve =
            rpc_as(url, "bob", "SendMessage", message(json!([{"text": "approve"}]), Some(id))).await;
        assert_eq!(approve["error"], not_found, "{approve}");
        let cancel = rpc_as(url, "bob", "CancelTask", json!({"id": id})).await;
        assert_eq!(cancel["error"], not_found, "{cancel}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_paused_on_one_server_is_read_and_approved_on_the_other_and_runs_once() {
    let (one, two, _dir) = two_servers().await;
    let path = "replicas-across";
    let task = held(&one, path).await;
    let id = task["id"].as_str().unwrap();

    // The other server reads it as the first answered it.
    let read = rpc_as(&two, "alice", "GetTask", json!({"id": id})).await;
    assert_eq!(read["result"], task, "{read}");
    bob_finds_nothing([&one, &two], id).await;
    assert_eq!(removed(path), 0);

    // Approved there: it runs there, once.
    let done = rpc_as(&two, "alice", "SendMessage", message(json!([{"text": "approve"}]), Some(id))).await;
    let done = &done["result"]["task"];
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(done["artifacts"][0]["parts"][0]["text"], format!("Done: removed {path}."));
    assert_eq!(removed(path), 1);
    // The first server reads the end too: the same task, to the letter.
    let read = rpc_as(&one, "alice", "GetTask", json!({"id": id})).await;
    assert_eq!(read["result"], *done, "{read}");
    let history = done["history"].as_array().unwrap();
    let said: Vec<(&str, String)> = history
        .iter()
        .map(|message| (message["role"].as_str().unwrap(), message["parts"][0]["text"].to_string()))
        .collect();
    assert_eq!(said.len(), 4, "{said:?}");
    assert_eq!(said[0], ("ROLE_USER", json!(path).to_string()));
    assert_eq!(said[1].0, "ROLE_AGENT");
    assert!(said[1].1.contains("Approval needed"), "{said:?}");
    assert_eq!(said[2], ("ROLE_USER", json!("approve").to_string()));
    assert_eq!(said[3], ("ROLE_AGENT", json!(format!("Done: removed {path}.")).to_string()));
    // Over, on both: a second approval finds nothing to decide.
    for url in [&one, &two] {
        let again =
            rpc_as(url, "alice", "SendMessage", message(json!([{"text": "approve"}]), Some(id))).await;
        assert_eq!(again["error"]["code"], -32004, "{again}");
    }
    bob_finds_nothing([&one, &two], id).await;
    assert_eq!(removed(path), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_held_call_approved_on_two_servers_at_once_runs_once() {
    let (one, two, _dir) = two_servers().await;
    for trial in 0..10 {
        let path = format!("replicas-raced-{trial}");
        // Paused on either server, turn about.
        let task = held(if trial % 2 == 0 { &one } else { &two }, &path).await;
        let id = task["id"].as_str().unwrap();
        let approve = message(json!([{"text": "approve"}]), Some(id));
        let (first, second) = tokio::join!(
            rpc_as(&one, "alice", "SendMessage", approve.clone()),
            rpc_as(&two, "alice", "SendMessage", approve.clone()),
        );
        let (ran, refused) = if first.get("result").is_some() { (first, second) } else { (second, first) };
        assert_eq!(ran["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "trial {trial}: {ran}");
        // The second is told the task cannot take it now, and why.
        assert_eq!(refused["error"]["code"], -32004, "trial {trial}: {refused}");
        let why = refused["error"]["message"].as_str().unwrap();
        let reasons = [
            "another message decided its held calls first",
            "is not waiting for input (it is TASK_STATE_WORKING)",
            "is over (it is TASK_STATE_COMPLETED)",
        ];
        assert!(reasons.iter().any(|reason| why.contains(reason)), "trial {trial}: {why}");
        assert_eq!(removed(&path), 1, "trial {trial}: the tool ran once");

        // The task as the other server reads it: completed, approved once.
        let read = rpc_as(&two, "alice", "GetTask", json!({"id": id})).await;
        assert_eq!(read["result"], ran["result"]["task"], "trial {trial}: {read}");
        let history = read["result"]["history"].as_array().unwrap();
        let approvals = history.iter().filter(|message| message["parts"][0]["text"] == "approve").count();
        assert_eq!((history.len(), approvals), (4, 1), "trial {trial}: {read}");
        bob_finds_nothing([&one, &two], id).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_canceled_on_the_other_server_stays_canceled_there_and_here() {
    let (one, two, _dir) = two_servers().await;
    let path = "replicas-canceled";
    let task = held(&one, path).await;
    let id = task["id"].as_str().unwrap();
    let canceled = rpc_as(&two, "alice", "CancelTask", json!({"id": id})).await;
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    let read = rpc_as(&one, "alice", "GetTask", json!({"id": id})).await;
    assert_eq!(read["result"]["status"]["state"], "TASK_STATE_CANCELED", "{read}");
    let late = rpc_as(&one, "alice", "SendMessage", message(json!([{"text": "approve"}]), Some(id))).await;
    assert_eq!(late["error"]["code"], -32004, "{late}");
    let again = rpc_as(&one, "alice", "CancelTask", json!({"id": id})).await;
    assert_eq!(again["error"]["code"], -32002, "{again}");
    assert_eq!(removed(path), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_going_on_one_server_is_seen_and_stopped_from_the_other() {
    let (one, two, _dir) = two_servers().await;
    let mut stream =
        post_rpc(&one, Some("alice"), "SendStreamingMessage", message(json!([{"text": "wait"}]), None)).await;
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    // The stream's first event is the task.
    let mut body = String::new();
    while !body.contains("\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await.unwrap().unwrap();
        body.push_str(&String::from_utf8_lossy(&chunk.expect("the stream ended before its first event")));
    }
    let first: Value =
        serde_json::from_str(body.split("\n\n").next().unwrap().trim_start_matches("data: ")).unwrap();
    let id = first["result"]["task"]["id"].as_str().unwrap().to_owned();

    // The other server sees it working (the run holds its conversation).
    let read = rpc_as(&two, "alice", "GetTask", json!({"id": id})).await;
    assert_eq!(read["result"]["status"]["state"], "TASK_STATE_WORKING", "{read}");
    bob_finds_nothing([&one, &two], &id).await;

    // Canceled there: the run here stops at its next lease renewal (within
    // a second), and its stream ends canceled.
    let canceled = rpc_as(&two, "alice", "CancelTask", json!({"id": id})).await;
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    let stopped = Instant::now();
    while let Some(chunk) =
        tokio::time::timeout(Duration::from_secs(10), stream.chunk()).await.unwrap().unwrap()
    {
        body.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(stopped.elapsed() < Duration::from_secs(5), "stopped after {:?}", stopped.elapsed());
    let last = body.trim_end().rsplit("\n\n").next().unwrap().trim_start_matches("data: ");
    let last: Value = serde_json::from_str(last).unwrap();
    assert_eq!(last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_CANCELED", "{body}");
    let read = rpc_as(&one, "alice", "GetTask", json!({"id": id})).await;
    assert_eq!(read["result"]["status"]["state"], "TASK_STATE_CANCELED", "{read}");
    assert!(read["result"]["artifacts"].is_null(), "{read}");
}
