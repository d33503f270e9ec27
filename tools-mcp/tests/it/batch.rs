//! JSON-RPC batches over HTTP: taken in a session at MCP 2025-03-26, whose
//! spec has a server take them
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>),
//! and refused, naming that version, in a session at 2025-06-18, which
//! removed them (<https://modelcontextprotocol.io/specification/2025-06-18/changelog>).
//! An in-process server fed raw HTTP (the same over stdio, against the
//! example server, is in the root package's tests/it/mcp_batch.rs).

use serde_json::{Value, json};
use toolcall_core::{CancellationToken, Toolset};
use toolcall_macros::tool;
use toolcall_mcp::{HttpOptions, McpServer};

/// Echo the text back.
#[tool(args)]
async fn echo(text: String) -> String {
    text
}

/// The echo server over HTTP, stateless or not, until the token is cancelled.
async fn http(stateless: bool) -> (String, CancellationToken) {
    let shutdown = CancellationToken::new();
    let options = HttpOptions::new()
        .with_shutdown(shutdown.clone())
        .with_stop_on_ctrl_c(false)
        .with_stateless(stateless);
    let server = McpServer::new(Toolset::builder().add(Echo).build().expect("a toolset"));
    let bound = options.bind(server, "127.0.0.1:0".parse().expect("an address")).await.expect("bound");
    let url = bound.url();
    tokio::spawn(bound.serve());
    (url, shutdown)
}

/// A POST of `body`, with the session and protocol version headers given:
/// its status, content type and body.
async fn post(
    url: &str,
    session: Option<&str>,
    version: Option<&str>,
    body: String,
) -> (u16, String, String, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    if let Some(version) = version {
        request = request.header("mcp-protocol-version", version);
    }
    let response = request.body(body).send().await.expect("an answer");
    let status = response.status().as_u16();
    let header =
        |name: &str| response.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let (kind, session) = (header("content-type").unwrap_or_default(), header("mcp-session-id"));
    (status, kind, response.text().await.expect("a body"), session)
}

/// The JSON messages of an event stream.
fn events(stream: &str) -> Vec<Value> {
    let data = stream.lines().filter_map(|line| line.strip_prefix("data:")).map(str::trim);
    data.filter(|data| !data.is_empty()).map(|data| serde_json::from_str(data).expect("JSON data")).collect()
}

/// A session initialized at `version` (a 2025-03-26 client sends no
/// `MCP-Protocol-Version` header).
async fn session(url: &str, version: &str) -> String {
    let initialize = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":version,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let (status, _, body, session) = post(url, None, None, initialize.to_string()).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(&format!(r#""protocolVersion":"{version}""#)), "{body}");
    let session = session.expect("a session id");
    let header = (version != "2025-03-26").then_some(version);
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
    assert_eq!(post(url, Some(&session), header, initialized).await.0, 202);
    session
}

fn echo_call(id: u32, text: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":{"text":text}}})
        .to_string()
}

const NOTIFICATION: &str = r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#;

/// Each answer of `answers` by id: its text, or its error's code.
fn outcomes(answers: &[Value]) -> Vec<(Value, Value)> {
    let mut outcomes: Vec<_> = answers
        .iter()
        .map(|answer| {
            let outcome = match answer.get("result") {
                Some(result) => result["content"][0]["text"].clone(),
                None => answer["error"]["code"].clone(),
            };
            (answer["id"].clone(), outcome)
        })
        .collect();
    outcomes.sort_by_key(|(id, _)| id.to_string());
    outcomes
}

#[tokio::test]
async fn over_http_a_2025_03_26_session_takes_a_batch_and_answers_it_in_one_event_stream() {
    let (url, shutdown) = http(false).await;
    let session = session(&url, "2025-03-26").await;
    let batch = format!("[{}, {}, {NOTIFICATION}, {{\"id\":8}}]", echo_call(1, "one"), echo_call(2, "two"));
    let (status, kind, body, _) = post(&url, Some(&session), None, batch).await;
    assert_eq!((status, kind.as_str()), (200, "text/event-stream"), "{body}");
    let expected = vec![(json!(1), json!("one")), (json!(2), json!("two")), (json!(8), json!(-32600))];
    assert_eq!(outcomes(&events(&body)), expected, "{body}");
    // Notifications only: accepted, nothing to answer.
    let (status, _, body, _) = post(&url, Some(&session), None, format!("[{NOTIFICATION}]")).await;
    assert_eq!(status, 202, "{body}");
    let (status, _, body, _) = post(&url, Some(&session), None, "[]".into()).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("an empty batch"), "{body}");
    // `initialize` is kept out of batches: each would open a session.
    let initialize = json!({"jsonrpc":"2.0","id":3,"method":"initialize","params":{
        "protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
    let (status, _, body, opened) = post(&url, None, None, format!("[{initialize}, {initialize}]")).await;
    assert_eq!((status, opened), (400, None), "{body}");
    assert!(body.contains("`initialize` must not be part of a batch"), "{body}");
    shutdown.cancel();
}

#[tokio::test]
async fn over_stateless_http_a_batch_without_a_version_header_is_answered_as_a_json_array() {
    let (url, shutdown) = http(true).await;
    let batch = format!("[{}, {}]", echo_call(1, "one"), echo_call(2, "two"));
    let (status, kind, body, _) = post(&url, None, None, batch.clone()).await;
    assert_eq!((status, kind.as_str()), (200, "application/json"), "{body}");
    let answers: Vec<Value> = serde_json::from_str(&body).expect("a JSON array");
    assert_eq!(outcomes(&answers), vec![(json!(1), json!("one")), (json!(2), json!("two"))], "{body}");
    // A client at 2025-06-18 says so in every request: refused, naming the version that had them.
    let (status, _, body, _) = post(&url, None, Some("2025-06-18"), batch).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("batches were part of MCP 2025-03-26 only"), "{body}");
    shutdown.cancel();
}

#[tokio::test]
async fn over_http_a_2025_06_18_session_refuses_a_batch_naming_the_version_that_had_them() {
    let (url, shutdown) = http(false).await;
    let session = session(&url, "2025-06-18").await;
    let batch = format!("[{}]", echo_call(1, "one"));
    let (status, _, body, _) = post(&url, Some(&session), Some("2025-06-18"), batch).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("batches were part of MCP 2025-03-26 only (2025-06-18 removed them)"), "{body}");
    // Without the header, the session's own version still says no.
    let (status, _, body, _) = post(&url, Some(&session), None, format!("[{}]", echo_call(2, "two"))).await;
    assert_eq!(status, 400, "{body}");
    shutdown.cancel();
}
