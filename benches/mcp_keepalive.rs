//! Sequential `tools/call`s on one kept-alive HTTP connection, the case
//! where a missing TCP_NODELAY costs some 40 ms a call: our HTTP server
//! against plain rmcp (its service on `axum::serve`, as its examples do)
//! and the TypeScript SDK's own server, each called by the TypeScript SDK's
//! client and by rmcp's, in interleaved rounds of one run.
//!
//! ```sh
//! cargo bench --bench mcp_keepalive --features mcp            # 5 rounds of 200 calls
//! cargo bench --bench mcp_keepalive --features mcp -- 9 500   # rounds, calls
//! ```
//!
//! Needs Node.js; installs the SDK into tests/typescript when it is missing.
//! Prints the median calls/s (and the range) of each pair, and the ratios.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use tokio::io::AsyncBufReadExt;

#[path = "support/add.rs"]
mod add;

const SERVERS: [&str; 3] = ["tools (HttpOptions::bind)", "plain rmcp (axum::serve)", "TypeScript SDK server"];
const CLIENTS: [&str; 2] = ["TypeScript SDK client", "rmcp client"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn install_sdk(root: &Path) {
    if root.join("tests/typescript/node_modules/@modelcontextprotocol/sdk").exists() {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--prefix", "tests/typescript", "--no-audit", "--no-fund", "--silent"])
        .current_dir(root)
        .status()
        .expect("npm runs");
    assert!(status.success(), "npm ci failed");
}

/// Calls per second of the TypeScript SDK's client, `calls` in a row.
fn typescript_client(root: &Path, url: &str, calls: usize) -> f64 {
    let out = Command::new("node")
        .arg(root.join("benches/keepalive/client.mjs"))
        .args([url, &calls.to_string()])
        .stderr(Stdio::inherit())
        .output()
        .expect("node runs");
    assert!(out.status.success(), "the TypeScript client failed against {url}");
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("a rate")
}

/// Calls per second of rmcp's client, `calls` in a row.
async fn rmcp_client(url: &str, calls: usize) -> f64 {
    let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.expect("connected");
    client.call_tool(add::request()).await.expect("a first call");
    let started = Instant::now();
    for _ in 0..calls {
        let result = client.call_tool(add::request()).await.expect("a call");
        assert_eq!(result.content[0].as_text().map(|t| t.text.as_str()), Some("42"));
    }
    let rate = calls as f64 / started.elapsed().as_secs_f64();
    let _ = client.cancel().await;
    rate
}

fn median(rates: &mut [f64]) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

fn main() {
    let numbers: Vec<usize> = std::env::args().skip(1).filter_map(|arg| arg.parse().ok()).collect();
    let (rounds, calls) = (numbers.first().copied().unwrap_or(5), numbers.get(1).copied().unwrap_or(200));
    let root = root();
    install_sdk(&root);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut node = tokio::process::Command::new("node");
    let node = node.arg(root.join("benches/keepalive/server.mjs")).stdout(Stdio::piped()).kill_on_drop(true);
    let (urls, _typescript_server) = runtime.block_on(async {
        let mut server = node.spawn().expect("node runs");
        let stdout = server.stdout.take().expect("its stdout");
        let typescript = tokio::io::BufReader::new(stdout).lines().next_line().await.unwrap().expect("a URL");
        let urls = [add::serve_with_tools().await, add::serve_with_rmcp(add::Plain).await, typescript];
        (urls, server)
    });
    // rates[server][client], a rate a round.
    let mut rates = vec![vec![Vec::new(); CLIENTS.len()]; SERVERS.len()];
    for round in 0..rounds {
        for (server, url) in urls.iter().enumerate() {
            rates[server][0].push(typescript_client(&root, url, calls));
            rates[server][1].push(runtime.block_on(rmcp_client(url, calls)));
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    println!("\n{calls} sequential calls on one connection, {rounds} rounds: median calls/s (min to max)");
    let mut medians = vec![[0.0; 2]; SERVERS.len()];
    for (server, name) in SERVERS.iter().enumerate() {
        let mut row = format!("  {name:<28}");
        for client in 0..CLIENTS.len() {
            let (min, max) =
                rates[server][client].iter().fold((f64::MAX, 0.0f64), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
            medians[server][client] = median(&mut rates[server][client]);
            row += &format!("  {}: {:>7.0} ({min:.0} to {max:.0})", CLIENTS[client], medians[server][client]);
        }
        println!("{row}");
    }
    for (client, name) in CLIENTS.iter().enumerate() {
        println!(
            "  {name}: tools / plain rmcp {:.2}, tools / TypeScript SDK server {:.2}",
            medians[0][client] / medians[1][client],
            medians[0][client] / medians[2][client]
        );
    }
}
