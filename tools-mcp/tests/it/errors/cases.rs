//! The messages a server cannot read or act on, and what each must be
//! answered: shared by the HTTP tests here (errors.rs) and the stdio tests
//! of the example server in the root package (tests/it/mcp_errors.rs), which
//! includes this file by its path.

use serde_json::Value;

pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// The lines sent after `initialize`: each with its answer's id (as the
/// answer must write it), code and words, and whether rmcp reads it (then
/// HTTP answers 200 with the error, otherwise 400).
pub(crate) fn cases() -> Vec<(&'static str, &'static str, i64, &'static str, bool)> {
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
pub(crate) fn assert_error(answer: &str, id: &str, code: i64, says: &str) {
    assert!(answer.contains(&format!(r#""id":{id}"#)), "id {id} not in {answer}");
    let answer: Value = serde_json::from_str(answer).expect("each answer is JSON");
    assert_eq!(answer["id"], serde_json::from_str::<Value>(id).unwrap(), "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "`{says}` not in {answer}");
}

/// A `tools/call` of `tool` with these arguments, under `id`.
pub(crate) fn call(id: u32, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}
