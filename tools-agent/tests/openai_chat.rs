//! `OpenAiChat` against a mock Chat Completions server, driving a real
//! `Agent`, plainly and streamed; every assertion also reads what the mock
//! received.
//!
//! The bodies are shaped as OpenAI documents them:
//! - the response object: <https://platform.openai.com/docs/api-reference/chat/object>
//!   (from <https://platform.openai.com/docs/api-reference/chat/create>);
//! - the chunk object: <https://platform.openai.com/docs/api-reference/chat-streaming/streaming>
//!   (`chat.completion.chunk`, then the usage chunk with empty `choices`
//!   that `stream_options.include_usage` adds, then `data: [DONE]`);
//! - the error object: <https://platform.openai.com/docs/guides/error-codes>.

#[path = "support/openai.rs"]
mod support;

use serde_json::{Value, json};
use support::{KEY, Turn, base, bodies, fast_retry, key, mock, run, sse, tools};
use tools_agent::{
    Agent, AgentEvent, ApiKey, LimitExceeded, Message, ModelError, OpenAiChat, RunLimits, StopReason,
    ToolChoice,
};
use tools_core::Outcome;
use wiremock::ResponseTemplate;

const ROUTE: &str = "chat/completions";

/// A `chat.completion` object for one turn.
fn completion(turn: &Turn) -> Value {
    let tool_calls: Vec<Value> = turn
        .calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    let mut message = json!({
        "role": "assistant",
        "content": if turn.text.is_empty() { Value::Null } else { json!(turn.text) },
        "refusal": null,
        "annotations": []
    });
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    json!({
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "gpt-4o-2024-08-06",
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": if tool_calls.is_empty() { "stop" } else { "tool_calls" }
        }],
        "usage": {
            "prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
        },
        "service_tier": "default",
        "system_fingerprint": "fp_fc9f1d7035"
    })
}

/// One `chat.completion.chunk` with this delta and finish reason.
fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1694268190,
        "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "service_tier": "default",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        "usage": null
    })
    .to_string()
}

/// The usage chunk that `include_usage` adds before `[DONE]`.
fn usage_chunk() -> String {
    json!({
        "id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1694268190,
        "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices": [],
        "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}
    })
    .to_string()
}

/// A tool call piece: the first carries id, type and name.
fn call_piece(index: usize, head: Option<(&str, &str)>, arguments: &str) -> Value {
    match head {
        Some((id, name)) => json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                   "function": {"name": name, "arguments": arguments}}]}),
        None => json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}),
    }
}

/// The data of each event of one streamed turn: the role, the text in two
/// pieces, each call's head then its arguments in two pieces (cut inside a
/// string), the finish, the usage, `[DONE]`.
fn chunks(turn: &Turn) -> Vec<String> {
    let mut out = vec![chunk(json!({"role": "assistant", "content": "", "refusal": null}), None)];
    if !turn.text.is_empty() {
        let cut = turn.text.char_indices().nth(turn.text.chars().count() / 2).map_or(0, |(i, _)| i);
        out.push(chunk(json!({"content": &turn.text[..cut]}), None));
        out.push(chunk(json!({"content": &turn.text[cut..]}), None));
    }
    for (index, (id, name, arguments)) in turn.calls.iter().enumerate() {
        let cut = arguments.char_indices().nth(arguments.chars().count() * 2 / 3).map_or(0, |(i, _)| i);
        out.push(chunk(call_piece(index, Some((id, name)), ""), None));
        out.push(chunk(call_piece(index, None, &arguments[..cut]), None));
        out.push(chunk(call_piece(index, None, &arguments[cut..]), None));
    }
    let finish = if turn.calls.is_empty() { "stop" } else { "tool_calls" };
    out.push(chunk(json!({}), Some(finish)));
    out.push(usage_chunk());
    out.push("[DONE]".into());
    out
}

fn reply(turn: &Turn, streamed: bool) -> ResponseTemplate {
    if streamed {
        let events: Vec<_> = chunks(turn).into_iter().map(|data| (None, data)).collect();
        sse(&events)
    } else {
        ResponseTemplate::new(200).set_body_json(completion(turn))
    }
}

fn client(base: &str) -> OpenAiChat {
    OpenAiChat::from_values("gpt-4o", key(), Some(base)).with_resend(fast_retry(2))
}

fn agent(base: &str) -> Agent {
    Agent::new(client(base), tools()).unwrap().with_instructions("Be brief.")
}

/// The `(role, tool_call_id or call ids)` of each message sent.
fn shape(body: &Value) -> Vec<(String, Vec<String>)> {
    let messages = body["messages"].as_array().unwrap();
    messages
        .iter()
        .map(|message| {
            let role = message["role"].as_str().unwrap().to_owned();
            let ids = match role.as_str() {
                "assistant" => message["tool_calls"]
                    .as_array()
                    .map(|calls| calls.iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect())
                    .unwrap_or_default(),
                "tool" => vec![message["tool_call_id"].as_str().unwrap().to_owned()],
                _ => Vec::new(),
            };
            (role, ids)
        })
        .collect()
}

fn s(role: &str, ids: &[&str]) -> (String, Vec<String>) {
    (role.into(), ids.iter().map(|id| (*id).to_owned()).collect())
}

fn outcomes(message: &Message) -> Vec<(String, Outcome)> {
    match message {
        Message::Tool { results } => results.iter().map(|r| (r.id.to_string(), r.outcome)).collect(),
        other => panic!("expected tool results, got {other:?}"),
    }
}

#[tokio::test]
async fn parallel_calls_an_unknown_tool_and_a_failing_one_reach_the_model() {
    for streamed in [false, true] {
        let first = Turn::calls(&[
            ("call_a", "get_weather", r#"{"city":"Oslo"}"#),
            ("call_b", "get_wether", r#"{"city":"Rome"}"#),
            ("call_c", "get_weather", r#"{"city":"Atlantis"}"#),
        ]);
        let server =
            mock(ROUTE, vec![reply(&first, streamed), reply(&Turn::text("Oslo: 12°C."), streamed)]).await;
        let (result, _) = run(&agent(&base(&server)), "Weather?", streamed).await;
        let result = result.unwrap();
        assert_eq!((result.answer.as_str(), &result.stop), ("Oslo: 12°C.", &StopReason::Answered));
        assert_eq!(
            outcomes(&result.transcript.messages[2]),
            [
                ("call_a".into(), Outcome::Success),
                ("call_b".into(), Outcome::NotFound),
                ("call_c".into(), Outcome::Failed)
            ]
        );
        assert_eq!(result.usage[0].input_tokens, 19);
        assert_eq!(result.usage[1].output_tokens, 10);

        let sent = bodies(&server).await;
        assert_eq!(sent.len(), 2);
        for body in &sent {
            assert_eq!(body["model"], "gpt-4o");
            assert_eq!(body["tool_choice"], "auto");
            assert_eq!(body.get("parallel_tool_calls"), None);
            let tools = body["tools"].as_array().unwrap();
            assert_eq!(tools.len(), 2);
            assert_eq!(tools[0]["type"], "function");
            assert_eq!(tools[0]["function"]["name"], "get_weather");
            assert_eq!(tools[0]["function"]["parameters"]["properties"]["city"]["type"], "string");
            assert_eq!(tools[1]["function"]["name"], "get_time");
            if streamed {
                assert_eq!(
                    (&body["stream"], &body["stream_options"]),
                    (&json!(true), &json!({"include_usage": true}))
                );
            } else {
                assert_eq!(body.get("stream"), None);
            }
        }
        assert_eq!(
            sent[0]["messages"],
            json!([
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather?"}
            ])
        );
        // Each call id is answered by a tool message with the same id, in order.
        assert_eq!(
            shape(&sent[1]),
            [
                s("system", &[]),
                s("user", &[]),
                s("assistant", &["call_a", "call_b", "call_c"]),
                s("tool", &["call_a"]),
                s("tool", &["call_b"]),
                s("tool", &["call_c"]),
            ]
        );
        let messages = &sent[1]["messages"];
        assert_eq!(messages[2]["content"], Value::Null);
        assert_eq!(
            messages[2]["tool_calls"][0],
            json!({"id": "call_a", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}})
        );
        assert_eq!(messages[3]["content"], "12°C in Oslo");
        assert!(messages[4]["content"].as_str().unwrap().contains("get_weather"), "{}", messages[4]);
        assert!(messages[5]["content"].as_str().unwrap().contains("no station there"), "{}", messages[5]);
        let auth = support::authorizations(&server).await;
        assert_eq!(auth, [Some(format!("Bearer {KEY}")), Some(format!("Bearer {KEY}"))]);
    }
}

#[tokio::test]
async fn bad_arguments_are_fixed_in_the_next_turn() {
    for streamed in [false, true] {
        let script = vec![
            reply(&Turn::calls(&[("call_x", "get_weather", r#"{"town":"Rome"}"#)]), streamed),
            reply(&Turn::calls(&[("call_y", "get_weather", r#"{"city":"Rome"}"#)]), streamed),
            reply(&Turn::text("Rome: 12°C."), streamed),
        ];
        let server = mock(ROUTE, script).await;
        let (result, _) = run(&agent(&base(&server)), "Rome?", streamed).await;
        let result = result.unwrap();
        assert_eq!(result.answer, "Rome: 12°C.");
        assert_eq!(outcomes(&result.transcript.messages[2]), [("call_x".into(), Outcome::InvalidArguments)]);
        assert_eq!(outcomes(&result.transcript.messages[4]), [("call_y".into(), Outcome::Success)]);
        let sent = bodies(&server).await;
        assert_eq!(sent.len(), 3);
        let fix = &sent[1]["messages"][3];
        assert_eq!(fix["tool_call_id"], "call_x");
        assert!(fix["content"].as_str().unwrap().contains("city"), "{fix}");
        assert_eq!(shape(&sent[2])[4..], [s("assistant", &["call_y"]), s("tool", &["call_y"])]);
        assert_eq!(sent[2]["messages"][5]["content"], "12°C in Rome");
    }
}

#[tokio::test]
async fn the_budget_stops_the_run_before_the_calls() {
    for streamed in [false, true] {
        let calls =
            Turn::calls(&[("c1", "get_time", r#"{"zone":"UTC"}"#), ("c2", "get_time", r#"{"zone":"CET"}"#)]);
        let server = mock(ROUTE, vec![reply(&calls, streamed)]).await;
        let agent = agent(&base(&server)).with_limits(RunLimits::default().with_max_tool_calls(1));
        let (result, _) = run(&agent, "Time?", streamed).await;
        let result = result.unwrap();
        assert_eq!(result.stop, StopReason::Budget(LimitExceeded::ToolCalls { limit: 1, requested: 2 }));
        assert_eq!(result.transcript.pending_calls().len(), 2);
        assert_eq!(bodies(&server).await.len(), 1);
    }
}

#[tokio::test]
async fn max_turns_ends_with_a_request_without_tools() {
    for streamed in [false, true] {
        let script = vec![
            reply(&Turn::calls(&[("c1", "get_weather", r#"{"city":"Oslo"}"#)]), streamed),
            reply(&Turn::text("Oslo is mild."), streamed),
        ];
        let server = mock(ROUTE, script).await;
        let agent = agent(&base(&server))
            .with_max_turns(1)
            .with_tool_choice(ToolChoice::Tool("get_weather".into()))
            .with_parallel_tool_calls(false)
            .with_max_tokens(300);
        let (result, _) = run(&agent, "Oslo?", streamed).await;
        let result = result.unwrap();
        assert_eq!(
            (result.answer.as_str(), &result.stop),
            ("Oslo is mild.", &StopReason::MaxTurns { turns: 1 })
        );
        let sent = bodies(&server).await;
        assert_eq!(sent[0]["tool_choice"], json!({"type": "function", "function": {"name": "get_weather"}}));
        assert_eq!(sent[0]["parallel_tool_calls"], false);
        assert_eq!(sent[0]["max_completion_tokens"], 300);
        // The last request: no tools, so no choice or parallelism either;
        // the turn's call and its answer are still in the messages.
        for field in ["tools", "tool_choice", "parallel_tool_calls"] {
            assert_eq!(sent[1].get(field), None, "{field} in {}", sent[1]);
        }
        assert_eq!(sent[1]["max_completion_tokens"], 300);
        assert_eq!(shape(&sent[1])[2..], [s("assistant", &["c1"]), s("tool", &["c1"])]);
    }
}

#[tokio::test]
async fn a_rate_limit_with_retry_after_is_retried() {
    for streamed in [false, true] {
        let limited = ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}));
        let server = mock(ROUTE, vec![limited, reply(&Turn::text("Hello."), streamed)]).await;
        let (result, _) = run(&agent(&base(&server)), "Hi", streamed).await;
        assert_eq!(result.unwrap().answer, "Hello.");
        let sent = bodies(&server).await;
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0], sent[1]);
    }
}

#[tokio::test]
async fn server_errors_exhaust_the_retries() {
    for streamed in [false, true] {
        let failed = || {
            ResponseTemplate::new(500).set_body_json(json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error", "param": null, "code": null}}))
        };
        let server = mock(ROUTE, vec![failed(), failed(), reply(&Turn::text("never"), streamed)]).await;
        let (result, _) = run(&agent(&base(&server)), "Hi", streamed).await;
        let error = result.unwrap_err();
        assert!(
            matches!(&error.error, ModelError::Server { status: 500, attempts: 2, excerpt, .. } if excerpt.contains("server had an error")),
            "{error:?}"
        );
        assert_eq!(error.transcript.messages, [Message::user("Hi")]);
        assert_eq!(bodies(&server).await.len(), 2);
    }
}

#[tokio::test]
async fn a_refused_key_names_the_variable_and_never_shows() {
    for streamed in [false, true] {
        let refused = ResponseTemplate::new(401).set_body_json(json!({"error": {
            "message": format!("Incorrect API key provided: {KEY}. You can find your API key at https://platform.openai.com/account/api-keys."),
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}));
        let server = mock(ROUTE, vec![refused]).await;
        let (result, _) = run(&agent(&base(&server)), "Hi", streamed).await;
        let error = result.unwrap_err();
        assert_eq!(
            error.error,
            ModelError::Unauthorized { provider: "openai".into(), status: 401, variable: "OPENAI_API_KEY" }
        );
        assert!(error.to_string().contains("OPENAI_API_KEY"), "{error}");
        support::assert_no_key(&error, &error.to_string());
        support::assert_no_key(&error.error, &error.error.to_string());
        assert_eq!(bodies(&server).await.len(), 1, "a refused key is not retried");
    }
}

#[tokio::test]
async fn a_keyless_local_server_gets_no_authorization_header() {
    for streamed in [false, true] {
        let server = mock(ROUTE, vec![reply(&Turn::text("Hi from llama."), streamed)]).await;
        let local = OpenAiChat::from_values("llama3.2", None, Some(&base(&server)));
        let (result, _) = run(&Agent::new(local, tools()).unwrap(), "Hi", streamed).await;
        assert_eq!(result.unwrap().answer, "Hi from llama.");
        assert_eq!(support::authorizations(&server).await, [None]);
    }
}

#[tokio::test]
async fn the_key_is_given_explicitly_and_never_debugged() {
    let model =
        OpenAiChat::from_values("gpt-4o", None, None).with_api_key(ApiKey::new(KEY)).with_strict(true);
    let debug = format!("{model:?}");
    assert!(debug.contains("gpt-4o") && debug.contains("https://api.openai.com/v1"), "{debug}");
    assert!(!debug.contains(KEY), "{debug}");
    // Without a key, OpenAI itself is not even asked.
    let keyless = OpenAiChat::from_values("gpt-4o", None, None);
    let error = Agent::new(keyless, tools()).unwrap().run("Hi").await.unwrap_err();
    assert!(matches!(&error.error, ModelError::MissingKey { variable: "OPENAI_API_KEY", .. }), "{error}");
}

#[tokio::test]
async fn strict_mode_sends_strict_functions() {
    let server = mock(ROUTE, vec![reply(&Turn::text("ok"), false)]).await;
    let model = client(&base(&server)).with_strict(true);
    Agent::new(model, tools()).unwrap().run("Hi").await.unwrap();
    let sent = bodies(&server).await;
    let function = &sent[0]["tools"][0]["function"];
    assert_eq!(function["strict"], true);
    assert_eq!(function["parameters"]["additionalProperties"], false);
}

/// Network chunks cut inside a multi-byte character, and an argument cut
/// inside its string value: nothing is lost or doubled.
#[tokio::test]
async fn split_arguments_and_split_characters_assemble() {
    let first = [
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(call_piece(0, Some(("call_z", "get_weather")), ""), None),
        chunk(call_piece(0, None, "{\"city\":\"Zü"), None),
        chunk(call_piece(0, None, "rich\"}"), None),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(),
        "[DONE]".into(),
    ];
    let second = [
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "Il fait 12°C à Zürich"}), None),
        chunk(json!({"content": " — 晴れ。"}), None),
        chunk(json!({}), Some("stop")),
        usage_chunk(),
        "[DONE]".into(),
    ];
    let first = support::sse_text(&first.map(|data| (None, data)));
    let second = support::sse_text(&second.map(|data| (None, data)));
    // Byte offsets inside "ü" (2 bytes), "°" (2 bytes) and "晴" (3 bytes).
    let cut_in = |text: &str, needle: &str| text.find(needle).unwrap() + 1;
    let first_cuts = [cut_in(&first, "ü"), cut_in(&first, "rich")];
    let second_cuts =
        [cut_in(&second, "°"), cut_in(&second, "à"), cut_in(&second, "晴"), cut_in(&second, "晴") + 1];
    let server = support::ChunkedServer::start(vec![
        support::split_at(&first, &first_cuts),
        support::split_at(&second, &second_cuts),
    ]);
    let agent = Agent::new(OpenAiChat::from_values("gpt-4o", key(), Some(&server.base)), tools()).unwrap();
    let (result, events) = run(&agent, "Zürich?", true).await;
    let result = result.unwrap();
    assert_eq!(result.answer, "Il fait 12°C à Zürich — 晴れ。");
    assert_eq!(
        result.transcript.messages[1],
        Message::Assistant {
            text: String::new(),
            calls: vec![tools_core::ToolCall::new("call_z", "get_weather", r#"{"city":"Zürich"}"#)]
        }
    );
    assert_eq!(outcomes(&result.transcript.messages[2]), [("call_z".into(), Outcome::Success)]);
    assert_eq!(
        support::streamed_arguments(&events),
        [(0, String::new()), (0, "{\"city\":\"Zü".into()), (0, "rich\"}".into())]
    );
    let text: String = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, result.answer);
    let sent = server.bodies();
    assert_eq!(sent[1]["messages"][2]["content"], "12°C in Zürich");
    assert_eq!(sent[1]["messages"][2]["tool_call_id"], "call_z");
}

#[tokio::test]
async fn interleaved_streamed_calls_assemble_by_index() {
    let first: Vec<_> = [
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(call_piece(0, Some(("call_w", "get_weather")), ""), None),
        chunk(call_piece(1, Some(("call_t", "get_time")), "{\"zo"), None),
        chunk(call_piece(0, None, "{\"city\":"), None),
        chunk(call_piece(1, None, "ne\":\"UTC\"}"), None),
        chunk(call_piece(0, None, "\"Lima\"}"), None),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(),
        "[DONE]".into(),
    ]
    .into_iter()
    .map(|data| (None, data))
    .collect();
    let server = mock(ROUTE, vec![sse(&first), reply(&Turn::text("Lima 12°C, 12:00 UTC."), true)]).await;
    let (result, events) = run(&agent(&base(&server)), "Lima?", true).await;
    let result = result.unwrap();
    assert_eq!(
        outcomes(&result.transcript.messages[2]),
        [("call_w".into(), Outcome::Success), ("call_t".into(), Outcome::Success)]
    );
    let arguments = support::streamed_arguments(&events);
    assert_eq!(arguments.iter().filter(|(index, _)| *index == 1).count(), 2);
    let sent = bodies(&server).await;
    assert_eq!(
        shape(&sent[1])[2..],
        [s("assistant", &["call_w", "call_t"]), s("tool", &["call_w"]), s("tool", &["call_t"])]
    );
    assert_eq!(sent[1]["messages"][2]["tool_calls"][1]["function"]["arguments"], "{\"zone\":\"UTC\"}");
    assert_eq!(sent[1]["messages"][3]["content"], "12°C in Lima");
    assert_eq!(sent[1]["messages"][4]["content"], "12:00 in UTC");
}

#[tokio::test]
async fn a_stream_that_ends_early_keeps_the_partial_run() {
    let first = Turn::calls(&[("call_1", "get_time", r#"{"zone":"UTC"}"#)]);
    let cut: Vec<_> =
        chunks(&Turn::text("It is noon."))[..3].iter().map(|data| (None, data.clone())).collect();
    let server = mock(ROUTE, vec![reply(&first, true), sse(&cut)]).await;
    let (result, events) = run(&agent(&base(&server)), "Time?", true).await;
    let error = result.unwrap_err();
    assert!(
        matches!(&error.error, ModelError::StreamEnded { message, .. } if message.contains("[DONE]")),
        "{error}"
    );
    let messages = &error.transcript.messages;
    assert_eq!(messages.len(), 3);
    assert_eq!(outcomes(&messages[2]), [("call_1".into(), Outcome::Success)]);
    assert!(events.iter().any(|event| matches!(event, AgentEvent::TextDelta(_))));
    assert_eq!(bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn done_without_a_finish_reason_and_a_chunk_that_is_not_json_are_errors() {
    let unfinished = vec![(None, chunk(json!({"content": "Hel"}), None)), (None, "[DONE]".to_owned())];
    let broken = vec![(None, chunk(json!({"content": "Hel"}), None)), (None, "{\"choices\": [".to_owned())];
    let server = mock(ROUTE, vec![sse(&unfinished), sse(&broken)]).await;
    let agent = agent(&base(&server));
    let (result, _) = run(&agent, "Hi", true).await;
    assert!(matches!(result.unwrap_err().error, ModelError::StreamEnded { .. }));
    let (result, _) = run(&agent, "Hi", true).await;
    let error = result.unwrap_err().error;
    assert!(
        matches!(&error, ModelError::Malformed { excerpt, .. } if excerpt.contains("choices")),
        "{error}"
    );
}
