//! A turn's calls in a durable run run at once, as in-process: each call
//! of a turn of five waits until all five are in flight, which they reach
//! only together; so do a turn's calls beside an agent tool's, whose
//! sub-agent's call meets them. Each ran once, and each result is
//! journaled.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::net::TcpListener;
use toolcall_agent::{Agent, Message, Model, ModelError, ModelRequest, ModelResponse, RunResult, StopReason};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;

use crate::support::Restate;

const CALLS: usize = 5;

/// The calls of one test's turn: how many are in flight, the most ever,
/// and how many ran.
#[derive(Default)]
struct Meeting {
    in_flight: AtomicUsize,
    most: AtomicUsize,
    ran: AtomicUsize,
}

/// Meet the other calls of the turn.
#[tool(args, crate = "toolcall_core")]
async fn meet(ctx: &ToolContext, name: String) -> Result<String, ToolError> {
    let meeting = ctx.get::<Arc<Meeting>>().ok_or_else(|| ToolError::failed("no meeting"))?;
    meeting.ran.fetch_add(1, Ordering::SeqCst);
    let now = meeting.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    meeting.most.fetch_max(now, Ordering::SeqCst);
    // Calls run one after the other would never all be in flight: give
    // up after a while rather than hang the test.
    for _ in 0..500 {
        if meeting.most.load(Ordering::SeqCst) >= CALLS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let met = meeting.most.load(Ordering::SeqCst);
    meeting.in_flight.fetch_sub(1, Ordering::SeqCst);
    Ok(format!("{name} met {met} calls in flight"))
}

/// Calls each of `tools` once in one response (`meet` with a name), then
/// answers with the results.
struct Gathers(&'static [&'static str]);

impl Model for Gathers {
    fn provider(&self) -> &str {
        "script"
    }

    fn model(&self) -> &str {
        "gathers"
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let results: Vec<String> = request
            .messages
            .iter()
            .filter_map(|message| match message {
                Message::Tool { results } => Some(results.iter().map(|result| result.content.clone())),
                _ => None,
            })
            .flatten()
            .collect();
        let response = if results.is_empty() {
            let calls = self.0.iter().enumerate().map(|(n, tool)| {
                let arguments = match *tool {
                    "meet" => format!(r#"{{"name": "call {}"}}"#, n + 1),
                    _ => r#"{"prompt": "Meet them."}"#.to_owned(),
                };
                ToolCall::new(format!("{tool}-{}", n + 1), *tool, arguments)
            });
            ModelResponse::new("", calls.collect::<Vec<_>>())
        } else {
            ModelResponse::new(results.join("; "), [])
        };
        Box::pin(async move { Ok(response) })
    }
}

/// `agent`'s run `id`, durable, to its end.
async fn durable(agent: Agent, id: &str) -> RunResult {
    let worker = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = worker.local_addr().unwrap().port();
    let serving = tokio::spawn(toolcall_restate::serve_on(agent, worker));
    let restate = Restate::start().await;
    restate.register(port).await;
    restate.send(id, "Gather.").await;
    let result = restate.output(id).await;
    serving.abort();
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn a_turns_calls_run_at_once_in_a_durable_run() {
    let meeting = Arc::new(Meeting::default());
    let agent = Agent::new(Gathers(&["meet"; CALLS]), Toolset::builder().add(Meet).build().unwrap())
        .unwrap()
        .with_context(ToolContext::new().with_extension(Arc::clone(&meeting)));

    let result = durable(agent, "parallel-1").await;

    assert_eq!(result.stop, StopReason::Answered);
    let answers: Vec<String> = (1..=CALLS).map(|n| format!("call {n} met {CALLS} calls in flight")).collect();
    assert_eq!(result.answer, answers.join("; "));
    assert_eq!((meeting.ran.load(Ordering::SeqCst), meeting.most.load(Ordering::SeqCst)), (CALLS, CALLS));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn an_agent_tools_call_runs_beside_the_turns_other_calls() {
    let meeting = Arc::new(Meeting::default());
    let context = ToolContext::new().with_extension(Arc::clone(&meeting));
    let tools = || Toolset::builder().add(Meet).build().unwrap();
    // The sub-agent's one call makes the fifth: the agent tool is called
    // last in the turn, and its sub-agent still works while the others wait.
    let helper = Agent::new(Gathers(&["meet"]), tools()).unwrap().with_context(context.clone());
    let tools = Toolset::builder().add(Meet).add(helper.as_tool("helper", "Helps.")).build().unwrap();
    let agent = Agent::new(Gathers(&["meet", "meet", "meet", "meet", "helper"]), tools)
        .unwrap()
        .with_context(context);

    let result = durable(agent, "parallel-2").await;

    assert_eq!(result.stop, StopReason::Answered);
    let mut answers: Vec<String> =
        (1..CALLS).map(|n| format!("call {n} met {CALLS} calls in flight")).collect();
    answers.push(format!("call 1 met {CALLS} calls in flight"));
    assert_eq!(result.answer, answers.join("; "));
    assert_eq!((meeting.ran.load(Ordering::SeqCst), meeting.most.load(Ordering::SeqCst)), (CALLS, CALLS));
}
