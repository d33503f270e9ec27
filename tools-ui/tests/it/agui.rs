//! AG-UI: an agent's events into the protocol's events (a plain answer,
//! a streamed call, a failed run, a held call), and `AguiServer` on
//! loopback with the weather agent on the scripted Chat Completions server:
//! a held call's interrupt, resumed by `resume` entries (approve, deny,
//! an unknown interrupt refused), and a thread's memory.

use futures::StreamExt;
use serde_json::{Value, json};
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Agent, AgentEvent};
use toolcall_core::toolset::Toolset;
use toolcall_ui::{AguiAdapter, AguiEvent, AguiServer};

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
        .then_calls([toolcall_core::ToolCall::new("c1", "get_time", r#"{"zone":"UTC"}"#)])
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
        AgentEvent::ToolCall(toolcall_core::ToolCall::new("c7", "get_weather", r#"{"city":"Oslo"}"#)),
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
    model: toolcall_agent::testing::ScriptedServer,
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
               "message": "`get_weather` needs approval", "toolCallId": "call_1",
               "responseSchema": {"type": "object",
                   "properties": {"approved": {"type": "boolean"},
                                  "reason": {"type": "string", "description": "why not, for the model (a denial)"}},
                   "required": ["approved"]}}]})
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

/// A `RunAgentInput` on `thread` asking `text` (the messages the client
/// holds before it are not read: the thread is in the server's store).
fn ask(thread: &str, run: &str, text: &str) -> Value {
    json!({
        "threadId": thread, "runId": run, "state": {}, "tools": [], "context": [], "forwardedProps": {},
        "messages": [{"id": format!("{run}-user"), "role": "user", "content": text}],
    })
}

/// A `RunAgentInput` on `thread` answering its interrupts with `resume`.
fn resume(thread: &str, run: &str, resume: Value) -> Value {
    json!({
        "threadId": thread, "runId": run, "state": {}, "tools": [], "context": [], "forwardedProps": {},
        "messages": [{"id": "u1", "role": "user", "content": "Weather in Paris?"},
                     {"id": "m1", "role": "assistant", "toolCalls": [{"id": "call_1", "type": "function",
                      "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}],
        "resume": resume,
    })
}

impl Endpoint {
    /// Ask on `thread` and check the run ends with an interrupt for `call`.
    async fn interrupted(&self, thread: &str, run: &str, text: &str, call: &str) {
        let (status, _, body) = self.post(&ask(thread, run, text)).await;
        assert_eq!(status, 200, "{body}");
        let events = events(&body);
        let outcome = &events.last().unwrap()["outcome"];
        assert_eq!(outcome["type"], "interrupt", "{body}");
        assert_eq!(outcome["interrupts"][0]["id"], call, "{body}");
    }
}

#[tokio::test]
async fn a_resume_entry_that_approves_runs_the_held_call_and_finishes_the_run() {
    let endpoint = Endpoint::start().await;
    endpoint.interrupted("thread-a", "run-1", "Weather in Paris?", "call_1").await;
    let answer = json!([{"interruptId": "call_1", "status": "resolved", "payload": {"approved": true}}]);
    let (status, kind, body) = endpoint.post(&resume("thread-a", "run-2", answer)).await;
    assert_eq!((status, kind.as_deref()), (200, Some("text/event-stream")), "{body}");
    let events = events(&body);
    // The held call was shown by the run that paused: only its result
    // now, then the answer (streamed in pieces).
    let kinds = types(&events);
    let n = kinds.len();
    assert_eq!(kinds[..3], ["RUN_STARTED", "TOOL_CALL_RESULT", "TEXT_MESSAGE_START"], "{body}");
    assert!(kinds[3..n - 2].iter().all(|kind| *kind == "TEXT_MESSAGE_CONTENT"), "{body}");
    assert_eq!(kinds[n - 2..], ["TEXT_MESSAGE_END", "RUN_FINISHED"], "{body}");
    assert_eq!(events[0]["runId"], "run-2");
    assert_eq!(events[1]["toolCallId"], "call_1");
    assert_eq!(events[1]["messageId"], "run-2-result-call_1");
    assert_eq!(events[1]["content"], "18°C and sunny in Paris");
    assert_eq!(events[2]["messageId"], "run-2-1");
    let expected = "The tool said: 18°C and sunny in Paris";
    let text: String = events.iter().filter_map(|event| event["delta"].as_str()).collect();
    assert_eq!(text, expected);
    assert_eq!(events[n - 1]["outcome"], json!({"type": "success"}));
    assert_eq!(events[n - 1]["result"], expected);
    // The model's second request: the question, the call, its result.
    let requests = endpoint.model.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1]["messages"].as_array().unwrap();
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(sent[2]["tool_call_id"], "call_1");
    // Answered: the thread waits on nothing, and a second resume finds no pause.
    let (status, _, body) = endpoint
        .post(&resume(
            "thread-a",
            "run-3",
            json!([{"interruptId": "call_1", "status": "resolved", "payload": true}]),
        ))
        .await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("no run waiting"), "{body}");
}

#[tokio::test]
async fn a_resume_entry_that_denies_gives_the_model_the_reason() {
    let endpoint = Endpoint::start().await;
    endpoint.interrupted("thread-d", "run-1", "Weather in Paris?", "call_1").await;
    let answer = json!([{"interruptId": "call_1", "status": "resolved",
                         "payload": {"approved": false, "reason": "not today"}}]);
    let (status, _, body) = endpoint.post(&resume("thread-d", "run-2", answer)).await;
    assert_eq!(status, 200, "{body}");
    let events = events(&body);
    assert_eq!(types(&events)[..2], ["RUN_STARTED", "TOOL_CALL_RESULT"], "{body}");
    let content = events[1]["content"].as_str().unwrap();
    assert!(content.contains("denied") && content.contains("not today"), "{content}");
    let last = events.last().unwrap();
    assert_eq!(last["outcome"], json!({"type": "success"}), "{body}");
    assert!(last["result"].as_str().unwrap().contains("not today"), "{body}");
    // The tool never ran: the model read the denial.
    let requests = endpoint.model.requests();
    let tool = requests[1]["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(tool["role"], "tool");
    assert!(tool["content"].as_str().unwrap().contains("not today"), "{tool}");

    // A cancelled interrupt is a denial too, with a reason of its own.
    endpoint.interrupted("thread-c", "run-1", "Weather in Paris?", "call_3").await;
    let answer = json!([{"interruptId": "call_3", "status": "cancelled"}]);
    let (status, _, body) = endpoint.post(&resume("thread-c", "run-2", answer)).await;
    assert_eq!(status, 200, "{body}");
    assert!(self::events(&body)[1]["content"].as_str().unwrap().contains("cancelled"), "{body}");
}

#[tokio::test]
async fn resume_entries_the_thread_cannot_take_are_refused_before_any_stream() {
    let endpoint = Endpoint::start().await;
    // No such thread; then a thread with nothing paused is another case (409, above).
    let approve =
        |id: &str| json!([{"interruptId": id, "status": "resolved", "payload": {"approved": true}}]);
    let (status, _, body) = endpoint.post(&resume("thread-none", "run-1", approve("call_1"))).await;
    assert_eq!(status, 404, "{body}");

    endpoint.interrupted("thread-u", "run-1", "Weather in Paris?", "call_1").await;
    for (answer, reason) in [
        (approve("call_9"), "no interrupt `call_9`"),
        (json!([{"interruptId": "call_1", "status": "resolved"}]), "no payload"),
        (json!([{"interruptId": "call_1", "status": "maybe"}]), "not a RunAgentInput"),
    ] {
        let (status, kind, body) = endpoint.post(&resume("thread-u", "run-2", answer.clone())).await;
        assert_eq!(status, 400, "{answer}: {body}");
        assert_ne!(kind.as_deref(), Some("text/event-stream"));
        assert!(body.contains(reason), "{answer}: {body}");
    }
    // A new message while the interrupt waits.
    let (status, _, body) = endpoint.post(&ask("thread-u", "run-2", "Hello?")).await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("call_1"), "{body}");
    // Nothing reached the model, and the run still waits: approved, it ends.
    assert_eq!(endpoint.model.requests().len(), 1);
    let (status, _, body) = endpoint.post(&resume("thread-u", "run-3", approve("call_1"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(events(&body).last().unwrap()["outcome"]["type"], "success", "{body}");
}

#[tokio::test]
async fn a_thread_remembers_its_runs_and_threads_are_apart() {
    let endpoint = Endpoint::start().await;
    let approve =
        |id: &str| json!([{"interruptId": id, "status": "resolved", "payload": {"approved": true}}]);
    endpoint.interrupted("thread-m", "run-1", "Weather in Paris?", "call_1").await;
    let (status, _, body) = endpoint.post(&resume("thread-m", "run-2", approve("call_1"))).await;
    assert_eq!(status, 200, "{body}");
    // The second message in the thread: the model is sent the first with it.
    endpoint.interrupted("thread-m", "run-3", "And in Lyon?", "call_3").await;
    let requests = endpoint.model.requests();
    assert_eq!(requests.len(), 3);
    let sent = requests[2]["messages"].as_array().unwrap();
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
    assert_eq!(sent[0]["content"], "Weather in Paris?");
    assert_eq!(sent[3]["content"], "The tool said: 18°C and sunny in Paris");
    assert_eq!(sent[4]["content"], "And in Lyon?");
    // Another thread starts from nothing.
    endpoint.interrupted("thread-n", "run-1", "Hi", "call_4").await;
    let requests = endpoint.model.requests();
    assert_eq!(requests[3]["messages"].as_array().unwrap().len(), 1);
}

/// A result of `tool` for call `id`, with `artifact`.
fn result_with(id: &str, tool: &str, artifact: Value) -> toolcall_core::ToolResult {
    let mut result = toolcall_core::ToolResult::new(id, tool, "18°C", toolcall_core::Outcome::Success);
    result.artifact = Some(artifact);
    result
}

#[test]
fn a_result_s_images_and_files_are_its_content_parts() {
    use toolcall_core::{Media, Outcome, Part, ToolResult};
    let mut result = ToolResult::new("c1", "chart", r#"{"celsius":18}"#, Outcome::Success);
    result.parts.push(Part::Image(Media::bytes(vec![1, 2, 3], "image/png")));
    result.parts.push(Part::File(Media::url("https://example.com/week.pdf", "application/pdf")));
    result.parts.push(Part::Json { value: json!({"hours": 24}) });
    // Bigger than the inline size: no place for it (the AG-UI server serves no files).
    result.parts.push(Part::Image(Media::bytes(vec![0; 4], "image/png")));
    let events =
        AguiAdapter::new("t1", "r1").with_max_inline_bytes(3).push(&AgentEvent::ToolResult(result.clone()));
    let events: Vec<Value> = events.iter().map(|event| serde_json::to_value(event).unwrap()).collect();
    assert_eq!(
        events,
        [json!({"type": "TOOL_CALL_RESULT", "messageId": "r1-result-c1", "toolCallId": "c1", "role": "tool",
        "content": [
            {"type": "text", "text": "{\"celsius\":18}"},
            {"type": "image", "source": {"type": "data", "value": "AQID", "mimeType": "image/png"}},
            {"type": "document", "source": {"type": "url", "value": "https://example.com/week.pdf",
                                            "mimeType": "application/pdf"}},
            {"type": "text", "text": "{\"hours\":24}"},
        ]})]
    );
    // A failed call's content is why, as text, whatever its parts.
    result.outcome = Outcome::Failed;
    let events = AguiAdapter::new("t1", "r1").push(&AgentEvent::ToolResult(result));
    assert!(
        matches!(&events[..], [AguiEvent::ToolCallResult { content, .. }] if content == r#"{"celsius":18}"#),
        "{events:?}"
    );
}

#[test]
fn the_first_artifact_is_the_state_s_snapshot_and_later_ones_its_deltas() {
    let mut adapter = AguiAdapter::new("t1", "r1").with_state(json!({"theme": "dark"}));
    let state_events = |adapter: &mut AguiAdapter, result| -> Vec<Value> {
        let events = adapter.push(&AgentEvent::ToolResult(result));
        assert!(matches!(events[0], AguiEvent::ToolCallResult { .. }), "{events:?}");
        events[1..].iter().map(|event| serde_json::to_value(event).unwrap()).collect()
    };
    let first = state_events(&mut adapter, result_with("c1", "forecast", json!({"celsius": 18})));
    assert_eq!(
        first,
        [json!({"type": "STATE_SNAPSHOT", "snapshot": {"theme": "dark", "forecast": {"celsius": 18}}})]
    );
    // The same tool again replaces its member; another tool adds its own
    // (its name escaped as a JSON Pointer's).
    let again = state_events(&mut adapter, result_with("c2", "forecast", json!({"celsius": 19})));
    assert_eq!(
        again,
        [
            json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/forecast", "value": {"celsius": 19}}]})
        ]
    );
    let other = state_events(&mut adapter, result_with("c3", "a/b~c", json!([1])));
    assert_eq!(
        other,
        [json!({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a~1b~0c", "value": [1]}]})]
    );
    // A failed call's artifact changes nothing; a result without one neither.
    let mut failed = result_with("c4", "forecast", json!({"celsius": -40}));
    failed.outcome = toolcall_core::Outcome::Failed;
    assert_eq!(state_events(&mut adapter, failed), Vec::<Value>::new());
    let plain = toolcall_core::ToolResult::new("c5", "forecast", "18°C", toolcall_core::Outcome::Success);
    assert_eq!(state_events(&mut adapter, plain), Vec::<Value>::new());
    // A state that is not an object is replaced by the snapshot.
    let mut adapter = AguiAdapter::new("t1", "r1").with_state(json!([1, 2]));
    let first = state_events(&mut adapter, result_with("c1", "forecast", json!({"celsius": 18})));
    assert_eq!(first, [json!({"type": "STATE_SNAPSHOT", "snapshot": {"forecast": {"celsius": 18}}})]);
}

/// Today's forecast, with the hours for the page as its artifact.
#[toolcall_macros::tool(args, crate = "toolcall_core")]
async fn forecast(
    _ctx: &toolcall_core::ToolContext,
    city: String,
) -> Result<toolcall_core::Output, toolcall_core::ToolError> {
    Ok(toolcall_core::Output::text(format!("18°C in {city}"))
        .with_artifact(json!({"city": city, "hours": [18, 19]})))
}

#[tokio::test]
async fn the_server_s_snapshot_keeps_the_input_s_state_beside_the_artifact() {
    let model = ScriptedModel::new()
        .then_calls([toolcall_core::ToolCall::new("c1", "forecast", r#"{"city":"Paris"}"#)])
        .then_text("18°C.");
    let agent = Agent::new(model, Toolset::builder().add(Forecast).build().unwrap()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/api/agui", listener.local_addr().unwrap());
    let app = AguiServer::new(agent).router();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mut input = ask("thread-s", "run-1", "Forecast for Paris?");
    input["state"] = json!({"units": "metric"});
    let body = reqwest::Client::new().post(&url).json(&input).send().await.unwrap().text().await.unwrap();
    let events = events(&body);
    let kinds = types(&events);
    let result = kinds.iter().position(|kind| *kind == "TOOL_CALL_RESULT").unwrap();
    assert_eq!(kinds[result + 1], "STATE_SNAPSHOT", "{body}");
    assert_eq!(
        events[result + 1]["snapshot"],
        json!({"units": "metric", "forecast": {"city": "Paris", "hours": [18, 19]}})
    );
    assert_eq!(kinds.last(), Some(&"RUN_FINISHED"));
}
