//! The Gemini client against a mock Gemini API on loopback, plain and
//! streamed, driving a real agent. The response bodies are shaped as the
//! documentation shows them: <https://ai.google.dev/api/generate-content>
//! (`GenerateContentResponse`, and the stream of them),
//! <https://ai.google.dev/gemini-api/docs/function-calling> (`functionCall`
//! and `functionResponse` parts), <https://ai.google.dev/gemini-api/docs/thought-signatures>
//! (`thoughtSignature`) and <https://ai.google.dev/gemini-api/docs/troubleshooting>
//! (error bodies).

#[path = "support/ag.rs"]
mod ag;

use std::time::Duration;

use ag::{Script, run, serve_chunks, sse, streamed_text, tools};
use serde_json::{Value, json};
use tools_agent::{
    Agent, AgentEvent, ApiKey, Gemini, Message, ModelError, ResendPolicy, RunLimits, StopReason, ToolChoice,
};
use tools_core::Outcome;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "AIzaSy-test-7d2b0c";
const MODEL: &str = "gemini-2.5-flash";

/// One model turn: its text and its `functionCall` parts (name, args, id,
/// thought signature).
struct Turn {
    text: &'static str,
    calls: Vec<Call>,
}

struct Call {
    name: &'static str,
    args: Value,
    id: Option<&'static str>,
    signature: Option<&'static str>,
}

fn call(name: &'static str, args: Value) -> Call {
    Call { name, args, id: None, signature: None }
}

fn text(text: &'static str) -> Turn {
    Turn { text, calls: Vec::new() }
}

fn call_part(call: &Call) -> Value {
    let mut function_call = json!({"name": call.name, "args": call.args});
    if let Some(id) = call.id {
        function_call["id"] = json!(id);
    }
    let mut part = json!({"functionCall": function_call});
    if let Some(signature) = call.signature {
        part["thoughtSignature"] = json!(signature);
    }
    part
}

fn response(parts: Vec<Value>, finish: bool) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    let mut chunk = json!({"candidates": [candidate.take()], "modelVersion": MODEL, "responseId": "mAitaLmkHPPlz7IPvtfUqQ4"});
    if finish {
        chunk["candidates"][0]["finishReason"] = json!("STOP");
        chunk["usageMetadata"] =
            json!({"promptTokenCount": 30, "candidatesTokenCount": 8, "totalTokenCount": 38});
    } else {
        chunk["candidates"][0] = json!({"content": chunk["candidates"][0]["content"].take(), "index": 0});
    }
    chunk
}

/// The turn as one `GenerateContentResponse`.
fn plain(turn: &Turn) -> ResponseTemplate {
    let mut parts = Vec::new();
    if !turn.text.is_empty() {
        parts.push(json!({"text": turn.text}));
    }
    parts.extend(turn.calls.iter().map(call_part));
    ResponseTemplate::new(200).set_body_json(response(parts, true))
}

/// The turn as a stream of responses: the text in two chunks, each call
/// in a chunk of its own, the `finishReason` on the last unless `cut`.
fn chunks(turn: &Turn, cut: bool) -> String {
    let mut pieces: Vec<Vec<Value>> = Vec::new();
    if !turn.text.is_empty() {
        let middle = turn.text.char_indices().nth(turn.text.chars().count() / 2).map_or(0, |(i, _)| i);
        pieces.push(vec![json!({"text": &turn.text[..middle]})]);
        pieces.push(vec![json!({"text": &turn.text[middle..]})]);
    }
    pieces.extend(turn.calls.iter().map(|call| vec![call_part(call)]));
    let count = pieces.len();
    pieces
        .into_iter()
        .enumerate()
        .map(|(at, parts)| format!("data: {}\r\n\r\n", response(parts, !cut && at + 1 == count)))
        .collect()
}

fn reply(turn: &Turn, streamed: bool) -> ResponseTemplate {
    if streamed { sse(chunks(turn, false)) } else { plain(turn) }
}

fn fast_retry(attempts: u32) -> ResendPolicy {
    ResendPolicy::default().with_max_attempts(attempts).with_initial_backoff(Duration::from_millis(1))
}

async fn server(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(Script::new(responses)).mount(&server).await;
    server
}

fn client(server: &MockServer) -> Gemini {
    Gemini::new(MODEL).with_base_url(server.uri()).with_api_key(ApiKey::new(KEY)).with_resend(fast_retry(1))
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    ag::bodies(server).await
}

/// Each model content's `functionCall` parts are answered by the next
/// content's `functionResponse` parts: the same names in the same order,
/// and the same id where the call had one.
fn assert_every_call_answered(contents: &[Value]) {
    for (at, content) in contents.iter().enumerate() {
        let parts = content["parts"].as_array().expect("parts");
        let calls: Vec<&Value> = parts.iter().filter_map(|p| p.get("functionCall")).collect();
        if calls.is_empty() {
            continue;
        }
        assert_eq!(content["role"], "model");
        let next = &contents[at + 1];
        assert_eq!(next["role"], "user");
        let responses: Vec<&Value> = next["parts"]
            .as_array()
            .expect("parts")
            .iter()
            .filter_map(|p| p.get("functionResponse"))
            .collect();
        assert_eq!(responses.len(), calls.len(), "content {at}");
        for (call, response) in calls.iter().zip(responses) {
            assert_eq!(call["name"], response["name"]);
            assert_eq!(call.get("id"), response.get("id"));
            assert!(response["response"].is_object());
        }
    }
}

async fn parallel_bad_unknown_failing_then_fixed(streamed: bool) {
    let server = server(vec![
        reply(
            &Turn {
                text: "Checking.",
                calls: vec![
                    Call {
                        signature: Some("Q2lRQjFaMG9FYQ=="),
                        ..call("get_weather", json!({"city": "Oslo"}))
                    },
                    call("get_weather", json!({"town": "Rome"})),
                    call("get_wether", json!({})),
                    call("get_weather", json!({"city": "Atlantis"})),
                    Call { id: Some("fc-7"), ..call("local_time", json!({"zone": "Europe/Oslo"})) },
                ],
            },
            streamed,
        ),
        reply(&Turn { text: "", calls: vec![call("get_weather", json!({"city": "Rome"}))] }, streamed),
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
            ("gemini-call-0-get_weather".into(), Outcome::Success),
            ("gemini-call-1-get_weather".into(), Outcome::InvalidArguments),
            ("gemini-call-2-get_wether".into(), Outcome::NotFound),
            ("gemini-call-3-get_weather".into(), Outcome::Failed),
            ("fc-7".into(), Outcome::Success),
        ]
    );
    assert_eq!(outcomes(&messages[4]), [("gemini-call-0-get_weather".into(), Outcome::Success)]);
    assert_eq!((result.usage[0].input_tokens, result.usage[0].output_tokens), (30, 8));
    if streamed {
        assert_eq!(streamed_text(&events), "Checking.Oslo and Rome: 12°C.");
        // Each call arrives whole, in one delta.
        let deltas: Vec<(usize, Option<&str>, &str)> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::CallDelta { index, name, arguments, .. } => {
                    Some((*index, name.as_deref(), arguments.as_str()))
                }
                _ => None,
            })
            .take(2)
            .collect();
        assert_eq!(
            deltas,
            [(0, Some("get_weather"), r#"{"city":"Oslo"}"#), (1, Some("get_weather"), r#"{"town":"Rome"}"#)]
        );
    }

    // What Gemini received.
    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.headers.get("x-goog-api-key").and_then(|v| v.to_str().ok()), Some(KEY));
        let method = if streamed { "streamGenerateContent" } else { "generateContent" };
        assert_eq!(request.url.path(), format!("/v1beta/models/{MODEL}:{method}"));
        assert_eq!(request.url.query(), streamed.then_some("alt=sse"));
    }
    let bodies = bodies(&server).await;
    let first = &bodies[0];
    assert_eq!(first["systemInstruction"], json!({"parts": [{"text": "Answer briefly."}]}));
    assert_eq!(
        first["contents"],
        json!([{"role": "user", "parts": [{"text": "Weather in Oslo and Rome?"}]}])
    );
    let names: Vec<&Value> = first["tools"][0]["functionDeclarations"]
        .as_array()
        .expect("declarations")
        .iter()
        .map(|d| &d["name"])
        .collect();
    assert_eq!(names, ["get_weather", "local_time"]);
    assert_eq!(first["toolConfig"], json!({"functionCallingConfig": {"mode": "AUTO"}}));
    assert!(first.get("generationConfig").is_none());
    let second = bodies[1]["contents"].as_array().expect("contents");
    assert_eq!(second.len(), 3);
    assert_eq!(
        second[1],
        json!({"role": "model", "parts": [
            {"text": "Checking."},
            {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": "Q2lRQjFaMG9FYQ=="},
            {"functionCall": {"name": "get_weather", "args": {"town": "Rome"}}},
            {"functionCall": {"name": "get_wether", "args": {}}},
            {"functionCall": {"name": "get_weather", "args": {"city": "Atlantis"}}},
            {"functionCall": {"name": "local_time", "args": {"zone": "Europe/Oslo"}, "id": "fc-7"}},
        ]})
    );
    assert_eq!(
        second[2]["parts"][0],
        json!({"functionResponse": {"name": "get_weather", "response": {"content": "12°C in Oslo"}}})
    );
    assert_eq!(second[2]["parts"][4]["functionResponse"]["id"], "fc-7");
    let last = bodies[2]["contents"].as_array().expect("contents");
    assert_eq!(last.len(), 5);
    assert_every_call_answered(last);
    // The signature is still sent with its call two turns on.
    assert_eq!(last[1]["parts"][1]["thoughtSignature"], "Q2lRQjFaMG9FYQ==");
}

#[tokio::test]
async fn parallel_bad_unknown_and_failing_calls_then_a_fix() {
    parallel_bad_unknown_failing_then_fixed(false).await;
}

#[tokio::test]
async fn parallel_bad_unknown_and_failing_calls_then_a_fix_streamed() {
    parallel_bad_unknown_failing_then_fixed(true).await;
}

async fn budget_and_tool_config(streamed: bool) {
    let calls =
        vec![call("get_weather", json!({"city": "Oslo"})), call("get_weather", json!({"city": "Rome"}))];
    let server = server(vec![reply(&Turn { text: "", calls }, streamed)]).await;
    let agent = Agent::new(client(&server), tools())
        .unwrap()
        .with_limits(RunLimits::default().with_max_tool_calls(1))
        .with_tool_choice(ToolChoice::Tool("get_weather".into()))
        .with_max_tokens(300);
    let (result, _) = run(&agent, "Weather?", streamed).await;
    let result = result.expect("a budget stop is a result");
    assert!(matches!(result.stop, StopReason::Budget(_)), "{:?}", result.stop);
    assert_eq!(result.transcript.pending_calls().len(), 2);
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 1);
    assert_eq!(
        bodies[0]["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}})
    );
    assert_eq!(bodies[0]["generationConfig"], json!({"maxOutputTokens": 300}));
}

#[tokio::test]
async fn the_budget_stops_the_run_and_the_tool_config_is_sent() {
    budget_and_tool_config(false).await;
}

#[tokio::test]
async fn the_budget_stops_the_run_and_the_tool_config_is_sent_streamed() {
    budget_and_tool_config(true).await;
}

async fn max_turns(streamed: bool) {
    let server = server(vec![
        reply(&Turn { text: "", calls: vec![call("get_weather", json!({"city": "Oslo"}))] }, streamed),
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
    assert!(bodies[1].get("tools").is_none(), "{}", bodies[1]);
    assert!(bodies[1].get("toolConfig").is_none());
    let contents = bodies[1]["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 3);
    assert_every_call_answered(contents);
}

#[tokio::test]
async fn max_turns_ends_with_a_tool_less_request() {
    max_turns(false).await;
}

#[tokio::test]
async fn max_turns_ends_with_a_tool_less_request_streamed() {
    max_turns(true).await;
}

fn error(code: u16, status: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(code)
        .insert_header("retry-after", "0")
        .set_body_json(json!({"error": {"code": code, "message": message, "status": status}}))
}

async fn rate_limited_then_answered(streamed: bool) {
    let server = server(vec![
        error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
        reply(&text("Hello."), streamed),
    ])
    .await;
    let agent = Agent::new(client(&server).with_resend(fast_retry(2)), tools()).unwrap();
    let (result, _) = run(&agent, "Hi", streamed).await;
    assert_eq!(result.expect("answered on the second attempt").answer, "Hello.");
    assert_eq!(bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn a_429_is_retried() {
    rate_limited_then_answered(false).await;
}

#[tokio::test]
async fn a_429_is_retried_streamed() {
    rate_limited_then_answered(true).await;
}

async fn server_errors_exhaust_the_retries(streamed: bool) {
    let internal = || error(500, "INTERNAL", "An internal error has occurred.");
    let server = server(vec![internal(), internal()]).await;
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

async fn unauthorized(streamed: bool, refusal: ResponseTemplate) {
    let server = server(vec![refusal]).await;
    let model = client(&server);
    assert!(!format!("{model:?}").contains(KEY));
    let agent = Agent::new(model, tools()).unwrap();
    let (result, _) = run(&agent, "Hi", streamed).await;
    let error = result.expect_err("the key is refused");
    assert!(
        matches!(error.error, ModelError::Unauthorized { variable: "GEMINI_API_KEY", .. }),
        "{:?}",
        error.error
    );
    assert!(error.to_string().contains("GEMINI_API_KEY"), "{error}");
    for shown in
        [error.to_string(), format!("{error:?}"), error.error.to_string(), format!("{:?}", error.error)]
    {
        assert!(!shown.contains(KEY), "{shown}");
    }
}

#[tokio::test]
async fn a_401_names_the_variable_and_never_the_key() {
    unauthorized(false, error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."))
        .await;
}

#[tokio::test]
async fn a_401_names_the_variable_and_never_the_key_streamed() {
    unauthorized(true, error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."))
        .await;
}

#[tokio::test]
async fn geminis_400_for_a_bad_key_is_told_as_a_refused_key() {
    let body = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID", "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}]}});
    unauthorized(false, ResponseTemplate::new(400).set_body_json(body)).await;
}

#[tokio::test]
async fn a_stream_that_ends_early_keeps_the_run_so_far() {
    let server = server(vec![
        sse(chunks(&Turn { text: "", calls: vec![call("get_weather", json!({"city": "Oslo"}))] }, false)),
        sse(chunks(&text("It is 12°C"), true)),
    ])
    .await;
    let agent = Agent::new(client(&server), tools()).unwrap();
    let (result, events) = run(&agent, "Weather?", true).await;
    let error = result.expect_err("the stream was cut");
    assert!(matches!(error.error, ModelError::StreamEnded { .. }), "{:?}", error.error);
    assert!(error.to_string().contains("finishReason"), "{error}");
    assert_eq!(error.transcript.messages.len(), 3);
    assert!(
        matches!(&error.transcript.messages[2], Message::Tool { results } if results[0].name == "get_weather")
    );
    assert_eq!(streamed_text(&events), "It is 12°C");
}

#[tokio::test]
async fn a_character_split_across_network_chunks_arrives_whole() {
    let body = chunks(&text("12°C in Oslo"), false).into_bytes();
    let degree = body.windows(2).position(|pair| pair == [0xC2, 0xB0]).expect("a degree sign") + 1;
    let pieces = vec![body[..degree].to_vec(), body[degree..].to_vec()];
    let base = serve_chunks(pieces);
    let model =
        Gemini::new(MODEL).with_base_url(base).with_api_key(ApiKey::new(KEY)).with_resend(fast_retry(1));
    let agent = Agent::new(model, tools()).unwrap();
    let (result, events) = run(&agent, "Weather?", true).await;
    assert_eq!(result.expect("answered").answer, "12°C in Oslo");
    assert_eq!(streamed_text(&events), "12°C in Oslo");
}
