//! `ScriptedServer` on loopback, answering the real `OpenAiChat` client
//! plainly and streamed, from a queue and from a function of the request;
//! each test reads what the server recorded.

use serde_json::Value;
use tools_agent::scripted_server::{Reply, ScriptedServer, argument_pieces};
use tools_agent::{Agent, AgentEvent, ModelError, OpenAiChat, StopReason};
use tools_core::ToolCall;

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
    // Every body reports the same tokens.
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
