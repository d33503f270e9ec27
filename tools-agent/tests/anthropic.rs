//! The Anthropic client against a mock Messages API on loopback, plain and
//! streamed, driving a real agent. The response bodies are shaped as the
//! documentation shows them: <https://docs.anthropic.com/en/api/messages>
//! (a whole message), <https://docs.anthropic.com/en/docs/build-with-claude/streaming>
//! (its events), <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>
//! (`tool_use` and `tool_result` blocks) and <https://docs.anthropic.com/en/api/errors>
//! (error bodies, 529).

#[path = "support/ag.rs"]
mod ag;

use std::time::Duration;

use ag::{Script, bodies, run, serve_chunks, sse, streamed_text, tools};
use serde_json::{Value, json};
use tools_agent::{
    Agent, AgentEvent, Anthropic, ApiKey, Message, ModelError, ResendPolicy, RunLimits, StopReason,
    ToolChoice,
};
use tools_core::Outcome;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-ant-test-4f9c1e";

/// One model turn: its text and its `tool_use` blocks (id, name, input).
struct Turn {
    text: &'static str,
    calls: Vec<(&'static str, &'static str, Value)>,
}

fn text(text: &'static str) -> Turn {
    Turn { text, calls: Vec::new() }
}

/// The turn as a whole Messages response.
fn plain(turn: &Turn) -> ResponseTemplate {
    let mut content = Vec::new();
    if !turn.text.is_empty() {
        content.push(json!({"type": "text", "text": turn.text}));
    }
    for (id, name, input) in &turn.calls {
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    let stop = if turn.calls.is_empty() { "end_turn" } else { "tool_use" };
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 25, "output_tokens": 7}
    }))
}

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// The turn as the events of a stream: text in two deltas, each call's
/// input JSON in pieces split inside a string, and `message_stop` unless
/// `cut`.
fn events(turn: &Turn, cut: bool) -> String {
    let mut out = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
            "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5",
            "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}),
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
    for (id, name, input) in &turn.calls {
        out += &event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        );
        let json = input.to_string();
        // Inside the last string value, when there is one.
        let split = json.rfind('"').map_or(json.len(), |quote| quote.saturating_sub(2));
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

fn reply(turn: &Turn, streamed: bool) -> ResponseTemplate {
    if streamed { sse(events(turn, false)) } else { plain(turn) }
}

fn fast_retry(attempts: u32) -> ResendPolicy {
    ResendPolicy::default().with_max_attempts(attempts).with_initial_backoff(Duration::from_millis(1))
}

async fn server(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(Script::new(responses))
        .mount(&server)
        .await;
    server
}

fn client(server: &MockServer) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5")
        .with_base_url(server.uri())
        .with_api_key(ApiKey::new(KEY))
        .with_resend(fast_retry(1))
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

async fn parallel_bad_unknown_failing_then_fixed(streamed: bool) {
    let server = server(vec![
        reply(
            &Turn {
                text: "Checking.",
                calls: vec![
                    ("toolu_01A", "get_weather", json!({"city": "Oslo"})),
                    ("toolu_01B", "get_weather", json!({"town": "Rome"})),
                    ("toolu_01C", "get_wether", json!({})),
                    ("toolu_01D", "get_weather", json!({"city": "Atlantis"})),
                    ("toolu_01E", "local_time", json!({"zone": "Europe/Oslo"})),
                ],
            },
            streamed,
        ),
        reply(
            &Turn { text: "", calls: vec![("toolu_02A", "get_weather", json!({"city": "Rome"}))] },
            streamed,
        ),
        reply(&text("Oslo and Rome: 12°C."), streamed),
    ])
    .await;
    let agent = Agent::new(client(&server), tools()).unwrap().with_instructions("Answer briefly.");
    let (result, events) = run(&agent, "Weather in Oslo and Rome?", streamed).await;
    let result = result.expect("the run answers");
    assert_eq!((result.answer.as_str(), &result.stop), ("Oslo and Rome: 12°C.", &StopReason::Answered));
    let outcomes = |message: &Message| match message {
        Message::Tool { results } => results.iter().map(|r| (r.id.clone(), r.outcome)).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    let messages = &result.transcript.messages;
    assert_eq!(
        outcomes(&messages[2]),
        [
            ("toolu_01A".into(), Outcome::Success),
            ("toolu_01B".into(), Outcome::InvalidArguments),
            ("toolu_01C".into(), Outcome::NotFound),
            ("toolu_01D".into(), Outcome::Failed),
            ("toolu_01E".into(), Outcome::Success),
        ]
    );
    assert_eq!(outcomes(&messages[4]), [("toolu_02A".into(), Outcome::Success)]);
    assert_eq!(result.usage.len(), 3);
    assert_eq!((result.usage[0].input_tokens, result.usage[0].output_tokens), (25, 7));
    if streamed {
        assert_eq!(streamed_text(&events), "Checking.Oslo and Rome: 12°C.");
        // The first call's input came in pieces, split inside a string.
        let pieces: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::CallDelta { index: 0, arguments, .. } if !arguments.is_empty() => {
                    Some(arguments.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(pieces[..2], [r#"{"city":"Os"#, r#"lo"}"#]);
    }

    // What Anthropic received.
    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.headers.get("x-api-key").and_then(|v| v.to_str().ok()), Some(KEY));
        assert_eq!(
            request.headers.get("anthropic-version").and_then(|v| v.to_str().ok()),
            Some("2023-06-01")
        );
    }
    let bodies = bodies(&server).await;
    let first = &bodies[0];
    assert_eq!(first["model"], "claude-sonnet-4-5");
    assert_eq!(first["max_tokens"], 4096);
    assert_eq!(first["system"], "Answer briefly.");
    assert_eq!(first["messages"], json!([{"role": "user", "content": "Weather in Oslo and Rome?"}]));
    let names: Vec<&Value> = first["tools"].as_array().expect("tools").iter().map(|t| &t["name"]).collect();
    assert_eq!(names, ["get_weather", "local_time"]);
    assert_eq!(first["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(first["tool_choice"], json!({"type": "auto"}));
    assert_eq!(first.get("stream"), streamed.then_some(&Value::Bool(true)));
    let second = bodies[1]["messages"].as_array().expect("messages");
    assert_eq!(second.len(), 3);
    assert_eq!(second[1]["content"][0], json!({"type": "text", "text": "Checking."}));
    assert_eq!(
        second[1]["content"][1],
        json!({"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Oslo"}})
    );
    assert_eq!(
        second[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01A", "content": "12°C in Oslo"})
    );
    let errors: Vec<&Value> =
        second[2]["content"].as_array().expect("blocks").iter().map(|b| &b["is_error"]).collect();
    assert_eq!(
        errors,
        [&Value::Null, &Value::Bool(true), &Value::Bool(true), &Value::Bool(true), &Value::Null]
    );
    let last = bodies[2]["messages"].as_array().expect("messages");
    assert_eq!(last.len(), 5);
    assert_every_call_answered(last);
    assert_eq!(bodies[2]["tools"], first["tools"]);
}

#[tokio::test]
async fn parallel_bad_unknown_and_failing_calls_then_a_fix() {
    parallel_bad_unknown_failing_then_fixed(false).await;
}

#[tokio::test]
async fn parallel_bad_unknown_and_failing_calls_then_a_fix_streamed() {
    parallel_bad_unknown_failing_then_fixed(true).await;
}

async fn budget_and_tool_choice(streamed: bool) {
    let calls = vec![
        ("toolu_1", "get_weather", json!({"city": "Oslo"})),
        ("toolu_2", "get_weather", json!({"city": "Rome"})),
    ];
    let server = server(vec![reply(&Turn { text: "", calls }, streamed)]).await;
    let agent = Agent::new(client(&server), tools())
        .unwrap()
        .with_limits(RunLimits::default().with_max_tool_calls(1))
        .with_tool_choice(ToolChoice::Tool("get_weather".into()))
        .with_parallel_tool_calls(false)
        .with_max_tokens(300);
    let (result, _) = run(&agent, "Weather?", streamed).await;
    let result = result.expect("a budget stop is a result");
    assert!(matches!(result.stop, StopReason::Budget(_)), "{:?}", result.stop);
    assert_eq!(result.transcript.pending_calls().len(), 2);
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 1);
    assert_eq!(
        bodies[0]["tool_choice"],
        json!({"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true})
    );
    assert_eq!(bodies[0]["max_tokens"], 300);
}

#[tokio::test]
async fn the_budget_stops_the_run_and_the_tool_choice_is_sent() {
    budget_and_tool_choice(false).await;
}

#[tokio::test]
async fn the_budget_stops_the_run_and_the_tool_choice_is_sent_streamed() {
    budget_and_tool_choice(true).await;
}

async fn max_turns(streamed: bool) {
    let server = server(vec![
        reply(&Turn { text: "", calls: vec![("toolu_1", "get_weather", json!({"city": "Oslo"}))] }, streamed),
        reply(&text("12°C in Oslo, as far as I know."), streamed),
    ])
    .await;
    let agent = Agent::new(client(&server), tools()).unwrap().with_max_turns(1);
    let (result, _) = run(&agent, "Weather?", streamed).await;
    let result = result.expect("the run ends");
    assert_eq!(result.stop, StopReason::MaxTurns { turns: 1 });
    assert_eq!(result.answer, "12°C in Oslo, as far as I know.");
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    assert!(bodies[0].get("tools").is_some());
    // The last request goes without tools (and so without tool_choice),
    // its messages still holding the turn's tool_use and tool_result.
    assert!(bodies[1].get("tools").is_none(), "{}", bodies[1]);
    assert!(bodies[1].get("tool_choice").is_none());
    let messages = bodies[1]["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3);
    assert_every_call_answered(messages);
}

#[tokio::test]
async fn max_turns_ends_with_a_tool_less_request() {
    max_turns(false).await;
}

#[tokio::test]
async fn max_turns_ends_with_a_tool_less_request_streamed() {
    max_turns(true).await;
}

fn error(status: u16, kind: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .insert_header("retry-after", "0")
        .set_body_json(json!({"type": "error", "error": {"type": kind, "message": message}}))
}

async fn rate_limited_then_overloaded_then_answered(streamed: bool) {
    let server = server(vec![
        error(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
        error(529, "overloaded_error", "Overloaded"),
        reply(&text("Hello."), streamed),
    ])
    .await;
    let agent = Agent::new(client(&server).with_resend(fast_retry(3)), tools()).unwrap();
    let (result, _) = run(&agent, "Hi", streamed).await;
    assert_eq!(result.expect("answered on the third attempt").answer, "Hello.");
    assert_eq!(bodies(&server).await.len(), 3);
}

#[tokio::test]
async fn a_429_and_a_529_are_retried() {
    rate_limited_then_overloaded_then_answered(false).await;
}

#[tokio::test]
async fn a_429_and_a_529_are_retried_streamed() {
    rate_limited_then_overloaded_then_answered(true).await;
}

async fn server_errors_exhaust_the_retries(streamed: bool) {
    let server = server(vec![
        error(500, "api_error", "Internal server error"),
        error(500, "api_error", "Internal server error"),
    ])
    .await;
    let agent = Agent::new(client(&server).with_resend(fast_retry(2)), tools()).unwrap();
    let (result, _) = run(&agent, "Hi", streamed).await;
    let error = result.expect_err("the retries run out");
    assert!(matches!(error.error, ModelError::Server { status: 500, attempts: 2, .. }), "{:?}", error.error);
    assert_eq!(error.transcript.messages, [Message::user("Hi")]);
    assert_eq!(bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn a_500_exhausts_the_retries() {
    server_errors_exhaust_the_retries(false).await;
}

#[tokio::test]
async fn a_500_exhausts_the_retries_streamed() {
    server_errors_exhaust_the_retries(true).await;
}

async fn unauthorized(streamed: bool) {
    let server = server(vec![error(401, "authentication_error", "invalid x-api-key")]).await;
    let model = client(&server);
    assert!(!format!("{model:?}").contains(KEY));
    let agent = Agent::new(model, tools()).unwrap();
    let (result, _) = run(&agent, "Hi", streamed).await;
    let error = result.expect_err("the key is refused");
    assert!(
        matches!(error.error, ModelError::Unauthorized { status: 401, variable: "ANTHROPIC_API_KEY", .. }),
        "{:?}",
        error.error
    );
    assert!(error.to_string().contains("ANTHROPIC_API_KEY"), "{error}");
    for shown in
        [error.to_string(), format!("{error:?}"), error.error.to_string(), format!("{:?}", error.error)]
    {
        assert!(!shown.contains(KEY), "{shown}");
    }
}

#[tokio::test]
async fn a_401_names_the_variable_and_never_the_key() {
    unauthorized(false).await;
}

#[tokio::test]
async fn a_401_names_the_variable_and_never_the_key_streamed() {
    unauthorized(true).await;
}

#[tokio::test]
async fn a_stream_that_ends_early_keeps_the_run_so_far() {
    let server = server(vec![
        sse(events(
            &Turn { text: "", calls: vec![("toolu_1", "get_weather", json!({"city": "Oslo"}))] },
            false,
        )),
        sse(events(&text("It is 12°C"), true)),
    ])
    .await;
    let agent = Agent::new(client(&server), tools()).unwrap();
    let (result, events) = run(&agent, "Weather?", true).await;
    let error = result.expect_err("the stream was cut");
    assert!(matches!(error.error, ModelError::StreamEnded { .. }), "{:?}", error.error);
    assert!(error.to_string().contains("message_stop"), "{error}");
    // The first turn and its results are kept; the cut answer is not.
    assert_eq!(error.transcript.messages.len(), 3);
    assert!(matches!(&error.transcript.messages[2], Message::Tool { results } if results[0].id == "toolu_1"));
    assert_eq!(streamed_text(&events), "It is 12°C");
}

#[tokio::test]
async fn an_error_event_in_the_stream_is_an_error() {
    let body = events(&text("Hel"), true)
        + &event(
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        );
    let server = server(vec![sse(body)]).await;
    let agent = Agent::new(client(&server), tools()).unwrap();
    let (result, _) = run(&agent, "Hi", true).await;
    let error = result.expect_err("the stream failed");
    assert!(matches!(error.error, ModelError::Unavailable { status: 529, .. }), "{:?}", error.error);
}

#[tokio::test]
async fn a_character_split_across_network_chunks_arrives_whole() {
    let body = events(&text("12°C in Oslo"), false).into_bytes();
    // Cut between the two bytes of "°" (0xC2 0xB0), and again mid-event.
    let degree = body.windows(2).position(|pair| pair == [0xC2, 0xB0]).expect("a degree sign") + 1;
    let chunks =
        vec![body[..degree].to_vec(), body[degree..degree + 10].to_vec(), body[degree + 10..].to_vec()];
    let base = serve_chunks(chunks);
    let model = Anthropic::new("claude-sonnet-4-5")
        .with_base_url(base)
        .with_api_key(ApiKey::new(KEY))
        .with_resend(fast_retry(1));
    let agent = Agent::new(model, tools()).unwrap();
    let (result, events) = run(&agent, "Weather?", true).await;
    assert_eq!(result.expect("answered").answer, "12°C in Oslo");
    assert_eq!(streamed_text(&events), "12°C in Oslo");
}
