//! What a client is told about a message the server cannot read, the same
//! on stdio and HTTP: `-32700` for bytes that are not JSON, `-32600` for
//! JSON that is not a JSON-RPC request or notification, with the message's
//! `id` when it has a usable one and `null` otherwise (JSON-RPC 2.0, §5.1).

use serde_json::{Value, json};

/// JSON-RPC's code for bytes that are not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a valid request.
const INVALID_REQUEST: i64 = -32600;

/// The error answer for `message`, which rmcp could not read as a client
/// message.
pub(crate) fn unreadable(message: &[u8]) -> Value {
    let text = match std::str::from_utf8(message) {
        Ok(text) => text,
        Err(error) => return answer(PARSE_ERROR, Value::Null, format!("parse error: not UTF-8 ({error})")),
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => return answer(PARSE_ERROR, Value::Null, format!("parse error: not JSON ({error})")),
    };
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    answer(INVALID_REQUEST, id, format!("invalid request: {}", what_is_wrong(&value)))
}

/// The error answer for a message longer than the server reads.
pub(crate) fn too_long(limit: usize) -> Value {
    answer(INVALID_REQUEST, Value::Null, format!("invalid request: the message is longer than {limit} bytes"))
}

fn what_is_wrong(message: &Value) -> String {
    let Some(object) = message.as_object() else {
        return match message {
            Value::Array(_) => "a batch (a JSON array) is not supported: send one message at a time".into(),
            _ => "a JSON-RPC message is a JSON object".into(),
        };
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return r#"`jsonrpc` must be "2.0""#.into();
    }
    match object.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return "`method` must be a string".into(),
        None if object.contains_key("result") || object.contains_key("error") => {
            return "a response needs the `id` of a request the server sent".into();
        }
        None => return "it has no `method`".into(),
    }
    match object.get("id") {
        None | Some(Value::String(_) | Value::Number(_)) => {}
        Some(_) => return "`id` must be a string or a number".into(),
    }
    match object.get("params") {
        None | Some(Value::Object(_)) => "its `params` do not fit its `method`".into(),
        Some(_) => "`params` must be a JSON object".into(),
    }
}

/// A JSON-RPC error answer: the one shape every error this crate writes
/// itself has.
pub(crate) fn answer(code: i64, id: Value, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(message: &str) -> (i64, Value, String) {
        let answer = unreadable(message.as_bytes());
        let error = &answer["error"];
        (error["code"].as_i64().unwrap(), answer["id"].clone(), error["message"].as_str().unwrap().to_owned())
    }

    #[test]
    fn bytes_that_are_not_json_are_a_parse_error_without_id() {
        assert_eq!(unreadable(b"\xff\xfe")["error"]["code"], PARSE_ERROR);
        let (code, id, message) = read(r#"{"jsonrpc": "2.0", "id": 7, "method"#);
        assert_eq!((code, id), (PARSE_ERROR, Value::Null));
        assert!(message.contains("line 1 column"), "{message}");
    }

    #[test]
    fn json_that_is_not_a_request_is_an_invalid_request_with_its_id() {
        let cases = [
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Value::Null, "batch"),
            ("3", Value::Null, "JSON object"),
            (r#"{"id":7}"#, json!(7), "`jsonrpc`"),
            (r#"{"jsonrpc":"2.0","id":"a","method":5}"#, json!("a"), "`method` must be a string"),
            (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, Value::Null, "`id` must be"),
            (r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[]}"#, json!(5), "`params` must be"),
            (r#"{"jsonrpc":"2.0","id":6}"#, json!(6), "no `method`"),
        ];
        for (message, expected_id, says) in cases {
            let (code, id, text) = read(message);
            assert_eq!((code, &id), (INVALID_REQUEST, &expected_id), "{message}");
            assert!(text.contains(says), "{message}: {text}");
        }
    }
}
