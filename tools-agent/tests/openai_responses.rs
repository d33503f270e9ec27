//! `OpenAiResponses` against a mock Responses server, driving a real
//! `Agent`, plainly and streamed; every assertion also reads what the mock
//! received.
//!
//! The bodies are shaped as OpenAI documents them:
//! - the response object: <https://platform.openai.com/docs/api-reference/responses/object>
//!   (from <https://platform.openai.com/docs/api-reference/responses/create>);
//! - the streaming events: <https://platform.openai.com/docs/api-reference/responses-streaming>
//!   (`response.created`, `response.output_item.added`,
//!   `response.output_text.delta`, `response.function_call_arguments.delta`,
//!   `response.output_item.done`, `response.completed`, `response.failed`, `error`);
//! - the error object: <https://platform.openai.com/docs/guides/error-codes>.

#[path = "support/openai.rs"]
mod support;

use serde_json::{Value, json};
use support::{KEY, Turn, base, bodies, fast_retry, key, mock, run, sse, tools};
use tools_agent::{
    Agent, AgentEvent, LimitExceeded, Message, ModelError, OpenAiResponses, RunLimits, StopReason, ToolChoice,
};
use tools_core::Outcome;
use tools_core::toolset::WebSearch;
use wiremock::ResponseTemplate;

const ROUTE: &str = "responses";

fn message_item(text: &str) -> Value {
    json!({"type": "message", "id": "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c8e9a5f2", "status": "completed",
           "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn call_item(id: &str, name: &str, arguments: &str) -> Value {
    json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name,
           "arguments": arguments, "status": "completed"})
}

/// A `response` object for one turn.
fn response(turn: &Turn, status: &str) -> Value {
    let mut output = Vec::new();
    if !turn.text.is_empty() {
        output.push(message_item(&turn.text));
    }
    output.extend(turn.calls.iter().map(|(id, name, arguments)| call_item(id, name, arguments)));
    let done = status == "completed";
    json!({
        "id": "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c8e9a5f2",
        "object": "response",
        "created_at": 1741476777,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "instructions": "Be brief.",
        "max_output_tokens": null,
        "model": "gpt-4.1-2025-04-14",
        "output": if done { json!(output) } else { json!([]) },
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "reasoning": {"effort": null, "summary": null},
        "store": false,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": if done { json!({"input_tokens": 36, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 87, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 123}) } else { Value::Null },
        "user": null,
        "metadata": {}
    })
}

/// One named event, with its `type` and `sequence_number`.
fn event(kind: &'static str, mut data: Value, sequence: &mut u64) -> (Option<&'static str>, String) {
    data["type"] = json!(kind);
    data["sequence_number"] = json!(*sequence);
    *sequence += 1;
    (Some(kind), data.to_string())
}

/// The events of one streamed turn: created, the text in two deltas, each
/// call added then its arguments in two deltas (cut inside a string),
/// the items done, completed.
fn events(turn: &Turn) -> Vec<(Option<&'static str>, String)> {
    let mut n = 0;
    let mut out = vec![event("response.created", json!({"response": response(turn, "in_progress")}), &mut n)];
    let mut index = 0;
    if !turn.text.is_empty() {
        let mut added = message_item("");
        added["content"] = json!([]);
        added["status"] = json!("in_progress");
        out.push(event("response.output_item.added", json!({"output_index": 0, "item": added}), &mut n));
        let cut = turn.text.char_indices().nth(turn.text.chars().count() / 2).map_or(0, |(i, _)| i);
        for piece in [&turn.text[..cut], &turn.text[cut..]] {
            let delta = json!({"item_id": "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c8e9a5f2", "output_index": 0,
                               "content_index": 0, "delta": piece, "logprobs": []});
            out.push(event("response.output_text.delta", delta, &mut n));
        }
        out.push(event(
            "response.output_item.done",
            json!({"output_index": 0, "item": message_item(&turn.text)}),
            &mut n,
        ));
        index += 1;
    }
    for (id, name, arguments) in &turn.calls {
        let mut added = call_item(id, name, "");
        added["status"] = json!("in_progress");
        out.push(event("response.output_item.added", json!({"output_index": index, "item": added}), &mut n));
        let cut = arguments.char_indices().nth(arguments.chars().count() * 2 / 3).map_or(0, |(i, _)| i);
        for piece in [&arguments[..cut], &arguments[cut..]] {
            let delta = json!({"item_id": format!("fc_{id}"), "output_index": index, "delta": piece});
            out.push(event("response.function_call_arguments.delta", delta, &mut n));
        }
        let done = json!({"item_id": format!("fc_{id}"), "output_index": index, "arguments": arguments});
        out.push(event("response.function_call_arguments.done", done, &mut n));
        out.push(event(
            "response.output_item.done",
            json!({"output_index": index, "item": call_item(id, name, arguments)}),
            &mut n,
        ));
        index += 1;
    }
    out.push(event("response.completed", json!({"response": response(turn, "completed")}), &mut n));
    out
}

fn reply(turn: &Turn, streamed: bool) -> ResponseTemplate {
    if streamed {
        sse(&events(turn))
    } else {
        ResponseTemplate::new(200).set_body_json(response(turn, "completed"))
    }
}

fn client(base: &str) -> OpenAiResponses {
    OpenAiResponses::from_values("gpt-4.1", key(), Some(base)).with_resend(fast_retry(2))
}

fn agent(base: &str) -> Agent {
    Agent::new(client(base), tools()).unwrap().with_instructions("Be brief.")
}

/// The `(type or role, call_id)` of each input item sent.
fn shape(body: &Value) -> Vec<(String, String)> {
    let input = body["input"].as_array().unwrap();
    input
        .iter()
        .map(|item| match item["type"].as_str().unwrap() {
            "message" => (item["role"].as_str().unwrap().to_owned(), String::new()),
            kind => (kind.to_owned(), item["call_id"].as_str().unwrap().to_owned()),
        })
        .collect()
}

fn s(kind: &str, id: &str) -> (String, String) {
    (kind.into(), id.into())
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
        assert_eq!((result.usage[0].input_tokens, result.usage[0].output_tokens), (36, 87));

        let sent = bodies(&server).await;
        assert_eq!(sent.len(), 2);
        for body in &sent {
            assert_eq!(
                (&body["model"], &body["instructions"], &body["store"]),
                (&json!("gpt-4.1"), &json!("Be brief."), &json!(false))
            );
            assert_eq!(body["tool_choice"], "auto");
            let tools = body["tools"].as_array().unwrap();
            assert_eq!(tools.len(), 2);
            assert_eq!(
                (&tools[0]["type"], &tools[0]["name"], &tools[0]["strict"]),
                (&json!("function"), &json!("get_weather"), &json!(false))
            );
            assert_eq!(tools[0]["parameters"]["properties"]["city"]["type"], "string");
            assert_eq!(tools[1]["name"], "get_time");
            assert_eq!(body.get("stream").is_some(), streamed);
        }
        assert_eq!(sent[0]["input"], json!([{"type": "message", "role": "user", "content": "Weather?"}]));
        // Each function_call is answered by a function_call_output with its call_id.
        assert_eq!(
            shape(&sent[1]),
            [
                s("user", ""),
                s("function_call", "call_a"),
                s("function_call", "call_b"),
                s("function_call", "call_c"),
                s("function_call_output", "call_a"),
                s("function_call_output", "call_b"),
                s("function_call_output", "call_c"),
            ]
        );
        let input = &sent[1]["input"];
        assert_eq!(
            input[1],
            json!({"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"})
        );
        assert_eq!(input[4]["output"], "12°C in Oslo");
        assert!(input[5]["output"].as_str().unwrap().contains("get_weather"), "{}", input[5]);
        assert!(input[6]["output"].as_str().unwrap().contains("no station there"), "{}", input[6]);
        let auth = support::authorizations(&server).await;
        assert_eq!(auth, [Some(format!("Bearer {KEY}")), Some(format!("Bearer {KEY}"))]);
    }
}

#[tokio::test]
async fn text_and_calls_in_one_turn_are_sent_back_as_a_message_and_calls() {
    for streamed in [false, true] {
        let mut first = Turn::calls(&[("call_1", "get_time", r#"{"zone":"UTC"}"#)]);
        first.text = "Let me look.".into();
        let server = mock(ROUTE, vec![reply(&first, streamed), reply(&Turn::text("Noon."), streamed)]).await;
        let (result, _) = run(&agent(&base(&server)), "Time?", streamed).await;
        assert_eq!(result.unwrap().answer, "Noon.");
        let sent = bodies(&server).await;
        assert_eq!(
            sent[1]["input"][1],
            json!({"type": "message", "role": "assistant", "content": "Let me look."})
        );
        assert_eq!(shape(&sent[1])[2..], [s("function_call", "call_1"), s("function_call_output", "call_1")]);
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
        let sent = bodies(&server).await;
        let fix = &sent[1]["input"][2];
        assert_eq!((&fix["type"], &fix["call_id"]), (&json!("function_call_output"), &json!("call_x")));
        assert!(fix["output"].as_str().unwrap().contains("city"), "{fix}");
        assert_eq!(shape(&sent[2])[3..], [s("function_call", "call_y"), s("function_call_output", "call_y")]);
        assert_eq!(sent[2]["input"][4]["output"], "12°C in Rome");
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
        assert_eq!(sent[0]["tool_choice"], json!({"type": "function", "name": "get_weather"}));
        assert_eq!(sent[0]["parallel_tool_calls"], false);
        assert_eq!(sent[0]["max_output_tokens"], 300);
        for field in ["tools", "tool_choice", "parallel_tool_calls"] {
            assert_eq!(sent[1].get(field), None, "{field} in {}", sent[1]);
        }
        assert_eq!(shape(&sent[1])[1..], [s("function_call", "c1"), s("function_call_output", "c1")]);
    }
}

#[tokio::test]
async fn the_native_web_search_is_sent_with_the_functions() {
    let server = mock(ROUTE, vec![reply(&Turn::text("Found it."), false)]).await;
    let toolset = support::tools_with_search(WebSearch::new().with_allowed_domains(["example.org"]));
    let model = client(&base(&server)).with_strict(true);
    Agent::new(model, toolset).unwrap().run("Search").await.unwrap();
    let sent = bodies(&server).await;
    let tools = sent[0]["tools"].as_array().unwrap();
    assert_eq!(tools[0]["strict"], true);
    assert_eq!(tools[2], json!({"type": "web_search", "filters": {"allowed_domains": ["example.org"]}}));
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
        assert!(matches!(&error.error, ModelError::Server { status: 500, attempts: 2, .. }), "{error:?}");
        assert_eq!(bodies(&server).await.len(), 2);
    }
}

#[tokio::test]
async fn a_refused_key_names_the_variable_and_never_shows() {
    for streamed in [false, true] {
        let refused = ResponseTemplate::new(401).set_body_json(json!({"error": {
            "message": format!("Incorrect API key provided: {KEY}."),
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}));
        let server = mock(ROUTE, vec![refused]).await;
        let (result, _) = run(&agent(&base(&server)), "Hi", streamed).await;
        let error = result.unwrap_err();
        assert_eq!(
            error.error,
            ModelError::Unauthorized { provider: "openai".into(), status: 401, variable: "OPENAI_API_KEY" }
        );
        support::assert_no_key(&error, &error.to_string());
        support::assert_no_key(&error.error, &error.error.to_string());
    }
}

#[tokio::test]
async fn a_keyless_local_server_gets_no_authorization_header() {
    for streamed in [false, true] {
        let server = mock(ROUTE, vec![reply(&Turn::text("Hi."), streamed)]).await;
        let local = OpenAiResponses::from_values("local-model", None, Some(&base(&server)));
        let (result, _) = run(&Agent::new(local, tools()).unwrap(), "Hi", streamed).await;
        assert_eq!(result.unwrap().answer, "Hi.");
        assert_eq!(support::authorizations(&server).await, [None]);
    }
}

#[tokio::test]
async fn split_arguments_and_split_characters_assemble() {
    let mut first = events(&Turn::calls(&[("call_z", "get_weather", r#"{"city":"Zürich"}"#)]));
    let second = events(&Turn::text("Il fait 12°C à Zürich, 晴れ。"));
    // Keep the argument cut inside the string value, whatever `events` chose.
    first.retain(|(kind, _)| *kind != Some("response.function_call_arguments.delta"));
    let at =
        first.iter().position(|(kind, _)| *kind == Some("response.function_call_arguments.done")).unwrap();
    for (k, piece) in ["{\"city\":\"Zü", "rich\"}"].into_iter().enumerate() {
        let delta = json!({"type": "response.function_call_arguments.delta", "item_id": "fc_call_z",
                           "output_index": 0, "delta": piece, "sequence_number": 100 + k});
        first.insert(at + k, (Some("response.function_call_arguments.delta"), delta.to_string()));
    }
    let first = support::sse_text(&first);
    let second = support::sse_text(&second);
    let cut_in = |text: &str, needle: &str| text.find(needle).unwrap() + 1;
    let server = support::ChunkedServer::start(vec![
        support::split_at(&first, &[cut_in(&first, "ü")]),
        support::split_at(&second, &[cut_in(&second, "°"), cut_in(&second, "晴"), cut_in(&second, "晴") + 1]),
    ]);
    let agent =
        Agent::new(OpenAiResponses::from_values("gpt-4.1", key(), Some(&server.base)), tools()).unwrap();
    let (result, events) = run(&agent, "Zürich?", true).await;
    let result = result.unwrap();
    assert_eq!(result.answer, "Il fait 12°C à Zürich, 晴れ。");
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
    assert_eq!(
        sent[1]["input"][2],
        json!({"type": "function_call_output", "call_id": "call_z", "output": "12°C in Zürich"})
    );
}

#[tokio::test]
async fn interleaved_streamed_calls_keep_their_order() {
    let turn = Turn::calls(&[
        ("call_w", "get_weather", r#"{"city":"Lima"}"#),
        ("call_t", "get_time", r#"{"zone":"UTC"}"#),
    ]);
    let mut n = 0;
    let added = |index: u64, id: &str, name: &str, n: &mut u64| {
        event(
            "response.output_item.added",
            json!({"output_index": index, "item": call_item(id, name, "")}),
            n,
        )
    };
    let delta = |index: u64, piece: &str, n: &mut u64| {
        event(
            "response.function_call_arguments.delta",
            json!({"item_id": "fc", "output_index": index, "delta": piece}),
            n,
        )
    };
    let first = vec![
        event("response.created", json!({"response": response(&turn, "in_progress")}), &mut n),
        added(0, "call_w", "get_weather", &mut n),
        added(1, "call_t", "get_time", &mut n),
        delta(1, "{\"zo", &mut n),
        delta(0, "{\"city\":", &mut n),
        delta(1, "ne\":\"UTC\"}", &mut n),
        delta(0, "\"Lima\"}", &mut n),
        event("response.completed", json!({"response": response(&turn, "completed")}), &mut n),
    ];
    let server = mock(ROUTE, vec![sse(&first), reply(&Turn::text("Lima 12°C, 12:00 UTC."), true)]).await;
    let (result, events) = run(&agent(&base(&server)), "Lima?", true).await;
    let result = result.unwrap();
    assert_eq!(
        outcomes(&result.transcript.messages[2]),
        [("call_w".into(), Outcome::Success), ("call_t".into(), Outcome::Success)]
    );
    let pieces = support::streamed_arguments(&events);
    assert_eq!(
        pieces[2..],
        [(1, "{\"zo".into()), (0, "{\"city\":".into()), (1, "ne\":\"UTC\"}".into()), (0, "\"Lima\"}".into())]
    );
    let sent = bodies(&server).await;
    assert_eq!(
        shape(&sent[1])[1..],
        [
            s("function_call", "call_w"),
            s("function_call", "call_t"),
            s("function_call_output", "call_w"),
            s("function_call_output", "call_t"),
        ]
    );
}

#[tokio::test]
async fn a_stream_that_ends_early_keeps_the_partial_run() {
    let first = Turn::calls(&[("call_1", "get_time", r#"{"zone":"UTC"}"#)]);
    let mut cut = events(&Turn::text("It is noon."));
    cut.truncate(3);
    let server = mock(ROUTE, vec![reply(&first, true), sse(&cut)]).await;
    let (result, _) = run(&agent(&base(&server)), "Time?", true).await;
    let error = result.unwrap_err();
    assert!(
        matches!(&error.error, ModelError::StreamEnded { message, .. } if message.contains("response.completed")),
        "{error}"
    );
    assert_eq!(error.transcript.messages.len(), 3);
    assert_eq!(outcomes(&error.transcript.messages[2]), [("call_1".into(), Outcome::Success)]);
}

#[tokio::test]
async fn failed_responses_and_error_events_are_clear_errors() {
    let mut n = 0;
    let mut failed = response(&Turn::text(""), "failed");
    failed["error"] = json!({"code": "server_error", "message": "The model failed to generate a response."});
    let failed = vec![event("response.failed", json!({"response": failed}), &mut n)];
    let errored = vec![event(
        "error",
        json!({"code": "ERR_SOMETHING", "message": "Something went wrong", "param": null}),
        &mut n,
    )];
    let broken = vec![(Some("response.created"), "{\"response\": ".to_owned())];
    let server = mock(ROUTE, vec![sse(&failed), sse(&errored), sse(&broken)]).await;
    let agent = agent(&base(&server));
    let (result, _) = run(&agent, "Hi", true).await;
    let error = result.unwrap_err().error;
    assert!(error.to_string().contains("server_error: The model failed to generate a response."), "{error}");
    let (result, _) = run(&agent, "Hi", true).await;
    let error = result.unwrap_err().error;
    assert!(error.to_string().contains("ERR_SOMETHING: Something went wrong"), "{error}");
    let (result, _) = run(&agent, "Hi", true).await;
    assert!(matches!(result.unwrap_err().error, ModelError::Malformed { .. }));
}
