//! A chat page in front of durable runs: `ChatServer` with the `Remote`
//! runner starts each run on the workers, streams its steps to the page
//! as the workers make them, through a worker's crash, and resumes a run
//! the page approved as a new durable run from the paused one, a
//! sub-agent's held call as the run's own.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolcall_agent::Agent;
use toolcall_agent::testing::ScriptedModel;
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolContext, ToolError};
use toolcall_macros::tool;
use toolcall_restate::Remote;
use toolcall_session::{ConversationKey, SessionStore, SqlStore};
use toolcall_ui::{ANONYMOUS, ChatServer};

use crate::nested::lead_with_sub;
use crate::support::shop::{self, Running};
use crate::support::{PATIENCE, Restate, Workers};

/// The chat server, on loopback, its runs on the workers behind `restate`.
async fn chat_server(restate: &Restate) -> String {
    serve_chat(restate.ingress(), None).await
}

/// The chat server, on loopback, its runs on the workers behind the
/// ingress `ingress`, its chats in the SQLite file `chats` (in memory
/// without one).
async fn serve_chat(ingress: String, chats: Option<PathBuf>) -> String {
    // The workers run their own agent: this one is never asked.
    let agent = Agent::new(ScriptedModel::new(), Toolset::new()).unwrap();
    let mut server = ChatServer::new(agent)
        .with_runner(Arc::new(Remote::new(ingress).with_poll_interval(Duration::from_millis(50))));
    if let Some(chats) = chats {
        server = server.with_store(Arc::new(SqlStore::sqlite(chats).await.unwrap()));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let router = server.router();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    url
}

/// A UI message stream being read, chunk by chunk.
struct Reading {
    response: reqwest::Response,
    buffered: String,
    chunks: Vec<Value>,
}

impl Reading {
    async fn post(url: &str, body: &Value) -> Self {
        let response =
            reqwest::Client::new().post(format!("{url}/api/chat")).json(body).send().await.unwrap();
        assert_eq!(response.status(), 200);
        Self { response, buffered: String::new(), chunks: Vec::new() }
    }

    /// Read until a chunk matches `wanted` (or the stream ends: `false`).
    async fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> bool {
        let read = tokio::time::timeout(PATIENCE, async {
            loop {
                if self.chunks.iter().any(&wanted) {
                    return true;
                }
                let Some(bytes) = self.response.chunk().await.unwrap() else { return false };
                self.buffered.push_str(&String::from_utf8_lossy(&bytes));
                while let Some(end) = self.buffered.find("\n\n") {
                    let frame: String = self.buffered.drain(..end + 2).collect();
                    if let Some(data) = frame.trim().strip_prefix("data: ")
                        && let Ok(chunk) = serde_json::from_str(data)
                    {
                        self.chunks.push(chunk);
                    }
                }
            }
        })
        .await;
        read.unwrap_or_else(|_| panic!("the page's stream went silent after {:?}", self.chunks))
    }

    /// Read to the end; every chunk.
    async fn read_to_end(mut self) -> Vec<Value> {
        self.until(|_| false).await;
        self.chunks
    }
}

fn ask(chat: &str, question: &str) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": question}]}
    ]})
}

fn output_of(call: &str) -> impl Fn(&Value) -> bool + '_ {
    move |chunk| chunk["type"] == "tool-output-available" && chunk["toolCallId"] == call
}

fn count(chunks: &[Value], wanted: impl Fn(&Value) -> bool) -> usize {
    chunks.iter().filter(|chunk| wanted(chunk)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn the_page_follows_a_durable_run_step_by_step_through_a_worker_crash() {
    let shop = Running::start().await;
    let restate = Restate::start().await;
    let workers = Workers::start(1, &shop.url).await;
    restate.register(workers.port).await;
    let page = chat_server(&restate).await;

    // The model's first answer waits until the run has started.
    let gate = shop.hold().await;
    let mut reading = Reading::post(&page, &ask("orders", &shop::order_prompt(3))).await;
    tokio::time::timeout(PATIENCE, async {
        while shop.seen(|seen| seen.requests.len()) == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the run never asked the model");
    // Let the first answer go, and hold the second (a fair lock: the
    // first request, queued before, is answered first).
    drop(gate);
    let gate = shop.hold().await;

    // The first turn's calls reach the page while the run goes on.
    assert!(reading.until(output_of("call_3_order_1")).await, "{:?}", reading.chunks);
    assert!(reading.chunks.iter().any(output_of("call_3_stock")), "{:?}", reading.chunks);
    assert_eq!(count(&reading.chunks, |chunk| chunk["type"] == "finish"), 0);

    // The worker dies while the model's second answer is held; another
    // takes the run over from its journal.
    let before = workers.pids();
    workers.kill_all();
    tokio::time::timeout(PATIENCE, async {
        while workers.pids().iter().any(|pid| before.contains(pid)) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the worker was not started again");
    workers.ready().await;
    drop(gate);

    let chunks = reading.read_to_end().await;
    assert_eq!(chunks.last().map(|chunk| chunk["type"].clone()), Some(json!("finish")), "{chunks:?}");
    assert_eq!(chunks.last().map(|chunk| chunk["finishReason"].clone()), Some(json!("stop")));
    // Each call shown once, its result once, whatever the crash.
    for call in ["call_3_stock", "call_3_order_1", "call_3_order_2", "call_3_notify"] {
        assert_eq!(count(&chunks, output_of(call)), 1, "{call}: {chunks:?}");
        let input = |chunk: &Value| chunk["type"] == "tool-input-available" && chunk["toolCallId"] == call;
        assert_eq!(count(&chunks, input), 1, "{call}: {chunks:?}");
    }
    let text: String = chunks
        .iter()
        .filter(|chunk| chunk["type"] == "text-delta")
        .filter_map(|chunk| chunk["delta"].as_str())
        .collect();
    assert!(!text.is_empty(), "{chunks:?}");

    // The chat keeps the run: its messages, the answer last.
    let messages: Value =
        reqwest::get(format!("{page}/api/chat/orders")).await.unwrap().json().await.unwrap();
    let messages = messages.as_array().unwrap();
    assert_eq!(messages.first().map(|m| m["role"].clone()), Some(json!("user")));
    assert!(messages.last().unwrap().to_string().contains(&text), "{messages:?}");
    shop.seen(|seen| {
        // Orders applied once each, through the crash; the first turn's
        // answer, journaled, not asked again (the second was cut, and was).
        assert!(seen.applied.values().all(|n| *n == 1), "{:?}", seen.applied);
        let asked = |step| seen.requests.iter().filter(|asked| **asked == ("3".to_owned(), step)).count();
        assert_eq!((asked(0), asked(1)), (1, 2), "{:?}", seen.requests);
    });
    workers.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn the_page_approves_a_durable_runs_call_and_the_run_goes_on_durably() {
    let shop = Running::start().await;
    let restate = Restate::start().await;
    let workers = Workers::start(1, &shop.url).await;
    restate.register(workers.port).await;
    let page = chat_server(&restate).await;

    let chunks = Reading::post(&page, &ask("refunds", &shop::refund_prompt(5))).await.read_to_end().await;
    let asks =
        |chunk: &Value| chunk["type"] == "tool-approval-request" && chunk["toolCallId"] == "call_5_refund";
    assert_eq!(count(&chunks, asks), 1, "{chunks:?}");
    assert_eq!(chunks.last().map(|chunk| chunk["finishReason"].clone()), Some(json!("tool-calls")));
    assert_eq!(count(&chunks, output_of("call_5_stock")), 1, "{chunks:?}");
    shop.seen(|seen| assert_eq!(seen.calls.get(&("issue_refund".into(), "call_5_refund".into())), None));

    // The page approves: the run goes on from where it paused.
    let approved = json!({"id": "refunds", "trigger": "submit-message", "messageId": "a1", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": shop::refund_prompt(5)}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "tool-issue_refund", "toolCallId": "call_5_refund", "state": "approval-responded",
             "input": {"order": "o-5", "amount": 12.5}, "approval": {"id": "call_5_refund", "approved": true}}
        ]}
    ]});
    let chunks = Reading::post(&page, &approved).await.read_to_end().await;
    assert_eq!(count(&chunks, output_of("call_5_refund")), 1, "{chunks:?}");
    assert_eq!(chunks.last().map(|chunk| chunk["finishReason"].clone()), Some(json!("stop")), "{chunks:?}");
    shop.seen(|seen| {
        assert_eq!(seen.calls.get(&("issue_refund".into(), "call_5_refund".into())), Some(&1));
        // The resumed run asked the model once more, not from the start.
        assert_eq!(seen.requests.iter().filter(|(run, _)| run == "5").count(), 2, "{:?}", seen.requests);
    });
    workers.stop();
}

static FILED: AtomicUsize = AtomicUsize::new(0);

/// File a report.
#[tool(args, needs_approval, crate = "toolcall_core")]
async fn file_report(_ctx: &ToolContext, text: String) -> Result<String, ToolError> {
    FILED.fetch_add(1, Ordering::SeqCst);
    Ok(format!("filed `{text}`"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn the_page_approves_a_sub_agents_call_in_a_durable_run() {
    let (inner, outer) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let report = json!({"text": "Q3 sales"});
    let lead = lead_with_sub(["lead", "clerk"], "File the Q3 report.", FileReport, report, [&inner, &outer]);
    let worker = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = worker.local_addr().unwrap().port();
    let serving = tokio::spawn(toolcall_restate::serve_on(lead, worker));
    let restate = Restate::start().await;
    restate.register(port).await;
    let page = chat_server(&restate).await;

    // The page is asked about the clerk's call, on the lead's call of the
    // clerk it shows, as in process.
    let chunks = Reading::post(&page, &ask("reports", "File the Q3 report.")).await.read_to_end().await;
    let asks = |chunk: &Value| {
        chunk
            == &json!({"type": "tool-approval-request", "approvalId": "lead-1/clerk-1", "toolCallId": "lead-1"})
    };
    assert_eq!(count(&chunks, asks), 1, "{chunks:?}");
    let names = |chunk: &Value| chunk["type"] == "data-approval" && chunk["data"]["path"] == json!(["clerk"]);
    assert_eq!(count(&chunks, names), 1, "{chunks:?}");
    assert_eq!(chunks.last().map(|chunk| chunk["finishReason"].clone()), Some(json!("tool-calls")));
    assert_eq!(FILED.load(Ordering::SeqCst), 0);

    let approved = json!({"id": "reports", "trigger": "submit-message", "messageId": "a1", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "File the Q3 report."}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "tool-clerk", "toolCallId": "lead-1", "state": "approval-responded",
             "input": {"prompt": "File the Q3 report."}, "approval": {"id": "lead-1/clerk-1", "approved": true}}
        ]}
    ]});
    let chunks = Reading::post(&page, &approved).await.read_to_end().await;
    let output =
        chunks.iter().find(|chunk| output_of("lead-1")(chunk)).unwrap_or_else(|| panic!("{chunks:?}"));
    assert_eq!(output["output"], "clerk read: filed `Q3 sales`");
    assert_eq!(chunks.last().map(|chunk| chunk["finishReason"].clone()), Some(json!("stop")), "{chunks:?}");
    // Filed once; the clerk went on where it paused (asked once before,
    // once after), and so did the lead.
    assert_eq!(FILED.load(Ordering::SeqCst), 1);
    assert_eq!((inner.load(Ordering::SeqCst), outer.load(Ordering::SeqCst)), (2, 2));
    serving.abort();
}

/// The page's approval of `call_{n}_refund` in the chat `chat`.
fn approve_refund(chat: &str, n: usize) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messageId": "a1", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": shop::refund_prompt(n)}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "tool-issue_refund", "toolCallId": format!("call_{n}_refund"),
             "state": "approval-responded", "input": {"order": format!("o-{n}"), "amount": 12.5},
             "approval": {"id": format!("call_{n}_refund"), "approved": true}}
        ]}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn a_chat_server_that_died_during_a_durable_run_learns_its_end_from_restate() {
    let shop = Running::start().await;
    let restate = Restate::start().await;
    let workers = Workers::start(1, &shop.url).await;
    restate.register(workers.port).await;
    let chats = std::env::temp_dir().join(format!("tools-restate-chats-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&chats);

    // The first chat server in a runtime of its own: shut down, it dies as
    // its process would, with its runs' tasks (the one that follows the
    // durable run and renews the chat's lease).
    let first = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let page = first.spawn(serve_chat(restate.ingress(), Some(chats.clone()))).await.unwrap();
    let chunks = Reading::post(&page, &ask("lost", &shop::refund_prompt(7))).await.read_to_end().await;
    assert_eq!(chunks.last().map(|chunk| chunk["finishReason"].clone()), Some(json!("tool-calls")));

    // Approved: the refund runs on the worker, and the server dies while
    // the model's last answer is held.
    let gate = shop.hold().await;
    let mut reading = Reading::post(&page, &approve_refund("lost", 7)).await;
    assert!(reading.until(output_of("call_7_refund")).await, "{:?}", reading.chunks);
    drop(reading);
    first.shutdown_background();
    drop(gate);

    // Another chat server on the same file, once the dead one's hold on
    // the chat has lapsed.
    let store = SqlStore::sqlite(&chats).await.unwrap();
    let key = ConversationKey::new(ANONYMOUS, "lost");
    tokio::time::timeout(PATIENCE, async {
        while store.load(&key).await.unwrap().is_some_and(|chat| chat.running().is_some()) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the dead server's lease never lapsed");
    let page = serve_chat(restate.ingress(), Some(chats.clone())).await;

    // The chat shows the run's end as the workers made it: the refund's
    // result and the answer, not a call cut off.
    let messages: Value = reqwest::get(format!("{page}/api/chat/lost")).await.unwrap().json().await.unwrap();
    let parts = messages[1]["parts"].as_array().unwrap_or_else(|| panic!("{messages:#}"));
    let refund = parts.iter().find(|part| part["toolCallId"] == "call_7_refund").unwrap();
    assert_eq!(refund["state"], "output-available", "{messages:#}");
    assert_eq!(refund["output"], r#"refunded 12.5 on order "o-7""#, "{messages:#}");
    assert_eq!(parts.last().map(|part| part["text"].clone()), Some(json!("Done for customer 7.")));

    // The same approval again: the run has ended, and the refusal says how.
    let again = reqwest::Client::new()
        .post(format!("{page}/api/chat"))
        .json(&approve_refund("lost", 7))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
    let refusal = again.text().await.unwrap();
    assert!(refusal.contains("Done for customer 7."), "{refusal}");

    // The chat goes on from the end: a new question is taken.
    let chunks = Reading::post(
        &page,
        &json!({"id": "lost", "trigger": "submit-message", "messages": [
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": shop::refund_prompt(7)}]}
        ]}),
    )
    .await
    .read_to_end()
    .await;
    assert_eq!(count(&chunks, |chunk| chunk["type"] == "error"), 0, "{chunks:?}");
    shop.seen(|seen| {
        // Refunded once: by the first run, never again.
        assert_eq!(seen.calls.get(&("issue_refund".into(), "call_7_refund".into())), Some(&1));
    });
    workers.stop();
    let _ = std::fs::remove_file(&chats);
}
