//! `ChatServer` on a session store, over real HTTP: a restart loses
//! nothing, a chat is its user's alone, a reloaded page gets its messages
//! and its running stream back, a run stops on purpose, and nothing of a
//! chat stays in the process once its stream ended.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use toolcall_agent::Agent;
use toolcall_session::{SessionStore, SqlStore};
use toolcall_ui::ChatServer;

use crate::support::{Gate, chunks, slow_agent, text, types, weather_agent};

/// A server of `chat` on loopback: its base URL.
async fn serve(chat: &ChatServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = chat.router();
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// Requests as user `user` (the `x-user` header the auth hook reads).
struct Client {
    base: String,
    user: &'static str,
    http: reqwest::Client,
}

impl Client {
    fn new(base: &str, user: &'static str) -> Self {
        Self { base: base.to_owned(), user, http: reqwest::Client::new() }
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> (u16, String) {
        let mut request =
            self.http.request(method, format!("{}{path}", self.base)).header("x-user", self.user);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    async fn post(&self, body: &Value) -> (u16, String) {
        self.send(reqwest::Method::POST, "/api/chat", Some(body)).await
    }

    async fn get(&self, path: &str) -> (u16, String) {
        self.send(reqwest::Method::GET, path, None).await
    }
}

/// The auth hook of these tests: the user is the `x-user` header; none is 401.
fn with_users(chat: ChatServer) -> ChatServer {
    chat.with_auth(|parts| {
        let user = parts.headers.get("x-user").and_then(|value| value.to_str().ok()).map(str::to_owned);
        Box::pin(
            async move { user.ok_or_else(|| (StatusCode::UNAUTHORIZED, "who are you?").into_response()) },
        )
    })
}

fn ask(chat: &str, question: &str) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": question}]}
    ]})
}

fn approve(chat: &str, call: &str, approved: bool) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messageId": "a1", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "tool-get_weather", "toolCallId": call, "state": "approval-responded",
             "input": {"city": "Paris"}, "approval": {"id": call, "approved": approved}}
        ]}
    ]})
}

#[tokio::test]
async fn a_call_held_before_a_restart_is_approved_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chats.db");
    let (agent, model) = weather_agent().await;
    {
        let store = SqlStore::sqlite(&path).await.unwrap();
        let chat = with_users(ChatServer::new(agent.clone()).with_store(Arc::new(store.clone())));
        let alice = Client::new(&serve(&chat).await, "alice");
        let (status, body) = alice.post(&ask("c9", "Weather in Paris?")).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(types(&chunks(&body)).last(), Some(&"finish"));
        assert_eq!(chat.pending("alice", "c9").await.unwrap(), ["call_1"]);
        store.close().await;
    }
    // A new server on the same file, as after a restart.
    let store = SqlStore::sqlite(&path).await.unwrap();
    let chat = with_users(ChatServer::new(agent).with_store(Arc::new(store)));
    let alice = Client::new(&serve(&chat).await, "alice");
    let (status, body) = alice.post(&approve("c9", "call_1", true)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(text(&chunks(&body)), "The tool said: 18°C and sunny in Paris");
    // The model was asked again with the whole chat and the tool's output.
    let requests = model.requests();
    let roles: Vec<&str> =
        requests[1]["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    // A page that reloads gets the chat back as UI messages.
    let (status, body) = alice.get("/api/chat/c9").await;
    assert_eq!(status, 200, "{body}");
    let page: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page[0]["parts"][0], json!({"type": "text", "text": "Weather in Paris?"}));
    let parts = page[1]["parts"].as_array().unwrap();
    let call = parts.iter().find(|part| part["type"] == "tool-get_weather").unwrap();
    assert_eq!(
        (&call["toolCallId"], &call["state"], &call["input"], &call["output"]),
        (
            &json!("call_1"),
            &json!("output-available"),
            &json!({"city": "Paris"}),
            &json!("18°C and sunny in Paris")
        )
    );
    assert_eq!(parts.last().unwrap()["text"], "The tool said: 18°C and sunny in Paris");
    assert_eq!(page.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn another_users_chat_is_not_there() {
    let (agent, model) = weather_agent().await;
    let chat = with_users(ChatServer::new(agent));
    let base = serve(&chat).await;
    let (alice, mallory) = (Client::new(&base, "alice"), Client::new(&base, "mallory"));
    alice.post(&ask("c1", "Weather in Paris?")).await;
    assert_eq!(chat.pending("alice", "c1").await.unwrap(), ["call_1"]);
    // Messages, approvals, streams, stops and deletes of alice's chat: 404 for mallory.
    assert_eq!(mallory.get("/api/chat/c1").await, (404, "there is no chat `c1`".to_owned()));
    assert_eq!(mallory.post(&approve("c1", "call_1", true)).await, (404, "there is no chat `c1`".to_owned()));
    // No stream to reattach to, as for any chat with no run going.
    assert_eq!(mallory.get("/api/chat/c1/stream").await, (204, String::new()));
    let stop = mallory.send(reqwest::Method::POST, "/api/chat/c1/stop", None).await;
    assert_eq!(stop, (404, "there is no chat `c1`".to_owned()));
    let delete = mallory.send(reqwest::Method::DELETE, "/api/chat/c1", None).await;
    assert_eq!(delete, (404, "there is no chat `c1`".to_owned()));
    // Alice's call still waits, unrun; the model was asked once.
    assert_eq!(chat.pending("alice", "c1").await.unwrap(), ["call_1"]);
    assert_eq!(model.requests().len(), 1);
    // No user at all: the hook's refusal.
    let anonymous = reqwest::get(format!("{base}/api/chat/c1")).await.unwrap();
    assert_eq!(anonymous.status(), 401);
    // Mallory's own chat of the same id is hers alone.
    let (status, _) = mallory.post(&ask("c1", "Weather in Paris?")).await;
    assert_eq!(status, 200);
    assert_eq!(chat.pending("mallory", "c1").await.unwrap(), ["call_2"]);
    assert_eq!(chat.pending("alice", "c1").await.unwrap(), ["call_1"]);
    let (status, _) = alice.post(&approve("c1", "call_1", true)).await;
    assert_eq!(status, 200);
}

/// Alice asks in chat `c1` of a server on `agent`, and the slow call
/// starts: the server, alice, and her request's answer to come.
async fn a_slow_run_going(agent: Agent, gate: &Gate) -> (ChatServer, Arc<Client>, JoinHandle<(u16, String)>) {
    let chat = with_users(ChatServer::new(agent));
    let alice = Arc::new(Client::new(&serve(&chat).await, "alice"));
    let first = tokio::spawn({
        let alice = alice.clone();
        async move { alice.post(&ask("c1", "Find it")).await }
    });
    gate.started.acquire().await.unwrap().forget();
    (chat, alice, first)
}

#[tokio::test]
async fn a_reloaded_page_reattaches_to_the_running_stream_from_its_start() {
    let (agent, _model, gate) = slow_agent().await;
    // The call runs: the page reloads and reattaches.
    let (chat, alice, first) = a_slow_run_going(agent, &gate).await;
    assert_eq!(chat.running(), 1);
    let again = tokio::spawn({
        let alice = alice.clone();
        async move { alice.get("/api/chat/c1/stream").await }
    });
    // The reloaded page's messages: the question, kept as the run began,
    // and the call running, kept before it ran.
    let (status, body) = alice.get("/api/chat/c1").await;
    assert_eq!(status, 200, "{body}");
    let page: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        page,
        json!([
            {"id": "msg-0", "role": "user", "parts": [{"type": "text", "text": "Find it"}]},
            {"id": "msg-1", "role": "assistant", "parts": [
                {"type": "step-start"},
                {"type": "tool-slow_lookup", "toolCallId": "call_1", "state": "input-available",
                 "input": {"what": "the answer"}},
            ]},
        ])
    );
    // A new question while it runs is refused.
    let (status, body) = alice.post(&ask("c1", "Anything else?")).await;
    assert_eq!((status, body.as_str()), (409, "chat `c1` has a run going: wait for its end, or stop it"));
    gate.release.add_permits(1);
    let (first, again) = (first.await.unwrap(), again.await.unwrap());
    assert_eq!((first.0, again.0), (200, 200));
    assert_eq!(chunks(&again.1), chunks(&first.1), "the reattached stream is the whole run's");
    assert_eq!(text(&chunks(&again.1)), "Done: found the answer");
    // Over: nothing of it stays in the process; no stream to reattach to.
    assert_eq!(chat.running(), 0);
    assert_eq!(alice.get("/api/chat/c1/stream").await.0, 204);
}

#[tokio::test]
async fn a_stopped_run_ends_and_keeps_what_it_did() {
    let (agent, model, gate) = slow_agent().await;
    let (chat, alice, first) = a_slow_run_going(agent, &gate).await;
    let (status, _) = alice.send(reqwest::Method::POST, "/api/chat/c1/stop", None).await;
    assert_eq!(status, 204);
    let (status, body) = first.await.unwrap();
    assert_eq!(status, 200);
    let chunks = chunks(&body);
    assert_eq!(chunks.last().unwrap(), &json!({"type": "finish", "finishReason": "interrupted"}));
    assert_eq!(chat.running(), 0);
    // The question and the call are kept; the model was not asked again.
    let (_, page) = alice.get("/api/chat/c1").await;
    let page: Value = serde_json::from_str(&page).unwrap();
    assert_eq!(page[0]["parts"][0]["text"], "Find it");
    assert_eq!(model.requests().len(), 1);
    // Nothing is going: a stop now is refused.
    let (status, _) = alice.send(reqwest::Method::POST, "/api/chat/c1/stop", None).await;
    assert_eq!(status, 409);
}

#[tokio::test]
async fn nothing_of_a_chat_stays_in_the_process_after_its_stream() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqlStore::sqlite(dir.path().join("chats.db")).await.unwrap();
    let (agent, _model) = weather_agent().await;
    let chat = ChatServer::new(agent).with_store(Arc::new(store.clone()));
    let base = serve(&chat).await;
    let anyone = Client::new(&base, "anyone");
    for n in 0..20 {
        let (status, _) = anyone.post(&ask(&format!("chat-{n}"), "Weather in Paris?")).await;
        assert_eq!(status, 200);
    }
    assert_eq!(chat.running(), 0);
    let listed = store.list(toolcall_ui::ANONYMOUS).await.unwrap();
    assert_eq!(listed.len(), 20);
    assert!(listed.iter().all(|info| info.paused && info.messages == 2));
}

#[tokio::test]
async fn a_body_past_the_limit_is_refused() {
    let (agent, model) = weather_agent().await;
    let chat = ChatServer::new(agent).with_max_body(1_000);
    let base = serve(&chat).await;
    let (status, body) = Client::new(&base, "x").post(&ask("c1", &"Paris? ".repeat(500))).await;
    assert_eq!((status, body.as_str()), (413, "the request body is over 1000 bytes"));
    assert!(model.requests().is_empty());
}

/// A store whose appends (and, when asked, loads) fail, over a memory store.
#[derive(Default)]
struct Failing {
    inner: toolcall_session::MemoryStore,
    loads_fail: std::sync::atomic::AtomicBool,
    appends_fail: std::sync::atomic::AtomicBool,
}

impl Failing {
    fn broken(on: &std::sync::atomic::AtomicBool) -> Option<toolcall_session::StoreError> {
        on.load(std::sync::atomic::Ordering::Relaxed)
            .then(|| toolcall_session::StoreError::Database("the disk is full".into()))
    }
}

impl SessionStore for Failing {
    fn load<'a>(
        &'a self,
        key: &'a toolcall_session::ConversationKey,
    ) -> futures::future::BoxFuture<
        'a,
        Result<Option<toolcall_session::Conversation>, toolcall_session::StoreError>,
    > {
        match Self::broken(&self.loads_fail) {
            Some(error) => Box::pin(async { Err(error) }),
            None => self.inner.load(key),
        }
    }

    fn append<'a>(
        &'a self,
        key: &'a toolcall_session::ConversationKey,
        append: toolcall_session::Append,
    ) -> futures::future::BoxFuture<'a, Result<u64, toolcall_session::StoreError>> {
        match Self::broken(&self.appends_fail) {
            Some(error) => Box::pin(async { Err(error) }),
            None => self.inner.append(key, append),
        }
    }

    fn list<'a>(
        &'a self,
        owner: &'a str,
    ) -> futures::future::BoxFuture<
        'a,
        Result<Vec<toolcall_session::ConversationInfo>, toolcall_session::StoreError>,
    > {
        self.inner.list(owner)
    }

    fn delete<'a>(
        &'a self,
        key: &'a toolcall_session::ConversationKey,
    ) -> futures::future::BoxFuture<'a, Result<bool, toolcall_session::StoreError>> {
        self.inner.delete(key)
    }

    fn renew<'a>(
        &'a self,
        key: &'a toolcall_session::ConversationKey,
        lease: &'a toolcall_session::Lease,
    ) -> futures::future::BoxFuture<'a, Result<toolcall_session::Renewal, toolcall_session::StoreError>> {
        self.inner.renew(key, lease)
    }

    fn stop<'a>(
        &'a self,
        key: &'a toolcall_session::ConversationKey,
    ) -> futures::future::BoxFuture<'a, Result<bool, toolcall_session::StoreError>> {
        self.inner.stop(key)
    }

    fn write_frames<'a>(
        &'a self,
        key: &'a toolcall_session::ConversationKey,
        run: &'a str,
        first: u64,
        frames: Vec<toolcall_session::Frame>,
    ) -> futures::future::BoxFuture<'a, Result<(), toolcall_session::StoreError>> {
        self.inner.write_frames(key, run, first, frames)
    }

    fn read_frames<'a>(
        &'a self,
        key: &'a toolcall_session::ConversationKey,
        run: &'a str,
        from: u64,
    ) -> futures::future::BoxFuture<'a, Result<Vec<toolcall_session::Frame>, toolcall_session::StoreError>>
    {
        self.inner.read_frames(key, run, from)
    }
}

#[tokio::test]
async fn a_store_that_fails_leaves_the_chat_as_it_was() {
    use std::sync::atomic::Ordering::Relaxed;
    let (agent, model) = weather_agent().await;
    let store = Arc::new(Failing::default());
    let chat = ChatServer::new(agent).with_store(store.clone());
    let alice = Client::new(&serve(&chat).await, "alice");
    alice.post(&ask("c1", "Weather in Paris?")).await;
    // The decision cannot be kept: refused before the tool runs (a store
    // that fails after it would leave a call that ran and looks undone),
    // and the call still waits, as before.
    store.appends_fail.store(true, Relaxed);
    let asked = model.requests().len();
    let (status, body) = alice.post(&approve("c1", "call_1", true)).await;
    assert_eq!(
        (status, body.as_str()),
        (500, "the chat could not be read: the session store failed: the disk is full")
    );
    assert_eq!(model.requests().len(), asked);
    store.appends_fail.store(false, Relaxed);
    assert_eq!(chat.pending(toolcall_ui::ANONYMOUS, "c1").await.unwrap(), ["call_1"]);
    // A store that cannot be read: 500 before any stream, and no model request.
    store.loads_fail.store(true, Relaxed);
    let asked = model.requests().len();
    let (status, body) = alice.post(&approve("c1", "call_1", true)).await;
    assert_eq!(
        (status, body.as_str()),
        (500, "the chat could not be read: the session store failed: the disk is full")
    );
    assert_eq!(alice.get("/api/chat/c1").await.0, 500);
    assert_eq!(model.requests().len(), asked);
    // Readable again, the held call is approved and the run finishes.
    store.loads_fail.store(false, Relaxed);
    let (status, body) = alice.post(&approve("c1", "call_1", true)).await;
    assert_eq!(status, 200);
    assert_eq!(text(&crate::support::chunks(&body)), "The tool said: 18°C and sunny in Paris");
}
