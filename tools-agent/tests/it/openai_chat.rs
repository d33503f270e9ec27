//! `OpenAiChat`: its mock for the scenarios (`scenarios.rs`), and what only
//! Chat Completions does, against a mock server, driving a real `Agent`,
//! plainly and streamed; every assertion also reads what the mock received.
//!
//! The bodies are shaped as OpenAI documents them:
//! - the response object: <https://platform.openai.com/docs/api-reference/chat/object>
//!   (from <https://platform.openai.com/docs/api-reference/chat/create>);
//! - the chunk object: <https://platform.openai.com/docs/api-reference/chat-streaming/streaming>
//!   (`chat.completion.chunk`, then the usage chunk with empty `choices`
//!   that `stream_options.include_usage` adds, then `data: [DONE]`);
//! - the error object: <https://platform.openai.com/docs/guides/error-codes>.

use serde_json::{Value, json};
use toolcall_agent::testing::{
    Reply, argument_pieces, chat_chunk as chunk, chat_chunks, chat_completion,
    chat_usage_chunk as usage_chunk,
};
use toolcall_agent::{
    Agent, ApiKey, Message, ModelError, ModelSettings, OpenAiChat, StopReason, ToolChoice, Usage,
};
use toolcall_core::{Outcome, ToolCall};
use wiremock::{Request, ResponseTemplate};

use crate::scenarios::{self, Item, ProviderMock, Sent, SentCall, SentResult};
use crate::support::openai::{
    self as support, KEY, Turn, base, bodies, fast_retry, key, mock, run, sse, tools,
};

const ROUTE: &str = "chat/completions";

/// The turn as the scripted server's reply.
fn scripted(turn: &Turn) -> Reply {
    let calls = turn
        .calls
        .iter()
        .map(|(id, name, arguments)| ToolCall::new(id.as_str(), name.as_str(), arguments.as_str()));
    Reply { text: turn.text.clone(), calls: calls.collect(), ..Reply::default() }
}

/// A `chat.completion` object for one turn.
fn completion(turn: &Turn) -> Value {
    chat_completion(&scripted(turn))
}

/// The data of each event of one streamed turn (see [`chat_chunks`]).
fn chunks(turn: &Turn) -> Vec<String> {
    chat_chunks(&scripted(turn))
}

/// A tool call piece: the first carries id, type and name.
fn call_piece(index: usize, head: Option<(&str, &str)>, arguments: &str) -> Value {
    match head {
        Some((id, name)) => json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                   "function": {"name": name, "arguments": arguments}}]}),
        None => json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}),
    }
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
async fn a_keyless_local_server_gets_no_authorization_header() {
    for streamed in [false, true] {
        let server = mock(ROUTE, vec![reply(&Turn::text("Hi from llama."), streamed)]).await;
        let local = OpenAiChat::from_values("llama3.2", None, Some(&base(&server)));
        let (result, _) = run(&Agent::new(local, tools()).unwrap(), "Hi", streamed).await;
        assert_eq!(result.unwrap().answer, "Hi from llama.");
        assert_eq!(support::authorizations(&server).await, [None]);
    }
}

/// A refusal comes as the message's `refusal` (plain) or as `delta.refusal`
/// pieces (streamed), with `finish_reason: "stop"`: its text is the answer,
/// and the run stops as refused, not answered
/// (<https://platform.openai.com/docs/guides/structured-outputs#refusals>).
#[tokio::test]
async fn a_refusal_is_its_own_stop_plain_and_streamed() {
    let refusal = "I'm sorry, I cannot help with that request.";
    for streamed in [false, true] {
        let reply = if streamed {
            let (head, tail) = refusal.split_at(10);
            let events: Vec<_> = [
                chunk(json!({"role": "assistant", "content": null, "refusal": ""}), None),
                chunk(json!({"refusal": head}), None),
                chunk(json!({"refusal": tail}), None),
                chunk(json!({}), Some("stop")),
                usage_chunk(),
                "[DONE]".to_owned(),
            ]
            .into_iter()
            .map(|data| (None, data))
            .collect();
            sse(&events)
        } else {
            let mut body = completion(&Turn::text(""));
            body["choices"][0]["message"] = json!({"role": "assistant", "content": null, "refusal": refusal});
            ResponseTemplate::new(200).set_body_json(body)
        };
        let server = mock(ROUTE, vec![reply]).await;
        let (result, _) = run(&Agent::new(client(&base(&server)), tools()).unwrap(), "Hi", streamed).await;
        let result = result.unwrap();
        assert_eq!(result.stop, StopReason::Refused { reason: "refusal".into() }, "streamed: {streamed}");
        assert_eq!(result.answer, refusal, "streamed: {streamed}");
    }
}

/// A compatible server that sends no usage (llama.cpp's streams without
/// `include_usage`, some proxies): the counts are unknown, not zero.
#[tokio::test]
async fn usage_a_server_did_not_send_is_none() {
    for streamed in [false, true] {
        let turn = Turn::text("Hi from llama.");
        let reply = if streamed {
            let events: Vec<_> = chunks(&turn)
                .into_iter()
                .filter(|chunk| !chunk.contains("prompt_tokens"))
                .map(|data| (None, data))
                .collect();
            sse(&events)
        } else {
            let mut body = completion(&turn);
            body.as_object_mut().unwrap().remove("usage");
            ResponseTemplate::new(200).set_body_json(body)
        };
        let server = mock(ROUTE, vec![reply]).await;
        let local = OpenAiChat::from_values("llama3.2", None, Some(&base(&server)));
        let (result, _) = run(&Agent::new(local, tools()).unwrap(), "Hi", streamed).await;
        let result = result.unwrap();
        assert_eq!(result.answer, "Hi from llama.");
        assert_eq!(result.usage, [Usage::default()], "streamed: {streamed}");
        assert_eq!(result.total_usage().input_tokens, None);
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

/// Chat Completions, for the scenarios.
pub(crate) struct Mock;

impl ProviderMock for Mock {
    type Client = OpenAiChat;
    const NAME: &'static str = "openai";
    const KEY: &'static str = KEY;
    const KEY_VARIABLE: &'static str = "OPENAI_API_KEY";
    const USAGE: Usage = Usage {
        input_tokens: Some(19),
        output_tokens: Some(10),
        cache_read_tokens: Some(16),
        cache_write_tokens: None,
        reasoning_tokens: Some(4),
    };
    const STREAM_END: &'static str = "[DONE]";
    const TRUNCATED: (&'static [(&'static str, &'static str)], &'static str) =
        (&[(r#""finish_reason":"tool_calls""#, r#""finish_reason":"length""#)], "length");
    const REFUSED: (&'static [(&'static str, &'static str)], &'static str) =
        (&[(r#""finish_reason":"tool_calls""#, r#""finish_reason":"content_filter""#)], "content_filter");

    fn client(root: &str, key: Option<ApiKey>, attempts: u32) -> OpenAiChat {
        OpenAiChat::from_values("gpt-4o", key, Some(&format!("{root}/v1"))).with_resend(fast_retry(attempts))
    }

    fn path(_streamed: bool) -> String {
        format!("/v1/{ROUTE}")
    }

    fn body(turn: &Turn) -> Value {
        completion(turn)
    }

    fn stream(turn: &Turn, cut: bool) -> String {
        let mut events = chunks(turn);
        if cut {
            // Without the finish, the usage and `[DONE]`.
            events.truncate(events.len() - 3);
        }
        support::sse_text(&events.into_iter().map(|data| (None, data)).collect::<Vec<_>>())
    }

    fn error(status: u16, message: &str) -> ResponseTemplate {
        support::error(status, message)
    }

    fn pieces(arguments: &str) -> Vec<String> {
        argument_pieces(arguments)
    }

    fn key_sent(request: &Request) -> Option<String> {
        support::bearer(request)
    }

    fn streamed(request: &Request) -> bool {
        request.body_json::<Value>().unwrap()["stream"] == true
    }

    fn read(body: &Value) -> Sent {
        let mut sent = Sent {
            tools: body["tools"].as_array().map_or_else(Vec::new, |tools| {
                tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
            }),
            tool_choice: body.get("tool_choice").cloned(),
            ..Sent::default()
        };
        for message in body["messages"].as_array().unwrap() {
            let text = message["content"].as_str().unwrap_or_default().to_owned();
            match message["role"].as_str().unwrap() {
                "system" => sent.system = Some(text),
                "user" => sent.messages.push(Item::User(text)),
                "assistant" => {
                    let calls = message["tool_calls"].as_array().map_or_else(Vec::new, |calls| {
                        calls
                            .iter()
                            .map(|call| SentCall {
                                key: call["id"].as_str().unwrap().into(),
                                name: call["function"]["name"].as_str().unwrap().into(),
                                args: serde_json::from_str(call["function"]["arguments"].as_str().unwrap())
                                    .unwrap(),
                            })
                            .collect()
                    });
                    sent.messages.push(Item::Assistant { text, calls });
                }
                "tool" => {
                    let result =
                        SentResult { key: message["tool_call_id"].as_str().unwrap().into(), content: text };
                    sent.push_result(result);
                }
                other => panic!("an unexpected role {other}"),
            }
        }
        sent
    }
}

/// The wire shape of the scenario with parallel calls and a fix: the
/// request fields, the messages, the call ids paired with tool messages.
#[tokio::test]
async fn the_messages_of_a_run_with_parallel_calls() {
    for streamed in [false, true] {
        let requests = scenarios::parallel_calls_then_a_fix::<Mock>(streamed, std::convert::identity).await;
        let sent = scenarios::bodies(&requests);
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
                {"role": "user", "content": "Weather in Oslo and Rome?"}
            ])
        );
        // Each call id is answered by a tool message with the same id, in order.
        assert_eq!(
            shape(&sent[1]),
            [
                s("system", &[]),
                s("user", &[]),
                s("assistant", &["call_a", "call_b", "call_c", "call_d", "call_e"]),
                s("tool", &["call_a"]),
                s("tool", &["call_b"]),
                s("tool", &["call_c"]),
                s("tool", &["call_d"]),
                s("tool", &["call_e"]),
            ]
        );
        let messages = &sent[1]["messages"];
        assert_eq!(messages[2]["content"], "Checking.");
        assert_eq!(
            messages[2]["tool_calls"][0],
            json!({"id": "call_a", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}})
        );
        assert_eq!(messages[3]["content"], "12°C in Oslo");
        assert_eq!(messages[4]["tool_call_id"], "call_b");
        // A turn of calls only: its content is the empty string, which
        // compatible servers take where they refuse `null`.
        assert_eq!(shape(&sent[2])[8..], [s("assistant", &["call_f"]), s("tool", &["call_f"])]);
        assert_eq!(sent[2]["messages"][8]["content"], "");
        let auth: Vec<_> = requests
            .iter()
            .map(|r| r.headers.get("authorization").unwrap().to_str().unwrap().to_owned())
            .collect();
        assert_eq!(auth, [format!("Bearer {KEY}"), format!("Bearer {KEY}"), format!("Bearer {KEY}")]);
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
        assert_eq!(sent[0]["tool_choice"], json!({"type": "function", "function": {"name": "get_weather"}}));
        assert_eq!(sent[0]["parallel_tool_calls"], false);
        assert_eq!(sent[0]["max_completion_tokens"], 300);
        // The last request: no tools, so no choice or parallelism either;
        // the turn's call and its answer are still in the messages.
        for field in ["tools", "tool_choice", "parallel_tool_calls"] {
            assert_eq!(sent[1].get(field), None, "{field} in {}", sent[1]);
        }
        assert_eq!(sent[1]["max_completion_tokens"], 300);
        assert_eq!(shape(&sent[1])[2..], [s("assistant", &["call_1"]), s("tool", &["call_1"])]);
    }
}
