//! Whose task: an auth hook names each request's user (here from the
//! header `x-user`), and a task, its held calls and its context are its
//! owner's alone; another user is answered as if they did not exist.

use std::sync::Arc;

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde_json::{Value, json};
use toolcall_a2a::A2aServer;
use toolcall_a2a::wire::SecurityScheme;
use toolcall_agent::Agent;
use toolcall_agent::testing::ScriptedModel;
use toolcall_core::{ToolCall, Toolset};

use crate::{REMOVED, RemoveDir, message, post_rpc, serve, serve_router};

/// A server whose hook takes the user from `x-user` and refuses a request
/// without it (401, with a challenge and a reason of its own); its card
/// says so. Its base URL.
async fn serve_owned(model: Arc<ScriptedModel>) -> String {
    let tools = Toolset::builder().add(RemoveDir).build().unwrap();
    let agent = Agent::from_shared(model, tools).unwrap();
    let server = A2aServer::new(agent)
        .with_name("janitor")
        .with_auth(|parts| {
            let user = parts.headers.get("x-user").and_then(|v| v.to_str().ok()).map(str::to_owned);
            Box::pin(async move {
                user.ok_or_else(|| {
                    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "X-User")], "who are you?")
                        .into_response()
                })
            })
        })
        .with_security_scheme("user", SecurityScheme::api_key("header", "x-user"));
    serve_router(server.router()).await
}

/// One JSON-RPC call from `user`; the whole answer.
async fn rpc_as(url: &str, user: &str, method: &str, params: Value) -> Value {
    let response = post_rpc(url, Some(user), method, params).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// The model: remove `path` (held for approval), then say so.
fn remove(path: &str) -> Arc<ScriptedModel> {
    Arc::new(
        ScriptedModel::new()
            .then_calls([ToolCall::new("call-1", "remove_dir", format!(r#"{{"path":"{path}"}}"#))])
            .then_text(format!("Removed {path}.")),
    )
}

/// How many times `remove_dir` ran on `path`.
fn removed(path: &str) -> usize {
    REMOVED.lock().unwrap().iter().filter(|removed| *removed == path).count()
}

/// The error an id no task has gets.
fn not_found(id: &str) -> Value {
    json!({"code": -32001, "message": format!("Task not found: {id}")})
}

#[tokio::test]
async fn another_users_task_is_not_found_and_stays_as_it_was() {
    let path = "owned-by-alice";
    let url = serve_owned(remove(path)).await;
    let started = rpc_as(&url, "alice", "SendMessage", message(json!([{"text": "Clean up"}]), None)).await;
    let task = started["result"]["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{started}");
    let id = task["id"].as_str().unwrap().to_owned();
    let unknown = rpc_as(&url, "bob", "GetTask", json!({"id": "no-such-task"})).await;
    assert_eq!(unknown["error"], not_found("no-such-task"), "{unknown}");

    // Bob, with alice's task id: every door says there is no such task.
    let read = rpc_as(&url, "bob", "GetTask", json!({"id": id})).await;
    assert_eq!(read["error"], not_found(&id), "{read}");
    let cancel = rpc_as(&url, "bob", "CancelTask", json!({"id": id})).await;
    assert_eq!(cancel["error"], not_found(&id), "{cancel}");
    let approve = rpc_as(&url, "bob", "SendMessage", message(json!([{"text": "approve"}]), Some(&id))).await;
    assert_eq!(approve["error"], not_found(&id), "{approve}");
    let decisions = json!([{"data": {"decisions": {"call-1": "approve"}}}]);
    let decided = rpc_as(&url, "bob", "SendMessage", message(decisions, Some(&id))).await;
    assert_eq!(decided["error"], not_found(&id), "{decided}");
    // With the task's own context too: not found, not "does not match".
    let mut in_context = message(json!([{"text": "approve"}]), Some(&id));
    in_context["message"]["contextId"] = task["contextId"].clone();
    let in_context = rpc_as(&url, "bob", "SendMessage", in_context).await;
    assert_eq!(in_context["error"], not_found(&id), "{in_context}");
    // The streamed form (what a client follows a task's updates with):
    // refused before any stream starts.
    let streamed =
        post_rpc(&url, Some("bob"), "SendStreamingMessage", message(json!([{"text": "approve"}]), Some(&id)))
            .await;
    assert_eq!(streamed.headers()["content-type"], "application/json");
    let streamed: Value = streamed.json().await.unwrap();
    assert_eq!(streamed["error"], not_found(&id), "{streamed}");
    // This server has no SubscribeToTask: bob is told what alice would be.
    let subscribe = rpc_as(&url, "bob", "SubscribeToTask", json!({"id": id})).await;
    let alice_subscribes = rpc_as(&url, "alice", "SubscribeToTask", json!({"id": id})).await;
    assert_eq!(subscribe, alice_subscribes);
    assert_eq!(subscribe["error"]["code"], -32601, "{subscribe}");

    // Alice's task is as it was: still waiting, its call not run.
    let mine = rpc_as(&url, "alice", "GetTask", json!({"id": id})).await;
    assert_eq!(mine["result"], task, "{mine}");
    assert_eq!(removed(path), 0);

    // Its owner decides: the call runs, once.
    let done = rpc_as(&url, "alice", "SendMessage", message(json!([{"text": "approve"}]), Some(&id))).await;
    assert_eq!(done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(removed(path), 1);
    let read = rpc_as(&url, "bob", "GetTask", json!({"id": id})).await;
    assert_eq!(read["error"], not_found(&id), "{read}");
}

#[tokio::test]
async fn a_request_the_hook_refuses_gets_its_response_and_the_card_stays_public() {
    let path = "refused-dir";
    let url = serve_owned(remove(path)).await;
    let refused = post_rpc(&url, None, "SendMessage", message(json!([{"text": "Clean up"}]), None)).await;
    assert_eq!(refused.status(), 401);
    assert_eq!(refused.headers()["www-authenticate"], "X-User");
    assert_eq!(refused.text().await.unwrap(), "who are you?");
    // The hook runs before the body is read: no parse error for nobody.
    let garbage = reqwest::Client::new().post(format!("{url}/")).body("{not json").send().await.unwrap();
    assert_eq!(garbage.status(), 401);
    assert_eq!(removed(path), 0);

    // The card, to anyone: how to authenticate.
    let card = reqwest::get(format!("{url}/.well-known/agent-card.json")).await.unwrap();
    assert_eq!(card.status(), 200);
    let card: Value = card.json().await.unwrap();
    assert_eq!(card["name"], "janitor");
    assert_eq!(
        card["securitySchemes"],
        json!({"user": {"apiKeySecurityScheme": {"location": "header", "name": "x-user"}}})
    );
    assert_eq!(card["securityRequirements"], json!([{"schemes": {"user": {}}}]));
}

#[tokio::test]
async fn another_users_context_is_a_context_of_their_own() {
    let model = Arc::new(ScriptedModel::new().then_text("Noted.").then_text("I know no code."));
    let url = serve_owned(model.clone()).await;
    let told = message(json!([{"text": "The code is 4242."}]), None);
    let alice = rpc_as(&url, "alice", "SendMessage", told).await;
    let alice_task = alice["result"]["task"].clone();
    let context = alice_task["contextId"].clone();
    assert!(context.as_str().is_some_and(|c| !c.is_empty()), "{alice}");

    // Bob names alice's context: a task of his, in a context of his own
    // under that id (an unknown id is taken so; refusing this one would
    // tell him it exists).
    let mut asked = message(json!([{"text": "What is the code?"}]), None);
    asked["message"]["contextId"] = context.clone();
    let bob = rpc_as(&url, "bob", "SendMessage", asked).await;
    let bob_task = &bob["result"]["task"];
    assert_eq!(bob_task["status"]["state"], "TASK_STATE_COMPLETED", "{bob}");
    assert_ne!(bob_task["id"], alice_task["id"]);
    assert_eq!(bob_task["contextId"], context);
    let history = bob_task["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{bob}");
    assert_eq!(history[0]["parts"], json!([{"text": "What is the code?"}]));
    // Nothing of alice's reached bob's run.
    let seen = model.seen();
    assert_eq!(seen.len(), 2);
    assert!(!format!("{:?}", seen[1]).contains("4242"), "{:?}", seen[1]);

    // Neither reads the other's task; alice's is as it was.
    let bob_id = bob_task["id"].as_str().unwrap();
    let alice_id = alice_task["id"].as_str().unwrap();
    let read = rpc_as(&url, "alice", "GetTask", json!({"id": bob_id})).await;
    assert_eq!(read["error"], not_found(bob_id), "{read}");
    let read = rpc_as(&url, "bob", "GetTask", json!({"id": alice_id})).await;
    assert_eq!(read["error"], not_found(alice_id), "{read}");
    let mine = rpc_as(&url, "alice", "GetTask", json!({"id": alice_id})).await;
    assert_eq!(mine["result"], alice_task, "{mine}");
}

#[tokio::test]
async fn without_a_hook_every_request_is_the_same_user() {
    let url = serve(ScriptedModel::new().then_text("Hello.")).await;
    let started = post_rpc(&url, Some("alice"), "SendMessage", message(json!([{"text": "Hi"}]), None)).await;
    let started: Value = started.json().await.unwrap();
    let id = started["result"]["task"]["id"].as_str().unwrap();
    // `x-user` means nothing here: bob and a request naming nobody read it.
    let read = rpc_as(&url, "bob", "GetTask", json!({"id": id})).await;
    assert_eq!(read["result"], started["result"]["task"], "{read}");
    let anyone = post_rpc(&url, None, "GetTask", json!({"id": id})).await;
    let anyone: Value = anyone.json().await.unwrap();
    assert_eq!(anyone["result"]["id"], id);
}
