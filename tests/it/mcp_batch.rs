//! JSON-RPC batches over stdio: taken in a session at MCP 2025-03-26, whose
//! spec has a server take them
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>),
//! and refused, naming that version, in a session at 2025-06-18, which
//! removed them (<https://modelcontextprotocol.io/specification/2025-06-18/changelog>).
//! The example server fed raw lines; the same over HTTP, against an
//! in-process server, is in tools-mcp/tests/it/batch.rs.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
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
