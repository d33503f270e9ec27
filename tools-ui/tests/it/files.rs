//! A tool's image bigger than the inline size, over real HTTP: a `file`
//! chunk whose URL is the chat's file route, which serves the bytes with
//! their media type to the chat's owner alone, while the run goes, once it
//! ended, after a restart, and from a turn paused for approval.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use toolcall_agent::Agent;
use toolcall_agent::testing::ScriptedModel;
use toolcall_core::toolset::Toolset;
use toolcall_core::{Media, Output, ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;
use toolcall_session::SqlStore;
use toolcall_ui::ChatServer;

use crate::support::{Gate, GetWeather, SlowLookup, chunks, types};

/// The inline size of these tests' servers.
const INLINE: usize = 1024;

/// A PNG of `len` bytes: the signature, then bytes that differ by position
/// (a served copy that lost or moved any would not compare equal).
fn png(len: usize) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend((0..len - bytes.len()).map(|n| (n % 251) as u8));
    bytes
}

/// A boarding pass: a big PNG, and a small one (its thumbnail).
#[tool(args, crate = "toolcall_core")]
async fn boarding_pass(_ctx: &ToolContext, flight: String) -> Result<Output, ToolError> {
    Ok(Output::text(format!("Boarding pass for {flight}"))
        .with_image(Media::bytes(png(4 * INLINE), "image/png"))
        .with_image(Media::bytes(png(64), "image/png")))
}

fn agent(model: ScriptedModel) -> Agent {
    let tools = Toolset::builder().add(BoardingPass).add(GetWeather).add(SlowLookup).build().unwrap();
    Agent::new(model, tools).unwrap()
}

fn pass_call(id: &str) -> ToolCall {
    ToolCall::new(id, "boarding_pass", r#"{"flight":"AF123"}"#)
}

/// `chat` with users (the `x-user` header; none is 401) and the inline
/// size of these tests, served on loopback: the server and its base URL.
async fn serve(chat: ChatServer) -> (ChatServer, String) {
    let chat = chat.with_max_inline_bytes(INLINE).with_auth(|parts| {
        let user = parts.headers.get("x-user").and_then(|value| value.to_str().ok()).map(str::to_owned);
        Box::pin(
            async move { user.ok_or_else(|| (StatusCode::UNAUTHORIZED, "who are you?").into_response()) },
        )
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = chat.router();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (chat, url)
}

/// A GET of `path` as `user` (none: no `x-user`): status, content type, body.
async fn get(base: &str, path: &str, user: Option<&str>) -> (u16, String, Vec<u8>) {
    let mut request = reqwest::Client::new().get(format!("{base}{path}"));
    if let Some(user) = user {
        request = request.header("x-user", user);
    }
    let response = request.send().await.unwrap();
    let kind = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), kind.unwrap_or_default(), response.bytes().await.unwrap().to_vec())
}

async fn ask(base: &str, user: &str, chat: &str, question: &str) -> Vec<Value> {
    let body = json!({"id": chat, "trigger": "submit-message", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": question}]}
    ]});
    let response = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .header("x-user", user)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    chunks(&response.text().await.unwrap())
}

/// The `file` chunks' URLs.
fn file_urls(chunks: &[Value]) -> Vec<&str> {
    chunks.iter().filter(|chunk| chunk["type"] == "file").filter_map(|chunk| chunk["url"].as_str()).collect()
}

#[tokio::test]
async fn a_file_over_the_inline_size_is_served_under_the_chat_to_its_owner_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chats.db");
    let model = || ScriptedModel::new().then_calls([pass_call("call_1")]).then_text("Here it is.");
    let store = SqlStore::sqlite(&path).await.unwrap();
    let (_chat, base) = serve(ChatServer::new(agent(model())).with_store(Arc::new(store.clone()))).await;
    let chunks = ask(&base, "alice", "trip 1", "My boarding pass?").await;
    assert_eq!(types(&chunks).last(), Some(&"finish"));
    // The big one at the chat's file route (the chat id encoded), the small one inline.
    let urls = file_urls(&chunks);
    assert_eq!(urls.len(), 2, "{chunks:?}");
    assert_eq!(urls[0], "/api/chat/trip%201/files/call_1-0");
    assert!(urls[1].starts_with("data:image/png;base64,iVBORw0KGgo"), "{}", urls[1]);

    // The owner gets the bytes, with their media type.
    let (status, kind, bytes) = get(&base, urls[0], Some("alice")).await;
    assert_eq!((status, kind.as_str()), (200, "image/png"));
    assert_eq!(bytes, png(4 * INLINE));
    // Another user, as for any of the chat's routes: no such chat; no user: the hook's refusal.
    let (status, _, body) = get(&base, urls[0], Some("mallory")).await;
    assert_eq!((status, String::from_utf8(body).unwrap()), (404, "there is no chat `trip 1`".to_owned()));
    assert_eq!(get(&base, urls[0], None).await.0, 401);
    // Files the chat does not have.
    for unknown in ["call_1-5", "call_1-x", "call_2-0", "call_1", "call_1-2"] {
        let (status, _, body) =
            get(&base, &format!("/api/chat/trip%201/files/{unknown}"), Some("alice")).await;
        assert_eq!(status, 404, "{unknown}: {}", String::from_utf8_lossy(&body));
    }

    // A reloaded page links the file as the stream did.
    let (status, _, page) = get(&base, "/api/chat/trip%201", Some("alice")).await;
    assert_eq!(status, 200);
    let page: Value = serde_json::from_slice(&page).unwrap();
    let files: Vec<&Value> =
        page[1]["parts"].as_array().unwrap().iter().filter(|p| p["type"] == "file").collect();
    assert_eq!(files[0], &json!({"type": "file", "url": urls[0], "mediaType": "image/png"}));

    // The bytes are the chat's: a new server on the same store serves them.
    store.close().await;
    let store = SqlStore::sqlite(&path).await.unwrap();
    let (_chat, base) = serve(ChatServer::new(agent(model())).with_store(Arc::new(store))).await;
    let (status, kind, bytes) = get(&base, urls[0], Some("alice")).await;
    assert_eq!((status, kind.as_str()), (200, "image/png"));
    assert_eq!(bytes, png(4 * INLINE));
}

#[tokio::test]
async fn a_file_is_served_while_its_run_goes_on() {
    let gate = Gate::default();
    let model = ScriptedModel::new()
        .then_calls([pass_call("call_1")])
        .then_calls([ToolCall::new("call_2", "slow_lookup", r#"{"what":"the gate"}"#)])
        .then_text("Done.");
    let agent = agent(model).with_context(ToolContext::new().with_extension(gate.clone()));
    let (chat, base) = serve(ChatServer::new(agent)).await;
    let asked = tokio::spawn({
        let base = base.clone();
        async move { ask(&base, "alice", "c1", "My boarding pass, then the gate?").await }
    });
    // The slow call runs: the pass was given, and the run's messages are not stored yet.
    gate.started.acquire().await.unwrap().forget();
    assert_eq!(chat.running(), 1);
    let (status, kind, bytes) = get(&base, "/api/chat/c1/files/call_1-0", Some("alice")).await;
    assert_eq!((status, kind.as_str()), (200, "image/png"));
    assert_eq!(bytes, png(4 * INLINE));
    assert_eq!(get(&base, "/api/chat/c1/files/call_1-0", Some("mallory")).await.0, 404);
    gate.release.add_permits(1);
    let chunks = asked.await.unwrap();
    assert_eq!(file_urls(&chunks)[0], "/api/chat/c1/files/call_1-0");
    // Over: the store serves it.
    assert_eq!(chat.running(), 0);
    assert_eq!(get(&base, "/api/chat/c1/files/call_1-0", Some("alice")).await.2, png(4 * INLINE));
}

#[tokio::test]
async fn a_file_of_a_turn_paused_for_approval_is_served() {
    // The pass runs; get_weather, in the same turn, waits for approval.
    let calls = [pass_call("call_1"), ToolCall::new("call_2", "get_weather", r#"{"city":"Paris"}"#)];
    let (chat, base) = serve(ChatServer::new(agent(ScriptedModel::new().then_calls(calls)))).await;
    let chunks = ask(&base, "alice", "c1", "Pass and weather?").await;
    assert_eq!(chunks.last().unwrap(), &json!({"type": "finish", "finishReason": "tool-calls"}));
    assert_eq!(chat.pending("alice", "c1").await.unwrap(), ["call_2"]);
    assert_eq!(file_urls(&chunks)[0], "/api/chat/c1/files/call_1-0");
    let (status, kind, bytes) = get(&base, "/api/chat/c1/files/call_1-0", Some("alice")).await;
    assert_eq!((status, kind.as_str()), (200, "image/png"));
    assert_eq!(bytes, png(4 * INLINE));
}
