//! One chat, many doors: the useChat and AG-UI routes of one server on one
//! store, and two servers on one SQLite file (two replicas). A held call
//! approved through two of them at once runs once; a page that reloads on
//! the other server reads the running stream there; a stop sent to the
//! other server stops the run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolcall_agent::testing::{Reply, ScriptedServer};
use toolcall_agent::{Agent, OpenAiChat};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;
use toolcall_session::{SessionStore, SqlStore};
use toolcall_ui::{AguiServer, ChatServer};

use crate::support::{chunks, slow_agent, text};

/// How many times the weather was looked up, shared through the context.
#[derive(Clone, Default)]
struct Runs(Arc<AtomicUsize>);

/// The current weather in a city; counts its runs.
#[tool(args, needs_approval, crate = "toolcall_core")]
async fn get_weather(ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    if let Some(runs) = ctx.get::<Runs>() {
        runs.0.fetch_add(1, Ordering::SeqCst);
    }
    Ok(format!("18°C in {city}"))
}

/// The weather agent, its call ids new in each conversation (`call_{n}`).
async fn agent(runs: &Runs) -> (Agent, ScriptedServer) {
    let count = AtomicUsize::new(0);
    let server = ScriptedServer::answering(move |request: &Value| {
        let last = request["messages"].as_array()?.last()?;
        if last["role"] != "tool" {
            let id = format!("call_{}", count.fetch_add(1, Ordering::SeqCst));
            return Some(Reply::calls([ToolCall::new(id.as_str(), "get_weather", r#"{"city":"Paris"}"#)]));
        }
        Some(Reply::text(format!("It is {}", last["content"].as_str()?)))
    })
    .await
    .unwrap();
    let model = OpenAiChat::from_values("gpt-4o", None, Some(server.base_url()));
    let tools = Toolset::builder().add(GetWeather).build().unwrap();
    let agent =
        Agent::new(model, tools).unwrap().with_context(ToolContext::new().with_extension(runs.clone()));
    (agent, server)
}

/// The chat and AG-UI routes of `agent` on `store`, served on loopback.
async fn serve(agent: &Agent, store: Arc<dyn SessionStore>) -> String {
    let chat = ChatServer::new(agent.clone()).with_store(store.clone());
    let agui = AguiServer::new(agent.clone()).with_store(store);
    let app = chat.router().merge(agui.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

async fn post(url: &str, body: &Value) -> (u16, String) {
    let response = reqwest::Client::new().post(url).json(body).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

fn ask(chat: &str) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]}
    ]})
}

fn approve(chat: &str, call: &str) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messageId": "a1", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "tool-get_weather", "toolCallId": call, "state": "approval-responded",
             "input": {"city": "Paris"}, "approval": {"id": call, "approved": true}}
        ]}
    ]})
}

fn resume(thread: &str, call: &str) -> Value {
    json!({
        "threadId": thread, "runId": "r2", "state": {}, "tools": [], "context": [], "forwardedProps": {},
        "messages": [{"id": "u1", "role": "user", "content": "Weather in Paris?"}],
        "resume": [{"interruptId": call, "status": "resolved", "payload": {"approved": true}}],
    })
}

/// The held call of a new chat asked at `base`: its id.
async fn held(base: &str, chat: &str) -> String {
    let (status, body) = post(&format!("{base}/api/chat"), &ask(chat)).await;
    assert_eq!(status, 200, "{body}");
    let chunks = chunks(&body);
    let asked = chunks.iter().find(|chunk| chunk["type"] == "tool-approval-request").expect("a held call");
    asked["toolCallId"].as_str().unwrap().to_owned()
}

/// Two decisions about one held call at once, through `first` and
/// `second` (each a URL and its body): one runs it, the other is refused
/// with 409 before anything runs; the tool ran once. 10 trials.
async fn decided_twice_at_once_runs_once(
    runs: &Runs,
    asked_at: &str,
    decide: impl Fn(&str, &str) -> [(String, Value); 2],
) {
    for trial in 0..10 {
        let chat = format!("chat-{trial}");
        let call = held(asked_at, &chat).await;
        let before = runs.0.load(Ordering::SeqCst);
        let [(url_one, one), (url_two, two)] = decide(&chat, &call);
        let (first, second) = tokio::join!(post(&url_one, &one), post(&url_two, &two));
        let mut statuses = [first.0, second.0];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "trial {trial}: {first:?} {second:?}");
        let refused = if first.0 == 409 { &first.1 } else { &second.1 };
        let why = ["has a run going", "no run waiting", "another run changed it first"];
        assert!(why.iter().any(|why| refused.contains(why)), "{refused}");
        assert_eq!(runs.0.load(Ordering::SeqCst) - before, 1, "trial {trial}: the tool ran once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_call_approved_through_both_doors_at_once_runs_once() {
    let runs = Runs::default();
    let (agent, _model) = agent(&runs).await;
    let store: Arc<dyn SessionStore> = Arc::new(toolcall_session::MemoryStore::default());
    let base = serve(&agent, store).await;
    decided_twice_at_once_runs_once(&runs, &base, |chat, call| {
        [(format!("{base}/api/chat"), approve(chat, call)), (format!("{base}/api/agui"), resume(chat, call))]
    })
    .await;
}

/// Two servers (replicas) on one SQLite file.
async fn two_servers(agent: &Agent) -> (String, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chats.db");
    let one = SqlStore::sqlite(&path).await.unwrap();
    let two = SqlStore::sqlite(&path).await.unwrap();
    (serve(agent, Arc::new(one)).await, serve(agent, Arc::new(two)).await, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_call_approved_through_two_servers_at_once_runs_once() {
    let runs = Runs::default();
    let (agent, _model) = agent(&runs).await;
    let (one, two, _dir) = two_servers(&agent).await;
    decided_twice_at_once_runs_once(&runs, &one, |chat, call| {
        [(format!("{one}/api/chat"), approve(chat, call)), (format!("{two}/api/chat"), approve(chat, call))]
    })
    .await;
    // Paused on one server, approved on the other: it runs once there.
    let call = held(&one, "across").await;
    let before = runs.0.load(Ordering::SeqCst);
    let (status, body) = post(&format!("{two}/api/chat"), &approve("across", &call)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(text(&chunks(&body)), "It is 18°C in Paris");
    assert_eq!(runs.0.load(Ordering::SeqCst) - before, 1);
}

/// A slow run on one server; the page reloads on the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_on_another_server_reads_the_stream_and_a_stop_there_stops_it() {
    let (agent, _model, gate) = slow_agent().await;
    let (one, two, _dir) = two_servers(&agent).await;
    let first = tokio::spawn({
        let one = one.clone();
        async move { post(&format!("{one}/api/chat"), &ask("slow")).await }
    });
    gate.started.acquire().await.unwrap().forget();
    // The other server answers the reload (its headers come) while the
    // call still waits; its body is read while the run goes on.
    let reattached = reqwest::get(format!("{two}/api/chat/slow/stream")).await.unwrap();
    assert_eq!(reattached.status(), 200);
    let again = tokio::spawn(async move { reattached.text().await.unwrap() });
    // A question on the other server while it runs: 409.
    let (status, body) = post(&format!("{two}/api/chat"), &ask("slow")).await;
    assert_eq!(status, 409, "{body}");
    gate.release.add_permits(1);
    let (first, again) = (first.await.unwrap(), again.await.unwrap());
    assert_eq!(first.0, 200);
    assert_eq!(chunks(&again), chunks(&first.1), "the other server's stream is the run's, chunk for chunk");
    assert_eq!(text(&chunks(&again)), "Done: found the answer");
    // Over: no stream anywhere.
    assert_eq!(reqwest::get(format!("{two}/api/chat/slow/stream")).await.unwrap().status(), 204);

    // A second run, stopped through the other server (the slow call's
    // permit, given back when it ended, taken away again).
    gate.release.acquire().await.unwrap().forget();
    let running = tokio::spawn({
        let one = one.clone();
        let regenerate = json!({"id": "slow", "trigger": "submit-message", "messages": [
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "Again?"}]}
        ]});
        async move { post(&format!("{one}/api/chat"), &regenerate).await }
    });
    tokio::select! {
        started = gate.started.acquire() => started.unwrap().forget(),
        () = tokio::time::sleep(std::time::Duration::from_secs(5)) => panic!("the second run did not start"),
    }
    let stop = reqwest::Client::new().post(format!("{two}/api/chat/slow/stop")).send().await.unwrap();
    assert_eq!(stop.status(), 204);
    // The stop reaches the run when it next renews its lease; the call
    // is cancelled, and the run ends.
    let (status, body) =
        tokio::time::timeout(std::time::Duration::from_secs(10), running).await.unwrap().unwrap();
    assert_eq!(status, 200);
    let chunks = chunks(&body);
    let finish = chunks.iter().rev().find(|chunk| chunk["type"] == "finish").expect("a finish chunk");
    assert_eq!(finish["finishReason"], "interrupted", "{chunks:?}");
}
