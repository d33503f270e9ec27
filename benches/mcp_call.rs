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

use std::sync::{Arc, LazyLock};

use criterion::Criterion;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleClient, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::json;
use tools::mcp::McpServer;
use tools::{ToolContext, ToolError, ToolSpec, Toolset, TypedTool};

mod support;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

/// The tool, written for our bridge.
struct AddTool;
impl TypedTool for AddTool {
    type Request = Add;
    type Output = i64;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec::new::<Add>("add", "Add two numbers."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Add) -> Result<i64, ToolError> {
        Ok(req.a + req.b)
    }
}

/// The same tool, written for rmcp's macros.
#[derive(Clone)]
struct Plain;

#[tool_router]
impl Plain {
    #[tool(description = "Add two numbers.")]
    async fn add(&self, Parameters(req): Parameters<Add>) -> String {
        (req.a + req.b).to_string()
    }
}

#[tool_handler]
impl ServerHandler for Plain {}

/// Serve `server` over streamable HTTP on a loopback port, as rmcp's own
/// service does for any handler, and connect rmcp's HTTP client to it.
async fn connect_http<S: ServerHandler + Clone + Send + Sync + 'static>(
    server: S,
) -> RunningService<RoleClient, ()> {
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("its address"));
    tokio::spawn(
        async move { axum::serve(listener, axum::Router::new().route_service("/mcp", service)).await },
    );
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

fn request() -> CallToolRequestParams {
    CallToolRequestParams::new("add")
        .with_arguments(json!({"a": 2, "b": 40}).as_object().cloned().unwrap_or_default())
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let server = McpServer::new(Toolset::builder().add(AddTool).build().unwrap());
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
