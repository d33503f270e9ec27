//! What a client is told about a message the server cannot read or act on,
//! over stdio (the example server, fed raw lines) and HTTP (raw requests):
//! the JSON-RPC codes of the spec, with the message's id where it has one,
//! and the server goes on.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::Notify;
use toolcall::mcp::{HttpOptions, McpServer};
use toolcall::{CancellationToken, ToolError, Toolset, tool};

use crate::support;

/// Echo the text back.
#[tool(args)]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

/// Set by the gated tool once it runs.
static GATE_STARTED: Notify = Notify::const_new();
/// Opened by the test to let the gated tool end.
static GATE_OPEN: Notify = Notify::const_new();

/// Wait until the test opens the gate.
#[tool(args)]
async fn wait_for_gate(label: String) -> String {
    GATE_STARTED.notify_one();
    GATE_OPEN.notified().await;
    format!("{label} went through")
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// The lines sent after `initialize`: each with its answer's id (as the
/// answer must write it), code and words, and whether rmcp reads it (then
/// HTTP answers 200 with the error, otherwise 400).
fn cases() -> Vec<(&'static str, &'static str, i64, &'static str, bool)> {
    vec![
        (r#"{"jsonrpc": "2.0", "id": 7, "method"#, "null", -32700, "not JSON", false),
        (r#"{"id":8}"#, "8", -32600, "`jsonrpc`", false),
        (
            r#"[{"jsonrpc":"2.0","id":9,"method":"ping"}]"#,
            "null",
            -32600,
            "batches were part of MCP 2025-03-26 only",
            false,
        ),
        (r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":[]}"#, "10", -32600, "`params`", false),
        (
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":5}}"#,
            "11",
            -32602,
            "expected a string",
            true,
        ),
        (
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
            "12",
            -32602,
            "expected a map",
            true,
        ),
        (r#"{"jsonrpc":"2.0","id":13,"method":"tools/call"}"#, "13", -32602, "there are none", true),
        (r#"{"jsonrpc":"2.0","id":14,"method":"no/such/method"}"#, "14", -32601, "no/such/method", true),
        (INITIALIZE_AGAIN, "15", -32600, "already initialized", true),
        // Ids MCP does not take, named and echoed as written: a float, and
        // integers past the 64 bits rmcp reads (u64::MAX, 2^70).
        (r#"{"jsonrpc":"2.0","id":16.5,"method":"tools/list"}"#, "16.5", -32600, "is not an integer", false),
        (
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"tools/list"}"#,
            "18446744073709551615",
            -32600,
            "the `id` 18446744073709551615 is out of range",
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1180591620717411303424,"method":"tools/list"}"#,
            "1180591620717411303424",
            -32600,
            "the `id` 1180591620717411303424 is out of range",
            false,
        ),
        // A string with a lone surrogate, as JavaScript's JSON.stringify
        // writes one: not Unicode, but the id is still read.
        (
            r#"{"jsonrpc":"2.0","id":"ts-17","method":"tools/call","params":{"name":"echo","arguments":{"text":"\ud800"}}}"#,
            r#""ts-17""#,
            -32700,
            "not all of it can be read",
            false,
        ),
    ]
}

const INITIALIZE_AGAIN: &str = r#"{"jsonrpc":"2.0","id":15,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// `answer`, as sent, answers with `code`, says `says`, and has the id
/// `id` written as the request wrote it.
fn assert_error(answer: &str, id: &str, code: i64, says: &str) {
    assert!(answer.contains(&format!(r#""id":{id}"#)), "id {id} not in {answer}");
    let answer: Value = serde_json::from_str(answer).expect("each answer is JSON");
    assert_eq!(answer["id"], serde_json::from_str::<Value>(id).unwrap(), "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "`{says}` not in {answer}");
}

#[tokio::test]
async fn over_stdio_every_unusable_line_gets_its_error_and_the_server_reads_on() {
    let (mut child, mut stdin, stdout) = support::stdio_example();
    let mut stdout = stdout.lines();
    let mut next = async || support::next_line(&mut stdout).await;
    let json = |line: String| -> Value { serde_json::from_str(&line).expect("each answer is JSON") };
    // Not UTF-8 before anything else: a parse error, and the session opens after it.
    stdin.write_all(b"\"\xff\xfe\"\n").await.unwrap();
    assert_error(&next().await, "null", -32700, "not UTF-8");
    stdin.write_all(format!("{INITIALIZE}\n").as_bytes()).await.unwrap();
    assert!(json(next().await)["result"]["serverInfo"].is_object());
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.unwrap();
    // Longer than the 16 MiB a line may have: refused, and the rest of it skipped.
    let long = vec![b' '; 17 * 1024 * 1024];
    stdin.write_all(&long).await.unwrap();
    stdin.write_all(b"{}\n").await.unwrap();
    assert_error(&next().await, "null", -32600, "longer than");
    // One at a time: answers to bad lines may overtake those rmcp handles.
    for (line, id, code, says, _) in cases() {
        stdin.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        assert_error(&next().await, id, code, says);
    }
    let call = r#"{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"}}}"#;
    stdin.write_all(format!("{call}\n").as_bytes()).await.unwrap();
    let answer = json(next().await);
    assert_eq!((&answer["id"], &answer["result"]["isError"]), (&json!(90), &json!(false)), "{answer}");
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert!(status.expect("the server ended with its input").unwrap().success());
}

struct Http {
    url: String,
    client: reqwest::Client,
    shutdown: CancellationToken,
}

impl Http {
    async fn start() -> Self {
        let shutdown = CancellationToken::new();
        let options = HttpOptions::new().with_shutdown(shutdown.clone()).with_stop_on_ctrl_c(false);
        let server =
            McpServer::new(Toolset::builder().add(Echo).add(WaitForGate).build().expect("a toolset"));
        let bound = options.bind(server, "127.0.0.1:0".parse().expect("an address")).await.expect("bound");
        let url = bound.url();
        tokio::spawn(bound.serve());
        Self { url, client: reqwest::Client::new(), shutdown }
    }

    async fn post(
        &self,
        session: Option<&str>,
        body: impl Into<reqwest::Body>,
    ) -> (reqwest::StatusCode, String) {
        let mut request = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.body(body).send().await.expect("an answer");
        let status = response.status();
        let text = response.text().await.expect("a body");
        // A request on a session is answered as an event stream, after an
        // empty priming event.
        let data = text.lines().filter_map(|line| line.strip_prefix("data: ")).find(|data| !data.is_empty());
        (status, data.unwrap_or(&text).to_owned())
    }
}

impl Http {
    /// A new session, initialized.
    async fn session(&self) -> String {
        let response = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(INITIALIZE)
            .send()
            .await
            .expect("initialized");
        let session = response.headers()["mcp-session-id"].to_str().expect("a session id").to_owned();
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let accepted = self.client.post(&self.url).header("content-type", "application/json");
        let accepted = accepted.header("accept", "application/json, text/event-stream");
        let accepted =
            accepted.header("mcp-session-id", &session).header("mcp-protocol-version", "2025-06-18");
        assert!(accepted.body(initialized).send().await.expect("sent").status().is_success());
        session
    }
}

#[tokio::test]
async fn over_http_an_unreadable_body_gets_400_and_its_json_rpc_error() {
    let http = Http::start().await;
    for (body, id, code, says, _) in cases().into_iter().filter(|case| !case.4) {
        let (status, answer) = http.post(None, body).await;
        assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{body}");
        assert_error(&answer, id, code, says);
    }
    let (status, answer) = http.post(None, vec![b' '; 5 * 1024 * 1024]).await;
    assert_eq!(status, reqwest::StatusCode::PAYLOAD_TOO_LARGE);
    assert_error(&answer, "null", -32600, "longer than 4194304 bytes");
    http.shutdown.cancel();
}

#[tokio::test]
async fn over_http_a_session_gets_the_spec_codes_and_goes_on() {
    let http = Http::start().await;
    let session = http.session().await;
    for (body, id, code, says, readable) in cases() {
        let (status, answer) = http.post(Some(&session), body).await;
        let expected = if readable { reqwest::StatusCode::OK } else { reqwest::StatusCode::BAD_REQUEST };
        assert_eq!(status, expected, "{body}: {answer}");
        assert_error(&answer, id, code, says);
    }
    let call = r#"{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}"#;
    let (_, answer) = http.post(Some(&session), call).await;
    let answer: Value = serde_json::from_str(&answer).expect("JSON");
    assert_eq!(answer["result"]["content"][0]["text"], "still here", "{answer}");
    http.shutdown.cancel();
}

/// A `tools/call` of `tool` with these arguments, under `id`.
fn call(id: u32, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}

#[tokio::test]
async fn over_http_a_second_request_with_the_id_of_one_in_flight_gets_its_own_error() {
    let http = std::sync::Arc::new(Http::start().await);
    let session = http.session().await;
    let first = tokio::spawn({
        let (http, session) = (http.clone(), session.clone());
        async move { http.post(Some(&session), call(7, "wait_for_gate", r#"{"label":"the first"}"#)).await }
    });
    GATE_STARTED.notified().await;
    let (status, answer) = http.post(Some(&session), call(7, "echo", r#"{"text":"the second"}"#)).await;
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{answer}");
    assert_error(&answer, "7", -32600, "the id 7 is that of a request still being answered");
    // Another session may use the same id.
    let other = http.session().await;
    let (_, answer) = http.post(Some(&other), call(7, "echo", r#"{"text":"elsewhere"}"#)).await;
    assert!(answer.contains("elsewhere"), "{answer}");
    GATE_OPEN.notify_one();
    let (status, answer) = first.await.expect("the first call's POST");
    assert_eq!(status, reqwest::StatusCode::OK);
    let answer: Value = serde_json::from_str(&answer).expect("JSON");
    assert_eq!(
        (&answer["id"], &answer["result"]["content"][0]["text"]),
        (&json!(7), &json!("the first went through"))
    );
    // Answered, the id is free again.
    let (_, answer) = http.post(Some(&session), call(7, "echo", r#"{"text":"again"}"#)).await;
    assert!(answer.contains(r#""text":"again""#), "{answer}");
    http.shutdown.cancel();
}

#[tokio::test]
async fn over_stdio_a_second_request_with_the_id_of_one_in_flight_gets_its_own_error() {
    let (_child, mut stdin, stdout) = support::stdio_example();
    let mut stdout = stdout.lines();
    let mut next = async || support::next_line(&mut stdout).await;
    stdin.write_all(format!("{INITIALIZE}\n").as_bytes()).await.unwrap();
    next().await;
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.unwrap();
    // A call that reports its progress: its first report says it runs,
    // and five more steps of 1 s are left when the second request comes.
    let slow = r#"{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"count_slowly","arguments":{"to":6,"step_ms":1000},"_meta":{"progressToken":"p"}}}"#;
    stdin.write_all(format!("{slow}\n").as_bytes()).await.unwrap();
    let progress: Value = serde_json::from_str(&next().await).unwrap();
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    let second = call(50, "get_weather", r#"{"city":"Oslo"}"#);
    stdin.write_all(format!("{second}\n").as_bytes()).await.unwrap();
    let mut refused = None;
    let mut answered = None;
    while answered.is_none() {
        let line = next().await;
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("error").is_some() {
            assert!(refused.replace(line).is_none(), "one refusal");
        } else if message.get("result").is_some() {
            answered = Some(message);
        }
    }
    let refused = refused.expect("the second request was refused before the first was answered");
    assert_error(&refused, "50", -32600, "the id 50 is that of a request still being answered");
    let answered = answered.unwrap();
    assert_eq!(
        (&answered["id"], &answered["result"]["content"][0]["text"]),
        (&json!(50), &json!("counted to 6"))
    );
    // Answered, the id is free again.
    stdin.write_all(format!("{second}\n").as_bytes()).await.unwrap();
    let again: Value = serde_json::from_str(&next().await).unwrap();
    assert_eq!((&again["id"], &again["result"]["isError"]), (&json!(50), &json!(false)), "{again}");
}
