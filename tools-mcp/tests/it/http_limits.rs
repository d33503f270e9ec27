//! The HTTP server against clients that misbehave or overstay: half-sent
//! requests, idle connections, too many connections, a shutdown in the
//! middle of a call, and addresses and tokens that would expose the tools.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolcall_core::{CancellationToken, ToolContext, ToolError, Toolset};
use toolcall_macros::tool;
use toolcall_mcp::{HttpOptions, McpServer};

/// Sleep for `ms` milliseconds.
#[tool(args)]
async fn nap(ctx: &ToolContext, ms: u64) -> Result<String, ToolError> {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok("rested".into()),
        () = ctx.cancellation().cancelled() => Err(ToolError::failed("woken")),
    }
}

struct Running {
    addr: SocketAddr,
    url: String,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start(options: HttpOptions) -> Running {
    let shutdown = CancellationToken::new();
    let options = options.with_shutdown(shutdown.clone()).with_stop_on_ctrl_c(false);
    let server = McpServer::new(Toolset::builder().add(Nap).build().expect("a toolset"));
    let bound = options.bind(server, "127.0.0.1:0".parse().expect("an address")).await.expect("bound");
    let (addr, url) = (bound.local_addr(), bound.url());
    Running { addr, url, shutdown, task: tokio::spawn(bound.serve()) }
}

impl Running {
    /// Shut down and wait for the server to return: 10 s is far past any
    /// deadline it has, and a server that never returns fails here.
    async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("the server returned")
            .expect("the task ran")
            .expect("served");
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn initialize(url: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE)
}

/// Reads until the server closes the connection (whatever it answered first).
async fn closed_by_server(stream: &mut TcpStream) {
    let mut buffer = [0u8; 1024];
    let read = async { while stream.read(&mut buffer).await.is_ok_and(|n| n > 0) {} };
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("the server closed the connection");
}

#[tokio::test]
async fn a_shutdown_ends_though_a_client_never_finishes_its_request() {
    let running = start(HttpOptions::new().with_shutdown_grace(Duration::from_millis(100))).await;
    // One connection stops in the middle of its headers, one in the middle
    // of its body: the read timeout (30 s) is far off.
    let mut headers = TcpStream::connect(running.addr).await.unwrap();
    headers.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty").await.unwrap();
    let mut body = TcpStream::connect(running.addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\"";
    body.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    running.stop().await;
}

#[tokio::test]
async fn a_call_cut_off_by_the_shutdown_gets_a_json_rpc_error() {
    for stateless in [false, true] {
        let options =
            HttpOptions::new().with_stateless(stateless).with_shutdown_grace(Duration::from_millis(200));
        let running = start(options).await;
        let client = ().serve(StreamableHttpClientTransport::from_uri(running.url.as_str())).await.unwrap();
        let call = tokio::spawn(async move {
            let arguments = json!({"ms": 600_000}).as_object().cloned().unwrap();
            client.call_tool(CallToolRequestParams::new("nap").with_arguments(arguments)).await
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        running.stop().await;
        let answer = tokio::time::timeout(Duration::from_secs(10), call).await.expect("answered").unwrap();
        let error = answer.expect_err("a JSON-RPC error, not a result").to_string();
        assert!(
            error.contains("the server shut down before the call to `nap` finished"),
            "{stateless}: {error}"
        );
    }
}

#[tokio::test]
async fn idle_and_stalled_connections_are_closed_at_the_read_timeout() {
    let running = start(HttpOptions::new().with_read_timeout(Duration::from_millis(200))).await;
    let mut idle = TcpStream::connect(running.addr).await.unwrap();
    closed_by_server(&mut idle).await;
    let mut stalled = TcpStream::connect(running.addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{\"jsonrpc\"";
    stalled.write_all(head.as_bytes()).await.unwrap();
    closed_by_server(&mut stalled).await;
    // The server itself is fine.
    assert!(initialize(&running.url).send().await.unwrap().status().is_success());
    running.stop().await;
}

/// A request for a path not served (answered 404, no body) on `stream`,
/// which stays open: true once its answer is read whole.
async fn asked_elsewhere(stream: &mut TcpStream) -> bool {
    let asked = stream.write_all(b"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 1024];
    let read = async {
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => answer.extend_from_slice(&buffer[..n]),
            }
        }
        true
    };
    let whole = tokio::time::timeout(Duration::from_secs(10), read).await.expect("answered or closed");
    asked.is_ok() && whole && answer.starts_with(b"HTTP/1.1 404")
}

/// A connection, kept alive after one request.
async fn kept_alive(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert!(asked_elsewhere(&mut stream).await, "a first request answered");
    stream
}

/// A connection in the middle of a request: the head sent, the body never.
/// The server's `100 Continue` says it has read the head and is reading
/// the body.
async fn busy(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\nContent-Length: 500\r\n\
                Expect: 100-continue\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut buffer = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer)).await;
    let n = read.expect("the server reads the body").unwrap();
    assert!(buffer[..n].starts_with(b"HTTP/1.1 100"), "{}", String::from_utf8_lossy(&buffer[..n]));
    stream
}

#[tokio::test]
async fn at_the_connection_cap_the_longest_idle_connection_makes_room() {
    let running = start(HttpOptions::new().with_max_connections(2)).await;
    let mut older = kept_alive(running.addr).await;
    let mut newer = kept_alive(running.addr).await;
    // Served at once, not at the 30 s read timeout (the guard is 10 s).
    let served = tokio::time::timeout(Duration::from_secs(10), initialize(&running.url).send()).await;
    assert!(served.expect("served without waiting for the read timeout").unwrap().status().is_success());
    closed_by_server(&mut older).await;
    assert!(asked_elsewhere(&mut newer).await, "the newer idle connection is still served");
    // A connection that never sent anything is idle too.
    drop(newer);
    let _silent = TcpStream::connect(running.addr).await.unwrap();
    let served = tokio::time::timeout(Duration::from_secs(10), initialize(&running.url).send()).await;
    assert!(served.expect("served").unwrap().status().is_success());
    running.stop().await;
}

#[tokio::test]
async fn past_the_connection_cap_of_busy_connections_clients_wait_for_one_to_finish() {
    let running = start(HttpOptions::new().with_max_connections(1)).await;
    let holder = busy(running.addr).await;
    // Never served while the one connection is in the middle of a request.
    let waiting = initialize(&running.url).timeout(Duration::from_millis(500)).send().await;
    assert!(waiting.is_err_and(|error| error.is_timeout()), "served past the cap");
    drop(holder);
    let served = tokio::time::timeout(Duration::from_secs(10), initialize(&running.url).send()).await;
    assert!(served.expect("served once the slot freed").unwrap().status().is_success());
    running.stop().await;
}

#[tokio::test]
async fn the_bearer_scheme_is_read_in_any_case() {
    let running = start(HttpOptions::new().with_bearer_token("s3cret")).await;
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let response = initialize(&running.url).header("authorization", format!("{scheme} s3cret"));
        assert!(response.send().await.unwrap().status().is_success(), "{scheme}");
    }
    let basic = initialize(&running.url).header("authorization", "Basic s3cret").send().await.unwrap();
    assert_eq!(basic.status(), reqwest::StatusCode::UNAUTHORIZED);
    running.stop().await;
}

#[tokio::test]
async fn addresses_and_tokens_that_expose_the_tools_are_refused_at_bind() {
    let server = || McpServer::new(Toolset::new());
    let anywhere: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let refused = HttpOptions::new().bind(server(), anywhere).await.expect_err("refused");
    assert_eq!(refused.kind(), ErrorKind::InvalidInput);
    let message = refused.to_string();
    assert!(message.contains("without a bearer token") && message.contains("with_bearer_token"), "{message}");
    for empty in ["", "  "] {
        let loopback = "127.0.0.1:0".parse().unwrap();
        let refused = HttpOptions::new().with_bearer_token(empty).bind(server(), loopback).await;
        let message = refused.expect_err("an empty token is refused").to_string();
        assert!(message.contains("the bearer token is empty"), "{message}");
    }
    assert!(HttpOptions::new().with_bearer_token("s3cret").bind(server(), anywhere).await.is_ok());
    assert!(
        HttpOptions::new().with_allow_unauthenticated_network(true).bind(server(), anywhere).await.is_ok()
    );
}

#[tokio::test]
async fn past_the_session_cap_a_new_session_is_refused_until_one_is_deleted() {
    let running = start(HttpOptions::new().with_max_sessions(1)).await;
    let first = initialize(&running.url).send().await.unwrap();
    assert!(first.status().is_success());
    let id = first.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    drop(first);

    let refused = initialize(&running.url).send().await.unwrap();
    assert_eq!(refused.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "5");
    let body: serde_json::Value = refused.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("maximum of 1 sessions"), "{body}");

    let delete = || reqwest::Client::new().delete(&running.url).header("mcp-session-id", &id).send();
    assert_eq!(delete().await.unwrap().status(), reqwest::StatusCode::OK);
    // Ended: a second DELETE finds nothing.
    assert_eq!(delete().await.unwrap().status(), reqwest::StatusCode::NOT_FOUND);
    assert!(initialize(&running.url).send().await.unwrap().status().is_success());
    running.stop().await;
}

#[tokio::test]
async fn an_idle_session_expires_and_frees_its_place() {
    let options =
        HttpOptions::new().with_max_sessions(1).with_session_idle_timeout(Duration::from_millis(200));
    let running = start(options).await;
    let first = initialize(&running.url).send().await.unwrap();
    let id = first.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    drop(first);
    // Asking with its id would keep it alive: ask for a new session until
    // there is room, then see that the old one is gone.
    let reopened = async {
        while !initialize(&running.url).send().await.unwrap().status().is_success() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), reopened).await.expect("the idle session expired");
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let old = initialize(&running.url).header("mcp-session-id", &id).body(ping).send().await.unwrap();
    assert_eq!(old.status(), reqwest::StatusCode::NOT_FOUND);
    running.stop().await;
}

/// Sends `head` (the request line and headers) with an `initialize` body on
/// a new connection, and returns the status code of the answer.
async fn raw_status(addr: SocketAddr, head: &str) -> u16 {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{head}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("answered").unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.split(' ').nth(1).unwrap_or_default();
    status.parse().unwrap_or_else(|_| panic!("an HTTP answer: {answer}"))
}

/// RFC 9112 §3.2 (https://www.rfc-editor.org/rfc/rfc9112#section-3.2): more
/// than one `Host` is a 400; an absolute-form target's authority is the
/// host (§3.2.2), so a foreign one is refused like a foreign `Host`.
#[tokio::test]
async fn the_host_is_one_host_and_an_absolute_target_names_it() {
    let running = start(HttpOptions::new()).await;
    let host = format!("Host: 127.0.0.1:{}\r\n", running.addr.port());
    assert_eq!(raw_status(running.addr, &format!("POST /mcp HTTP/1.1\r\n{host}")).await, 200);
    let twice = format!("POST /mcp HTTP/1.1\r\n{host}Host: evil.example\r\n");
    assert_eq!(raw_status(running.addr, &twice).await, 400, "two Host headers");
    let same_twice = format!("POST /mcp HTTP/1.1\r\n{host}{host}");
    assert_eq!(raw_status(running.addr, &same_twice).await, 400, "the same Host twice");
    let foreign = format!("POST http://evil.example/mcp HTTP/1.1\r\n{host}");
    assert_eq!(raw_status(running.addr, &foreign).await, 403, "a foreign absolute-form target");
    let own = format!("POST http://127.0.0.1:{}/mcp HTTP/1.1\r\n{host}", running.addr.port());
    assert_eq!(raw_status(running.addr, &own).await, 200, "the server's own absolute-form target");
    let own_foreign_host = "POST http://localhost/mcp HTTP/1.1\r\nHost: evil.example\r\n";
    assert_eq!(raw_status(running.addr, own_foreign_host).await, 200, "Host is ignored then");
    running.stop().await;
}

/// A new session's id (its client sends nothing more).
async fn session(url: &str) -> String {
    let response = initialize(url).send().await.unwrap();
    assert!(response.status().is_success());
    response.headers()["mcp-session-id"].to_str().unwrap().to_owned()
}

/// A GET for the session's event stream, on a connection of its own.
async fn event_stream(url: &str, session: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap()
}

/// Reads the stream to its end: Ok once the server ended it cleanly.
async fn ended(stream: reqwest::Response) -> reqwest::Result<()> {
    let read = async {
        let mut stream = stream;
        while stream.chunk().await?.is_some() {}
        Ok(())
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("the stream ended")
}

#[tokio::test]
async fn event_streams_are_capped_below_the_connections_and_calls_still_get_through() {
    // The default cap on event streams: half the connections.
    let running = start(HttpOptions::new().with_max_connections(2)).await;
    let (first, second) = (session(&running.url).await, session(&running.url).await);
    let open = event_stream(&running.url, &first).await;
    assert_eq!(open.status(), reqwest::StatusCode::OK);
    let refused = event_stream(&running.url, &second).await;
    assert_eq!(refused.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "5");
    let body: serde_json::Value = refused.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("maximum of 1 event streams"), "{body}");
    // The other connection serves calls.
    for _ in 0..3 {
        let served = tokio::time::timeout(Duration::from_secs(10), initialize(&running.url).send()).await;
        assert!(served.expect("a POST served beside the stream").unwrap().status().is_success());
    }
    drop(open);
    // Its place frees once the server sees it gone.
    let reopened = async {
        loop {
            let stream = event_stream(&running.url, &second).await;
            if stream.status().is_success() {
                return stream;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), reopened).await.expect("a stream once the first closed");
    running.stop().await;
}

#[tokio::test]
async fn a_sessions_third_event_stream_replaces_its_oldest() {
    let running = start(HttpOptions::new()).await;
    let id = session(&running.url).await;
    let oldest = event_stream(&running.url, &id).await;
    let middle = event_stream(&running.url, &id).await;
    let newest = event_stream(&running.url, &id).await;
    for stream in [&oldest, &middle, &newest] {
        assert_eq!(stream.status(), reqwest::StatusCode::OK);
    }
    ended(oldest).await.expect("the oldest ended cleanly");
    // The other two are open: a fourth ends the middle one, not the newest.
    let fourth = event_stream(&running.url, &id).await;
    assert_eq!(fourth.status(), reqwest::StatusCode::OK);
    ended(middle).await.expect("the middle one ended cleanly");
    drop((newest, fourth));
    running.stop().await;
}

#[tokio::test]
async fn an_event_stream_ends_cleanly_at_its_lifetime() {
    let running = start(HttpOptions::new().with_event_stream_lifetime(Duration::from_millis(200))).await;
    let id = session(&running.url).await;
    let stream = event_stream(&running.url, &id).await;
    assert_eq!(stream.status(), reqwest::StatusCode::OK);
    ended(stream).await.expect("ended cleanly, as a whole body");
    running.stop().await;
}
