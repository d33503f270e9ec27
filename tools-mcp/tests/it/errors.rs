//! What a client is told about a message the server cannot read or act on,
//! over HTTP (raw requests to an in-process server): the JSON-RPC codes of
//! the spec, with the message's id where it has one, and the server goes on.
//! The same over stdio, against the example server, is in the root
//! package's tests/it/mcp_errors.rs.

use serde_json::{Value, json};
use tokio::sync::Notify;
use toolcall_core::{CancellationToken, ToolError, Toolset};
use toolcall_macros::tool;
use toolcall_mcp::{HttpOptions, McpServer};

mod cases;
use cases::{INITIALIZE, assert_error, call, cases};

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
