//! Replicas of one toolset behind a real round-robin balancer (HAProxy,
//! started by the test on loopback), as a deployment runs them, against
//! rmcp's streamable HTTP client.
//!
//! - stateless replicas (`HttpOptions::with_stateless`) answer any request:
//!   calls, progress, and approval on 2026-07-28 all work whichever replica
//!   each request reaches;
//! - the default, with sessions, loses its session on the next replica
//!   (HTTP 404), and works behind a balancer sticky on `Mcp-Session-Id`,
//!   configured as the guide says;
//! - the official TypeScript SDK's client (`tests/typescript/balanced.mjs`)
//!   through round robin to stateless replicas.
//!
//! Ignored by default: they need the `haproxy` binary, and the last one
//! `node` with `npm ci --prefix tests/typescript` done; `.ci/run` has
//! both. Run them with
//! `cargo test -p toolcall-mcp --all-features --test it balanced -- --ignored`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, ProgressNotificationParam,
    ProtocolVersion, Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolcall_core::{CancellationToken, ToolContext, Toolset};
use toolcall_macros::tool;
use toolcall_mcp::{HttpOptions, McpServer};

// ---- the replicas ----

/// Which replica a call ran on, and how many calls each ran.
#[derive(Clone)]
struct Replica {
    name: String,
    calls: Arc<AtomicUsize>,
}

/// Double `n`, and say which replica did it.
#[tool(args)]
async fn double(ctx: &ToolContext, n: i64) -> String {
    let replica = ctx.get::<Replica>().map_or("?", |replica| {
        replica.calls.fetch_add(1, Ordering::SeqCst);
        replica.name.as_str()
    });
    format!("{} {replica}", n * 2)
}

/// Report `n` progress steps, then say which replica did it.
#[tool(args)]
async fn steps(ctx: &ToolContext, n: u32) -> String {
    for step in 1..=n {
        ctx.report_progress(f64::from(step), Some(f64::from(n)), None);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    ctx.get::<Replica>().map_or("?", |replica| replica.name.as_str()).to_owned()
}

/// Delete a file (only with a person's approval).
#[tool(args, destructive, needs_approval)]
async fn delete_file(ctx: &ToolContext, path: String) -> String {
    let replica = ctx.get::<Replica>().map_or("?", |replica| {
        replica.calls.fetch_add(1, Ordering::SeqCst);
        replica.name.as_str()
    });
    format!("deleted {path} on {replica}")
}

/// Replicas of the same toolset, each on its own loopback port.
struct Replicas {
    addrs: Vec<SocketAddr>,
    counts: Vec<Replica>,
    shutdown: CancellationToken,
}

impl Replicas {
    async fn start(n: usize, options: impl Fn() -> HttpOptions) -> Self {
        let shutdown = CancellationToken::new();
        let (mut addrs, mut counts) = (Vec::new(), Vec::new());
        for index in 0..n {
            let replica = Replica { name: format!("r{index}"), calls: Arc::default() };
            let tools = Toolset::builder().add(Double).add(Steps).add(DeleteFile).build().unwrap();
            let server =
                McpServer::new(tools).with_context(ToolContext::new().with_extension(replica.clone()));
            let bound = options()
                .with_shutdown(shutdown.child_token())
                .with_stop_on_ctrl_c(false)
                .bind(server, "127.0.0.1:0".parse().unwrap())
                .await
                .unwrap();
            addrs.push(bound.local_addr());
            counts.push(replica);
            tokio::spawn(bound.serve());
        }
        Self { addrs, counts, shutdown }
    }

    /// The calls each replica ran, by name.
    fn counts(&self) -> BTreeMap<String, usize> {
        self.counts.iter().map(|r| (r.name.clone(), r.calls.load(Ordering::SeqCst))).collect()
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

// ---- the balancer ----

/// HAProxy in front of the replicas, stopped (and its directory removed)
/// on drop.
struct Haproxy {
    child: Child,
    dir: PathBuf,
    url: String,
}

/// The `haproxy` binary: on PATH, or where Debian puts it (`/usr/sbin`,
/// which is not on a user's PATH).
fn haproxy_binary() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join("haproxy"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "these tests need HAProxy, and `haproxy` is not on PATH (nor in /usr/sbin): install it \
                 (Debian/Ubuntu: `sudo apt-get install -y haproxy`; macOS: `brew install haproxy`), \
                 then run them again"
            )
        })
}

/// The session-affinity lines of the guide's HAProxy snippet: a new
/// session's id is learnt from the `initialize` answer, and every request
/// carrying it goes to the replica that made it.
const STICKY: &str = "    stick-table type string len 128 size 100k expire 30m
    stick store-response res.hdr(mcp-session-id)
    stick match req.hdr(mcp-session-id)
";

impl Haproxy {
    fn start(backends: &[SocketAddr], sticky: bool) -> Self {
        let binary = haproxy_binary();
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "toolcall-mcp-haproxy-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        // A free port for the frontend: taken, read and let go.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let servers: String = backends
            .iter()
            .enumerate()
            .map(|(index, addr)| format!("    server r{index} {addr}\n"))
            .collect();
        let affinity = if sticky { STICKY } else { "" };
        // Timeouts long enough for event streams (an SSE answer, a GET
        // stream) that stay quiet for a while.
        let config = format!(
            "global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout http-keep-alive 30s
frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
{affinity}{servers}"
        );
        let file = dir.join("haproxy.cfg");
        std::fs::write(&file, config).unwrap();
        let check = Command::new(&binary).arg("-c").arg("-q").arg("-f").arg(&file).output().unwrap();
        assert!(
            check.status.success(),
            "haproxy refused its config: {}",
            String::from_utf8_lossy(&check.stderr)
        );
        let child = Command::new(&binary)
            .arg("-db")
            .arg("-f")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut haproxy = Self { child, dir, url: format!("http://127.0.0.1:{port}/mcp") };
        haproxy.wait_until_listening(port);
        haproxy
    }

    fn wait_until_listening(&mut self, port: u16) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("haproxy exited at start: {status}");
            }
            assert!(Instant::now() < deadline, "haproxy did not listen on {port} within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        remove(&self.dir);
    }
}

fn remove(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

// ---- the client ----

/// A client whose person says yes to every approval, and who notes the
/// progress it hears.
#[derive(Clone, Default)]
struct Person {
    asked: Arc<AtomicUsize>,
    progress: Arc<Mutex<Vec<f64>>>,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder().enable_elicitation().build();
        ClientConfig::new(capabilities, Implementation::new("balanced-test", "0"))
    }

    async fn create_elicitation(
        &self,
        _: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true})))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params.progress);
    }
}

/// How a client connects: the `initialize` handshake (2025-11-25), or
/// `server/discover` and self-contained requests (2026-07-28).
#[derive(Clone, Copy, Debug)]
enum Protocol {
    Initialize,
    Discover,
}

async fn connect(url: &str, protocol: Protocol, person: Person) -> RunningService<RoleClient, Person> {
    let lifecycle = match protocol {
        Protocol::Initialize => ClientLifecycleMode::Initialize,
        Protocol::Discover => {
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
        }
    };
    person
        .serve_with_lifecycle(StreamableHttpClientTransport::from_uri(url), lifecycle)
        .await
        .unwrap_or_else(|e| panic!("{protocol:?}: connecting through the balancer: {e}"))
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments.as_object().unwrap().clone())
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|b| b.as_text()).map(|t| t.text.clone()).collect::<Vec<_>>().join("\n")
}

/// 20 calls of `double`, each checked; the replicas that answered them.
async fn twenty_calls(client: &RunningService<RoleClient, Person>, label: &str) -> BTreeMap<String, usize> {
    let mut answered = BTreeMap::new();
    for n in 0..20 {
        let result = client
            .call_tool(call("double", json!({ "n": n })))
            .await
            .unwrap_or_else(|e| panic!("{label}: call {n} failed: {e}"));
        assert_ne!(result.is_error, Some(true), "{label}: call {n}: {}", text(&result));
        let answer = text(&result);
        let (doubled, replica) = answer.split_once(' ').unwrap_or_else(|| panic!("{label}: {answer}"));
        assert_eq!(doubled, (n * 2).to_string(), "{label}: call {n}");
        *answered.entry(replica.to_owned()).or_insert(0) += 1;
    }
    answered
}

// ---- the tests ----

#[tokio::test]
#[ignore = "needs haproxy: run by .ci/run"]
async fn stateless_replicas_answer_every_request_behind_round_robin() {
    let replicas = Replicas::start(3, || HttpOptions::new().with_stateless(true)).await;
    let balancer = Haproxy::start(&replicas.addrs, false);
    for protocol in [Protocol::Initialize, Protocol::Discover] {
        let client = connect(&balancer.url, protocol, Person::default()).await;
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 3, "{protocol:?}: {tools:?}");
        let answered = twenty_calls(&client, &format!("{protocol:?}")).await;
        // Round robin spreads consecutive requests: every replica answered.
        assert_eq!(answered.len(), 3, "{protocol:?}: calls answered by {answered:?}");
        client.cancel().await.unwrap();
    }
    let counts = replicas.counts();
    assert_eq!(counts.values().sum::<usize>(), 40, "{counts:?}");
    // No event stream to open: no session holds it.
    let get = reqwest::Client::new()
        .get(&balancer.url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), reqwest::StatusCode::METHOD_NOT_ALLOWED);
    assert!(counts.values().all(|&calls| calls > 0), "every replica should have run calls: {counts:?}");
}

#[tokio::test]
#[ignore = "needs haproxy: run by .ci/run"]
async fn stateless_progress_rides_the_calls_own_answer() {
    let replicas = Replicas::start(2, || HttpOptions::new().with_stateless(true)).await;
    let balancer = Haproxy::start(&replicas.addrs, false);
    for protocol in [Protocol::Initialize, Protocol::Discover] {
        let person = Person::default();
        let client = connect(&balancer.url, protocol, person.clone()).await;
        let request = ClientRequest::CallToolRequest(Request::new(call("steps", json!({"n": 3}))));
        let handle =
            client.send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
        let ServerResult::CallToolResult(result) = handle.await_response().await.unwrap() else {
            panic!("{protocol:?}: expected a tool result");
        };
        assert!(text(&result).starts_with('r'), "{protocol:?}: {}", text(&result));
        assert_eq!(*person.progress.lock().unwrap(), [1.0, 2.0, 3.0], "{protocol:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
#[ignore = "needs haproxy: run by .ci/run"]
async fn stateless_approval_works_on_2026_07_28_and_is_refused_before_it() {
    let replicas = Replicas::start(2, || HttpOptions::new().with_stateless(true)).await;
    let balancer = Haproxy::start(&replicas.addrs, false);
    // 2026-07-28: the first replica answers `input_required`, the client
    // calls again with the person's yes, and the replica that gets that
    // call runs it: the answer travels in the request, not in a session.
    let person = Person::default();
    let client = connect(&balancer.url, Protocol::Discover, person.clone()).await;
    for n in 0..4 {
        let path = format!("/tmp/{n}");
        let result = client.call_tool(call("delete_file", json!({ "path": path }))).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{}", text(&result));
        assert!(text(&result).starts_with(&format!("deleted {path} on r")), "{}", text(&result));
    }
    assert_eq!(person.asked.load(Ordering::SeqCst), 4);
    assert_eq!(replicas.counts().values().sum::<usize>(), 4, "{:?}", replicas.counts());
    client.cancel().await.unwrap();
    // Before it, the server would have to send the client a request, whose
    // answer has no way back without a session: refused, saying why.
    let person = Person::default();
    let client = connect(&balancer.url, Protocol::Initialize, person.clone()).await;
    let result = client.call_tool(call("delete_file", json!({"path": "/tmp/x"}))).await.unwrap();
    assert_eq!(result.is_error, Some(true), "{}", text(&result));
    assert!(text(&result).contains("answers each request on its own (stateless)"), "{}", text(&result));
    assert!(text(&result).contains("2026-07-28"), "{}", text(&result));
    assert_eq!(person.asked.load(Ordering::SeqCst), 0);
    assert_eq!(replicas.counts().values().sum::<usize>(), 4, "the refused call ran");
    client.cancel().await.unwrap();
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;

/// POST `body` to the balancer, with a session id when given.
async fn post(
    http: &reqwest::Client,
    url: &str,
    body: &'static str,
    session: Option<&str>,
) -> reqwest::Response {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.unwrap()
}

#[tokio::test]
#[ignore = "needs haproxy: run by .ci/run"]
async fn with_sessions_round_robin_loses_the_session_and_stickiness_keeps_it() {
    let replicas = Replicas::start(2, HttpOptions::new).await;
    // Round robin, no affinity: the request after `initialize` reaches
    // the other replica, which does not know the session.
    let balancer = Haproxy::start(&replicas.addrs, false);
    let http = reqwest::Client::new();
    let initialized = post(&http, &balancer.url, INITIALIZE, None).await;
    assert_eq!(initialized.status(), reqwest::StatusCode::OK);
    let session = initialized.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    drop(initialized);
    let lost = post(&http, &balancer.url, LIST, Some(&session)).await;
    assert_eq!(lost.status(), reqwest::StatusCode::NOT_FOUND, "{:?}", lost.text().await);
    // rmcp's client, with or without its re-initialization on a 404:
    // its `notifications/initialized` reaches the other replica, which
    // does not know the session, and the handshake fails.
    for reinit in [false, true] {
        let config = StreamableHttpClientTransportConfig::with_uri(balancer.url.as_str())
            .reinit_on_expired_session(reinit);
        let error = match ().serve(StreamableHttpClientTransport::from_config(config)).await {
            Err(error) => error.to_string(),
            Ok(client) => {
                let mut failure = None;
                for n in 0..4 {
                    if let Err(error) = client.call_tool(call("double", json!({ "n": n }))).await {
                        failure = Some(error.to_string());
                        break;
                    }
                }
                panic!(
                    "reinit {reinit}: connected through round robin with sessions: first failure {failure:?}"
                )
            }
        };
        assert!(error.contains("initialized notification"), "reinit {reinit}: {error}");
    }
    // A 2026-07-28 client has no session on any server (SEP-2567): each
    // of its requests stands alone, so round robin serves it, approval
    // included, even with sessions on.
    let person = Person::default();
    let client = connect(&balancer.url, Protocol::Discover, person.clone()).await;
    let answered = twenty_calls(&client, "2026-07-28 with sessions on").await;
    assert_eq!(answered.len(), 2, "calls answered by {answered:?}");
    let result = client.call_tool(call("delete_file", json!({"path": "/tmp/y"}))).await.unwrap();
    assert!(text(&result).starts_with("deleted /tmp/y on r"), "{}", text(&result));
    assert_eq!(person.asked.load(Ordering::SeqCst), 1);
    client.cancel().await.unwrap();
    drop(balancer);

    // Sticky on Mcp-Session-Id: each client stays on the replica that
    // made its session, and every call succeeds.
    let before = replicas.counts();
    let balancer = Haproxy::start(&replicas.addrs, true);
    let mut used = Vec::new();
    for n in 0..2 {
        let client = connect(&balancer.url, Protocol::Initialize, Person::default()).await;
        assert_eq!(client.list_all_tools().await.unwrap().len(), 3);
        let answered = twenty_calls(&client, &format!("sticky client {n}")).await;
        assert_eq!(answered.len(), 1, "sticky client {n} was moved between replicas: {answered:?}");
        used.extend(answered.into_keys());
        client.cancel().await.unwrap();
    }
    let after = replicas.counts();
    let ran: usize = after.values().sum::<usize>() - before.values().sum::<usize>();
    assert_eq!(ran, 40, "{before:?} -> {after:?}");
    // New sessions are still spread by round robin.
    used.dedup();
    assert_eq!(used.len(), 2, "both sticky clients landed on {used:?}");
}

#[tokio::test]
#[ignore = "needs haproxy and node (npm ci --prefix tests/typescript): run by .ci/run"]
async fn the_typescript_sdks_client_through_round_robin() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let script = root.join("tests/typescript/balanced.mjs");
    let sdk = root.join("tests/typescript/node_modules/@modelcontextprotocol/sdk");
    assert!(
        sdk.is_dir(),
        "the TypeScript SDK is not installed: run `npm ci --prefix tests/typescript` at the repository's root"
    );
    let replicas = Replicas::start(3, || HttpOptions::new().with_stateless(true)).await;
    let balancer = Haproxy::start(&replicas.addrs, false);
    let node = tokio::process::Command::new("node").arg(&script).arg(&balancer.url).output();
    let output = tokio::time::timeout(Duration::from_secs(60), node)
        .await
        .expect("the TypeScript client did not finish within 60 s")
        .unwrap_or_else(|e| panic!("cannot run `node` (install Node.js 20 or later): {e}"));
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{}: {stdout}\n{stderr}", script.display());
    let answered: BTreeMap<String, usize> = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(answered.values().sum::<usize>(), 20, "{answered:?}");
    assert!(answered.len() > 1, "{answered:?}");
    assert_eq!(replicas.counts().values().sum::<usize>(), 20, "{:?}", replicas.counts());
}
