//! A run that pauses for a person's approval, saved to JSON, loaded and
//! resumed by a fresh agent on a fresh client, with each decision, against
//! a mock of each provider's API on loopback. The bodies are shaped as the
//! providers document them:
//! - Chat Completions: <https://platform.openai.com/docs/api-reference/chat/object>;
//! - Responses: <https://platform.openai.com/docs/api-reference/responses/object>;
//! - Anthropic Messages: <https://docs.anthropic.com/en/api/messages>;
//! - Gemini generateContent: <https://ai.google.dev/api/generate-content>
//!   and <https://ai.google.dev/gemini-api/docs/function-calling>.

use crate::support::replies;

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use replies::{mock, received};
use serde_json::{Value, json};
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{
    Agent, AgentEvent, Anthropic, ApiKey, Decision, Gemini, Message, Model, OpenAiChat, OpenAiResponses,
    RunResult, RunState, StopReason,
};
use toolcall_core::toolset::Toolset;
use toolcall_core::{Outcome, ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;
use wiremock::MockServer;

/// The paths the delete tool was run with, shared through the context.
#[derive(Clone, Default)]
struct Deleted(Arc<Mutex<Vec<String>>>);

impl Deleted {
    fn paths(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Current temperature for a city.
#[tool(args, read_only, crate = "toolcall_core")]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("12°C in {city}"))
}

/// Delete a file.
#[tool(args, destructive, crate = "toolcall_core")]
async fn delete_file(ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    if let Some(deleted) = ctx.get::<Deleted>() {
        deleted.0.lock().unwrap().push(path.clone());
    }
    Ok(format!("deleted {path}"))
}

/// The toolset; with `approval`, every destructive tool waits for a person.
fn tools(approval: bool) -> Toolset {
    let mut tools = Toolset::builder().add(GetWeather).add(DeleteFile).build().unwrap();
    if approval {
        tools = tools.with_approval_rule(|tool| tool.spec().annotations().destructive == Some(true));
    }
    tools
}

#[derive(Clone, Copy, Debug)]
enum Provider {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

const PROVIDERS: [Provider; 4] = [Provider::Chat, Provider::Responses, Provider::Anthropic, Provider::Gemini];

/// One model turn: its text and its calls (id, name, arguments).
type Calls<'a> = &'a [(&'a str, &'a str, Value)];

impl Provider {
    /// The turn as the provider's whole (non-streamed) response.
    fn body(self, text: &str, calls: Calls<'_>) -> Value {
        match self {
            Self::Chat => {
                let tool_calls: Vec<Value> = calls
                    .iter()
                    .map(|(id, name, args)| {
                        json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
                    })
                    .collect();
                let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                if !tool_calls.is_empty() {
                    message["tool_calls"] = json!(tool_calls);
                }
                let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
                json!({"id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "object": "chat.completion", "created": 1741569952,
                    "model": "gpt-4.1-2025-04-14",
                    "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}})
            }
            Self::Responses => {
                let mut output = Vec::new();
                if !text.is_empty() {
                    output.push(json!({"type": "message", "id": "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c8e9a5f2",
                        "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}));
                }
                output.extend(calls.iter().map(|(id, name, args)| {
                    json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name,
                        "arguments": args.to_string(), "status": "completed"})
                }));
                json!({"id": "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c8e9a5f2", "object": "response",
                    "created_at": 1741476777, "status": "completed", "error": null, "incomplete_details": null,
                    "model": "gpt-4.1-2025-04-14", "output": output, "parallel_tool_calls": true,
                    "usage": {"input_tokens": 36, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 87,
                        "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 123}})
            }
            Self::Anthropic => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(json!({"type": "text", "text": text}));
                }
                content.extend(calls.iter().map(
                    |(id, name, args)| json!({"type": "tool_use", "id": id, "name": name, "input": args}),
                ));
                let stop = if calls.is_empty() { "end_turn" } else { "tool_use" };
                json!({"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5", "content": content, "stop_reason": stop, "stop_sequence": null,
                    "usage": {"input_tokens": 25, "output_tokens": 7}})
            }
            Self::Gemini => {
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({"text": text}));
                }
                parts.extend(
                    calls.iter().map(
                        |(id, name, args)| json!({"functionCall": {"id": id, "name": name, "args": args}}),
                    ),
                );
                json!({"candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 8, "totalTokenCount": 38},
                    "modelVersion": "gemini-2.5-flash", "responseId": "mAitaLmkHPPlz7IPvtfUqQ4"})
            }
        }
    }

    /// A client of this provider talking to `server`.
    fn model(self, server: &MockServer) -> Arc<dyn Model> {
        let v1 = format!("{}/v1", server.uri());
        match self {
            Self::Chat => {
                Arc::new(OpenAiChat::from_values("gpt-4.1", Some(ApiKey::new("sk-test")), Some(&v1)))
            }
            Self::Responses => {
                Arc::new(OpenAiResponses::from_values("gpt-4.1", Some(ApiKey::new("sk-test")), Some(&v1)))
            }
            Self::Anthropic => Arc::new(
                Anthropic::new("claude-sonnet-4-5")
                    .with_api_key(ApiKey::new("sk-ant-test"))
                    .with_base_url(server.uri()),
            ),
            Self::Gemini => Arc::new(
                Gemini::new("gemini-2.5-flash")
                    .with_api_key(ApiKey::new("AIza-test"))
                    .with_base_url(server.uri()),
            ),
        }
    }
}

/// The model's first turn: a harmless call and one that needs approval,
/// after the reasoning state its provider wants back ([`reasoning`]).
fn first_turn(provider: Provider) -> Value {
    let mut body = provider.body(
        "",
        &[
            ("call_w1", "get_weather", json!({"city": "Oslo"})),
            ("call_d1", "delete_file", json!({"path": "old.log"})),
        ],
    );
    match provider {
        // DeepSeek's thinking mode: <https://api-docs.deepseek.com/guides/thinking_mode>.
        Provider::Chat => {
            body["choices"][0]["message"]["reasoning_content"] = json!("Oslo first, then the file.")
        }
        // <https://platform.openai.com/docs/api-reference/responses/object> (a reasoning output item).
        Provider::Responses => insert(&mut body["output"], 0, reasoning(provider)[0].clone()),
        // <https://platform.claude.com/docs/en/build-with-claude/extended-thinking> (thinking and
        // redacted_thinking blocks before the tool use).
        Provider::Anthropic => {
            for (index, block) in reasoning(provider).into_iter().enumerate() {
                insert(&mut body["content"], index, block);
            }
        }
        // <https://ai.google.dev/gemini-api/docs/thought-signatures>: in a parallel
        // call, only the first functionCall part is signed; a thought summary first.
        Provider::Gemini => {
            let parts = &mut body["candidates"][0]["content"]["parts"];
            parts[0]["thoughtSignature"] = json!("c2lnbmF0dXJlLW9mLW9zbG8=");
            insert(parts, 0, json!({"text": "Oslo first, then the file.", "thought": true}));
        }
    }
    body
}

fn insert(list: &mut Value, index: usize, item: Value) {
    list.as_array_mut().expect("a list").insert(index, item);
}

/// The reasoning pieces of the first turn, as the provider's wire has them.
fn reasoning(provider: Provider) -> Vec<Value> {
    match provider {
        Provider::Chat => vec![json!("Oslo first, then the file.")],
        Provider::Responses => vec![json!({"type": "reasoning", "id": "rs_67ccd3a9d", "summary": [
            {"type": "summary_text", "text": "Oslo first, then the file."}], "encrypted_content": "gAAAAABo-opaque"})],
        Provider::Anthropic => vec![
            json!({"type": "thinking", "thinking": "Oslo first, then the file.",
                "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}),
            json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"}),
        ],
        Provider::Gemini => vec![
            json!({"text": "Oslo first, then the file.", "thought": true}),
            json!({"functionCall": {"id": "call_w1", "name": "get_weather", "args": {"city": "Oslo"}},
                "thoughtSignature": "c2lnbmF0dXJlLW9mLW9zbG8="}),
        ],
    }
}

/// The reasoning pieces of the model's turn in a request after it, as sent.
fn reasoning_sent(provider: Provider, request: &Value) -> Vec<Value> {
    match provider {
        Provider::Chat => vec![request["messages"][2]["reasoning_content"].clone()],
        Provider::Responses => vec![request["input"][1].clone()],
        Provider::Anthropic => request["messages"][1]["content"].as_array().unwrap()[..2].to_vec(),
        Provider::Gemini => request["contents"][1]["parts"].as_array().unwrap()[..2].to_vec(),
    }
}

fn agent(model: Arc<dyn Model>, approval: bool, deleted: &Deleted) -> Agent {
    let context = ToolContext::new().with_extension(deleted.clone());
    Agent::from_shared(model, tools(approval)).unwrap().with_instructions("Be brief.").with_context(context)
}

/// Run until the pause, and give the state as it would be stored.
async fn paused(provider: Provider) -> (String, Deleted) {
    let server = mock(vec![first_turn(provider)]).await;
    let deleted = Deleted::default();
    let result =
        agent(provider.model(&server), true, &deleted).run("Weather in Oslo, and delete old.log").await;
    let result = result.unwrap_or_else(|error| panic!("{provider:?}: {error}"));
    let StopReason::Paused(state) = result.stop else {
        panic!("{provider:?}: not paused: {:?}", result.stop)
    };
    // The harmless call ran; the held one did not, and waits with its id.
    assert!(deleted.paths().is_empty(), "{provider:?}");
    let pending: Vec<&ToolCall> = state.pending().iter().map(|pending| &pending.call).collect();
    assert_eq!(pending, [&ToolCall::new("call_d1", "delete_file", r#"{"path":"old.log"}"#)], "{provider:?}");
    assert_eq!(received(&server).await.len(), 1, "{provider:?}");
    (serde_json::to_string(&state).unwrap(), deleted)
}

/// Load a saved state in a fresh agent on a fresh server that answers
/// `answer`, decide, and resume.
async fn resume(provider: Provider, saved: &str, decision: Decision) -> (RunResult, Vec<Value>, Deleted) {
    let mut state: RunState = serde_json::from_str(saved).unwrap();
    state.decide("call_d1", decision).unwrap();
    let server = mock(vec![provider.body("Done.", &[])]).await;
    let deleted = Deleted::default();
    let result = agent(provider.model(&server), true, &deleted).run(state).await;
    let result = result.unwrap_or_else(|error| panic!("{provider:?}: {error}"));
    (result, received(&server).await, deleted)
}

/// The same conversation when nothing needs approval: what resuming an
/// approved run must give.
async fn unpaused(provider: Provider) -> (RunResult, Vec<Value>) {
    let server = mock(vec![first_turn(provider), provider.body("Done.", &[])]).await;
    let agent = agent(provider.model(&server), false, &Deleted::default());
    let result = agent.run("Weather in Oslo, and delete old.log").await;
    let result = result.unwrap_or_else(|error| panic!("{provider:?}: {error}"));
    (result, received(&server).await)
}

/// The result of a call in the run's tool messages.
fn result_of(result: &RunResult, id: &str) -> toolcall_core::ToolResult {
    let results = result.transcript.messages.iter().filter_map(|message| match message {
        Message::Tool { results } => Some(results),
        _ => None,
    });
    results.flatten().find(|result| result.id == id).cloned().unwrap()
}

#[tokio::test]
async fn approved_the_resumed_run_is_the_run_that_never_paused() {
    for provider in PROVIDERS {
        let (saved, before) = paused(provider).await;
        let (result, requests, deleted) = resume(provider, &saved, Decision::Approve).await;
        let (reference, reference_requests) = unpaused(provider).await;
        assert_eq!(deleted.paths(), ["old.log"], "{provider:?}");
        assert!(before.paths().is_empty(), "{provider:?}: the first process ran the held call");
        assert_eq!((result.answer.as_str(), &result.stop), ("Done.", &StopReason::Answered), "{provider:?}");
        assert_eq!(result.transcript, reference.transcript, "{provider:?}");
        assert_eq!(result.usage, reference.usage, "{provider:?}");
        // The request after the pause is the one the unpaused run made.
        assert_eq!(requests.len(), 1, "{provider:?}");
        assert_eq!(requests[0], reference_requests[1], "{provider:?}");
        let sent = requests[0].to_string();
        assert!(sent.contains("deleted old.log") && sent.contains("12°C in Oslo"), "{provider:?}: {sent}");
        // The reasoning state of the turn went back exactly, from the saved
        // run, by a client that never saw it come.
        assert_eq!(reasoning_sent(provider, &requests[0]), reasoning(provider), "{provider:?}");
    }
}

#[tokio::test]
async fn approved_with_edited_arguments_the_edit_runs_and_the_transcript_records_it() {
    for provider in PROVIDERS {
        let (saved, _) = paused(provider).await;
        let edit = Decision::ApproveWith { arguments: r#"{"path":"old.log.1"}"#.into() };
        let (result, requests, deleted) = resume(provider, &saved, edit).await;
        assert_eq!(deleted.paths(), ["old.log.1"], "{provider:?}");
        assert_eq!(result_of(&result, "call_d1").content, "deleted old.log.1", "{provider:?}");
        let calls: Vec<_> = result.transcript.messages[1].calls().collect();
        assert_eq!(calls[1].arguments, r#"{"path":"old.log.1"}"#, "{provider:?}");
        let sent = requests[0].to_string();
        assert!(sent.contains("deleted old.log.1") && sent.contains("old.log.1"), "{provider:?}: {sent}");

        // Edited arguments are checked like any call's: a wrong type does
        // not run, and the model reads why.
        let wrong = Decision::ApproveWith { arguments: r#"{"path": 5}"#.into() };
        let (result, requests, deleted) = resume(provider, &saved, wrong).await;
        assert!(deleted.paths().is_empty(), "{provider:?}");
        let held = result_of(&result, "call_d1");
        assert_eq!(held.outcome, Outcome::InvalidArguments, "{provider:?}");
        assert!(held.content.contains("at `path`: invalid type"), "{provider:?}: {}", held.content);
        assert!(requests[0].to_string().contains("at `path`: invalid type"), "{provider:?}");
    }
}

#[tokio::test]
async fn denied_the_model_reads_the_reason_and_goes_on() {
    for provider in PROVIDERS {
        let (saved, _) = paused(provider).await;
        let deny = Decision::Deny { reason: "old.log is still needed".into() };
        let (result, requests, deleted) = resume(provider, &saved, deny).await;
        assert!(deleted.paths().is_empty(), "{provider:?}");
        assert_eq!(result.answer, "Done.", "{provider:?}");
        let held = result_of(&result, "call_d1");
        assert_eq!(held.outcome, Outcome::Denied, "{provider:?}");
        let reason = "a person denied this call of `delete_file`, so it did not run: old.log is still needed";
        assert_eq!(held.content, json!({"error": reason}).to_string(), "{provider:?}");
        let sent = requests[0].to_string();
        assert!(sent.contains(reason) && sent.contains("12°C in Oslo"), "{provider:?}: {sent}");
    }
}

#[tokio::test]
async fn undecided_nothing_runs_and_the_run_pauses_again() {
    for provider in PROVIDERS {
        let (saved, _) = paused(provider).await;
        let state: RunState = serde_json::from_str(&saved).unwrap();
        let server = mock(vec![provider.body("Done.", &[])]).await;
        let deleted = Deleted::default();
        let agent = agent(provider.model(&server), true, &deleted);
        let again = agent.run(state).await.unwrap();
        let StopReason::Paused(mut state) = again.stop else { panic!("{provider:?}: {:?}", again.stop) };
        assert!(deleted.paths().is_empty() && received(&server).await.is_empty(), "{provider:?}");
        assert_eq!(
            serde_json::to_string(&state).unwrap(),
            saved,
            "{provider:?}: pausing again changed the state"
        );

        // Continuing the bare transcript (not the state) does not run it either.
        let bare = agent.run(again.transcript).await.unwrap();
        assert!(matches!(bare.stop, StopReason::Paused(_)), "{provider:?}");
        assert!(deleted.paths().is_empty() && received(&server).await.is_empty(), "{provider:?}");

        // An id that does not wait is refused, naming the ones that do.
        let unknown = state.approve("call_w1").unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "no call waiting for approval has the id `call_w1`; the pending calls are: call_d1"
        );
        state.approve("call_d1").unwrap();
        let done = agent.run(*state).await.unwrap();
        assert_eq!(
            (done.answer.as_str(), deleted.paths()),
            ("Done.", vec!["old.log".to_owned()]),
            "{provider:?}"
        );
    }
}

/// Lists a directory: a read that needs no approval.
#[tool(args, read_only, crate = "toolcall_core")]
async fn list_dir(_ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    Ok(format!("{path}: a.txt b.txt"))
}

/// Remove a directory.
#[tool(args, needs_approval, crate = "toolcall_core")]
async fn remove_dir(_ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    Ok(format!("removed {path}"))
}

#[tokio::test]
async fn streamed_a_declared_tool_pauses_and_resumes_with_its_events() {
    let calls = [
        ToolCall::new("1", "remove_dir", r#"{"path":"tmp"}"#),
        ToolCall::new("2", "list_dir", r#"{"path":"home"}"#),
        ToolCall::new("3", "remove_dir", r#"{"path":"cache"}"#),
    ];
    let model = Arc::new(ScriptedModel::new().then_calls(calls.clone()).then_text("Removed tmp."));
    let tools = Toolset::builder().add(RemoveDir).add(ListDir).build().unwrap();
    let agent = Agent::from_shared(model.clone(), tools).unwrap();

    let mut events: Vec<AgentEvent> = agent.stream("Clean up").collect().await;
    let Some(AgentEvent::Finished(Ok(result))) = events.pop() else { panic!("no end") };
    let ran: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolCall(call) => Some(call.id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(ran, ["2"], "only the call that needs no approval runs");
    let StopReason::Paused(mut state) = result.stop else { panic!("{:?}", result.stop) };
    state.approve("1").unwrap().deny("3", "keep the cache").unwrap();

    let mut events: Vec<AgentEvent> = agent.stream(*state).collect().await;
    let Some(AgentEvent::Finished(Ok(result))) = events.pop() else { panic!("no end") };
    assert_eq!(result.answer, "Removed tmp.");
    let results: Vec<(String, Outcome)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ToolResult(result) => Some((result.id.to_string(), result.outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(results, [("3".to_owned(), Outcome::Denied), ("1".to_owned(), Outcome::Success)]);
    // The model saw the turn's results in call order.
    let seen = model.seen();
    let Some(Message::Tool { results }) = seen[1].messages.last() else { panic!("{:?}", seen[1]) };
    let order: Vec<(&str, Outcome)> =
        results.iter().map(|result| (result.id.as_str(), result.outcome)).collect();
    assert_eq!(order, [("1", Outcome::Success), ("2", Outcome::Success), ("3", Outcome::Denied)]);
    assert_eq!(results[0].content, "removed tmp");
}

/// Issue 45, point 3: what a pause gives (`StopReason::Paused` holds a
/// `Box<RunState>`) resumes as it is, with `run` and with `stream`; before
/// `RunInput: From<Box<RunState>>` this did not compile.
#[tokio::test]
async fn the_boxed_state_a_pause_gives_resumes_as_it_is() {
    let calls = [ToolCall::new("1", "remove_dir", r#"{"path":"tmp"}"#)];
    let model = ScriptedModel::new()
        .then_calls(calls.clone())
        .then_text("Removed tmp.")
        .then_calls(calls)
        .then_text("Removed tmp again.");
    let tools = Toolset::builder().add(RemoveDir).build().unwrap();
    let agent = Agent::new(model, tools).unwrap();

    let paused = agent.run("Clean up").await.unwrap();
    let StopReason::Paused(mut state) = paused.stop else { panic!("{:?}", paused.stop) };
    state.approve("1").unwrap();
    let state: Box<RunState> = state;
    let done = agent.run(state).await.unwrap();
    assert_eq!((done.answer.as_str(), &done.stop), ("Removed tmp.", &StopReason::Answered));

    let paused = agent.run("Clean up again").await.unwrap();
    let StopReason::Paused(mut state) = paused.stop else { panic!("{:?}", paused.stop) };
    state.approve("1").unwrap();
    let mut events: Vec<AgentEvent> = agent.stream(state).collect().await;
    let Some(AgentEvent::Finished(Ok(done))) = events.pop() else { panic!("no end") };
    assert_eq!(done.answer, "Removed tmp again.");
}

/// The kind of each event, with the call id of the call events.
fn kinds(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ApprovalRequested(pending) => Some(format!("held {}", pending.call.id)),
            AgentEvent::ToolCall(call) => Some(format!("call {}", call.id)),
            AgentEvent::ToolResult(result) => Some(format!("result {}", result.id)),
            AgentEvent::Finished(_) => Some("finished".to_owned()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn streamed_a_held_call_is_announced_before_the_turn_runs_and_again_while_it_waits() {
    let calls = [
        ToolCall::new("1", "remove_dir", r#"{"path":"tmp"}"#),
        ToolCall::new("2", "list_dir", r#"{"path":"home"}"#),
        ToolCall::new("3", "remove_dir", r#"{"path":"cache"}"#),
    ];
    let model = ScriptedModel::new().then_calls(calls.clone()).then_text("Removed tmp.");
    let tools = Toolset::builder().add(RemoveDir).add(ListDir).build().unwrap();
    let agent = Agent::new(model, tools).unwrap();

    let mut events: Vec<AgentEvent> = agent.stream("Clean up").collect().await;
    assert_eq!(kinds(&events), ["held 1", "held 3", "call 2", "result 2", "finished"]);
    let Some(AgentEvent::ApprovalRequested(held)) =
        events.iter().find(|e| matches!(e, AgentEvent::ApprovalRequested(_)))
    else {
        panic!("no held call")
    };
    assert_eq!((held.call.name.as_str(), held.call.arguments.as_str()), ("remove_dir", r#"{"path":"tmp"}"#));
    assert_eq!(held.decision, None);
    let Some(AgentEvent::Finished(Ok(result))) = events.pop() else { panic!("no end") };
    let StopReason::Paused(mut state) = result.stop else { panic!("{:?}", result.stop) };

    // Only call 1 decided: call 3 is announced again, and the run pauses again.
    state.approve("1").unwrap();
    let mut events: Vec<AgentEvent> = agent.stream(*state).collect().await;
    assert_eq!(kinds(&events), ["held 3", "call 1", "result 1", "finished"]);
    let Some(AgentEvent::Finished(Ok(result))) = events.pop() else { panic!("no end") };
    let StopReason::Paused(state) = result.stop else { panic!("{:?}", result.stop) };
    let waiting: Vec<&str> = state.pending().iter().map(|pending| pending.call.id.as_str()).collect();
    assert_eq!(waiting, ["3"]);
}

/// An engine that decides in place of a person: the first time, it
/// approves one call with other arguments and leaves the other undecided;
/// the second time, it denies that one. What it was shown is kept.
#[derive(Default)]
struct Reviewer(Mutex<Vec<Vec<String>>>);

impl toolcall_agent::Effects for Reviewer {
    fn decide<'a>(
        &'a self,
        state: &'a RunState,
    ) -> futures::future::BoxFuture<'a, Result<Option<RunState>, toolcall_agent::ModelError>> {
        Box::pin(async move {
            let shown: Vec<String> = state.pending().iter().map(|p| p.call.id.to_string()).collect();
            let round = {
                let mut seen = self.0.lock().unwrap();
                seen.push(shown);
                seen.len()
            };
            let mut state = state.clone();
            match round {
                1 => state.approve_with("d1", r#"{"path": "old.log.1"}"#).unwrap(),
                _ => state.deny("d2", "the only copy").unwrap(),
            };
            Ok(Some(state))
        })
    }
}

#[tokio::test]
async fn an_engine_that_decides_keeps_the_run_going_without_a_pause() {
    let deleted = Deleted::default();
    let model = ScriptedModel::new()
        .then_calls([
            ToolCall::new("w1", "get_weather", r#"{"city": "Oslo"}"#),
            ToolCall::new("d1", "delete_file", r#"{"path": "old.log"}"#),
            ToolCall::new("d2", "delete_file", r#"{"path": "report.pdf"}"#),
        ])
        .then_text("Done.");
    let agent = Agent::new(model, tools(true))
        .unwrap()
        .with_context(ToolContext::new().with_extension(deleted.clone()));
    let reviewer = Reviewer::default();
    let result = agent.run_with("Tidy up", &reviewer).await.unwrap();
    assert_eq!((result.answer.as_str(), &result.stop), ("Done.", &StopReason::Answered));
    assert_eq!(*reviewer.0.lock().unwrap(), [vec!["d1", "d2"], vec!["d2"]]);
    assert_eq!(deleted.paths(), ["old.log.1"]);
    let Some(Message::Tool { results }) = result.transcript.messages.get(2) else {
        panic!("{:?}", result.transcript)
    };
    let outcomes: Vec<_> = results.iter().map(|r| (r.id.as_str(), r.outcome)).collect();
    assert_eq!(outcomes, [("w1", Outcome::Success), ("d1", Outcome::Success), ("d2", Outcome::Denied)]);
    assert!(results[2].content.contains("the only copy"));
}
