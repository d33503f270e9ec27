//! `OpenAiResponses`: its mock for the scenarios (`scenarios.rs`), and what
//! only the Responses API does, against a mock server, driving a real
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

use serde_json::{Value, json};
use toolcall_agent::{Agent, ApiKey, Message, ModelError, ModelSettings, OpenAiResponses, ToolChoice, Usage};
use toolcall_core::Outcome;
use toolcall_core::toolset::WebSearch;
use wiremock::{Request, ResponseTemplate};

use crate::scenarios::{self, Item, ProviderMock, Sent, SentCall, SentResult};
use crate::support::openai::{
    self as support, KEY, Turn, base, bodies, fast_retry, key, mock, run, sse, tools,
};

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
        "usage": if done { json!({"input_tokens": 36, "input_tokens_details": {"cached_tokens": 32},
            "output_tokens": 87, "output_tokens_details": {"reasoning_tokens": 64}, "total_tokens": 123}) } else { Value::Null },
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
        let cut = support::cut(&turn.text, 1, 2);
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
        let cut = support::cut(arguments, 2, 3);
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
    // The error a plain failed response is: the stream itself ended as it should.
    assert_eq!(
        error.to_string(),
        "openai rejected the request (HTTP 200): the response failed: server_error: The model failed to generate a response."
    );
    let (result, _) = run(&agent, "Hi", true).await;
    let error = result.unwrap_err().error;
    assert!(error.to_string().contains("ERR_SOMETHING: Something went wrong"), "{error}");
    let (result, _) = run(&agent, "Hi", true).await;
    assert!(matches!(result.unwrap_err().error, ModelError::Malformed { .. }));
}

/// The Responses API, for the scenarios.
pub(crate) struct Mock;

impl ProviderMock for Mock {
    type Client = OpenAiResponses;
    const NAME: &'static str = "openai";
    const KEY: &'static str = KEY;
    const KEY_VARIABLE: &'static str = "OPENAI_API_KEY";
    const USAGE: Usage = Usage {
        input_tokens: Some(36),
        output_tokens: Some(87),
        cache_read_tokens: Some(32),
        cache_write_tokens: None,
        reasoning_tokens: Some(64),
    };
    const STREAM_END: &'static str = "response.completed";
    const TRUNCATED: (&'static [(&'static str, &'static str)], &'static str) = (
        &[
            (r#""status":"completed""#, r#""status":"incomplete""#),
            (r#""incomplete_details":null"#, r#""incomplete_details":{"reason":"max_output_tokens"}"#),
        ],
        "max_output_tokens",
    );
    const REFUSED: (&'static [(&'static str, &'static str)], &'static str) = (
        &[
            (r#""status":"completed""#, r#""status":"incomplete""#),
            (r#""incomplete_details":null"#, r#""incomplete_details":{"reason":"content_filter"}"#),
        ],
        "content_filter",
    );

    fn client(root: &str, key: Option<ApiKey>, attempts: u32) -> OpenAiResponses {
        OpenAiResponses::from_values("gpt-4.1", key, Some(&format!("{root}/v1")))
            .with_resend(fast_retry(attempts))
    }

    fn path(_streamed: bool) -> String {
        format!("/v1/{ROUTE}")
    }

    fn body(turn: &Turn) -> Value {
        response(turn, "completed")
    }

    fn stream(turn: &Turn, cut: bool) -> String {
        let mut events = events(turn);
        if cut {
            // Without the last item's `output_item.done` and `response.completed`.
            events.truncate(events.len() - 2);
        }
        support::sse_text(&events)
    }

    fn error(status: u16, message: &str) -> ResponseTemplate {
        support::error(status, message)
    }

    fn pieces(arguments: &str) -> Vec<String> {
        let cut = support::cut(arguments, 2, 3);
        vec![String::new(), arguments[..cut].into(), arguments[cut..].into()]
    }

    fn key_sent(request: &Request) -> Option<String> {
        support::bearer(request)
    }

    fn streamed(request: &Request) -> bool {
        request.body_json::<Value>().unwrap()["stream"] == true
    }

    fn read(body: &Value) -> Sent {
        let mut sent = Sent {
            system: body["instructions"].as_str().map(str::to_owned),
            tools: body["tools"].as_array().map_or_else(Vec::new, |tools| {
                tools
                    .iter()
                    .filter(|t| t["type"] == "function")
                    .map(|t| t["name"].as_str().unwrap().to_owned())
                    .collect()
            }),
            tool_choice: body.get("tool_choice").cloned(),
            ..Sent::default()
        };
        for item in body["input"].as_array().unwrap() {
            match (item["type"].as_str().unwrap(), item["role"].as_str()) {
                ("message", Some("user")) => {
                    sent.messages.push(Item::User(item["content"].as_str().unwrap().into()))
                }
                ("message", Some("assistant")) => sent.messages.push(Item::Assistant {
                    text: item["content"].as_str().unwrap().into(),
                    calls: Vec::new(),
                }),
                ("function_call", _) => {
                    let call = SentCall {
                        key: item["call_id"].as_str().unwrap().into(),
                        name: item["name"].as_str().unwrap().into(),
                        args: serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap(),
                    };
                    match sent.messages.last_mut() {
                        Some(Item::Assistant { calls, .. }) => calls.push(call),
                        _ => sent.messages.push(Item::Assistant { text: String::new(), calls: vec![call] }),
                    }
                }
                ("function_call_output", _) => {
                    let result = SentResult {
                        key: item["call_id"].as_str().unwrap().into(),
                        content: item["output"].as_str().unwrap().into(),
                    };
                    sent.push_result(result);
                }
                other => panic!("an unexpected input item {other:?}"),
            }
        }
        sent
    }
}

/// The wire shape of the scenario with parallel calls and a fix: the
/// request fields, the text as an assistant message, each function_call
/// answered by a function_call_output with its call_id.
#[tokio::test]
async fn the_input_items_of_a_run_with_parallel_calls() {
    for streamed in [false, true] {
        let requests = scenarios::parallel_calls_then_a_fix::<Mock>(streamed, std::convert::identity).await;
        let sent = scenarios::bodies(&requests);
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
        assert_eq!(
            sent[0]["input"],
            json!([{"type": "message", "role": "user", "content": "Weather in Oslo and Rome?"}])
        );
        let ids = ["call_a", "call_b", "call_c", "call_d", "call_e"];
        let mut expected = vec![s("user", ""), s("assistant", "")];
        expected.extend(ids.map(|id| s("function_call", id)));
        expected.extend(ids.map(|id| s("function_call_output", id)));
        assert_eq!(shape(&sent[1]), expected);
        let input = &sent[1]["input"];
        // Text and calls in one turn: a message, then the calls.
        assert_eq!(input[1], json!({"type": "message", "role": "assistant", "content": "Checking."}));
        assert_eq!(
            input[2],
            json!({"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"})
        );
        assert_eq!(
            input[7],
            json!({"type": "function_call_output", "call_id": "call_a", "output": "12°C in Oslo"})
        );
        assert_eq!(
            (&input[8]["type"], &input[8]["call_id"]),
            (&json!("function_call_output"), &json!("call_b"))
        );
        assert_eq!(
            shape(&sent[2])[12..],
            [s("function_call", "call_f"), s("function_call_output", "call_f")]
        );
    }
}

#[tokio::test]
async fn the_tool_choice_parallelism_and_token_limit_are_sent() {
    for streamed in [false, true] {
        let configure = |settings: ModelSettings| {
            settings.with_tool_choice(ToolChoice::tool("get_weather")).with_parallel_tool_calls(false)
        };
        let requests =
            scenarios::max_turns_ends_with_a_request_without_tools::<Mock>(streamed, configure).await;
        let sent = scenarios::bodies(&requests);
        assert_eq!(sent[0]["tool_choice"], json!({"type": "function", "name": "get_weather"}));
        assert_eq!(sent[0]["parallel_tool_calls"], false);
        assert_eq!(sent[0]["max_output_tokens"], 300);
        for field in ["tools", "tool_choice", "parallel_tool_calls"] {
            assert_eq!(sent[1].get(field), None, "{field} in {}", sent[1]);
        }
        assert_eq!(shape(&sent[1])[1..], [s("function_call", "call_1"), s("function_call_output", "call_1")]);
    }
}
