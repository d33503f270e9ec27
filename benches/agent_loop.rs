//! The agent loop's own cost per turn, against the same two requests sent
//! by hand with reqwest to the same loopback mock of Chat Completions: one
//! turn of 8 tool calls, then the answer. Both sides make the same HTTP
//! round trips, run the same toolset and read the same bodies, so the ratio
//! is what the loop adds (transcript, request building, spans, budget).
//!
//! ```sh
//! cargo bench --bench agent_loop --features agent -- --warm-up-time 1 --measurement-time 3
//! ```

use std::net::SocketAddr;

use axum::Json;
use axum::routing::post;
use criterion::Criterion;
use serde_json::{Value, json};
use toolcall::agent::{Agent, OpenAiChat};
use toolcall::provider::Dialect;
use toolcall::toolset::Toolset;
use toolcall::{ToolCall, ToolContext, ToolError, tool};

mod support;

const CALLS: usize = 8;

/// Add two numbers.
#[tool(args)]
async fn add(_ctx: &ToolContext, a: i64, b: i64) -> Result<i64, ToolError> {
    Ok(a + b)
}

/// The mock: 8 calls to the first request of a run, the answer to the
/// second, shaped as https://platform.openai.com/docs/api-reference/chat/object shows.
async fn completions(Json(request): Json<Value>) -> Json<Value> {
    let answered = request["messages"].as_array().and_then(|m| m.last()).is_some_and(|m| m["role"] == "tool");
    let message = if answered {
        json!({"role": "assistant", "content": "done"})
    } else {
        let calls: Vec<Value> = (0..CALLS)
            .map(|i| {
                json!({"id": format!("call_{i}"), "type": "function",
                       "function": {"name": "add", "arguments": format!("{{\"a\":{i},\"b\":1}}")}})
            })
            .collect();
        json!({"role": "assistant", "content": null, "tool_calls": calls})
    };
    Json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "bench",
        "choices": [{"index": 0, "message": message, "finish_reason": if answered { "stop" } else { "tool_calls" }}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    }))
}

/// The same run written by hand: two POSTs, the dialect's parsing and
/// formatting, and `Toolset::run_turn`.
async fn by_hand(client: &reqwest::Client, url: &str, tools: &Toolset) -> String {
    let dialect = Dialect::OpenAiChat;
    let definitions = dialect.tools(tools).expect("definitions");
    let mut messages = vec![json!({"role": "user", "content": "add them"})];
    loop {
        // The body the agent's client sends: the same fields.
        let body =
            json!({"model": "bench", "messages": messages, "tools": definitions, "tool_choice": "auto"});
        let response: Value =
            client.post(url).json(&body).send().await.expect("sent").json().await.expect("a JSON body");
        let calls: Vec<ToolCall> = dialect.parse_calls(&response).expect("calls");
        if calls.is_empty() {
            return response["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_owned();
        }
        let results = tools.run_turn(&ToolContext::new(), &calls).await;
        messages.push(response["choices"][0]["message"].clone());
        messages.extend(dialect.format_results(&results).expect("results"));
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let addr: SocketAddr = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let addr = listener.local_addr().expect("an address");
        let app = axum::Router::new().route("/v1/chat/completions", post(completions));
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    });
    let base = format!("http://{addr}/v1");
    let url = format!("{base}/chat/completions");
    let tools = Toolset::builder().add(Add).build().expect("a toolset");
    let client = reqwest::Client::new();
    let agent =
        Agent::new(OpenAiChat::from_values("bench", None, Some(&base)), tools.clone()).expect("an agent");

    // Both sides answer the same, before anything is timed.
    let direct = rt.block_on(by_hand(&client, &url, &tools));
    let looped = rt.block_on(agent.run("add them")).expect("a run").answer;
    assert_eq!((direct.as_str(), looped.as_str()), ("done", "done"));

    support::run(|c: &mut Criterion| {
        let mut group = c.benchmark_group("agent_loop");
        group.bench_function("by_hand", |b| b.to_async(&rt).iter(|| by_hand(&client, &url, &tools)));
        group.bench_function("agent", |b| b.to_async(&rt).iter(|| agent.run("add them")));
        group.finish();
    });
    let ratio = support::paired_ratio(&rt, || by_hand(&client, &url, &tools), || agent.run("add them"));
    println!("agent loop / by hand, one turn of {CALLS} calls and the answer: {ratio:.3}x");
}
