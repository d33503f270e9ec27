//! Three MCP servers of the same `get_weather`, each a child process on
//! stdio, measured with rmcp's client (Rust on the client side, so the
//! servers are what is measured): this SDK's example (release build), the
//! official Python SDK's `MCPServer` (`benches/fastmcp/server.py`) and the
//! official TypeScript SDK's `McpServer` (`benches/servers/weather.mjs`).
//! For each: calls one after the other, then the same number with 50 in
//! flight, in ten rounds that take turns between the servers, so the drift
//! of a shared machine hits all three alike; the rates and ratios are the
//! rounds' medians. Run by hand, not in CI; it builds and installs what it
//! needs:
//!
//! ```sh
//! cargo bench --bench mcp_servers --features mcp -- 2000
//! ```

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use futures::StreamExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;
use tokio::process::Command;

const IN_FLIGHT: usize = 50;
const WARM_UP: usize = 200;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The example server, built for release.
fn example() -> PathBuf {
    let out = StdCommand::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--features",
            "mcp",
            "--example",
            "mcp_server",
            "--message-format=json",
            "--quiet",
        ])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "the example builds: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|msg| msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "mcp_server")
        .and_then(|msg| msg["executable"].as_str().map(PathBuf::from))
        .expect("cargo reports the example's executable")
}

/// Install the SDKs the other two servers need, where they are missing.
fn install() {
    let python = StdCommand::new("python3").args(["-c", "import mcp"]).status();
    if !python.is_ok_and(|status| status.success()) {
        let status = StdCommand::new("python3")
            .args(["-m", "pip", "install", "--quiet", "mcp==2.3.0"])
            .status()
            .expect("pip runs");
        assert!(status.success(), "pip install mcp");
    }
    if !root().join("tests/typescript/node_modules/@modelcontextprotocol/sdk").exists() {
        let status = StdCommand::new("npm")
            .args(["ci", "--prefix", "tests/typescript", "--no-audit", "--no-fund", "--silent"])
            .current_dir(root())
            .status()
            .expect("npm runs");
        assert!(status.success(), "npm ci");
    }
}

fn request() -> CallToolRequestParams {
    CallToolRequestParams::new("get_weather")
        .with_arguments(json!({"city": "Paris", "days": 3}).as_object().cloned().unwrap_or_default())
}

async fn connect(mut command: Command) -> RunningService<RoleClient, ()> {
    command.env_remove("TAVILY_API_KEY").current_dir(root());
    let transport = TokioChildProcess::new(command).expect("the server starts");
    ().serve(transport).await.expect("the client connects")
}

/// Rounds the calls are split into, each server taking its turn in each.
const ROUNDS: usize = 10;

/// Calls per second of one server in one round: one after the other, and
/// with [`IN_FLIGHT`] at once.
type Rates = (f64, f64);

/// Which of the two rates a summary line reads.
type Pick = fn(&Rates) -> f64;

async fn warm_up(client: &RunningService<RoleClient, ()>) {
    for _ in 0..WARM_UP {
        let result = client.call_tool(request()).await.expect("the call is answered");
        assert_ne!(result.is_error, Some(true), "the call failed: {result:?}");
    }
}

/// Calls per second: `calls` one after the other, then `calls` with
/// [`IN_FLIGHT`] at once.
async fn measure(client: &RunningService<RoleClient, ()>, calls: usize) -> Rates {
    let started = Instant::now();
    for _ in 0..calls {
        client.call_tool(request()).await.expect("the call is answered");
    }
    let sequential = calls as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    let answered = futures::stream::iter(0..calls)
        .map(|_| client.call_tool(request()))
        .buffer_unordered(IN_FLIGHT)
        .filter(|result| std::future::ready(result.as_ref().is_ok_and(|r| r.is_error != Some(true))))
        .count()
        .await;
    assert_eq!(answered, calls, "every concurrent call is answered");
    (sequential, calls as f64 / started.elapsed().as_secs_f64())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; the one number is the call count.
    let calls = std::env::args().skip(1).find_map(|arg| arg.parse().ok()).unwrap_or(2000);
    install();
    let example = example();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let servers: [(&str, Command); 3] = [
        ("this SDK (examples/mcp_server, release)", Command::new(&example)),
        ("Python SDK MCPServer (fastmcp/server.py)", {
            let mut command = Command::new("python3");
            command.arg("benches/fastmcp/server.py");
            command
        }),
        ("TypeScript SDK McpServer (servers/weather.mjs)", {
            let mut command = Command::new("node");
            command.arg("benches/servers/weather.mjs");
            command
        }),
    ];
    let (names, commands): (Vec<_>, Vec<_>) = servers.into_iter().unzip();
    // rounds[round][server] = (sequential, concurrent) calls per second.
    let rounds: Vec<Vec<Rates>> = runtime.block_on(async {
        let mut clients = Vec::new();
        for command in commands {
            let client = connect(command).await;
            warm_up(&client).await;
            clients.push(client);
        }
        let mut rounds = Vec::new();
        for _ in 0..ROUNDS {
            let mut round = Vec::new();
            for client in &clients {
                let rate =
                    tokio::time::timeout(Duration::from_secs(600), measure(client, calls / ROUNDS)).await;
                round.push(rate.expect("a round ends within 10 minutes"));
            }
            rounds.push(round);
        }
        for client in clients {
            let _ = client.cancel().await;
        }
        rounds
    });
    let rate = |server: usize, pick: Pick| median(rounds.iter().map(|r| pick(&r[server])).collect());
    let ratio =
        |other: usize, pick: Pick| median(rounds.iter().map(|r| pick(&r[0]) / pick(&r[other])).collect());
    let (sequential, concurrent): (Pick, Pick) = (|r| r.0, |r| r.1);
    let rates: Vec<(&str, Rates)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| (*name, (rate(i, sequential), rate(i, concurrent))))
        .collect();
    println!("{calls} tools/call of get_weather over stdio, rmcp's client:");
    println!("  {:<48} {:>12} {:>16}", "server", "sequential/s", "50 in flight/s");
    for (name, (sequential, concurrent)) in &rates {
        println!("  {name:<48} {sequential:>12.0} {concurrent:>16.0}");
    }
    println!("  medians of {ROUNDS} rounds of {} calls each way, the servers taking turns", calls / ROUNDS);
    println!(
        "  this SDK / Python:     {:.1}x sequential, {:.1}x with 50 in flight",
        ratio(1, sequential),
        ratio(1, concurrent)
    );
    println!(
        "  this SDK / TypeScript: {:.1}x sequential, {:.1}x with 50 in flight",
        ratio(2, sequential),
        ratio(2, concurrent)
    );
}
