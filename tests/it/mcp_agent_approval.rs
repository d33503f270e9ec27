//! A remote tool that needs approval, called by our own agent through
//! `McpClient`: the example server over stdio lists `cancel_alert` as
//! needing approval, the run pauses before the remote call as before a
//! local one, and the state survives JSON. Resumed with an approval, the
//! client answers the server's approval request (MCP elicitation,
//! <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation>)
//! with a yes for that call alone and the server runs it; denied, the call
//! is never made. Without an approval, the client declines and the server
//! refuses the call with its own message.

use std::sync::Arc;

use toolcall::agent::testing::ScriptedModel;
use toolcall::agent::{Agent, Decision, Message, RunState, StopReason};
use toolcall::mcp::McpClient;
use toolcall::{Outcome, ToolCall, ToolContext, ToolResult, Toolset};

use crate::mcp::example_command;

/// A fresh connection to a fresh example server, and its tools.
async fn remote_tools() -> (McpClient, Toolset) {
    let mut command = example_command();
    command.kill_on_drop(true);
    let client = McpClient::stdio(command).await.unwrap();
    let mut tools = Toolset::new();
    client.register(&mut tools).await.unwrap();
    (client, tools)
}

fn cancel_call() -> ToolCall {
    ToolCall::new("call_c1", "cancel_alert", r#"{"city":"Oslo"}"#)
}

/// The result of a call in the run's tool messages.
fn result_of(messages: &[Message], id: &str) -> Option<ToolResult> {
    let results = messages.iter().filter_map(|message| match message {
        Message::Tool { results } => Some(results),
        _ => None,
    });
    results.flatten().find(|result| result.id == id).cloned()
}

/// A run that pauses before the remote call, saved as JSON.
async fn paused() -> String {
    let (_client, tools) = remote_tools().await;
    let model = ScriptedModel::new().then_calls([cancel_call()]);
    let agent = Agent::new(model, tools).unwrap();
    let result = agent.run("Cancel the Oslo alert").await.unwrap();
    let StopReason::Paused(state) = result.stop else { panic!("not paused: {:?}", result.stop) };
    let pending: Vec<&ToolCall> = state.pending().iter().map(|pending| &pending.call).collect();
    assert_eq!(pending, [&cancel_call()]);
    assert!(result_of(&result.transcript.messages, "call_c1").is_none(), "the held call ran");
    serde_json::to_string(&state).unwrap()
}

/// Load the saved run in a fresh agent on a fresh server, decide, resume.
async fn resume(saved: &str, decision: Decision) -> (ToolResult, Arc<ScriptedModel>) {
    let mut state: RunState = serde_json::from_str(saved).unwrap();
    state.decide("call_c1", decision).unwrap();
    let (_client, tools) = remote_tools().await;
    let model = Arc::new(ScriptedModel::new().then_text("Done."));
    let agent = Agent::from_shared(model.clone(), tools).unwrap();
    let result = agent.run(state).await.unwrap();
    assert_eq!((result.answer.as_str(), &result.stop), ("Done.", &StopReason::Answered));
    (result_of(&result.transcript.messages, "call_c1").unwrap(), model)
}

#[tokio::test]
async fn a_remote_call_that_needs_approval_pauses_the_run_and_runs_once_approved() {
    let saved = paused().await;
    let (result, model) = resume(&saved, Decision::Approve).await;
    // The server's own answer: it ran the call.
    assert_eq!((result.outcome, result.content.as_str()), (Outcome::Success, "cancelled the alert for Oslo"));
    // And the model read it.
    let seen = model.seen();
    let sent = result_of(&seen[0].messages, "call_c1").unwrap();
    assert_eq!(sent.content, "cancelled the alert for Oslo");
}

#[tokio::test]
async fn a_denied_remote_call_is_never_made() {
    let saved = paused().await;
    let (result, _) = resume(&saved, Decision::Deny { reason: "the storm is coming".into() }).await;
    assert_eq!(result.outcome, Outcome::Denied);
    assert!(result.content.contains("the storm is coming"), "{}", result.content);
    assert!(!result.content.contains("cancelled the alert"), "{}", result.content);
}

#[tokio::test]
async fn without_an_approval_the_client_declines_and_the_server_refuses_clearly() {
    let (_client, tools) = remote_tools().await;
    assert!(tools.get("cancel_alert").unwrap().spec().needs_approval());
    // Past the local gate, as an application calling the client directly:
    // the server asks, the client has no approval to give, and declines.
    let tool = tools.get("cancel_alert").unwrap();
    let ctx = ToolContext::new().for_call("call_c1", "cancel_alert");
    let error = tool.call(&ctx, r#"{"city":"Oslo"}"#).await.unwrap_err();
    assert_eq!(error.outcome(), Outcome::Denied);
    assert_eq!(
        error.to_string(),
        "denied: the call of `cancel_alert` needed a person's approval and did not run: the person declined it"
    );
    // The toolset itself never sends it unapproved.
    let result = tools.call(&ToolContext::new(), &cancel_call()).await;
    assert_eq!(result.outcome, Outcome::Denied);
    assert!(result.content.contains("needs a person's approval"), "{}", result.content);
}
