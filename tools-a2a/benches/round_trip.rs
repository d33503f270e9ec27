//! A2A round trips per second: this crate's `A2aServer` against the
//! official Python SDK's server (a2a-sdk 1.3.0, `tests/a2a/server.py
//! --no-sleep`), the same echo behaviour (the answer `echo: <text>` as a
//! completed task with an `answer` artifact) and the same client: one
//! JSON-RPC `SendMessage` over a kept-alive reqwest connection, its answer
//! read and parsed as JSON. One criterion group, so the two are measured
//! in one run and their ratio means something.
//!
//! Each server gets one core's worth of work: ours runs on its own
//! single-threaded tokio runtime (in this process, on another thread),
//! the Python one is one uvicorn process, started by the bench. Without
//! `python3 -c 'import a2a'` working (`pip install -r tests/a2a/requirements.txt`),
//! the bench says so and measures ours only.
//!
//! After criterion's report the bench times 300 more round trips on each
//! and prints the rates and their ratio.
//!
//! ```sh
//! cargo bench -p toolcall-a2a --bench round_trip
//! ```

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use toolcall_a2a::A2aServer;
use toolcall_agent::{Agent, Model, ModelError, ModelRequest, ModelResponse};
use toolcall_core::Toolset;

/// Says back the last message's text, as the Python server's agent does.
struct EchoModel;

impl Model for EchoModel {
    fn provider(&self) -> &str {
        "echo"
    }

    fn model(&self) -> &str {
        "echo"
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let text = request.messages.last().map(|message| message.text()).unwrap_or_default();
        Box::pin(async move { Ok(ModelResponse::new(format!("echo: {text}"), [])) })
    }
}

/// Our server on its own single-threaded runtime; its base URL.
fn serve_ours() -> String {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        runtime.block_on(async move {
            let agent = Agent::from_shared(Arc::new(EchoModel), Toolset::new()).expect("an agent");
            let server =
                A2aServer::new(agent).with_name("echo").with_description("Says back what it is told.");
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
            let url = format!("http://{}", listener.local_addr().expect("an address"));
            sender.send(url).expect("the bench waits");
            server.serve(listener).await.expect("serving");
        });
    });
    receiver.recv().expect("the server's URL")
}

/// The Python SDK's server, if `a2a` imports: the process and its URL.
fn serve_python() -> Option<(Child, String)> {
    let imports = Command::new("python3")
        .args(["-c", "import a2a, uvicorn, starlette"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !imports {
        eprintln!(
            "round_trip: `python3 -c 'import a2a'` fails (pip install -r tests/a2a/requirements.txt): \
             measuring toolcall's server only"
        );
        return None;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/a2a/server.py");
    let mut child = Command::new("python3")
        .args([script, "--no-sleep"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .ok()?;
    let mut line = String::new();
    let read = child.stdout.take().map(|out| BufReader::new(out).read_line(&mut line));
    if !matches!(read, Some(Ok(n)) if n > 0) || !line.starts_with("http://") {
        eprintln!("round_trip: tests/a2a/server.py did not start: measuring toolcall's server only");
        let _ = child.kill();
        return None;
    }
    Some((child, line.trim().to_owned()))
}

/// One round trip: SendMessage, the answer parsed; its answer text.
async fn send(http: &reqwest::Client, url: &str, id: u64) -> String {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "SendMessage",
        "params": {"message": {"messageId": format!("m-{id}"), "role": "ROLE_USER", "parts": [{"text": "ping"}]}}
    });
    let answer: Value = http
        .post(url)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .expect("the server answers")
        .json()
        .await
        .expect("JSON");
    answer["result"]["task"]["artifacts"][0]["parts"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Wait until the server answers, and check it echoes.
async fn ready(http: &reqwest::Client, url: &str) {
    for _ in 0..100 {
        if http.get(format!("{url}/.well-known/agent-card.json")).send().await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(send(http, &format!("{url}/"), 0).await, "echo: ping", "{url} does not echo");
}

fn round_trip(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let http = reqwest::Client::new();
    let mut servers = vec![("toolcall", serve_ours())];
    let python = serve_python();
    if let Some((_, url)) = &python {
        servers.push(("python_a2a_sdk", url.clone()));
    }
    let mut group = c.benchmark_group("a2a_round_trip");
    group.throughput(Throughput::Elements(1));
    for (name, url) in &servers {
        runtime.block_on(ready(&http, url));
        let rpc = format!("{url}/");
        let mut id = 0;
        group.bench_function(*name, |b| {
            b.to_async(&runtime).iter(|| {
                id += 1;
                send(&http, &rpc, id)
            });
        });
    }
    group.finish();
    // The ratio, from a plain timing of the same round trips after
    // criterion's (criterion does not give its estimates back).
    let rates: Vec<(&str, f64)> = servers
        .iter()
        .map(|(name, url)| {
            let rpc = format!("{url}/");
            let rounds = 300_u32;
            let took = runtime.block_on(async {
                let started = std::time::Instant::now();
                for id in 0..rounds {
                    send(&http, &rpc, u64::from(id)).await;
                }
                started.elapsed()
            });
            (*name, f64::from(rounds) / took.as_secs_f64())
        })
        .collect();
    for (name, rate) in &rates {
        println!("a2a_round_trip/{name}: {rate:.0} round trips/s");
    }
    if let [(_, ours), (_, python)] = rates.as_slice() {
        println!("a2a_round_trip: toolcall / python_a2a_sdk = {:.1}x", ours / python);
    }
    if let Some((mut child, _)) = python {
        let _ = child.kill();
        let _ = child.wait();
    }
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
