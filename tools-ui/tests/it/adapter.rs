//! `UiAdapter`: an agent's events, from real runs on a scripted model and
//! as the streaming clients send them, into the chunks of the protocol.

use futures::StreamExt;
use serde_json::json;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Agent, AgentEvent, StopReason};
use toolcall_core::ToolCall;
use toolcall_core::toolset::Toolset;
use toolcall_ui::{UiAdapter, UiChunk};

use crate::support::{chunks, text, types};

/// The chunks of these events, through one new adapter.
fn translate(events: &[AgentEvent]) -> Vec<UiChunk> {
    let mut adapter = UiAdapter::new();
    events.iter().flat_map(|event| adapter.push(event)).collect()
}

async fn body(agent: &Agent, prompt: &str) -> String {
    UiAdapter::new().stream(agent.stream(prompt)).collect::<Vec<String>>().await.concat()
}

#[tokio::test]
async fn a_plain_answer_is_one_step_with_one_text_part() {
    let agent =
        Agent::new(ScriptedModel::new().then_text("Hello there."), Toolset::builder().build().unwrap())
            .unwrap();
    let chunks = chunks(&body(&agent, "Hi").await);
    assert_eq!(
        types(&chunks),
        ["start", "start-step", "text-start", "text-delta", "text-end", "finish-step", "finish"]
    );
    assert_eq!(text(&chunks), "Hello there.");
    assert_eq!(chunks[2]["id"], chunks[4]["id"]);
    assert_eq!(chunks[6], json!({"type": "finish", "finishReason": "stop"}));
}

#[tokio::test]
async fn a_call_a_model_does_not_stream_shows_whole_and_a_failed_one_errs_then_a_new_step_answers() {
    // No tool has this name: the result is an error the model reads.
    let model = ScriptedModel::new()
        .then_calls([ToolCall::new("c1", "get_time", r#"{"zone":"UTC"}"#)])
        .then_text("No clock here.");
    let agent = Agent::new(model, Toolset::builder().build().unwrap()).unwrap();
    let chunks = chunks(&body(&agent, "Time?").await);
    assert_eq!(
        types(&chunks),
        [
            "start",
            "start-step",
            "tool-input-start",
            "tool-input-available",
            "tool-output-error",
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "finish-step",
            "finish"
        ]
    );
    assert_eq!(chunks[2], json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "get_time"}));
    assert_eq!(chunks[3]["input"], json!({"zone": "UTC"}));
    assert_eq!(chunks[4]["toolCallId"], "c1");
    assert!(chunks[4]["errorText"].as_str().unwrap().contains("get_time"), "{}", chunks[4]);
}

#[tokio::test]
async fn a_failed_run_ends_in_an_error_chunk() {
    // The script is empty: the first request fails.
    let agent = Agent::new(ScriptedModel::new(), Toolset::builder().build().unwrap()).unwrap();
    let chunks = chunks(&body(&agent, "Hi").await);
    assert_eq!(types(&chunks), ["start", "error"]);
    assert!(!chunks[1]["errorText"].as_str().unwrap().is_empty());
}

#[test]
fn reasoning_then_text_are_two_parts_and_streamed_call_pieces_wait_for_the_call_s_id_and_name() {
    let usage = AgentEvent::Usage(Default::default());
    let delta = |index, id: Option<&str>, name: Option<&str>, arguments: &str| AgentEvent::CallDelta {
        index,
        id: id.map(str::to_owned),
        name: name.map(str::to_owned),
        arguments: arguments.to_owned(),
    };
    let chunks = translate(&[
        AgentEvent::ReasoningDelta("Think".into()),
        AgentEvent::ReasoningDelta("ing.".into()),
        AgentEvent::TextDelta("Checking.".into()),
        // A piece before the call's id and name, then the head, then more.
        delta(0, None, None, "{\"ci"),
        delta(0, Some("c7"), Some("get_weather"), "ty\":"),
        delta(0, None, None, "\"Oslo\"}"),
        usage,
    ]);
    assert_eq!(
        chunks,
        [
            UiChunk::StartStep,
            UiChunk::ReasoningStart { id: "reasoning-1".into() },
            UiChunk::ReasoningDelta { id: "reasoning-1".into(), delta: "Think".into() },
            UiChunk::ReasoningDelta { id: "reasoning-1".into(), delta: "ing.".into() },
            UiChunk::ReasoningEnd { id: "reasoning-1".into() },
            UiChunk::TextStart { id: "text-2".into() },
            UiChunk::TextDelta { id: "text-2".into(), delta: "Checking.".into() },
            UiChunk::TextEnd { id: "text-2".into() },
            UiChunk::ToolInputStart { tool_call_id: "c7".into(), tool_name: "get_weather".into() },
            UiChunk::ToolInputDelta { tool_call_id: "c7".into(), input_text_delta: "{\"city\":".into() },
            UiChunk::ToolInputDelta { tool_call_id: "c7".into(), input_text_delta: "\"Oslo\"}".into() },
        ]
    );
}

#[tokio::test]
async fn a_held_call_asks_for_approval_and_the_resumed_response_only_updates_it() {
    let calls = [ToolCall::new("c1", "get_weather", r#"{"city":"Paris"}"#)];
    let model = ScriptedModel::new().then_calls(calls).then_text("18°C.");
    let tools = Toolset::builder().add(crate::support::GetWeather).build().unwrap();
    let agent = Agent::new(model, tools).unwrap();
    let mut events: Vec<AgentEvent> = agent.stream("Paris?").collect().await;
    let chunks = translate(&events);
    let kinds: Vec<String> = chunks.iter().map(|chunk| format!("{chunk:?}")).collect();
    assert_eq!(
        chunks[chunks.len() - 3],
        UiChunk::ToolApprovalRequest { approval_id: "c1".into(), tool_call_id: "c1".into() },
        "{kinds:#?}"
    );
    assert_eq!(chunks.last(), Some(&UiChunk::Finish { finish_reason: Some("tool-calls") }));

    let Some(AgentEvent::Finished(Ok(result))) = events.pop() else { panic!("no end") };
    let StopReason::Paused(mut state) = result.stop else { panic!("{:?}", result.stop) };
    state.approve("c1").unwrap();
    let events: Vec<AgentEvent> = agent.stream(*state).collect().await;
    let mut adapter = UiAdapter::resuming();
    let chunks: Vec<UiChunk> = events.iter().flat_map(|event| adapter.push(event)).collect();
    // The output first, in the step that holds the call; then the model's new step.
    assert_eq!(
        chunks[..2],
        [
            UiChunk::ToolOutputAvailable {
                tool_call_id: "c1".into(),
                output: json!("18°C and sunny in Paris")
            },
            UiChunk::StartStep
        ]
    );
    assert!(
        !chunks.iter().any(|chunk| matches!(
            chunk,
            UiChunk::ToolInputStart { .. } | UiChunk::ToolInputAvailable { .. }
        ))
    );
}
