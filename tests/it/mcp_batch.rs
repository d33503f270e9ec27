//! JSON-RPC batches: taken on stdio in a session at MCP 2025-03-26, whose
//! spec has a server take them
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>),
//! and refused, naming that version, in a session at 2025-06-18, which
//! removed them (<https://modelcontextprotocol.io/specification/2025-06-18/changelog>).
//! The example server fed raw lines, and raw HTTP.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use toolcall::mcp::{HttpOptions, McpServer};
use toolcall::{CancellationToken, Toolset, tool};

use crate::support;

struct Session {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Session {
    /// The example server, initialized at `version`.
    async fn start(version: &str) -> Self {
        let (child, stdin, stdout) = support::stdio_example();
        let stdout = stdout.lines();
        let mut session = Self { _child: child, stdin, stdout };
        let initialize = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":version,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}});
        session.send(&initialize.to_string()).await;
        let answer = session.next().await;
        assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
        session.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
        session
    }

    async fn send(&mut self, line: &str) {
        self.stdin.write_all(format!("{line}\n").as_bytes()).await.expect("written");
    }

    async fn next(&mut self) -> Value {
        let line = support::next_line(&mut self.stdout).await;
        serde_json::from_str(&line).expect("each line is JSON")
    }
}

const CALL: &str = r#"{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"}}}"#;

#[tokio::test]
async fn over_stdio_a_2025_03_26_session_takes_a_batch_and_answers_it_in_one_array() {
    let mut session = Session::start("2025-03-26").await;
    // Requests, a notification, a message that is not one, and an id
    // twice: one line answers each request and the unreadable one.
    let batch = format!(
        r#"[{{"jsonrpc":"2.0","id":1,"method":"tools/list"}}, {CALL},
            {{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}},
            {{"id":8}}, {{"jsonrpc":"2.0","id":1,"method":"ping"}}]"#
    )
    .replace('\n', "");
    session.send(&batch).await;
    let answers = session.next().await;
    let answers = answers.as_array().unwrap_or_else(|| panic!("a batch's answers are an array: {answers}"));
    let answer = |id: Value, ok: bool| {
        let found = answers.iter().filter(|answer| answer["id"] == id && answer["result"].is_object() == ok);
        let found: Vec<_> = found.collect();
        assert_eq!(found.len(), 1, "one answer {id} ({ok}) in {answers:?}");
        found[0].clone()
    };
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert!(answer(json!(1), true)["result"]["tools"].is_array());
    assert_eq!(answer(json!("w"), true)["result"]["isError"], false);
    assert_eq!(answer(json!(8), false)["error"]["code"], -32600);
    let twice = answer(json!(1), false);
    assert_eq!(twice["error"]["code"], -32600);
    assert!(twice["error"]["message"].as_str().unwrap_or_default().contains("an id of its own"), "{twice}");
    // Notifications only: nothing to answer, and nothing is written; the
    // next line is the next request's answer.
    session.send(r#"[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]"#).await;
    session.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    assert_eq!(session.next().await, json!({"jsonrpc":"2.0","id":2,"result":{}}));
    // An empty batch is one error, not an array.
    session.send("[]").await;
    let answer = session.next().await;
    assert_eq!((&answer["id"], &answer["error"]["code"]), (&Value::Null, &json!(-32600)), "{answer}");
}

#[tokio::test]
async fn over_stdio_a_batch_sent_before_the_initialize_answer_is_read_is_taken() {
    let (_child, mut stdin, mut stdout) = support::stdio_example();
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#;
    // All at once, and the input ends: the server answers what it read.
    stdin.write_all(format!("{initialize}\n{initialized}\n{batch}\n").as_bytes()).await.expect("written");
    drop(stdin);
    let mut output = String::new();
    let read = tokio::time::timeout(Duration::from_secs(30), stdout.read_to_string(&mut output)).await;
    read.expect("the server ended its output with its input").expect("its output");
    let lines: Vec<Value> =
        output.lines().map(|line| serde_json::from_str(line).expect("each line is JSON")).collect();
    assert!(lines.contains(&json!([{"jsonrpc":"2.0","id":1,"result":{}}])), "{lines:?}");
}

#[tokio::test]
async fn over_stdio_a_2025_06_18_session_refuses_a_batch_naming_the_version_that_had_them() {
    let mut session = Session::start("2025-06-18").await;
    session.send(&format!("[{CALL}]")).await;
    let answer = session.next().await;
    assert_eq!((&answer["id"], &answer["error"]["code"]), (&Value::Null, &json!(-32600)), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("batches were part of MCP 2025-03-26 only (2025-06-18 removed them)"),
        "{answer}"
    );
    // Not run: the next line answers the next request.
    session.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    assert_eq!(session.next().await, json!({"jsonrpc":"2.0","id":2,"result":{}}));
}

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
