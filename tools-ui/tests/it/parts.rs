//! What a tool gives beyond its text, and the run's typed answer, in the
//! UI message stream: JSON output as JSON, images and files as `file`
//! chunks, the artifact as a `data-{tool}` part, the typed answer as
//! `data-answer`; and the same in a stored chat's UI messages.

use futures::StreamExt;
use serde_json::json;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Agent, AgentEvent, Message, RunResult, StopReason, Transcript};
use toolcall_core::toolset::Toolset;
use toolcall_core::{Media, Outcome, Output, Part, ToolCall, ToolContext, ToolError, ToolResult};
use toolcall_macros::tool;
use toolcall_ui::{UiAdapter, UiChunk, ui_messages};

/// The weather now as JSON, a chart and the hourly data for the page.
#[tool(args, crate = "toolcall_core")]
async fn forecast(_ctx: &ToolContext, city: String) -> Result<Output, ToolError> {
    Ok(Output::text(json!({"city": city, "celsius": 18}).to_string())
        .with_image(Media::bytes(vec![1, 2, 3], "image/png"))
        .with_file(Media::url("https://example.com/week.pdf", "application/pdf"))
        .with_artifact(json!({"hours": [{"hour": "14:00", "celsius": 18}]})))
}

fn success(content: &str) -> ToolResult {
    ToolResult::new("c1", "tool", content, Outcome::Success)
}

#[test]
fn a_json_object_or_array_is_output_as_json_and_anything_else_as_a_string() {
    let output = |content: &str| match &UiAdapter::new().push(&AgentEvent::ToolResult(success(content)))[1] {
        UiChunk::ToolOutputAvailable { output, .. } => output.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(output(r#"{"celsius": 18}"#), json!({"celsius": 18}));
    assert_eq!(output(" [1, 2]"), json!([1, 2]));
    assert_eq!(output("18°C and sunny"), json!("18°C and sunny"));
    // JSON that is not an object or array, or not JSON at all, stays text.
    assert_eq!(output("42"), json!("42"));
    assert_eq!(output(r#""quoted""#), json!(r#""quoted""#));
    assert_eq!(output("{not json"), json!("{not json"));
}

#[tokio::test]
async fn a_tool_s_image_file_and_artifact_follow_its_output_in_the_stream() {
    let model = ScriptedModel::new()
        .then_calls([ToolCall::new("c1", "forecast", r#"{"city":"Paris"}"#)])
        .then_text("18°C.");
    let agent = Agent::new(model, Toolset::builder().add(Forecast).build().unwrap()).unwrap();
    let mut adapter = UiAdapter::new();
    let events: Vec<AgentEvent> = agent.stream("Paris?").collect().await;
    let chunks: Vec<UiChunk> = events.iter().flat_map(|event| adapter.push(event)).collect();
    let chunks: Vec<_> = chunks.iter().map(|chunk| serde_json::to_value(chunk).unwrap()).collect();
    assert_eq!(
        chunks,
        [
            json!({"type": "start-step"}),
            json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "forecast"}),
            json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "forecast", "input": {"city": "Paris"}}),
            json!({"type": "tool-output-available", "toolCallId": "c1", "output": {"city": "Paris", "celsius": 18}}),
            json!({"type": "file", "url": "data:image/png;base64,AQID", "mediaType": "image/png"}),
            json!({"type": "file", "url": "https://example.com/week.pdf", "mediaType": "application/pdf"}),
            json!({"type": "data-forecast", "id": "c1", "data": {"hours": [{"hour": "14:00", "celsius": 18}]}}),
            json!({"type": "finish-step"}),
            json!({"type": "start-step"}),
            json!({"type": "text-start", "id": "text-1"}),
            json!({"type": "text-delta", "id": "text-1", "delta": "18°C."}),
            json!({"type": "text-end", "id": "text-1"}),
            json!({"type": "finish-step"}),
            json!({"type": "finish", "finishReason": "stop"}),
        ]
    );
}

#[test]
fn bytes_over_the_inline_size_are_left_out_and_a_failed_call_shows_no_parts() {
    let mut result = success("The chart:");
    result.parts.push(Part::Image(Media::bytes(vec![0; 300 * 1024], "image/png")));
    result.parts.push(Part::Image(Media::bytes(vec![0; 256 * 1024], "image/png")));
    let chunks = UiAdapter::new().push(&AgentEvent::ToolResult(result.clone()));
    // The default: 256 KiB, inclusive.
    assert_eq!(chunks.len(), 3, "{:?}", &chunks[..2]);
    assert!(matches!(&chunks[2], UiChunk::File { url, .. } if url.starts_with("data:image/png;base64,AAAA")));
    let chunks = UiAdapter::new().with_max_inline_bytes(1024).push(&AgentEvent::ToolResult(result.clone()));
    assert_eq!(
        chunks,
        [
            UiChunk::StartStep,
            UiChunk::ToolOutputAvailable { tool_call_id: "c1".into(), output: json!("The chart:") }
        ]
    );

    result.outcome = Outcome::Failed;
    result.artifact = Some(json!({"rows": 1}));
    let chunks = UiAdapter::new().push(&AgentEvent::ToolResult(result));
    assert_eq!(
        chunks,
        [
            UiChunk::StartStep,
            UiChunk::ToolOutputError { tool_call_id: "c1".into(), error_text: "The chart:".into() }
        ]
    );
}

#[test]
fn a_later_chunk_of_the_same_data_part_has_its_type_and_id() {
    let chunk = UiChunk::data("forecast", "c1", json!({"hours": []}));
    assert_eq!(
        chunk.to_sse(),
        "data: {\"type\":\"data-forecast\",\"id\":\"c1\",\"data\":{\"hours\":[]}}\n\n"
    );
}

fn ended(typed_answer: Option<serde_json::Value>, stop: StopReason) -> AgentEvent {
    AgentEvent::Finished(Ok(RunResult {
        answer: "Sunny.".into(),
        typed_answer,
        transcript: Transcript::default(),
        usage: Vec::new(),
        models: Vec::new(),
        stop,
        agent: None,
    }))
}

#[test]
fn the_typed_answer_is_a_data_answer_part_after_its_text() {
    let mut adapter = UiAdapter::new();
    let events = [
        AgentEvent::TextDelta("Sunny.".into()),
        ended(Some(json!({"city": "Paris", "celsius": 18})), StopReason::Answered),
    ];
    let chunks: Vec<UiChunk> = events.iter().flat_map(|event| adapter.push(event)).collect();
    let chunks: Vec<_> = chunks.iter().map(|chunk| serde_json::to_value(chunk).unwrap()).collect();
    assert_eq!(
        chunks,
        [
            json!({"type": "start-step"}),
            json!({"type": "text-start", "id": "text-1"}),
            json!({"type": "text-delta", "id": "text-1", "delta": "Sunny."}),
            json!({"type": "text-end", "id": "text-1"}),
            json!({"type": "data-answer", "id": "answer", "data": {"city": "Paris", "celsius": 18}}),
            json!({"type": "finish-step"}),
            json!({"type": "finish", "finishReason": "stop"}),
        ]
    );
    // Without an answer type, none.
    let chunks = UiAdapter::new().push(&ended(None, StopReason::Answered));
    assert_eq!(chunks, [UiChunk::Finish { finish_reason: Some("stop") }]);
}

#[test]
fn a_stored_chat_gives_json_output_files_and_the_artifact_too() {
    let call = ToolCall::new("c1", "forecast", r#"{"city":"Paris"}"#);
    let mut result = ToolResult::new("c1", "forecast", r#"{"celsius":18}"#, Outcome::Success);
    result.parts.push(Part::Image(Media::bytes(vec![1, 2, 3], "image/png")));
    result.artifact = Some(json!({"hours": []}));
    let messages = [
        Message::user("Paris?"),
        Message::assistant("", [call]),
        Message::Tool { results: vec![result] },
        Message::assistant("18°C.", []),
    ];
    let page = ui_messages(&messages, None);
    assert_eq!(
        page[1]["parts"],
        json!([
            {"type": "step-start"},
            {"type": "tool-forecast", "toolCallId": "c1", "state": "output-available",
             "input": {"city": "Paris"}, "output": {"celsius": 18}},
            {"type": "file", "url": "data:image/png;base64,AQID", "mediaType": "image/png"},
            {"type": "data-forecast", "id": "c1", "data": {"hours": []}},
            {"type": "step-start"},
            {"type": "text", "text": "18°C.", "state": "done"},
        ])
    );
}

#[tokio::test]
async fn a_handoff_is_a_data_agent_part_naming_who_answers() {
    use toolcall_agent::Handoff;

    let billing =
        Agent::new(ScriptedModel::new().then_text("Refunded."), Toolset::new()).unwrap().with_name("billing");
    let triage = ScriptedModel::new().then_calls([ToolCall::new("c1", "transfer_to_billing", "{}")]);
    let triage = Agent::new(triage, Toolset::new()).unwrap().with_handoff(Handoff::to(&billing)).unwrap();
    let events: Vec<AgentEvent> = triage.stream("Refund A7.").collect().await;
    let mut adapter = UiAdapter::new();
    let chunks: Vec<UiChunk> = events.iter().flat_map(|event| adapter.push(event)).collect();
    let chunks: Vec<_> = chunks.iter().map(|chunk| serde_json::to_value(chunk).unwrap()).collect();
    let agent = json!({"type": "data-agent", "id": "agent", "data": {"name": "billing"}});
    let at = chunks.iter().position(|chunk| *chunk == agent).unwrap();
    // After the handoff call's result, before billing's text.
    let result = chunks.iter().position(|chunk| chunk["type"] == "tool-output-available").unwrap();
    let text = chunks.iter().position(|chunk| chunk["type"] == "text-delta").unwrap();
    assert!(result < at && at < text, "{chunks:?}");
    assert_eq!(chunks[text]["delta"], "Refunded.");
}
