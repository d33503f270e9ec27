//! JSON-RPC batches: taken on stdio in a session at MCP 2025-03-26, whose
//! spec has a server take them
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>),
//! and refused, naming that version, in a session at 2025-06-18, which
//! removed them (<https://modelcontextprotocol.io/specification/2025-06-18/changelog>).
//! The example server, fed raw lines.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::support;

struct Session {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Session {
    /// The example server, initialized at `version`.
    async fn start(version: &str) -> Self {
        let mut child = tokio::process::Command::new(support::build_example("mcp_server"))
            .env_remove("TAVILY_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("the example started");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
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
        let line = tokio::time::timeout(Duration::from_secs(30), self.stdout.next_line())
            .await
            .expect("an answer")
            .expect("read")
            .expect("a line");
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
