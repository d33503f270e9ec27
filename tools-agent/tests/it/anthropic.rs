//! `Anthropic`: its mock for the scenarios (`scenarios.rs`), and what only
//! the Messages API does, against a mock on loopback, plain and streamed,
//! driving a real agent. The response bodies are shaped as the
//! documentation shows them: <https://docs.anthropic.com/en/api/messages>
//! (a whole message), <https://docs.anthropic.com/en/docs/build-with-claude/streaming>
//! (its events), <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>
//! (`tool_use` and `tool_result` blocks) and <https://docs.anthropic.com/en/api/errors>
//! (error bodies, 529).

use serde_json::{Value, json};
use toolcall_agent::{Agent, Anthropic, ApiKey, ModelError, ModelSettings, Usage};
use wiremock::{Request, ResponseTemplate};

use crate::scenarios::{self, Item, ProviderMock, Sent, SentCall, SentResult, mock};
use crate::support::ag::sse;
use crate::support::openai::{Turn, fast_retry, run, tools};

const KEY: &str = "sk-ant-test-4f9c1e";

/// A call's input, as a JSON object.
fn input(arguments: &str) -> Value {
    serde_json::from_str(arguments).expect("JSON arguments")
}

/// The turn as a whole Messages response.
fn message(turn: &Turn) -> Value {
    let mut content = Vec::new();
    if !turn.text.is_empty() {
        content.push(json!({"type": "text", "text": turn.text}));
    }
    for (id, name, arguments) in &turn.calls {
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input(arguments)}));
    }
    let stop = if turn.calls.is_empty() { "end_turn" } else { "tool_use" };
    json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 25, "cache_creation_input_tokens": 40, "cache_read_input_tokens": 1200,
            "output_tokens": 7}
    })
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// Where a call's input JSON is split: inside the last string value, when
/// there is one.
fn split(json: &str) -> usize {
    json.rfind('"').map_or(json.len(), |quote| quote.saturating_sub(2))
}

/// The turn as the events of a stream: text in two deltas, each call's
/// input JSON in pieces split inside a string, and `message_stop` unless
/// `cut` (then the stream stops after the text deltas).
fn events(turn: &Turn, cut: bool) -> String {
    let mut out = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
            "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5",
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25,
            "cache_creation_input_tokens": 40, "cache_read_input_tokens": 1200, "output_tokens": 1}}}),
    );
    let mut index = 0;
    if !turn.text.is_empty() {
        out += &event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        );
        out += &event("ping", json!({"type": "ping"}));
        let middle = turn.text.char_indices().nth(turn.text.chars().count() / 2).map_or(0, |(i, _)| i);
        for piece in [&turn.text[..middle], &turn.text[middle..]] {
            out += &event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}),
            );
        }
        if cut {
            return out;
        }
        out += &event("content_block_stop", json!({"type": "content_block_stop", "index": 0}));
        index = 1;
    }
    for (id, name, arguments) in &turn.calls {
        out += &event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        );
        let json = input(arguments).to_string();
        let split = split(&json);
        for piece in ["", &json[..split], &json[split..]] {
            out += &event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece}}),
            );
        }
        out += &event("content_block_stop", json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    let stop = if turn.calls.is_empty() { "end_turn" } else { "tool_use" };
    out += &event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 7}}),
    );
    out + &event("message_stop", json!({"type": "message_stop"}))
}

fn error(status: u16, kind: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .insert_header("retry-after", "0")
        .set_body_json(json!({"type": "error", "error": {"type": kind, "message": message}}))
}

/// The Messages API, for the scenarios.
pub(crate) struct Mock;

impl ProviderMock for Mock {
    type Client = Anthropic;
    const NAME: &'static str = "anthropic";
    const KEY: &'static str = KEY;
    const KEY_VARIABLE: &'static str = "ANTHROPIC_API_KEY";
    // Anthropic's `input_tokens` leave the cached ones out; ours count them.
    const USAGE: Usage = Usage {
        input_tokens: Some(25 + 40 + 1200),
        output_tokens: Some(7),
        cache_read_tokens: Some(1200),
        cache_write_tokens: Some(40),
        reasoning_tokens: None,
    };
    const STREAM_END: &'static str = "message_stop";
    const TRUNCATED: (&'static [(&'static str, &'static str)], &'static str) =
        (&[(r#""stop_reason":"tool_use""#, r#""stop_reason":"max_tokens""#)], "max_tokens");
    const REFUSED: (&'static [(&'static str, &'static str)], &'static str) =
        (&[(r#""stop_reason":"tool_use""#, r#""stop_reason":"refusal""#)], "refusal");

    fn client(root: &str, key: Option<ApiKey>, attempts: u32) -> Anthropic {
        Anthropic::from_values("claude-sonnet-4-5", key, Some(root)).with_resend(fast_retry(attempts))
    }

    fn path(_streamed: bool) -> String {
        "/v1/messages".into()
    }

    fn body(turn: &Turn) -> Value {
        message(turn)
    }

    fn stream(turn: &Turn, cut: bool) -> String {
        events(turn, cut)
    }

    fn error(status: u16, message: &str) -> ResponseTemplate {
        let kind = match status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            _ => "api_error",
        };
        error(status, kind, message)
    }

    /// The block's start (no input yet), the empty first delta, then the
    /// input split inside its last string.
    fn pieces(arguments: &str) -> Vec<String> {
        let json = input(arguments).to_string();
        let split = split(&json);
        vec![String::new(), String::new(), json[..split].into(), json[split..].into()]
    }

    fn key_sent(request: &Request) -> Option<String> {
        request.headers.get("x-api-key").map(|value| value.to_str().unwrap().to_owned())
    }

    fn streamed(request: &Request) -> bool {
        request.body_json::<Value>().unwrap()["stream"] == true
    }

    fn read(body: &Value) -> Sent {
        let mut sent = Sent {
            // The system prompt as text blocks, for its cache breakpoint.
            system: body["system"]
                .as_array()
                .map(|blocks| blocks.iter().map(|block| block["text"].as_str().unwrap()).collect::<String>()),
            tools: body["tools"].as_array().map_or_else(Vec::new, |tools| {
                tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
            }),
            tool_choice: body.get("tool_choice").cloned(),
            ..Sent::default()
        };
        for message in body["messages"].as_array().unwrap() {
            let role = message["role"].as_str().unwrap();
            let Some(blocks) = message["content"].as_array() else {
                assert_eq!(role, "user");
                sent.messages.push(Item::User(message["content"].as_str().unwrap().into()));
                continue;
            };
            if role == "user" && blocks.iter().all(|block| block["type"] == "text") {
                let text = blocks.iter().map(|block| block["text"].as_str().unwrap()).collect();
                sent.messages.push(Item::User(text));
                continue;
            }
            if role == "user" {
                let results = blocks
                    .iter()
                    .map(|block| {
                        assert_eq!(block["type"], "tool_result");
                        SentResult {
                            key: block["tool_use_id"].as_str().unwrap().into(),
                            content: block["content"].as_str().unwrap().into(),
                        }
                    })
                    .collect();
                sent.messages.push(Item::Results(results));
                continue;
            }
            let mut text = String::new();
            let mut calls = Vec::new();
            for block in blocks {
                match block["type"].as_str().unwrap() {
                    "text" => text += block["text"].as_str().unwrap(),
                    "tool_use" => calls.push(SentCall {
                        key: block["id"].as_str().unwrap().into(),
                        name: block["name"].as_str().unwrap().into(),
                        args: block["input"].clone(),
                    }),
                    other => panic!("an unexpected block {other}"),
                }
            }
            sent.messages.push(Item::Assistant { text, calls });
        }
        sent
    }
}

/// Each `tool_use` block is answered, in the next message and first in it,
/// by `tool_result` blocks with the same ids in the same order.
fn assert_every_call_answered(messages: &[Value]) {
    for (at, message) in messages.iter().enumerate() {
        let Some(blocks) = message["content"].as_array() else { continue };
        let ids: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "tool_use").map(|b| &b["id"]).collect();
        if ids.is_empty() {
            continue;
        }
        assert_eq!(message["role"], "assistant");
        let next = &messages[at + 1];
        assert_eq!(next["role"], "user");
        let answered: Vec<&Value> = next["content"].as_array().expect("blocks")[..ids.len()]
            .iter()
            .map(|b| {
                assert_eq!(b["type"], "tool_result");
                &b["tool_use_id"]
            })
            .collect();
        assert_eq!(answered, ids, "message {at}");
    }
}

/// The wire shape of the scenario with parallel calls and a fix: the
/// headers, the request fields, the blocks, errors flagged `is_error`.
#[tokio::test]
async fn the_blocks_of_a_run_with_parallel_calls() {
    for streamed in [false, true] {
        let requests = scenarios::parallel_calls_then_a_fix::<Mock>(streamed, std::convert::identity).await;
        for request in &requests {
            assert_eq!(request.headers.get("x-api-key").and_then(|v| v.to_str().ok()), Some(KEY));
            assert_eq!(
                request.headers.get("anthropic-version").and_then(|v| v.to_str().ok()),
                Some("2023-06-01")
            );
        }
        let bodies = scenarios::bodies(&requests);
        let first = &bodies[0];
        assert_eq!(first["model"], "claude-sonnet-4-5");
        assert_eq!(first["max_tokens"], 4096);
        // The system prompt and the last user message as blocks, each with
        // its cache breakpoint (on by default).
        let mark = json!({"type": "ephemeral"});
        assert_eq!(first["system"], json!([{"type": "text", "text": "Be brief.", "cache_control": mark}]));
        assert_eq!(
            first["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "Weather in Oslo and Rome?",
                "cache_control": mark}]}])
        );
        assert_eq!(first["tools"][0]["input_schema"]["type"], "object");
        assert_eq!(first["tool_choice"], json!({"type": "auto"}));
        assert_eq!(first.get("stream"), streamed.then_some(&Value::Bool(true)));
        let second = bodies[1]["messages"].as_array().expect("messages");
        assert_eq!(second[1]["content"][0], json!({"type": "text", "text": "Checking."}));
        assert_eq!(
            second[1]["content"][1],
            json!({"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {"city": "Oslo"}})
        );
        assert_eq!(
            second[2]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "call_a", "content": "12°C in Oslo"})
        );
        let errors: Vec<&Value> =
            second[2]["content"].as_array().expect("blocks").iter().map(|b| &b["is_error"]).collect();
        assert_eq!(
            errors,
            [&Value::Null, &Value::Bool(true), &Value::Bool(true), &Value::Bool(true), &Value::Null]
        );
        assert_every_call_answered(bodies[2]["messages"].as_array().expect("messages"));
        assert_eq!(bodies[2]["tools"], first["tools"]);
    }
}

#[tokio::test]
async fn the_tool_choice_and_token_limit_are_sent() {
    for streamed in [false, true] {
        let no_parallel = |settings: ModelSettings| settings.with_parallel_tool_calls(false);
        let requests =
            scenarios::the_budget_stops_the_run_before_the_calls::<Mock>(streamed, no_parallel).await;
        let bodies = scenarios::bodies(&requests);
        assert_eq!(
            bodies[0]["tool_choice"],
            json!({"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true})
        );
        assert_eq!(bodies[0]["max_tokens"], 300);
    }
}

#[tokio::test]
async fn a_429_and_a_529_are_retried() {
    for streamed in [false, true] {
        let server = mock(vec![
            error(
                429,
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
            ),
            error(529, "overloaded_error", "Overloaded"),
            Mock::reply(&Turn::text("Hello."), streamed),
        ])
        .await;
        let agent = Agent::new(scenarios::client::<Mock>(&server, 3), tools()).unwrap();
        let (result, _) = run(&agent, "Hi", streamed).await;
        assert_eq!(result.expect("answered on the third attempt").answer, "Hello.");
        assert_eq!(scenarios::received::<Mock>(&server, streamed).await.len(), 3);
    }
}

#[tokio::test]
async fn an_error_event_in_the_stream_is_an_error() {
    let body = events(&Turn::text("Hel"), true)
        + &event(
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        );
    let server = mock(vec![sse(body)]).await;
    let agent = Agent::new(scenarios::client::<Mock>(&server, 1), tools()).unwrap();
    let (result, _) = run(&agent, "Hi", true).await;
    let error = result.expect_err("the stream failed");
    assert!(matches!(error.error, ModelError::Unavailable { status: 529, .. }), "{:?}", error.error);
}
