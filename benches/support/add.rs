//! The MCP benches' one tool, `add`, written twice: for our bridge and for
//! rmcp's macros, with each served over streamable HTTP on loopback.
// Each bench uses only some of these.
#![allow(dead_code)]

use std::sync::{Arc, LazyLock};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::json;
use toolcall::mcp::{HttpOptions, McpServer};
use toolcall::{ToolContext, ToolError, ToolSpec, Toolset, TypedTool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct Add {
    a: i64,
    b: i64,
}

/// The tool, written for our bridge.
pub(crate) struct AddTool;

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
pub(crate) struct Plain;

#[tool_router]
impl Plain {
    #[tool(description = "Add two numbers.")]
    async fn add(&self, Parameters(req): Parameters<Add>) -> String {
        (req.a + req.b).to_string()
    }
}

#[tool_handler]
impl ServerHandler for Plain {}

/// Our bridge serving `add`.
pub(crate) fn bridge() -> McpServer {
    McpServer::new(Toolset::builder().add(AddTool).build().expect("one tool"))
}

/// The call every bench makes: `add(2, 40)`.
pub(crate) fn request() -> CallToolRequestParams {
    CallToolRequestParams::new("add")
        .with_arguments(json!({"a": 2, "b": 40}).as_object().cloned().unwrap_or_default())
}

/// Serve `server` at `/mcp` on a loopback port as rmcp's own examples do
/// (its service on `axum::serve`), and give its URL.
pub(crate) async fn serve_with_rmcp<S: ServerHandler + Clone + Send + Sync + 'static>(server: S) -> String {
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
    url
}

/// Serve our bridge with our HTTP server (the path users take:
/// `HttpOptions::bind`), and give its URL.
pub(crate) async fn serve_with_tools() -> String {
    serve_with_options(HttpOptions::new().with_stop_on_ctrl_c(false)).await
}

/// Serve our bridge with our HTTP server, configured by `options`, on a
/// loopback port, and give its URL.
pub(crate) async fn serve_with_options(options: HttpOptions) -> String {
    let bound = options.bind(bridge(), "127.0.0.1:0".parse().expect("an address")).await.expect("bound");
    let url = bound.url();
    tokio::spawn(bound.serve());
    url
}
