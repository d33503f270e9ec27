//! Hostile input against the MCP server over HTTP (the rest of the attacks
//! are the root package's tests/it/adversarial.rs): an HTTP client that
//! vanishes mid-call leaves the attacked call to its session and the server
//! serving the other calls.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::Notify;
use toolcall_core::{CancellationToken, ToolContext, ToolError, ToolSpec, Toolset, TypedTool};
use toolcall_macros::tool;
use toolcall_mcp::{HttpOptions, McpServer};

use crate::support::CountDrop;

/// Long enough to tell a hang from a slow debug build; never a measure of speed.
const HANG: Duration = Duration::from_secs(30);

async fn within<F: Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(HANG, future).await.unwrap_or_else(|_| panic!("{what}: no answer within {HANG:?}"))
}

/// Doubles `n`: the innocent bystander of every attack.
#[tool(args)]
async fn double(n: i64) -> i64 {
    n * 2
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// Waits forever once started; counts its starts and the drops of its future.
struct Stuck {
    started: Arc<Notify>,
    starts: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

impl TypedTool for Stuck {
    type Request = Nothing;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Nothing>("stuck", "Wait forever."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, _: Nothing) -> Result<String, ToolError> {
        let _dropped = CountDrop(Arc::clone(&self.dropped));
        self.starts.fetch_add(1, Ordering::SeqCst);
        self.started.notify_one();
        std::future::pending().await
    }
}

const PROTOCOL: &str = "2025-06-18";

fn rpc(id: u32, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A raw HTTP/1.1 POST, written by hand so that it can be cut off anywhere.
fn raw_post(addr: std::net::SocketAddr, session: &str, body: &str, content_length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         Mcp-Protocol-Version: {PROTOCOL}\r\nContent-Length: {content_length}\r\n\r\n{body}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_client_that_disconnects_mid_call_leaves_the_server_serving() {
    let started = Arc::new(Notify::new());
    let (starts, dropped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let stuck =
        Stuck { started: Arc::clone(&started), starts: Arc::clone(&starts), dropped: Arc::clone(&dropped) };
    let tools = Toolset::builder().add(Double).add(stuck).build().unwrap();
    let shutdown = CancellationToken::new();
    let options = HttpOptions::new().with_shutdown(shutdown.clone()).with_stop_on_ctrl_c(false);
    let bound = options.bind(McpServer::new(tools), "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let (url, addr) = (bound.url(), bound.local_addr());
    let server = tokio::spawn(bound.serve());

    // A session of its own, opened by hand.
    let http = reqwest::Client::new();
    let post = |body: String, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session).header("mcp-protocol-version", PROTOCOL);
        }
        request.send()
    };
    let init =
        json!({"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}});
    let response = within("initialize", post(rpc(1, "initialize", init), None)).await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    within("the initialize body", response.text()).await.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let response = within("initialized", post(initialized, Some(&session))).await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());

    // A client that hangs up halfway through sending its request...
    let call_stuck = rpc(2, "tools/call", json!({"name": "stuck", "arguments": {}}));
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let half = raw_post(addr, &session, &call_stuck[..call_stuck.len() / 2], call_stuck.len());
    socket.write_all(half.as_bytes()).await.unwrap();
    drop(socket);

    // ... and one that hangs up while the tool runs.
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    socket.write_all(raw_post(addr, &session, &call_stuck, call_stuck.len()).as_bytes()).await.unwrap();
    within("the stuck tool's start", started.notified()).await;
    drop(socket);

    // A new client gets correct answers, to concurrent calls.
    let client = within("a new client", ().serve(StreamableHttpClientTransport::from_uri(url.as_str())))
        .await
        .unwrap();
    let calls = (0..20).map(|n| {
        let arguments = json!({ "n": n }).as_object().unwrap().clone();
        client.call_tool(CallToolRequestParams::new("double").with_arguments(arguments))
    });
    for (n, result) in within("20 calls after the disconnect", futures::future::join_all(calls))
        .await
        .into_iter()
        .enumerate()
    {
        let result = result.unwrap();
        assert_eq!(result.is_error, Some(false));
        let text: Vec<&str> =
            result.content.iter().filter_map(|b| b.as_text()).map(|t| t.text.as_str()).collect();
        assert_eq!(text, [(n * 2).to_string()]);
    }
    // The abandoned session answers too.
    let again = rpc(3, "tools/call", json!({"name": "double", "arguments": {"n": 50}}));
    let response = within("a call on the abandoned session", post(again, Some(&session))).await.unwrap();
    let body = within("its body", response.text()).await.unwrap();
    assert!(body.contains(r#""text":"100""#), "{body}");

    // The MCP spec: a disconnection is not a cancellation. The abandoned
    // call runs on in its session (a tool with no timeout, forever), and
    // the half-sent request never started one.
    assert_eq!((starts.load(Ordering::SeqCst), dropped.load(Ordering::SeqCst)), (1, 0));
    // It ends with its session: rmcp cancels what is still running once it
    // has waited for in-flight replies (5 s after the close).
    let deleted =
        http.delete(&url).header("mcp-session-id", &session).header("mcp-protocol-version", PROTOCOL);
    let response = within("DELETE of the session", deleted.send()).await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    within("the abandoned call's end", async {
        while dropped.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!((starts.load(Ordering::SeqCst), dropped.load(Ordering::SeqCst)), (1, 1));

    client.cancel().await.unwrap();
    shutdown.cancel();
    within("the server's shutdown", server).await.unwrap().unwrap();
}
