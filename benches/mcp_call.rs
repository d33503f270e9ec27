//! `tools/call` round trips over an in-memory duplex transport and over
//! streamable HTTP on loopback: our bridge (the toolset's contract: lenient
//! parsing, limits, panic/timeout/cancel handling) against a plain rmcp
//! `#[tool_router]` server with the same tool, in the same run.
//!
//! ```sh
//! cargo bench --bench mcp_call --features mcp -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! prints criterion's numbers, then both throughputs and their ratio.

use criterion::Criterion;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServerHandler, ServiceExt};

use add::{Plain, request};

#[path = "support/add.rs"]
mod add;
mod support;

/// Serve `server` over streamable HTTP on a loopback port, as rmcp's own
/// service does for any handler, and connect rmcp's HTTP client to it.
async fn connect_http<S: ServerHandler + Clone + Send + Sync + 'static>(
    server: S,
) -> RunningService<RoleClient, ()> {
    let url = add::serve_with_rmcp(server).await;
    ().serve(StreamableHttpClientTransport::from_uri(url)).await.expect("client connects")
}

async fn connect<S: ServerHandler>(server: S) -> RunningService<RoleClient, ()> {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_side).await.expect("client connects")
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = add::bridge();
    for (transport, bridge, plain) in [
        ("duplex", runtime.block_on(connect(server.clone())), runtime.block_on(connect(Plain))),
        ("http", runtime.block_on(connect_http(server.clone())), runtime.block_on(connect_http(Plain))),
    ] {
        for client in [&bridge, &plain] {
            let result = runtime.block_on(client.call_tool(request())).unwrap();
            assert_eq!(result.content[0].as_text().map(|t| t.text.as_str()), Some("42"));
        }
        let mut group = c.benchmark_group(format!("tools_call_{transport}"));
        group.bench_function("bridge", |b| b.to_async(&runtime).iter(|| bridge.call_tool(request())));
        group
            .bench_function("rmcp_tool_router", |b| b.to_async(&runtime).iter(|| plain.call_tool(request())));
        group.finish();
    }
}

fn main() {
    let dir = support::run(bench);

    println!("\nsummary of this run (round trips per second):");
    for transport in ["duplex", "http"] {
        let group = format!("tools_call_{transport}");
        let estimate = |id| support::estimate_ns(&dir, &group, id);
        if let (Some(bridge), Some(plain)) = (estimate("bridge"), estimate("rmcp_tool_router")) {
            println!(
                "  {transport:<6}  bridge {:.0}, plain rmcp {:.0}: ratio {:.2} (bridge / plain)",
                1e9 / bridge,
                1e9 / plain,
                plain / bridge
            );
        }
    }
}
