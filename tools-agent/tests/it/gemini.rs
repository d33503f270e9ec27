//! `Gemini`: its mock for the scenarios (`scenarios.rs`), and what only
//! Gemini does (thought signatures, id-less calls, its URL, a bad key told
//! with a 400), against a mock on loopback, plain and streamed, driving a
//! real agent. The response bodies are shaped as the
//! documentation shows them: <https://ai.google.dev/api/generate-content>
//! (`GenerateContentResponse`, and the stream of them),
//! <https://ai.google.dev/gemini-api/docs/function-calling> (`functionCall`
//! and `functionResponse` parts), <https://ai.google.dev/gemini-api/docs/thought-signatures>
//! (`thoughtSignature`) and <https://ai.google.dev/gemini-api/docs/troubleshooting>
//! (error bodies).

use serde_json::{Value, json};
use toolcall_agent::{Agent, AgentEvent, ApiKey, Gemini, Message, ModelError, StopReason, Usage};
use toolcall_core::Outcome;
use wiremock::matchers::method;
use wiremock::{MockServer, Request, ResponseTemplate};

use crate::scenarios::{self, Item, ProviderMock, Sent, SentCall, SentResult};
use crate::support::ag::{self, sse, streamed_text, tools};
use crate::support::openai::{Script, Turn, fast_retry, run};

const KEY: &str = "AIzaSy-test-7d2b0c";
const MODEL: &str = "gemini-2.5-flash";

/// One model turn: its text and its `functionCall` parts (name, args, id,
/// thought signature).
struct Reply {
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

fn text(text: &'static str) -> Reply {
    Reply { text, calls: Vec::new() }
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
        chunk["usageMetadata"] = json!({"promptTokenCount": 30, "candidatesTokenCount": 5, "thoughtsTokenCount": 3,
                "cachedContentTokenCount": 24, "totalTokenCount": 38});
    } else {
        chunk["candidates"][0] = json!({"content": chunk["candidates"][0]["content"].take(), "index": 0});
    }
    chunk
}

/// Text and call parts as one `GenerateContentResponse`.
fn whole(text: &str, calls: Vec<Value>) -> Value {
    let mut parts = Vec::new();
    if !text.is_empty() {
        parts.push(json!({"text": text}));
    }
    parts.extend(calls);
    response(parts, true)
}

/// Text and call parts as a stream of responses: the text in two chunks,
/// each call in a chunk of its own, the `finishReason` on the last unless
/// `cut`.
fn chunks(text: &str, calls: Vec<Value>, cut: bool) -> String {
    let mut pieces: Vec<Vec<Value>> = Vec::new();
    if !text.is_empty() {
        let middle = text.char_indices().nth(text.chars().count() / 2).map_or(0, |(i, _)| i);
        pieces.push(vec![json!({"text": &text[..middle]})]);
        pieces.push(vec![json!({"text": &text[middle..]})]);
    }
    pieces.extend(calls.into_iter().map(|call| vec![call]));
    let count = pieces.len();
    pieces
        .into_iter()
        .enumerate()
        .map(|(at, parts)| format!("data: {}\r\n\r\n", response(parts, !cut && at + 1 == count)))
        .collect()
}

fn reply(turn: &Reply, streamed: bool) -> ResponseTemplate {
    let calls = turn.calls.iter().map(call_part).collect();
    if streamed {
        sse(chunks(turn.text, calls, false))
    } else {
        ResponseTemplate::new(200).set_body_json(whole(turn.text, calls))
    }
}

async fn server(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    wiremock::Mock::given(method("POST")).respond_with(Script::new(responses)).mount(&server).await;
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
            &Reply {
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
        reply(&Reply { text: "", calls: vec![call("get_weather", json!({"city": "Rome"}))] }, streamed),
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
    assert_eq!((result.usage[0].input_tokens, result.usage[0].output_tokens), (Some(30), Some(8)));
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

/// The call parts of a shared scenario turn, which carry no id (Gemini's
/// client makes one).
fn call_parts(turn: &Turn) -> Vec<Value> {
    turn.calls
        .iter()
        .map(|(_, name, arguments)| {
            let args: Value = serde_json::from_str(arguments).expect("JSON arguments");
            json!({"functionCall": {"name": name, "args": args}})
        })
        .collect()
}

/// The Gemini API, for the scenarios.
pub(crate) struct Mock;

impl ProviderMock for Mock {
    type Client = Gemini;
    const NAME: &'static str = "gemini";
    const KEY: &'static str = KEY;
    const KEY_VARIABLE: &'static str = "GEMINI_API_KEY";
    // Thinking counts as output, as Gemini bills it.
    const USAGE: Usage = Usage {
        input_tokens: Some(30),
        output_tokens: Some(5 + 3),
        cache_read_tokens: Some(24),
        cache_write_tokens: None,
        reasoning_tokens: Some(3),
    };
    const STREAM_END: &'static str = "finishReason";
    const TRUNCATED: (&'static [(&'static str, &'static str)], &'static str) =
        (&[(r#""finishReason":"STOP""#, r#""finishReason":"MAX_TOKENS""#)], "MAX_TOKENS");
    const REFUSED: (&'static [(&'static str, &'static str)], &'static str) =
        (&[(r#""finishReason":"STOP""#, r#""finishReason":"SAFETY""#)], "SAFETY");

    fn client(root: &str, key: Option<ApiKey>, attempts: u32) -> Gemini {
        Gemini::from_values(MODEL, key, Some(root)).with_resend(fast_retry(attempts))
    }

    fn path(streamed: bool) -> String {
        if streamed {
            format!("/v1beta/models/{MODEL}:streamGenerateContent?alt=sse")
        } else {
            format!("/v1beta/models/{MODEL}:generateContent")
        }
    }

    fn body(turn: &Turn) -> Value {
        whole(&turn.text, call_parts(turn))
    }

    fn stream(turn: &Turn, cut: bool) -> String {
        chunks(&turn.text, call_parts(turn), cut)
    }

    fn error(status: u16, message: &str) -> ResponseTemplate {
        let kind = match status {
            400 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            429 => "RESOURCE_EXHAUSTED",
            503 => "UNAVAILABLE",
            _ => "INTERNAL",
        };
        error(status, kind, message)
    }

    /// Each call arrives whole, in one delta.
    fn pieces(arguments: &str) -> Vec<String> {
        vec![arguments.to_owned()]
    }

    fn call_id(index: usize, _id: &str, name: &str) -> String {
        format!("gemini-call-{index}-{name}")
    }

    fn key_sent(request: &Request) -> Option<String> {
        request.headers.get("x-goog-api-key").map(|value| value.to_str().unwrap().to_owned())
    }

    fn streamed(request: &Request) -> bool {
        request.url.path().ends_with(":streamGenerateContent")
    }

    fn read(body: &Value) -> Sent {
        let mut sent = Sent {
            system: body["systemInstruction"]["parts"][0]["text"].as_str().map(str::to_owned),
            tools: body["tools"][0]["functionDeclarations"].as_array().map_or_else(Vec::new, |tools| {
                tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
            }),
            tool_choice: body.get("toolConfig").cloned(),
            ..Sent::default()
        };
        for content in body["contents"].as_array().unwrap() {
            let parts = content["parts"].as_array().unwrap();
            let key = |call: &Value| call.get("id").unwrap_or(&call["name"]).as_str().unwrap().to_owned();
            if parts.iter().any(|part| part.get("functionResponse").is_some()) {
                let results = parts
                    .iter()
                    .map(|part| {
                        let response = &part["functionResponse"];
                        assert!(response["response"].is_object(), "{response}");
                        let content = match response["response"]["content"].as_str() {
                            Some(text) => text.to_owned(),
                            None => response["response"].to_string(),
                        };
                        SentResult { key: key(response), content }
                    })
                    .collect();
                sent.messages.push(Item::Results(results));
                continue;
            }
            let text: String = parts.iter().filter_map(|part| part["text"].as_str()).collect();
            if content["role"] == "user" {
                sent.messages.push(Item::User(text));
                continue;
            }
            let calls = parts
                .iter()
                .filter_map(|part| part.get("functionCall"))
                .map(|call| SentCall {
                    key: key(call),
                    name: call["name"].as_str().unwrap().into(),
                    args: call["args"].clone(),
                })
                .collect();
            sent.messages.push(Item::Assistant { text, calls });
        }
        sent
    }
}

#[tokio::test]
async fn the_tool_config_and_token_limit_are_sent() {
    for streamed in [false, true] {
        let requests =
            scenarios::the_budget_stops_the_run_before_the_calls::<Mock>(streamed, std::convert::identity)
                .await;
        let bodies = scenarios::bodies(&requests);
        assert_eq!(
            bodies[0]["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}})
        );
        assert_eq!(bodies[0]["generationConfig"], json!({"maxOutputTokens": 300}));
    }
}

fn error(code: u16, status: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(code)
        .insert_header("retry-after", "0")
        .set_body_json(json!({"error": {"code": code, "message": message, "status": status}}))
}

#[tokio::test]
async fn geminis_400_for_a_bad_key_is_told_as_a_refused_key() {
    let body = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID", "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}]}});
    let server = scenarios::mock(vec![ResponseTemplate::new(400).set_body_json(body)]).await;
    let (result, _) = run(&Agent::new(client(&server), tools()).unwrap(), "Hi", false).await;
    let error = result.expect_err("the key is refused");
    assert!(
        matches!(error.error, ModelError::Unauthorized { variable: "GEMINI_API_KEY", .. }),
        "{:?}",
        error.error
    );
    assert!(error.to_string().contains("GEMINI_API_KEY"), "{error}");
    scenarios::assert_no_key::<Mock>(&error);
}
