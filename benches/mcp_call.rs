//! `tools/call` round trips over an in-memory duplex transport: our bridge
//! (the toolset's contract: lenient parsing, limits, panic/timeout/cancel
//! handling) against a plain rmcp `#[tool_router]` server with the same tool,
//! in the same run.
//!
//! ```sh
//! cargo bench --bench mcp_call --features mcp -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! prints criterion's numbers, then both throughputs and their ratio.

use std::sync::LazyLock;

use criterion::Criterion;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
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
    let bridge = runtime.block_on(connect(McpServer::new(Toolset::new().with(AddTool).unwrap())));
    let plain = runtime.block_on(connect(Plain));
    for client in [&bridge, &plain] {
        let result = runtime.block_on(client.call_tool(request())).unwrap();
        assert_eq!(result.content[0].as_text().map(|t| t.text.as_str()), Some("42"));
    }
    let mut group = c.benchmark_group("tools_call_duplex");
    group.bench_function("bridge", |b| b.to_async(&runtime).iter(|| bridge.call_tool(request())));
    group.bench_function("rmcp_tool_router", |b| b.to_async(&runtime).iter(|| plain.call_tool(request())));
    group.finish();
}

fn main() {
    let dir = support::output_directory();
    let mut criterion = Criterion::default().output_directory(&dir).configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();

    let estimate = |id| support::estimate_ns(&dir, "tools_call_duplex", id);
    if let (Some(bridge), Some(plain)) = (estimate("bridge"), estimate("rmcp_tool_router")) {
        println!("\nsummary of this run:");
        println!(
            "  round trips per second: bridge {:.0}, plain rmcp {:.0}: ratio {:.2} (bridge / plain)",
            1e9 / bridge,
            1e9 / plain,
            plain / bridge
        );
    }
}
