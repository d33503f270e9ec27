//! The chat server's memory with many chats: the resident set size of a
//! process serving `ChatServer` after 10,000 chats, each a question whose
//! run paused on a held call and whose stream ended, side by side for the
//! stores it can keep chats in. Each store runs in a process of its own
//! (this program, started again), so one's heap does not count for another.
//!
//! ```sh
//! cargo bench -p toolcall-ui --bench chat_memory            # 10,000 chats
//! cargo bench -p toolcall-ui --bench chat_memory -- 2000    # another count
//! ```
//!
//! - `memory, unbounded`: a [`MemoryStore`] that never forgets: every chat
//!   in the process, as the server kept them before it had a store;
//! - `memory, 1,000`: the default [`MemoryStore`] (the least recently used
//!   forgotten past 1,000);
//! - `sqlite`: a [`SqlStore`] file: nothing of a chat stays in the process.
//!
//! The model is the scripted Chat Completions server on loopback, through
//! the real client, streamed; each question is 2 KB. The scripted server
//! runs in the first process (it keeps every request it received, which
//! is not the chat server's memory).

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use toolcall_agent::testing::{Reply, ScriptedServer};
use toolcall_agent::{Agent, OpenAiChat};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;
use toolcall_session::{MemoryStore, SessionStore, SqlStore};
use toolcall_ui::ChatServer;

/// The current weather in a city.
#[tool(args, needs_approval, crate = "toolcall_core")]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("18°C and sunny in {city}"))
}

const STORES: [&str; 3] = ["memory, unbounded", "memory, 1,000", "sqlite"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|arg| arg != "--bench").collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    if let [flag, store, chats, model] = args.as_slice()
        && flag == "--child"
    {
        let chats: usize = chats.parse().expect("a count of chats");
        runtime.block_on(child(store, chats, model));
        return;
    }
    let chats: usize = args.first().and_then(|count| count.parse().ok()).unwrap_or(10_000);
    let model = runtime.block_on(ScriptedServer::answering(|request: &Value| {
        let n = request["messages"].as_array()?.len();
        Some(Reply::calls([ToolCall::new(
            format!("call_{n}").as_str(),
            "get_weather",
            r#"{"city":"Paris"}"#,
        )]))
    }));
    let model = model.expect("the scripted server");
    println!(
        "RSS of a ChatServer process after {chats} chats, each paused on a held call, its stream ended:"
    );
    println!("| store | RSS before | RSS after | per chat | chats kept in the process | time |");
    println!("|---|---|---|---|---|---|");
    let exe = std::env::current_exe().expect("this program");
    for store in STORES {
        let output = std::process::Command::new(&exe)
            .args(["--child", store, &chats.to_string(), model.base_url()])
            .output()
            .expect("the child runs");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        print!("{}", String::from_utf8_lossy(&output.stdout));
    }
}

/// The resident set size of this process, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    kb * 1024
}

async fn child(store_name: &str, chats: usize, model: &str) {
    let client = OpenAiChat::from_values("gpt-4o", None, Some(model));
    let tools = Toolset::builder().add(GetWeather).build().expect("the toolset");
    let agent = Agent::new(client, tools).expect("the agent");
    let dir = tempfile::tempdir().expect("a directory");
    let store: Arc<dyn SessionStore> = match store_name {
        "memory, unbounded" => Arc::new(MemoryStore::new(usize::MAX)),
        "memory, 1,000" => Arc::new(MemoryStore::default()),
        _ => Arc::new(SqlStore::sqlite(dir.path().join("chats.db")).await.expect("the store")),
    };
    let server = ChatServer::new(agent).with_store(store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let url = format!("http://{}/api/chat", listener.local_addr().expect("its address"));
    let app = server.router();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let http = reqwest::Client::new();
    let question = "Weather in Paris? ".repeat(2048 / 18);
    let ask = |n: usize| {
        let body = json!({"id": format!("chat-{n}"), "trigger": "submit-message", "messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": question}]}
        ]});
        let (http, url) = (http.clone(), url.clone());
        async move {
            let response = http.post(&url).json(&body).send().await.expect("the request");
            assert_eq!(response.status(), 200);
            response.text().await.expect("the stream");
        }
    };
    // Warm up: the pools, the allocator's arenas.
    for n in 0..100 {
        ask(n).await;
    }
    let before = rss();
    let started = Instant::now();
    // Eight chats at a time, as pages would come.
    let mut next = 100;
    while next < chats + 100 {
        let batch: Vec<_> = (next..(next + 8).min(chats + 100)).map(ask).collect();
        futures::future::join_all(batch).await;
        next += 8;
    }
    let elapsed = started.elapsed();
    assert_eq!(server.running(), 0, "every stream ended");
    let after = rss();
    let kept = match store_name {
        "memory, unbounded" => (chats + 100).to_string(),
        "memory, 1,000" => "1,000".to_owned(),
        _ => "0".to_owned(),
    };
    let mb = |bytes: u64| bytes as f64 / 1_048_576.0;
    let per_chat = after.saturating_sub(before) as f64 / chats as f64;
    println!(
        "| {store_name} | {:.1} MB | {:.1} MB | {:.2} KB | {kept} | {:.1} s |",
        mb(before),
        mb(after),
        per_chat / 1024.0,
        elapsed.as_secs_f64()
    );
}
