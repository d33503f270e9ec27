//! AG-UI: an agent's events into the protocol's events (a plain answer,
//! a streamed call, a failed run, a held call), and `AguiServer` on
//! loopback with the weather agent on the scripted Chat Completions server.

use futures::StreamExt;
use serde_json::{Value, json};
use tools_agent::{Agent, AgentEvent, ScriptedModel};
use tools_core::toolset::Toolset;
use tools_ui::{AguiAdapter, AguiEvent, AguiServer};

use crate::support::weather_agent;

/// The events of an AG-UI SSE body, in order; panics unless every event is `data: ` JSON.
fn events(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let data = event.strip_prefix("data: ").unwrap_or_else(|| panic!("not a data event: {event}"));
            serde_json::from_str(data).unwrap_or_else(|error| panic!("{error}: {data}"))
        })
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|event| event["type"].as_str().unwrap_or("?")).collect()
}

async fn body(agent: &Agent, prompt: &str) -> Vec<Value> {
    let frames: Vec<String> = AguiAdapter::new("t1", "r1").stream(agent.stream(prompt)).collect().await;
    events(&frames.concat())
}

#[tokio::test]
async fn a_plain_answer_is_one_text_message_in_a_finished_run() {
    let agent =
        Agent::new(ScriptedModel::new().then_text("Hello there."), Toolset::builder().build().unwrap())
            .unwrap();
    let events = body(&agent, "Hi").await;
    assert_eq!(
        types(&events),
        ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]
    );
    assert_eq!(events[0], json!({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}));
    assert_eq!(events[1], json!({"type": "TEXT_MESSAGE_START", "messageId": "r1-1", "role": "assistant"}));
    assert_eq!(events[2]["delta"], "Hello there.");
    assert_eq!(
        events[4],
        json!({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1", "result": "Hello there.",
               "outcome": {"type": "success"}})
    );
}

#[tokio::test]
async fn a_call_s_result_is_a_tool_message_and_the_next_turn_a_new_assistant_message() {
    // No tool has this name: the result is an error the model reads.
    let model = ScriptedModel::new()
        .then_calls([tools_core::ToolCall::new("c1", "get_time", r#"{"zone":"UTC"}"#)])
        .then_text("No clock here.");
    let agent = Agent::new(model, Toolset::builder().build().unwrap()).unwrap();
    let events = body(&agent, "Time?").await;
    assert_eq!(
        types(&events),
        [
            "RUN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(
        events[1],
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "get_time", "parentMessageId": "r1-1"})
    );
    assert_eq!(events[2]["delta"], r#"{"zone":"UTC"}"#);
    assert_eq!(events[4]["messageId"], "r1-result-c1");
    assert_eq!(events[4]["toolCallId"], "c1");
    assert_eq!(events[4]["role"], "tool");
    assert!(events[4]["content"].as_str().unwrap().contains("get_time"), "{}", events[4]);
    assert_eq!(events[5]["messageId"], "r1-2");
    assert_eq!(events[8]["result"], "No clock here.");
}

#[tokio::test]
async fn a_failed_run_ends_in_run_error() {
    // The script is empty: the first request fails.
    let agent = Agent::new(ScriptedModel::new(), Toolset::builder().build().unwrap()).unwrap();
    let events = body(&agent, "Hi").await;
    assert_eq!(types(&events), ["RUN_STARTED", "RUN_ERROR"]);
    assert!(!events[1]["message"].as_str().unwrap().is_empty());
}

#[test]
fn reasoning_is_its_own_message_and_a_streamed_call_waits_for_its_id_and_ends_with_the_turn() {
    let delta = |index, id: Option<&str>, name: Option<&str>, arguments: &str| AgentEvent::CallDelta {
        index,
        id: id.map(str::to_owned),
        name: name.map(str::to_owned),
        arguments: arguments.to_owned(),
    };
    let mut adapter = AguiAdapter::new("t", "r");
    let events: Vec<AguiEvent> = [
        AgentEvent::ReasoningDelta("Think.".into()),
        AgentEvent::TextDelta("Checking.".into()),
        delta(0, None, None, "{\"ci"),
        delta(0, Some("c7"), Some("get_weather"), "ty\":"),
        delta(0, None, None, "\"Oslo\"}"),
        AgentEvent::Usage(Default::default()),
        // The loop's whole call after the stream shows nothing new.
        AgentEvent::ToolCall(tools_core::ToolCall::new("c7", "get_weather", r#"{"city":"Oslo"}"#)),
    ]
    .iter()
    .flat_map(|event| adapter.push(event))
    .collect();
    let id = |id: &str| id.to_owned();
    assert_eq!(
        events,
        [
            AguiEvent::ReasoningStart { message_id: id("r-1") },
            AguiEvent::ReasoningMessageStart { message_id: id("r-1"), role: id("reasoning") },
            AguiEvent::ReasoningMessageContent { message_id: id("r-1"), delta: id("Think.") },
            AguiEvent::ReasoningMessageEnd { message_id: id("r-1") },
            AguiEvent::ReasoningEnd { message_id: id("r-1") },
            AguiEvent::TextMessageStart { message_id: id("r-2"), role: id("assistant") },
            AguiEvent::TextMessageContent { message_id: id("r-2"), delta: id("Checking.") },
            AguiEvent::TextMessageEnd { message_id: id("r-2") },
            AguiEvent::ToolCallStart {
                tool_call_id: id("c7"),
                tool_call_name: id("get_weather"),
                parent_message_id: Some(id("r-2"))
            },
            AguiEvent::ToolCallArgs { tool_call_id: id("c7"), delta: id("{\"city\":") },
            AguiEvent::ToolCallArgs { tool_call_id: id("c7"), delta: id("\"Oslo\"}") },
            AguiEvent::ToolCallEnd { tool_call_id: id("c7") },
        ]
    );
}

struct Endpoint {
    url: String,
    model: tools_agent::scripted_server::ScriptedServer,
}

impl Endpoint {
    async fn start() -> Self {
        let (agent, model) = weather_agent().await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/api/agui", listener.local_addr().unwrap());
        let app = AguiServer::new(agent).router();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { url, model }
    }

    async fn post(&self, body: &Value) -> (u16, Option<String>, String) {
        let response = reqwest::Client::new().post(&self.url).json(body).send().await.unwrap();
        let status = response.status().as_u16();
        let kind = response.headers().get("content-type").map(|value| value.to_str().unwrap().to_owned());
        (status, kind, response.text().await.unwrap())
    }
}

#[tokio::test]
async fn a_held_call_ends_the_run_with_an_interrupt_naming_it() {
    let endpoint = Endpoint::start().await;
    let input = json!({
        "threadId": "thread-1", "runId": "run-1", "state": {}, "tools": [], "context": [],
        "forwardedProps": {},
        "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}],
    });
    let (status, kind, body) = endpoint.post(&input).await;
    assert_eq!((status, kind.as_deref()), (200, Some("text/event-stream")), "{body}");
    let events = events(&body);
    // The scripted server streams the arguments in pieces.
    let kinds = types(&events);
    let n = kinds.len();
    assert_eq!(kinds[..2], ["RUN_STARTED", "TOOL_CALL_START"], "{kinds:?}");
    assert!(n > 5 && kinds[2..n - 2].iter().all(|kind| *kind == "TOOL_CALL_ARGS"), "{kinds:?}");
    assert_eq!(kinds[n - 2..], ["TOOL_CALL_END", "RUN_FINISHED"], "{kinds:?}");
    assert_eq!(events[1]["toolCallId"], "call_1");
    assert_eq!(events[1]["toolCallName"], "get_weather");
    let args: String = events.iter().filter_map(|event| event["delta"].as_str()).collect();
    assert_eq!(serde_json::from_str::<Value>(&args).unwrap(), json!({"city": "Paris"}));
    assert_eq!(
        events[n - 1]["outcome"],
        json!({"type": "interrupt", "interrupts": [{"id": "call_1", "reason": "tool_approval",
               "message": "`get_weather` needs approval", "toolCallId": "call_1"}]})
    );
    // The model was asked once, with the user's text; the tool never ran.
    let requests = endpoint.model.requests();
    assert_eq!(requests.len(), 1);
    let asked = requests[0]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(asked["content"], "Weather in Paris?");
}

#[tokio::test]
async fn inputs_without_a_user_message_s_text_are_refused() {
    let endpoint = Endpoint::start().await;
    for (input, reason) in [
        (json!({"threadId": "t"}), "not a RunAgentInput"),
        (json!({"threadId": "t", "runId": "r", "messages": []}), "no messages"),
        (
            json!({"threadId": "t", "runId": "r", "messages": [{"id": "a", "role": "assistant", "content": "Hi"}]}),
            "not \"user\"",
        ),
        (
            json!({"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": ""}]}),
            "no text",
        ),
    ] {
        let (status, _, body) = endpoint.post(&input).await;
        assert_eq!(status, 400, "{input}: {body}");
        assert!(body.contains(reason), "{input}: {body}");
    }
    assert!(endpoint.model.requests().is_empty());
}
