//! `ChatServer` on loopback, as useChat calls it (the bodies are those
//! `DefaultChatTransport` sends in `ai` 7.0.173: `{ id, messages, trigger,
//! messageId }`, the approval in a tool part in state
//! `approval-responded`), with the agent on the scripted Chat Completions
//! server through the real client, streamed. Each test reads the chunks
//! and what the model server was asked.

use serde_json::{Value, json};
use toolcall_agent::testing::ScriptedServer;
use toolcall_ui::{ANONYMOUS, ChatServer};

use crate::support::{chunks, text, types, weather_agent};

struct Page {
    url: String,
    chat: ChatServer,
    model: ScriptedServer,
    http: reqwest::Client,
}

impl Page {
    async fn start() -> Self {
        let (agent, model) = weather_agent().await;
        let chat = ChatServer::new(agent);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/api/chat", listener.local_addr().unwrap());
        let app = chat.router();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { url, chat, model, http: reqwest::Client::new() }
    }

    /// POST a body: the status, the stream header, the body text.
    async fn post(&self, body: &Value) -> (u16, Option<String>, String) {
        let response = self.http.post(&self.url).json(body).send().await.unwrap();
        let status = response.status().as_u16();
        let header = response
            .headers()
            .get("x-vercel-ai-ui-message-stream")
            .map(|value| value.to_str().unwrap().to_owned());
        (status, header, response.text().await.unwrap())
    }

    /// The calls chat `chat` holds for approval.
    async fn pending(&self, chat: &str) -> Vec<String> {
        self.chat.pending(ANONYMOUS, chat).await.unwrap()
    }

    /// Ask in chat `chat`; the stream's chunks.
    async fn ask(&self, chat: &str, question: &str) -> Vec<Value> {
        let (status, header, body) = self.post(&ask(chat, question)).await;
        assert_eq!((status, header.as_deref()), (200, Some("v1")), "{body}");
        chunks(&body)
    }
}

fn ask(chat: &str, question: &str) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": question}]}
    ]})
}

/// The page's messages after it answered the approval of `call` (as
/// `addToolApprovalResponse` leaves the assistant message).
fn answer(chat: &str, call: &str, approval: Value) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messageId": "a1", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "tool-get_weather", "toolCallId": call, "state": "approval-responded",
             "input": {"city": "Paris"}, "approval": approval}
        ]}
    ]})
}

#[tokio::test]
async fn a_question_streams_the_call_in_pieces_and_asks_for_approval() {
    let page = Page::start().await;
    let chunks = page.ask("c1", "Weather in Paris?").await;
    assert_eq!(
        types(&chunks),
        [
            "start",
            "start-step",
            "tool-input-start",
            "tool-input-delta",
            "tool-input-delta",
            "tool-input-available",
            "tool-approval-request",
            "finish-step",
            "finish"
        ]
    );
    assert_eq!(
        chunks[2],
        json!({"type": "tool-input-start", "toolCallId": "call_1", "toolName": "get_weather"})
    );
    let pieces: String = chunks[3..5].iter().map(|chunk| chunk["inputTextDelta"].as_str().unwrap()).collect();
    assert_eq!(pieces, r#"{"city":"Paris"}"#);
    assert_eq!(chunks[5]["input"], json!({"city": "Paris"}));
    assert_eq!(
        chunks[6],
        json!({"type": "tool-approval-request", "approvalId": "call_1", "toolCallId": "call_1"})
    );
    assert_eq!(chunks[8], json!({"type": "finish", "finishReason": "tool-calls"}));
    assert_eq!(page.pending("c1").await, ["call_1"]);
    let requests = page.model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["stream"], true);
    assert_eq!(requests[0]["messages"][0]["content"], "Weather in Paris?");
}

#[tokio::test]
async fn approved_the_tool_runs_and_the_model_answers_with_its_output() {
    let page = Page::start().await;
    page.ask("c1", "Weather in Paris?").await;
    let (status, header, body) =
        page.post(&answer("c1", "call_1", json!({"id": "call_1", "approved": true}))).await;
    assert_eq!((status, header.as_deref()), (200, Some("v1")), "{body}");
    let chunks = chunks(&body);
    assert_eq!(
        types(&chunks),
        [
            "start",
            "tool-output-available",
            "start-step",
            "text-start",
            "text-delta",
            "text-delta",
            "text-end",
            "finish-step",
            "finish"
        ]
    );
    assert_eq!(
        chunks[1],
        json!({"type": "tool-output-available", "toolCallId": "call_1", "output": "18°C and sunny in Paris"})
    );
    assert_eq!(text(&chunks), "The tool said: 18°C and sunny in Paris");
    assert_eq!(chunks[8]["finishReason"], "stop");
    // The model read the tool's output for its call.
    let requests = page.model.requests();
    let tool = &requests[1]["messages"][2];
    assert_eq!(
        (&tool["role"], &tool["tool_call_id"], &tool["content"]),
        (&json!("tool"), &json!("call_1"), &json!("18°C and sunny in Paris"))
    );
    assert!(page.pending("c1").await.is_empty());

    // The chat goes on from the whole run.
    page.ask("c1", "And in Lyon?").await;
    let messages = page.model.requests()[2]["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages.iter().map(|message| message["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
    assert_eq!(messages[4]["content"], "And in Lyon?");
    // Approving the first call again finds nothing waiting for it.
    let (status, _, body) =
        page.post(&answer("c1", "call_1", json!({"id": "call_1", "approved": true}))).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("`call_1`") && body.contains("call_3"), "{body}");
}

#[tokio::test]
async fn denied_the_tool_does_not_run_and_the_model_reads_the_reason() {
    let page = Page::start().await;
    page.ask("c1", "Weather in Paris?").await;
    let approval = json!({"id": "call_1", "approved": false, "reason": "not today"});
    let (status, _, body) = page.post(&answer("c1", "call_1", approval)).await;
    assert_eq!(status, 200, "{body}");
    let chunks = chunks(&body);
    assert_eq!(types(&chunks)[..3], ["start", "tool-output-denied", "start-step"]);
    assert_eq!(chunks[1], json!({"type": "tool-output-denied", "toolCallId": "call_1"}));
    let said = text(&chunks);
    assert!(said.contains("denied") && said.contains("not today"), "{said}");
    let requests = page.model.requests();
    let tool = requests[1]["messages"][2]["content"].as_str().unwrap();
    assert!(tool.contains("not today") && !tool.contains("sunny"), "{tool}");
}

#[tokio::test]
async fn an_unknown_approval_id_is_refused_and_the_run_still_waits_for_the_real_one() {
    let page = Page::start().await;
    page.ask("c1", "Weather in Paris?").await;
    let (status, header, body) =
        page.post(&answer("c1", "call_1", json!({"id": "call_forged", "approved": true}))).await;
    assert_eq!((status, header), (400, None));
    assert_eq!(body, "no call waiting for approval has the id `call_forged`; the pending calls are: call_1");
    assert_eq!(page.pending("c1").await, ["call_1"]);
    assert_eq!(page.model.requests().len(), 1, "nothing ran, the model was not asked");

    let (status, _, body) =
        page.post(&answer("c1", "call_1", json!({"id": "call_1", "approved": true}))).await;
    assert_eq!(status, 200);
    assert_eq!(text(&chunks(&body)), "The tool said: 18°C and sunny in Paris");
}

#[tokio::test]
async fn requests_that_fit_no_run_are_refused_with_a_reason() {
    let page = Page::start().await;
    // Approvals in a chat that does not exist.
    let (status, _, body) =
        page.post(&answer("c9", "call_1", json!({"id": "call_1", "approved": true}))).await;
    assert_eq!((status, body.as_str()), (404, "there is no chat `c9`"));
    // A new question while a call waits.
    page.ask("c1", "Weather in Paris?").await;
    let (status, _, body) = page.post(&ask("c1", "Never mind")).await;
    assert_eq!(status, 409);
    assert!(body.contains("call_1"), "{body}");
    assert_eq!(page.pending("c1").await, ["call_1"]);
    // Approvals in a chat whose run did not pause: the refusal says how it ended.
    page.post(&answer("c1", "call_1", json!({"id": "call_1", "approved": true}))).await;
    let (status, _, body) =
        page.post(&answer("c1", "call_1", json!({"id": "call_1", "approved": true}))).await;
    let ended = "chat `c1` has no run waiting for approval: its run ended, answering `The tool said: 18°C and \
                 sunny in Paris`";
    assert_eq!((status, body.as_str()), (409, ended));
    // Not a chat request at all.
    let (status, _, body) = page.post(&json!({"messages": "hi"})).await;
    assert_eq!(status, 400);
    assert!(body.starts_with("not a useChat request body"), "{body}");
    assert_eq!(page.model.requests().len(), 2);
}

fn regenerate(chat: &str, question: &str) -> Value {
    let mut body = ask(chat, question);
    body["trigger"] = json!("regenerate-message");
    body
}

/// The roles of the messages the model was sent in request `index`.
fn roles(page: &Page, index: usize) -> Vec<String> {
    let requests = page.model.requests();
    let messages = requests[index]["messages"].as_array().unwrap();
    messages.iter().map(|message| message["role"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_regenerated_answer_replaces_the_last_one_finished_or_waiting() {
    let page = Page::start().await;
    page.ask("c1", "Weather in Paris?").await;
    page.post(&answer("c1", "call_1", json!({"id": "call_1", "approved": true}))).await;
    assert_eq!(roles(&page, 1), ["user", "assistant", "tool"]);

    // Regenerated after it finished: the model sees the question once.
    let (status, _, body) = page.post(&regenerate("c1", "Weather in Paris?")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(roles(&page, 2), ["user"]);
    assert_eq!(page.pending("c1").await, ["call_3"]);

    // Regenerated while its call waits: the held call is dropped, never run.
    let (status, _, body) = page.post(&regenerate("c1", "Weather in Lyon?")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(roles(&page, 3), ["user"]);
    assert_eq!(page.model.requests()[3]["messages"][0]["content"], "Weather in Lyon?");
    assert_eq!(page.pending("c1").await, ["call_4"]);

    // A follow-up after it keeps the whole chat.
    page.post(&answer("c1", "call_4", json!({"id": "call_4", "approved": false}))).await;
    page.ask("c1", "Thanks").await;
    assert_eq!(roles(&page, 5), ["user", "assistant", "tool", "assistant", "user"]);
}

/// A sub-agent's call that needs approval pauses the chat's run: the page
/// is asked on the agent-tool call it shows (the sub-agent's call, whose id
/// is the lead's own here, never reaches it), approves it by the id it was
/// given, and the resumed run goes on in the sub-agent, then in the lead.
#[tokio::test]
async fn the_page_approves_a_sub_agents_call_on_the_agent_tool_call_it_shows() {
    use std::sync::Arc;
    use toolcall_agent::Agent;
    use toolcall_agent::testing::ScriptedModel;
    use toolcall_core::{ToolCall, Toolset};

    let weather = || ToolCall::new("call_1", "get_weather", r#"{"city":"Paris"}"#);
    let inner = Arc::new(ScriptedModel::new().then_calls([weather()]).then_text("18°C in Paris."));
    let forecaster = Agent::from_shared(
        inner.clone(),
        Toolset::builder().add(crate::support::GetWeather).build().unwrap(),
    )
    .unwrap()
    .as_tool("forecaster", "Knows the weather.");
    let lead = ScriptedModel::new()
        .then_calls([ToolCall::new("call_1", "forecaster", r#"{"prompt":"Weather in Paris?"}"#)])
        .then_text("It is 18°C.");
    let agent = Agent::new(lead, Toolset::builder().add(forecaster).build().unwrap()).unwrap();
    let chat = ChatServer::new(agent);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/api/chat", listener.local_addr().unwrap());
    let app = chat.router();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let http = reqwest::Client::new();

    let body =
        http.post(&url).json(&ask("s1", "Weather in Paris?")).send().await.unwrap().text().await.unwrap();
    let asked = chunks(&body);
    assert_eq!(
        types(&asked),
        [
            "start",
            "start-step",
            "tool-input-start",
            "tool-input-available",
            "tool-approval-request",
            "data-approval",
            "finish-step",
            "finish"
        ],
        "{body}"
    );
    assert_eq!(asked[3]["toolName"], "forecaster");
    assert_eq!(
        asked[4],
        json!({"type": "tool-approval-request", "approvalId": "call_1/call_1", "toolCallId": "call_1"})
    );
    // What the person is asked about: the forecaster's own call.
    assert_eq!(
        asked[5],
        json!({"type": "data-approval", "id": "call_1/call_1", "data": {
            "toolCallId": "call_1", "path": ["forecaster"], "toolName": "get_weather", "input": {"city": "Paris"}
        }})
    );
    assert_eq!(chat.pending(ANONYMOUS, "s1").await.unwrap(), ["call_1/call_1"]);

    let approved = json!({"id": "s1", "trigger": "submit-message", "messageId": "a1", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "tool-forecaster", "toolCallId": "call_1", "state": "approval-responded",
             "input": {"prompt": "Weather in Paris?"}, "approval": {"id": "call_1/call_1", "approved": true}}
        ]}
    ]});
    let response = http.post(&url).json(&approved).send().await.unwrap();
    let status = response.status().as_u16();
    let body = response.text().await.unwrap();
    assert_eq!(status, 200, "{body}");
    let resumed = chunks(&body);
    let output = resumed
        .iter()
        .find(|chunk| chunk["type"] == "tool-output-available")
        .unwrap_or_else(|| panic!("{body}"));
    assert_eq!(output["toolCallId"], "call_1");
    assert_eq!(output["output"], "18°C in Paris.");
    assert_eq!(text(&resumed), "It is 18°C.");
    assert!(chat.pending(ANONYMOUS, "s1").await.unwrap().is_empty());
    // The forecaster went on where it paused: asked twice in all, the
    // second time with the weather tool's result.
    let seen = inner.seen();
    assert_eq!(seen.len(), 2);
    assert!(matches!(seen[1].messages.last(), Some(toolcall_agent::Message::Tool { results })
        if results[0].content.contains("18°C and sunny in Paris")));
}
