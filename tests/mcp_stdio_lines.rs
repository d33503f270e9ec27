//! The example server over stdio, fed lines that are not JSON: each gets a
//! JSON-RPC parse error with `id: null`, and the server reads on.

use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

mod support;

#[tokio::test]
async fn a_line_that_is_not_json_gets_a_parse_error_and_the_server_reads_on() {
    let binary = support::build_example("mcp_server");
    let mut child = tokio::process::Command::new(binary)
        .env_remove("TAVILY_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the example started");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    stdin.write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\n").await.unwrap();
    stdin.write_all(b"\"\xff\xfe\"\n").await.unwrap();
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    stdin.write_all(format!("{initialize}\n").as_bytes()).await.unwrap();

    let mut answers = Vec::new();
    for _ in 0..3 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), stdout.next_line())
            .await
            .expect("an answer")
            .expect("read")
            .expect("a line");
        answers.push(serde_json::from_str::<Value>(&line).expect("each answer is JSON"));
    }
    let errors: Vec<&Value> = answers.iter().filter(|a| a.get("error").is_some()).collect();
    assert_eq!(errors.len(), 2, "{answers:?}");
    for error in errors {
        assert_eq!(error["id"], Value::Null, "{error}");
        assert_eq!(error["error"]["code"], -32700, "{error}");
        assert!(error["error"]["message"].as_str().unwrap_or_default().starts_with("parse error"), "{error}");
    }
    let initialized = answers.iter().find(|a| a["id"] == 1).expect("the initialize answer");
    assert!(initialized["result"]["serverInfo"].is_object(), "{initialized}");
    drop(stdin);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait()).await;
    assert!(status.expect("the server ended with its input").unwrap().success());
}
