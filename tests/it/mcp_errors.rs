//! What a client is told about a message the server cannot read or act on,
//! over stdio (the example server, fed raw lines): the JSON-RPC codes of the
//! spec, with the message's id where it has one, and the server goes on.
//! The cases, and the same over HTTP, are tools-mcp's
//! (tools-mcp/tests/it/errors.rs).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use crate::support;

#[path = "../../tools-mcp/tests/it/errors/cases.rs"]
mod cases;
use cases::{INITIALIZE, assert_error, call, cases};

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
