//! What a client is told about a message the server cannot read, the same
//! on stdio and HTTP: `-32700` for bytes that are not JSON, `-32600` for
//! JSON that is not a JSON-RPC request or notification, with the message's
//! `id` when it has a usable one and `null` otherwise (JSON-RPC 2.0, §5.1).
//! The id is read apart from the rest, so that a string that is not Unicode
//! elsewhere does not lose it, and echoed as the client wrote it, so that
//! an integer past 64 bits comes back the same; an id MCP does not take
//! (not a string or an integer) is named as what is wrong.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// JSON-RPC's code for bytes that are not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a valid request.
const INVALID_REQUEST: i64 = -32600;

/// The error answer for `message`, which rmcp could not read as a client
/// message, as JSON text.
pub(crate) fn unreadable(message: &[u8]) -> String {
    let text = match std::str::from_utf8(message) {
        Ok(text) => text,
        Err(error) => return answer(PARSE_ERROR, None, format!("parse error: not UTF-8 ({error})")),
    };
    let id = raw_id(text);
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        // JSON in its shape, with a string that is not Unicode (a lone
        // surrogate, `\ud800`): the id was read, so the client can match
        // the answer to its request.
        Err(error) if id.is_some() => {
            return answer(PARSE_ERROR, id, format!("parse error: not all of it can be read ({error})"));
        }
        Err(error) => return answer(PARSE_ERROR, None, format!("parse error: not JSON ({error})")),
    };
    answer(INVALID_REQUEST, id, format!("invalid request: {}", what_is_wrong(&value, id)))
}

/// The message's `id`, as the client wrote it, when it is a string or a
/// number. A second, lenient read: everything but the id is skipped
/// unchecked (serde_json does not check the escapes of what it skips), so
/// a message that a strict read refuses for a string elsewhere still has
/// its id; and the id keeps its text, so an integer past 64 bits is
/// echoed exactly.
fn raw_id(text: &str) -> Option<&RawValue> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
    }
    let id = serde_json::from_str::<Envelope<'_>>(text).ok()?.id?;
    id.get().starts_with(|first: char| first == '"' || first == '-' || first.is_ascii_digit()).then_some(id)
}

/// The error answer for a request whose `id` is that of a request of the
/// same client still being answered (see `in_flight`).
pub(crate) fn duplicate(id: &rmcp::model::RequestId) -> String {
    let written = serde_json::to_string(id).ok().and_then(|id| RawValue::from_string(id).ok());
    answer(
        INVALID_REQUEST,
        written.as_deref(),
        format!(
            "invalid request: the id {} is that of a request still being answered: \
             each request needs an id of its own (it was not run; the first one is still answered)",
            written.as_deref().map_or("", RawValue::get)
        ),
    )
}

/// The error answer for a batch without a message (JSON-RPC 2.0, §6).
pub(crate) fn empty_batch() -> String {
    answer(INVALID_REQUEST, None, "invalid request: an empty batch: a batch holds one message or more".into())
}

/// The error answer for a batch holding an `initialize`, which MCP
/// 2025-03-26 keeps out of batches
/// (<https://modelcontextprotocol.io/specification/2025-03-26/basic/lifecycle#initialization>).
pub(crate) fn initialize_in_batch() -> String {
    answer(
        INVALID_REQUEST,
        None,
        "invalid request: `initialize` must not be part of a batch (MCP 2025-03-26): send it on its own"
            .into(),
    )
}

/// The error answer for a message longer than the server reads.
pub(crate) fn too_long(limit: usize) -> String {
    answer(INVALID_REQUEST, None, format!("invalid request: the message is longer than {limit} bytes"))
}

/// Why a batch (a JSON array of messages) is refused. MCP 2025-03-26 let
/// a client send one (<https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>);
/// 2025-06-18 removed them (<https://modelcontextprotocol.io/specification/2025-06-18/changelog>).
/// This server reads them in a 2025-03-26 session (see `batch`, and
/// `http::batches`).
const BATCH_REFUSED: &str = "a batch (a JSON array) is not taken here: JSON-RPC batches were part of \
     MCP 2025-03-26 only (2025-06-18 removed them), and this server reads them only in a session \
     at 2025-03-26; send one message at a time";

fn what_is_wrong(message: &Value, id: Option<&RawValue>) -> String {
    let Some(object) = message.as_object() else {
        return match message {
            Value::Array(_) => BATCH_REFUSED.into(),
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
    match (object.get("id"), id) {
        (None | Some(Value::String(_)), _) => {}
        (Some(Value::Number(_)), id) => {
            if let Some(wrong) = id.and_then(|id| wrong_number(id.get())) {
                return wrong;
            }
        }
        _ => return "`id` must be a string or an integer".into(),
    }
    match object.get("params") {
        None | Some(Value::Object(_)) => "its `params` do not fit its `method`".into(),
        Some(_) => "`params` must be a JSON object".into(),
    }
}

/// What is wrong with a number as an id: MCP's ids are strings or
/// integers (<https://modelcontextprotocol.io/specification/2025-06-18/basic#requests>),
/// and rmcp reads integers of 64 bits, signed.
fn wrong_number(id: &str) -> Option<String> {
    if id.parse::<i64>().is_ok() {
        return None;
    }
    let integer = id.strip_prefix('-').unwrap_or(id).bytes().all(|byte| byte.is_ascii_digit());
    if integer {
        return Some(format!(
            "the `id` {id} is out of range: this server reads integer ids from -2^63 to 2^63-1; send a smaller one, or a string"
        ));
    }
    // rmcp reads `1.0` and `1e2` as the integers they are.
    let integral = id.parse::<f64>().is_ok_and(|value| value.fract() == 0.0 && value.abs() < 9.2e18);
    (!integral).then(|| format!("the `id` {id} is not an integer: an MCP id is a string or an integer"))
}

/// A JSON-RPC error answer, as JSON text: the one shape every error this
/// crate writes itself has. The id is the client's own text.
pub(crate) fn answer(code: i64, id: Option<&RawValue>, message: String) -> String {
    #[derive(Serialize)]
    struct Answer<'a> {
        jsonrpc: &'static str,
        id: Option<&'a RawValue>,
        error: Error,
    }
    #[derive(Serialize)]
    struct Error {
        code: i64,
        message: String,
    }
    let answer = Answer { jsonrpc: "2.0", id, error: Error { code, message } };
    // Strings, integers and a JSON value already read: nothing fails here.
    serde_json::to_string(&answer).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(message: &str) -> (i64, Value, String) {
        let answer: Value = serde_json::from_str(&unreadable(message.as_bytes())).expect("JSON");
        let error = &answer["error"];
        (error["code"].as_i64().unwrap(), answer["id"].clone(), error["message"].as_str().unwrap().to_owned())
    }

    #[test]
    fn bytes_that_are_not_json_are_a_parse_error_without_id() {
        assert_eq!(read("\u{7f}").0, PARSE_ERROR);
        let answer: Value = serde_json::from_str(&unreadable(b"\xff\xfe")).unwrap();
        assert_eq!(answer["error"]["code"], PARSE_ERROR);
        let (code, id, message) = read(r#"{"jsonrpc": "2.0", "id": 7, "method"#);
        assert_eq!((code, id), (PARSE_ERROR, Value::Null));
        assert!(message.contains("line 1 column"), "{message}");
    }

    #[test]
    fn json_that_is_not_a_request_is_an_invalid_request_with_its_id() {
        let cases = [
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                Value::Null,
                "batches were part of MCP 2025-03-26 only",
            ),
            ("3", Value::Null, "JSON object"),
            (r#"{"id":7}"#, json!(7), "`jsonrpc`"),
            (r#"{"jsonrpc":"2.0","id":"a","method":5}"#, json!("a"), "`method` must be a string"),
            (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, Value::Null, "`id` must be"),
            (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, Value::Null, "`id` must be"),
            (r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[]}"#, json!(5), "`params` must be"),
            (r#"{"jsonrpc":"2.0","id":6}"#, json!(6), "no `method`"),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, json!(1.5), "`id` 1.5 is not an integer"),
            (r#"{"jsonrpc":"2.0","id":-1e40,"method":"ping"}"#, json!(-1e40), "is not an integer"),
        ];
        for (message, expected_id, says) in cases {
            let (code, id, text) = read(message);
            assert_eq!((code, &id), (INVALID_REQUEST, &expected_id), "{message}");
            assert!(text.contains(says), "{message}: {text}");
        }
    }

    #[test]
    fn an_integer_id_past_64_bits_is_named_and_echoed_exactly() {
        for id in ["18446744073709551615", "1180591620717411303424", "-9223372036854775809"] {
            let answer = unreadable(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).as_bytes());
            assert!(answer.contains(&format!(r#""id":{id},"#)), "{answer}");
            assert!(answer.contains(&format!("the `id` {id} is out of range")), "{answer}");
        }
    }

    #[test]
    fn a_lone_surrogate_is_a_parse_error_with_the_id() {
        let (code, id, text) = read(
            r#"{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"\ud800"}}}"#,
        );
        assert_eq!((code, id), (PARSE_ERROR, json!("x-1")));
        assert!(text.contains("escape"), "{text}");
    }
}
