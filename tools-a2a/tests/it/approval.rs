//! A remote agent's held call pauses the calling run: an outer agent whose
//! tool is an `A2aAgent` pointing at an `A2aServer`, whose agent holds a
//! call for approval.

use std::sync::{Arc, Mutex};

use axum::routing::post;
use futures::StreamExt as _;
use serde_json::{Value, json};
use toolcall_a2a::A2aAgent;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Agent, AgentEvent, Message, Pending, RunResult, RunState, StopReason};
use toolcall_core::{Outcome, Tool, ToolCall, ToolContext, ToolResult, Toolset};

use crate::{REMOVED, serve_shared};

/// The peer's model: remove `path` (held for approval), then say so.
fn peer_model(path: &str, then: &str) -> Arc<ScriptedModel> {
    Arc::new(
        ScriptedModel::new()
            .then_calls([ToolCall::new("call-1", "remove_dir", format!(r#"{{"path":"{path}"}}"#))])
            .then_text(then),
    )
}

/// The calling agent over `model`, with the peer at `url` as its tool
/// `janitor`, streaming or polling: what each process builds alike.
async fn lead(url: &str, model: &Arc<ScriptedModel>, streaming: bool) -> Agent {
    let janitor = A2aAgent::connect(url).await.unwrap().with_streaming(streaming);
    assert_eq!(janitor.spec().name(), "janitor");
    Agent::from_shared(model.clone(), Toolset::builder().add(janitor).build().unwrap()).unwrap()
}

fn ask_janitor() -> ScriptedModel {
    ScriptedModel::new().then_calls([ToolCall::new("a1", "janitor", r#"{"prompt":"Clean up"}"#)])
}

/// The paused state, through JSON as another process reads it.
fn saved(result: &RunResult) -> RunState {
    let StopReason::Paused(state) = &result.stop else { panic!("not paused: {:?}", result.stop) };
    serde_json::from_str(&serde_json::to_string(state).unwrap()).unwrap()
}

/// The results the model read last.
fn read_results(model: &ScriptedModel) -> Vec<ToolResult> {
    let seen = model.seen();
    let Some(Message::Tool { results }) = seen.last().and_then(|seen| seen.messages.last()) else {
        panic!("{seen:?}")
    };
    results.clone()
}

fn removed(path: &str) -> usize {
    REMOVED.lock().unwrap().iter().filter(|removed| *removed == path).count()
}

async fn approved_the_remote_call_runs_once_and_the_lead_reads_the_answer(streaming: bool) {
    let path = if streaming { "a2a-approved-streamed" } else { "a2a-approved-polled" };
    let url = serve_shared(peer_model(path, &format!("Removed {path}."))).await;
    let outer = Arc::new(ask_janitor());
    let result = lead(&url, &outer, streaming).await.run("Tidy up").await.unwrap();
    let mut state = saved(&result);
    let [pending] = state.pending() else { panic!("{:?}", state.pending()) };
    assert_eq!(pending.call.name, "remove_dir");
    assert_eq!(pending.call.arguments, format!(r#"{{"path":"{path}"}}"#));
    assert_eq!(pending.path, ["janitor"]);
    assert_eq!(pending.call_path, ["a1"]);
    assert_eq!(pending.id(), "a1/call-1");
    assert_eq!(removed(path), 0);
    assert_eq!(outer.seen().len(), 1);

    // Another process: a fresh tool and agent, the lead's model with what
    // is left to say.
    state.approve("a1/call-1").unwrap();
    let outer = Arc::new(ScriptedModel::new().then_text("The janitor cleaned up."));
    let result = lead(&url, &outer, streaming).await.run(state).await.unwrap();
    assert_eq!((result.answer.as_str(), &result.stop), ("The janitor cleaned up.", &StopReason::Answered));
    assert_eq!(removed(path), 1);
    let read = read_results(&outer);
    assert_eq!(
        (read[0].id.as_str(), read[0].outcome, read[0].content.as_str()),
        ("a1", Outcome::Success, format!("Removed {path}.").as_str())
    );
}

#[tokio::test]
async fn a_remote_held_call_pauses_the_run_and_approved_runs_once_streamed() {
    approved_the_remote_call_runs_once_and_the_lead_reads_the_answer(true).await;
}

#[tokio::test]
async fn a_remote_held_call_pauses_the_run_and_approved_runs_once_polled() {
    approved_the_remote_call_runs_once_and_the_lead_reads_the_answer(false).await;
}

#[tokio::test]
async fn denied_the_peers_model_reads_the_denial() {
    let path = "a2a-denied";
    let peer = peer_model(path, "I was not allowed to remove it.");
    let url = serve_shared(peer.clone()).await;
    let outer = Arc::new(ask_janitor());
    let result = lead(&url, &outer, true).await.run("Tidy up").await.unwrap();
    let mut state = saved(&result);
    state.deny("a1/call-1", "it is still in use").unwrap();
    let outer = Arc::new(ScriptedModel::new().then_text("Nothing was removed."));
    let result = lead(&url, &outer, true).await.run(state).await.unwrap();
    assert_eq!(result.answer, "Nothing was removed.");
    assert_eq!(removed(path), 0);
    // The peer's model read the denial as its call's result.
    let Some(Message::Tool { results }) = peer.seen().last().and_then(|seen| seen.messages.last()).cloned()
    else {
        panic!("{:?}", peer.seen())
    };
    assert_eq!(results[0].outcome, Outcome::Denied);
    assert!(results[0].content.contains("it is still in use"), "{}", results[0].content);
    assert_eq!(read_results(&outer)[0].content, "I was not allowed to remove it.");
}

#[tokio::test]
async fn a_streamed_run_asks_about_the_remote_call() {
    let path = "a2a-asked";
    let url = serve_shared(peer_model(path, "Removed.")).await;
    let outer = Arc::new(ask_janitor());
    let agent = lead(&url, &outer, true).await;
    let events: Vec<AgentEvent> = agent.stream("Tidy up").collect().await;
    let asked: Vec<&Pending> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ApprovalRequested(pending) => Some(pending),
            _ => None,
        })
        .collect();
    let [asked] = asked.as_slice() else { panic!("{events:?}") };
    assert_eq!((asked.id().as_str(), asked.path.as_slice()), ("a1/call-1", &["janitor".to_owned()][..]));
    // The held call has no result: it waits with the remote task.
    assert!(!events.iter().any(|event| matches!(event, AgentEvent::ToolResult(_))), "{events:?}");
    let Some(AgentEvent::Finished(Ok(result))) = events.last() else { panic!("{events:?}") };
    let mut state = saved(result);
    assert_eq!(state.pending(), [(*asked).clone()]);

    // Resumed, streamed too: no question is left, and the answer comes.
    state.approve("a1/call-1").unwrap();
    let outer = Arc::new(ScriptedModel::new().then_text("Done."));
    let events: Vec<AgentEvent> = lead(&url, &outer, true).await.stream(state).collect().await;
    assert!(!events.iter().any(|event| matches!(event, AgentEvent::ApprovalRequested(_))), "{events:?}");
    let Some(AgentEvent::Finished(Ok(result))) = events.last() else { panic!("{events:?}") };
    assert_eq!(result.answer, "Done.");
    assert_eq!(removed(path), 1);
}

#[tokio::test]
async fn called_outside_a_run_a_waiting_task_is_still_an_error() {
    let url = serve_shared(peer_model("a2a-outside", "Removed.")).await;
    let janitor = A2aAgent::connect(&url).await.unwrap();
    let err = janitor.call_text(&ToolContext::new(), r#"{"prompt":"Clean up"}"#).await.unwrap_err();
    assert!(err.to_string().contains("TASK_STATE_INPUT_REQUIRED"), "{err}");
}

/// A peer that is not a toolcall server: its task waits for input with
/// text only, and the next message on it completes it with what it said.
async fn text_peer(said: Arc<Mutex<Vec<Value>>>) -> String {
    let rpc = post(move |body: String| {
        let said = said.clone();
        async move {
            let request: Value = serde_json::from_str(&body).unwrap();
            let message = &request["params"]["message"];
            let (state, text) = match message["taskId"].as_str() {
                Some(_) => {
                    said.lock().unwrap().push(message.clone());
                    let text = message["parts"][0]["text"].as_str().unwrap_or_default().to_owned();
                    ("TASK_STATE_COMPLETED", format!("done: {text}"))
                }
                None => ("TASK_STATE_INPUT_REQUIRED", "Delete the whole folder? Say approve.".to_owned()),
            };
            let task = json!({
                "id": "t-1", "contextId": "ctx-1",
                "status": {"state": state, "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": text}]}},
            });
            json!({"jsonrpc": "2.0", "id": request["id"], "result": {"task": task}}).to_string()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "janitor", "description": "", "version": "1",
        "supportedInterfaces": [{"url": format!("{url}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
    })
    .to_string();
    let router = axum::Router::new()
        .route("/.well-known/agent-card.json", axum::routing::get(move || async move { card }))
        .route("/rpc", rpc);
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

#[tokio::test]
async fn a_peer_that_says_only_text_is_one_pending_call_answered_with_text() {
    for (decide, sent) in [(None, "approve"), (Some("not today"), "deny: not today")] {
        let said = Arc::new(Mutex::new(Vec::new()));
        let url = text_peer(said.clone()).await;
        let outer = Arc::new(ask_janitor());
        let result = lead(&url, &outer, false).await.run("Tidy up").await.unwrap();
        let mut state = saved(&result);
        let [pending] = state.pending() else { panic!("{:?}", state.pending()) };
        assert_eq!((pending.id().as_str(), pending.call.name.as_str()), ("a1/input", "input_required"));
        let arguments: Value = serde_json::from_str(&pending.call.arguments).unwrap();
        assert_eq!(arguments["message"], "Delete the whole folder? Say approve.");
        match decide {
            None => state.approve("a1/input").unwrap(),
            Some(reason) => state.deny("a1/input", reason).unwrap(),
        };
        let outer = Arc::new(ScriptedModel::new().then_text("Answered."));
        let result = lead(&url, &outer, false).await.run(state).await.unwrap();
        assert_eq!(result.answer, "Answered.");
        let said = said.lock().unwrap().clone();
        assert_eq!(said.len(), 1);
        assert_eq!((said[0]["taskId"].clone(), said[0]["contextId"].clone()), (json!("t-1"), json!("ctx-1")));
        assert_eq!(said[0]["parts"], json!([{"text": sent}]));
        assert_eq!(read_results(&outer)[0].content, format!("done: {sent}"));
    }
}

/// The official Python SDK's server (tests/a2a/server.py, which .ci/run
/// starts and names in `A2A_PEER_URL`): a task that waits for input with
/// text only is one pending call; approved and denied, its answer comes,
/// streamed and polled.
#[tokio::test]
#[ignore = "needs the a2a-sdk 1.3.0 echo server of tests/a2a/server.py at A2A_PEER_URL (.ci/run starts it)"]
async fn the_python_sdks_input_required_pauses_the_run() {
    let url = std::env::var("A2A_PEER_URL").expect("A2A_PEER_URL");
    let lead = |model: &Arc<ScriptedModel>, streaming: bool| {
        let (url, model) = (url.clone(), model.clone());
        async move {
            let echo = A2aAgent::connect(&url).await.unwrap().with_streaming(streaming);
            Agent::from_shared(model, Toolset::builder().add(echo).build().unwrap()).unwrap()
        }
    };
    for (streaming, reason, answer) in
        [(true, None, "echo: approve"), (false, Some("not now"), "echo: deny: not now")]
    {
        let outer = Arc::new(ScriptedModel::new().then_calls([ToolCall::new(
            "a1",
            "echo",
            r#"{"prompt":"confirm: ping"}"#,
        )]));
        let result = lead(&outer, streaming).await.run("Echo ping").await.unwrap();
        let mut state = saved(&result);
        let [pending] = state.pending() else { panic!("{:?}", state.pending()) };
        assert_eq!((pending.id().as_str(), pending.path.as_slice()), ("a1/input", &["echo".to_owned()][..]));
        assert!(pending.call.arguments.contains("Echo 'ping'?"), "{}", pending.call.arguments);
        match reason {
            None => state.approve("a1/input").unwrap(),
            Some(reason) => state.deny("a1/input", reason).unwrap(),
        };
        let outer = Arc::new(ScriptedModel::new().then_text("Echoed."));
        let result = lead(&outer, streaming).await.run(state).await.unwrap();
        assert_eq!(result.answer, "Echoed.");
        assert_eq!(read_results(&outer)[0].content, answer);
    }
}
