//! A turn's calls in a durable run run at once, as in-process: each call
//! of a turn of five waits until all five are in flight, which they reach
//! only together; each ran once, and each result is journaled.

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

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MOST: AtomicUsize = AtomicUsize::new(0);
static RAN: AtomicUsize = AtomicUsize::new(0);

/// Meet the other calls of the turn.
#[tool(args, crate = "toolcall_core")]
async fn meet(_ctx: &ToolContext, name: String) -> Result<String, ToolError> {
    RAN.fetch_add(1, Ordering::SeqCst);
    let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    // Calls run one after the other would never all be in flight: give
    // up after a while rather than hang the test.
    for _ in 0..500 {
        if MOST.load(Ordering::SeqCst) >= CALLS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let met = MOST.load(Ordering::SeqCst);
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    Ok(format!("{name} met {met} calls in flight"))
}

/// Calls `meet` five times in one response, then answers with the results.
struct Gathers;

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
            let calls = (1..=CALLS)
                .map(|n| ToolCall::new(format!("meet-{n}"), "meet", format!(r#"{{"name": "call {n}"}}"#)));
            ModelResponse::new("", calls.collect::<Vec<_>>())
        } else {
            ModelResponse::new(results.join("; "), [])
        };
        Box::pin(async move { Ok(response) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn a_turns_calls_run_at_once_in_a_durable_run() {
    let agent = Agent::new(Gathers, Toolset::builder().add(Meet).build().unwrap()).unwrap();
    let worker = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = worker.local_addr().unwrap().port();
    let serving = tokio::spawn(toolcall_restate::serve_on(agent, worker));
    let restate = Restate::start().await;
    restate.register(port).await;
    restate.send("parallel-1", "Gather.").await;
    let result: RunResult = restate.output("parallel-1").await;

    assert_eq!(result.stop, StopReason::Answered);
    let answers: Vec<String> = (1..=CALLS).map(|n| format!("call {n} met {CALLS} calls in flight")).collect();
    assert_eq!(result.answer, answers.join("; "));
    assert_eq!((RAN.load(Ordering::SeqCst), MOST.load(Ordering::SeqCst)), (CALLS, CALLS));
    serving.abort();
}
