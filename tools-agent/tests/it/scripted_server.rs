//! `ScriptedServer` on loopback, answering the real `OpenAiChat` client
//! plainly and streamed, from a queue and from a function of the request;
//! each test reads what the server recorded.

use serde_json::Value;
use toolcall_agent::testing::{Reply, ScriptedServer, argument_pieces};
use toolcall_agent::{Agent, AgentEvent, ModelError, OpenAiChat, StopReason};
use toolcall_core::ToolCall;

use crate::support::openai::{run, streamed_arguments, tools};

fn agent(server: &ScriptedServer) -> Agent {
    let model = OpenAiChat::from_values("gpt-4o", None, Some(server.base_url()));
    Agent::new(model, tools()).unwrap()
}

fn paris() -> ToolCall {
    ToolCall::new("call_1", "get_weather", r#"{"city":"Paris"}"#)
}

async fn a_queue_answers_in_order(streamed: bool) {
    let server =
        ScriptedServer::start([Reply::calls([paris()]), Reply::text("It is 12°C in Paris.")]).await.unwrap();
    let (result, events) = run(&agent(&server), "Weather in Paris?", streamed).await;
    let result = result.unwrap();
    assert_eq!(result.answer, "It is 12°C in Paris.");
    assert_eq!(result.stop, StopReason::Answered);
    // A reply without tokens of its own reports the usual ones.
    let usage = result.usage[0];
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens),
        (Some(19), Some(10), Some(16))
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request["stream"] == true, streamed, "{request}");
        assert_eq!(request["model"], "gpt-4o");
    }
    assert_eq!(requests[0]["messages"][0]["content"], "Weather in Paris?");
    let tool = &requests[1]["messages"][2];
    assert_eq!((tool["role"].as_str(), tool["tool_call_id"].as_str()), (Some("tool"), Some("call_1")));
    assert_eq!(tool["content"], "12°C in Paris");

    if streamed {
        // The arguments came in several deltas, as the chunks cut them.
        let pieces: Vec<String> = streamed_arguments(&events).into_iter().map(|(_, piece)| piece).collect();
        assert_eq!(pieces, argument_pieces(r#"{"city":"Paris"}"#));
        assert!(pieces.len() >= 3);
        let text: String = events
            .iter()
            .filter_map(
                |event| if let AgentEvent::TextDelta(text) = event { Some(text.as_str()) } else { None },
            )
            .collect();
        assert_eq!(text, "It is 12°C in Paris.");
    }
}

#[tokio::test]
async fn a_queue_answers_in_order_plain() {
    a_queue_answers_in_order(false).await;
}

#[tokio::test]
async fn a_queue_answers_in_order_streamed() {
    a_queue_answers_in_order(true).await;
}

#[tokio::test]
async fn a_function_of_the_request_answers_what_the_last_message_says() {
    let server = ScriptedServer::answering(|request: &Value| {
        let last = request["messages"].as_array()?.last()?;
        Some(match last["role"].as_str()? {
            "tool" => Reply::text(format!("The tool said: {}", last["content"].as_str()?)),
            _ => Reply::calls([paris()]),
        })
    })
    .await
    .unwrap();
    let (result, _) = run(&agent(&server), "Paris?", true).await;
    assert_eq!(result.unwrap().answer, "The tool said: 12°C in Paris");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn past_the_script_the_client_reads_a_400_with_openais_error_object() {
    let server = ScriptedServer::start([]).await.unwrap();
    let (result, _) = run(&agent(&server), "Hi", false).await;
    let error = result.unwrap_err();
    match &error.error {
        ModelError::Rejected { status, message, .. } => {
            assert_eq!(*status, 400);
            assert!(message.contains("the script is over"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

/// Issue 45, point 10: each response has an id of its own and the tokens
/// its reply chose, plain and streamed, as the real client reads them (the
/// request spans' `gen_ai.response.id`, the run's usage per request).
fn each_response_has_its_own_id_and_chosen_tokens(streamed: bool) {
    use crate::spans::capture::{self, Capture, Spans, field};

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start([
            Reply::calls([paris()]).with_usage(120, 7),
            Reply::text("It is 12°C in Paris.").with_usage(150, 12),
            Reply::text("Bye.").with_id("chatcmpl-mine"),
        ]))
        .unwrap();
    let agent = agent(&server);
    let spans = Spans::default();
    let (first, second) = capture::traced(Capture(spans.clone()), || {
        runtime.block_on(async {
            let first = run(&agent, "Weather in Paris?", streamed).await.0.unwrap();
            let second = run(&agent, "Bye?", streamed).await.0.unwrap();
            (first, second)
        })
    });
    let ids: Vec<String> = spans
        .lock()
        .unwrap()
        .iter()
        .filter(|(name, _)| name == "model_request")
        .map(|(_, fields)| field(fields, "gen_ai.response.id").unwrap_or("(none)").to_owned())
        .collect();
    assert_eq!(ids, ["chatcmpl-scripted-1", "chatcmpl-scripted-2", "chatcmpl-mine"], "streamed: {streamed}");

    let tokens: Vec<_> = first.usage.iter().map(|usage| (usage.input_tokens, usage.output_tokens)).collect();
    assert_eq!(tokens, [(Some(120), Some(7)), (Some(150), Some(12))], "streamed: {streamed}");
    // Chosen tokens are neither cached nor reasoning.
    assert_eq!(first.usage[0].cache_read_tokens.unwrap_or(0), 0);
    // A reply without chosen tokens reports the usual ones.
    let usage = second.usage[0];
    assert_eq!(
        (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens),
        (Some(19), Some(10), Some(16))
    );
}

#[test]
fn each_response_has_its_own_id_and_chosen_tokens_plain() {
    each_response_has_its_own_id_and_chosen_tokens(false);
}

#[test]
fn each_response_has_its_own_id_and_chosen_tokens_streamed() {
    each_response_has_its_own_id_and_chosen_tokens(true);
}
