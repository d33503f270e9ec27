//! The MCP bridge against rmcp's own client: in-process servers over HTTP
//! on loopback and over an in-memory pipe; and `McpClient` against a server
//! written with rmcp's macros. (The example server, over stdio and HTTP, is
//! tested in the root package's tests/it/mcp.rs.)

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use crate::support;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ProgressNotificationParam, Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolcall_core::{
    CancellationToken, Outcome, ToolCall, ToolContext, ToolError, ToolSpec, Toolset, TypedTool,
};
use toolcall_mcp::types::ContentBlock;
use toolcall_mcp::{HttpOptions, McpClient, McpResult, McpServer};

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments.as_object().unwrap().clone())
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|b| b.as_text()).map(|t| t.text.clone()).collect::<Vec<_>>().join("\n")
}

/// A server written with rmcp's own macros, as a third party's would be.
#[derive(Clone)]
struct ThirdParty;

#[rmcp::tool_router]
impl ThirdParty {
    /// Halve an even number.
    #[rmcp::tool]
    async fn halve(
        &self,
        rmcp::handler::server::wrapper::Parameters(req): rmcp::handler::server::wrapper::Parameters<Number>,
    ) -> Result<String, rmcp::ErrorData> {
        if req.n % 2 != 0 {
            return Err(rmcp::ErrorData::invalid_params(format!("{} is odd: send an even n", req.n), None));
        }
        Ok((req.n / 2).to_string())
    }
}

#[rmcp::tool_handler]
impl rmcp::ServerHandler for ThirdParty {}

#[tokio::test]
async fn a_third_party_servers_errors_keep_their_meaning() {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = ThirdParty.serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    let client = McpClient::connect(client_side).await.unwrap();
    let mut tools = Toolset::new();
    assert_eq!(client.register(&mut tools).await.unwrap(), 1);
    let ctx = ToolContext::new();
    let ok = tools.call(&ctx, &ToolCall::new("1", "halve", r#"{"n":8}"#)).await;
    assert_eq!((ok.outcome, ok.content.as_str()), (Outcome::Success, "4"));
    // A JSON-RPC "invalid params" (-32602) from the tool: the model's
    // arguments were wrong, and the server's reason tells it how.
    let odd = tools.call(&ctx, &ToolCall::new("2", "halve", r#"{"n":7}"#)).await;
    assert_eq!(odd.outcome, Outcome::InvalidArguments, "{}", odd.content);
    assert!(odd.content.contains("7 is odd: send an even n"), "{}", odd.content);
    // A number sent as a string is read as its schema says before it is
    // sent on: rmcp's server, strict as serde, gets the number.
    let lax = tools.call(&ctx, &ToolCall::new("3", "halve", r#"{"n":" 8 "}"#)).await;
    assert_eq!((lax.outcome, lax.content.as_str()), (Outcome::Success, "4"));
    let fraction = tools.call(&ctx, &ToolCall::new("3", "halve", r#"{"n":"8.5"}"#)).await;
    assert_eq!(fraction.outcome, Outcome::InvalidArguments, "{}", fraction.content);
    assert!(
        fraction
            .content
            .contains(r#"at `n`: expected an integer, not the string "8.5", which is not a whole number"#),
        "{}",
        fraction.content
    );
    // rmcp answers arguments it cannot read with an error result instead.
    let unreadable = tools.call(&ctx, &ToolCall::new("3", "halve", r#"{"n":"eight"}"#)).await;
    assert_eq!(unreadable.outcome, Outcome::Failed, "{}", unreadable.content);
    assert!(unreadable.content.contains("invalid type"), "{}", unreadable.content);
}

// ---- in-process servers over HTTP ----

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Number {
    n: i64,
}

/// Doubles `n`: every concurrent caller can check its own answer.
struct Echo;
impl TypedTool for Echo {
    type Request = Number;
    type Output = i64;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec::new::<Number>("echo", "Double n."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Number) -> Result<i64, ToolError> {
        tokio::time::sleep(Duration::from_millis(5)).await;
        Ok(req.n * 2)
    }
}

struct Panics;
impl TypedTool for Panics {
    type Request = Number;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Number>("panics", "Always panics."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Number) -> Result<String, ToolError> {
        panic!("boom at {}", req.n)
    }
}

/// Reports `n` progress steps.
struct Steps;
impl TypedTool for Steps {
    type Request = Number;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Number>("steps", "Report progress."));
        &SPEC
    }
    async fn run(&self, ctx: &ToolContext, req: Number) -> Result<String, ToolError> {
        for step in 1..=req.n {
            ctx.report_progress(step as f64, Some(req.n as f64), Some("step"));
        }
        Ok("done".into())
    }
}

/// Waits forever; when its call is dropped, records whether its context
/// had been cancelled.
struct WaitsForCancel(Arc<AtomicBool>, Arc<Notify>);
impl TypedTool for WaitsForCancel {
    type Request = Number;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec::new::<Number>("waits", "Wait forever."));
        &SPEC
    }
    async fn run(&self, ctx: &ToolContext, _: Number) -> Result<String, ToolError> {
        let _guard = OnDrop(ctx.clone(), Arc::clone(&self.0), Arc::clone(&self.1));
        std::future::pending::<()>().await;
        Ok(String::new())
    }
}

struct OnDrop(ToolContext, Arc<AtomicBool>, Arc<Notify>);
impl Drop for OnDrop {
    fn drop(&mut self) {
        self.1.store(self.0.is_cancelled(), Ordering::SeqCst);
        self.2.notify_one();
    }
}

/// Answers with an image and structured content.
struct Chart;
impl TypedTool for Chart {
    type Request = Number;
    type Output = McpResult;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec::new::<Number>("chart", "A chart."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Number) -> Result<McpResult, ToolError> {
        Ok(McpResult::text(format!("a chart of {}", req.n))
            .with(ContentBlock::image("iVBORw0KGgo=", "image/png"))
            .with_structured(json!({ "n": req.n })))
    }
}

struct Http {
    url: String,
    shutdown: CancellationToken,
    server: McpServer,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn http_server(options: HttpOptions, cancelled: Option<(Arc<AtomicBool>, Arc<Notify>)>) -> Http {
    let mut tools = Toolset::builder().add(Echo).add(Panics).add(Steps).build().unwrap();
    tools.add(Chart).unwrap();
    if let Some((flag, notify)) = cancelled {
        tools.add(WaitsForCancel(flag, notify)).unwrap();
    }
    let server = McpServer::new(tools);
    let shutdown = CancellationToken::new();
    let options = options.with_shutdown(shutdown.clone()).with_stop_on_ctrl_c(false);
    let bound = options.bind(server.clone(), "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let url = bound.url();
    let task = tokio::spawn(bound.serve());
    Http { url, shutdown, server, task }
}

/// One progress report: how far, out of how much.
type Step = (f64, Option<f64>);

#[derive(Clone, Default)]
struct Watcher {
    progress: Arc<Mutex<Vec<Step>>>,
    changed: Arc<Notify>,
}

impl ClientHandler for Watcher {
    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push((params.progress, params.total));
    }
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

#[tokio::test]
async fn the_server_introduces_itself_as_the_program_unless_told() {
    let http = http_server(HttpOptions::new(), None).await;
    let client = ().serve(StreamableHttpClientTransport::from_uri(http.url.as_str())).await.unwrap();
    let exe = std::env::current_exe().unwrap();
    let program = exe.file_stem().unwrap().to_string_lossy();
    let info = client.peer_info().and_then(|peer| peer.server_info.clone()).expect("the server's info");
    assert_eq!(info.name, program);
    assert_ne!(info.name, "tools-mcp");
    client.cancel().await.unwrap();
    http.shutdown.cancel();

    let named = McpServer::new(Toolset::new()).with_server_info("weather", "1.2.3");
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move { named.serve(server_side).await.unwrap().waiting().await });
    let client = ().serve(client_side).await.unwrap();
    let info = client.peer_info().and_then(|peer| peer.server_info.clone()).expect("the server's info");
    assert_eq!((info.name.as_str(), info.version.as_str()), ("weather", "1.2.3"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_http_calls_each_get_their_own_answer() {
    let http = http_server(HttpOptions::new(), None).await;
    let client =
        Arc::new(().serve(StreamableHttpClientTransport::from_uri(http.url.as_str())).await.unwrap());
    let calls = (0..100).map(|n| {
        let client = Arc::clone(&client);
        tokio::spawn(async move { (n, client.call_tool(call("echo", json!({ "n": n }))).await.unwrap()) })
    });
    for joined in futures::future::join_all(calls).await {
        let (n, result) = joined.unwrap();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(text(&result), (n * 2).to_string());
    }
    http.shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), http.task)
        .await
        .expect("graceful shutdown")
        .unwrap()
        .unwrap();
}

/// Takes `n` milliseconds to double `n`; says when it has started, and
/// counts the runs that ended, finished or dropped.
#[derive(Clone, Default)]
struct Slow {
    started: Arc<Notify>,
    ended: Arc<AtomicUsize>,
}

impl TypedTool for Slow {
    type Request = Number;
    type Output = i64;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Number>("slow", "Double n, slowly."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Number) -> Result<i64, ToolError> {
        let _ended = support::CountDrop(Arc::clone(&self.ended));
        self.started.notify_one();
        tokio::time::sleep(Duration::from_millis(u64::try_from(req.n).unwrap_or(0))).await;
        Ok(req.n * 2)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_lets_the_calls_in_flight_finish_and_answer() {
    for stateless in [false, true] {
        // Longer than rmcp waits for replies when a session is cancelled (2 s).
        let (slow, call) = shut_down_during_a_call(HttpOptions::new().with_stateless(stateless), 3000).await;
        let answer =
            tokio::time::timeout(Duration::from_secs(10), call).await.expect("the call ended").unwrap();
        let result = answer.unwrap_or_else(|e| panic!("stateless {stateless}: {e}"));
        assert_eq!(text(&result), "6000", "stateless {stateless}");
        assert_eq!(slow.ended.load(Ordering::SeqCst), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_cancels_the_calls_that_outlast_its_grace() {
    for stateless in [false, true] {
        let options =
            HttpOptions::new().with_stateless(stateless).with_shutdown_grace(Duration::from_millis(100));
        // A ten-minute call: the server stopped within 10 s all the same,
        // and the tool's run is dropped.
        let (slow, call) = shut_down_during_a_call(options, 600_000).await;
        tokio::time::timeout(Duration::from_secs(10), async {
            while slow.ended.load(Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("stateless {stateless}: the call was not cancelled"));
        // rmcp's client may retry the abandoned stream for a long while.
        call.abort();
    }
}

/// Serve the `slow` tool, call it for `ms`, shut the server down while the
/// call runs, and wait (10 s at most) for the server to stop.
async fn shut_down_during_a_call(
    options: HttpOptions,
    ms: u64,
) -> (Slow, tokio::task::JoinHandle<Result<CallToolResult, ServiceError>>) {
    let slow = Slow::default();
    let server = McpServer::new(Toolset::builder().add(slow.clone()).build().unwrap());
    let shutdown = CancellationToken::new();
    let options = options.with_shutdown(shutdown.clone()).with_stop_on_ctrl_c(false);
    let bound = options.bind(server, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let url = bound.url();
    let task = tokio::spawn(bound.serve());
    let client = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
    let call = tokio::spawn(async move { client.call_tool(call("slow", json!({ "n": ms }))).await });
    tokio::time::timeout(Duration::from_secs(10), slow.started.notified()).await.expect("the call started");
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), task).await.expect("the server stopped").unwrap().unwrap();
    (slow, call)
}

#[tokio::test]
async fn a_panicking_tool_gets_an_error_reply_and_the_server_lives_on() {
    let http = http_server(HttpOptions::new(), None).await;
    let client = ().serve(StreamableHttpClientTransport::from_uri(http.url.as_str())).await.unwrap();
    let call_panics = client.call_tool(call("panics", json!({"n": 7})));
    let panicked =
        tokio::time::timeout(Duration::from_secs(10), call_panics).await.expect("a reply").unwrap();
    assert_eq!(panicked.is_error, Some(true));
    // The executor keeps the panic message in the logs, away from the model.
    assert_eq!(text(&panicked), r#"{"error":"tool `panics` panicked"}"#);
    let after = client.call_tool(call("echo", json!({"n": 1}))).await.unwrap();
    assert_eq!(text(&after), "2");
    http.shutdown.cancel();
}

#[tokio::test]
async fn progress_reaches_the_client_before_the_result() {
    let http = http_server(HttpOptions::new(), None).await;
    let watcher = Watcher::default();
    let client =
        watcher.clone().serve(StreamableHttpClientTransport::from_uri(http.url.as_str())).await.unwrap();
    let request = ClientRequest::CallToolRequest(Request::new(call("steps", json!({"n": 3}))));
    let handle = client.send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
    let ServerResult::CallToolResult(result) = handle.await_response().await.unwrap() else {
        panic!("expected a tool result");
    };
    assert_eq!(text(&result), "done");
    assert_eq!(*watcher.progress.lock().unwrap(), [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);
    http.shutdown.cancel();
}

#[tokio::test]
async fn a_cancelled_request_cancels_the_tool_context() {
    let (flag, notify) = (Arc::new(AtomicBool::new(false)), Arc::new(Notify::new()));
    let http = http_server(HttpOptions::new(), Some((Arc::clone(&flag), Arc::clone(&notify)))).await;
    let client = ().serve(StreamableHttpClientTransport::from_uri(http.url.as_str())).await.unwrap();
    let request = ClientRequest::CallToolRequest(Request::new(call("waits", json!({"n": 0}))));
    let handle = client.send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    handle.cancel(Some("the user gave up".into())).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), notify.notified())
        .await
        .expect("the tool saw the cancellation");
    assert!(flag.load(Ordering::SeqCst));
    http.shutdown.cancel();
}

#[tokio::test]
async fn cancelling_the_servers_context_cancels_its_calls() {
    let flag = Arc::new(AtomicBool::new(false));
    let tools =
        Toolset::builder().add(WaitsForCancel(Arc::clone(&flag), Arc::new(Notify::new()))).build().unwrap();
    let everything = CancellationToken::new();
    let server = McpServer::new(tools).with_context(ToolContext::new().with_cancellation(everything.clone()));
    let shutdown = CancellationToken::new();
    let options = HttpOptions::new().with_shutdown(shutdown.clone()).with_stop_on_ctrl_c(false);
    let bound = options.bind(server, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let url = bound.url();
    tokio::spawn(bound.serve());
    let client = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
    let pending = tokio::spawn(async move { client.call_tool(call("waits", json!({"n": 0}))).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    everything.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), pending).await.expect("the call ended");
    let result = result.unwrap().unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("cancelled"), "{}", text(&result));
    assert!(flag.load(Ordering::SeqCst), "the tool's context was not cancelled");
    shutdown.cancel();
}

#[tokio::test]
async fn rich_results_keep_their_blocks_and_structured_content() {
    let http = http_server(HttpOptions::new(), None).await;
    let client = ().serve(StreamableHttpClientTransport::from_uri(http.url.as_str())).await.unwrap();
    let result = client.call_tool(call("chart", json!({"n": 5}))).await.unwrap();
    assert_eq!(result.content.len(), 2);
    assert_eq!(text(&result), "a chart of 5");
    assert_eq!(result.content[1].as_image().unwrap().mime_type, "image/png");
    assert_eq!(result.structured_content, Some(json!({"n": 5})));
    // The plain default: content as text, structured only for JSON objects.
    let plain = client.call_tool(call("echo", json!({"n": 5}))).await.unwrap();
    assert_eq!((text(&plain).as_str(), plain.structured_content.is_none()), ("10", true));
    http.shutdown.cancel();
}

#[tokio::test]
async fn changing_the_toolset_notifies_clients() {
    let http = http_server(HttpOptions::new(), None).await;
    let watcher = Watcher::default();
    let client =
        watcher.clone().serve(StreamableHttpClientTransport::from_uri(http.url.as_str())).await.unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 4);
    let changed = watcher.changed.notified();
    http.server.update(|tools| tools.remove("panics")).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), changed).await.expect("notifications/tools/list_changed");
    let names: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.into_owned()).collect();
    assert_eq!(names, ["echo", "steps", "chart"]);
    http.shutdown.cancel();
}

/// An event stream (GET) ends at its lifetime; rmcp's client opens another
/// and still hears of changes (through the POSTs' answers alone it would not).
#[tokio::test]
async fn a_client_whose_event_stream_ended_still_hears_of_changes() {
    let options = HttpOptions::new().with_event_stream_lifetime(Duration::from_millis(200));
    let http = http_server(options, None).await;
    let watcher = Watcher::default();
    let client =
        watcher.clone().serve(StreamableHttpClientTransport::from_uri(http.url.as_str())).await.unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 4);
    // Past a few lifetimes: the first stream has ended (the guard below is
    // what can fail, not this wait).
    tokio::time::sleep(Duration::from_millis(1000)).await;
    for name in ["panics", "chart"] {
        let changed = watcher.changed.notified();
        http.server.update(|tools| tools.remove(name)).await.unwrap();
        tokio::time::timeout(Duration::from_secs(10), changed)
            .await
            .expect("notifications/tools/list_changed");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    http.shutdown.cancel();
}

#[tokio::test]
async fn clients_without_sessions_hear_of_changes_by_subscription() {
    use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
    use rmcp::{ClientLifecycleMode, ClientServiceExt};
    let http = http_server(HttpOptions::new(), None).await;
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client =
        ().serve_with_lifecycle(StreamableHttpClientTransport::from_uri(http.url.as_str()), lifecycle)
            .await
            .unwrap();
    let mut subscription =
        client.peer().listen(SubscriptionFilter::builder().tools_list_changed().build()).await.unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    http.server.update(|tools| tools.remove("panics")).await.unwrap();
    let notice = tokio::time::timeout(Duration::from_secs(10), subscription.next())
        .await
        .expect("notifications/tools/list_changed on the subscription")
        .unwrap();
    assert!(matches!(notice, Some(ServerNotification::ToolListChangedNotification(_))), "{notice:?}");
    assert_eq!(client.list_all_tools().await.unwrap().len(), 3);
    http.shutdown.cancel();
}

#[tokio::test]
async fn stateless_mode_answers_calls() {
    let http = http_server(HttpOptions::new().with_stateless(true), None).await;
    let client = ().serve(StreamableHttpClientTransport::from_uri(http.url.as_str())).await.unwrap();
    let result = client.call_tool(call("echo", json!({"n": 21}))).await.unwrap();
    assert_eq!(text(&result), "42");
    let session = |response: &reqwest::Response| response.headers().contains_key("mcp-session-id");
    assert!(!session(&initialize(&http.url, &[]).await), "a stateless server opened a session");
    http.shutdown.cancel();
    let stateful = http_server(HttpOptions::new(), None).await;
    assert!(session(&initialize(&stateful.url, &[]).await), "a stateful server opened no session");
    stateful.shutdown.cancel();
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

async fn post(url: &str, headers: &[(&str, &str)]) -> reqwest::StatusCode {
    initialize(url, headers).await.status()
}

async fn initialize(url: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused() {
    let http = http_server(HttpOptions::new(), None).await;
    assert!(post(&http.url, &[]).await.is_success());
    assert!(post(&http.url, &[("origin", "http://localhost:3000")]).await.is_success());
    assert_eq!(post(&http.url, &[("host", "evil.example")]).await, reqwest::StatusCode::FORBIDDEN);
    assert_eq!(post(&http.url, &[("origin", "http://evil.example")]).await, reqwest::StatusCode::FORBIDDEN);
    http.shutdown.cancel();
}

#[tokio::test]
async fn a_bearer_token_is_required_when_set() {
    let options = HttpOptions::new().with_bearer_token("s3cret");
    assert!(!format!("{options:?}").contains("s3cret"), "{options:?}");
    let http = http_server(options, None).await;
    assert_eq!(post(&http.url, &[]).await, reqwest::StatusCode::UNAUTHORIZED);
    assert_eq!(
        post(&http.url, &[("authorization", "Bearer wrong")]).await,
        reqwest::StatusCode::UNAUTHORIZED
    );
    assert!(post(&http.url, &[("authorization", "Bearer s3cret")]).await.is_success());

    let config = StreamableHttpClientTransportConfig::with_uri(http.url.as_str()).auth_header("s3cret");
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    assert_eq!(text(&client.call_tool(call("echo", json!({"n": 2}))).await.unwrap()), "4");
    let remote = McpClient::http_with_token(&http.url, "s3cret").await.unwrap();
    assert_eq!(remote.tools().await.unwrap().len(), 4);
    assert!(McpClient::http(&http.url).await.is_err());
    http.shutdown.cancel();
}

/// Doubles `n`, with an example that does not fit its schema (`n` is a
/// number): the MCP dialect refuses its definition.
struct BadExample;
impl TypedTool for BadExample {
    type Request = Number;
    type Output = i64;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new::<Number>("bad_example", "Double n.").with_example(json!({"n": "two"}))
        });
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Number) -> Result<i64, ToolError> {
        Ok(req.n * 2)
    }
}

#[tokio::test]
async fn a_tool_whose_examples_do_not_fit_is_left_out_of_the_list_and_the_rest_are_listed() {
    let tools = Toolset::builder().add(Echo).add(BadExample).build().unwrap();
    let server = McpServer::new(tools);
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move { server.serve(server_side).await.unwrap().waiting().await });
    let client = ().serve(client_side).await.unwrap();
    let names: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.into_owned()).collect();
    assert_eq!(names, ["echo"]);
    // Left out of the list, not out of the toolset: its calls still run.
    let result = client.call_tool(call("bad_example", json!({"n": 2}))).await.unwrap();
    assert_eq!(text(&result), "4");
    client.cancel().await.unwrap();
}
