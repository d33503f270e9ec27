//! Sub-agents in a durable run: each of a sub-agent's requests and calls
//! is a journaled step of the run, as the run's own are. A worker that
//! crashes while a sub-agent works goes on where it was (nothing it did is
//! done again, what it spent still counted); a sub-agent's held call holds
//! the run (listed with its path), the decision comes through `decide`
//! (after the worker and the Restate server were restarted, to a worker
//! whose agents are new), and the sub-agent goes on where it paused, the
//! approved call run once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use toolcall_agent::{
    Agent, Message, Model, ModelError, ModelName, ModelRequest, ModelResponse, RunResult, StopReason, Usage,
};
use toolcall_core::toolset::Toolset;
use toolcall_core::{Tool, ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;

use crate::approval::waiting;
use crate::support::Restate;

/// Answers from the conversation alone, as a replayed run needs: a call
/// of `tool` until a result came, then a text naming the result; each
/// request counted.
struct Decides {
    name: &'static str,
    tool: String,
    arguments: Value,
    asked: Arc<AtomicUsize>,
}

impl Model for Decides {
    fn provider(&self) -> &str {
        "script"
    }

    fn model(&self) -> &str {
        self.name
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let result = request.messages.iter().rev().find_map(|message| match message {
            Message::Tool { results } => results.first().map(|result| result.content.clone()),
            _ => None,
        });
        let mut response = match result {
            Some(content) => {
                let text = format!("{} read: {content}", self.name);
                // The first time, the answer waits until the Restate
                // server was killed and started again: the attempt is cut
                // after the sub-agent's call ran, before its answer was
                // journaled.
                if self.name == "reader" && !HELD.swap(true, Ordering::SeqCst) {
                    return Box::pin(async move {
                        while !RELEASED.load(Ordering::SeqCst) {
                            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        }
                        Ok(ModelResponse::new(text, []))
                    });
                }
                ModelResponse::new(text, [])
            }
            None => ModelResponse::new(
                "",
                [ToolCall::new(format!("{}-1", self.name), &*self.tool, self.arguments.to_string())],
            ),
        };
        response.usage = Usage { input_tokens: Some(10), output_tokens: Some(1), ..Usage::default() };
        Box::pin(async move { Ok(response) })
    }
}

static SAVED: AtomicUsize = AtomicUsize::new(0);
static NOTED: AtomicUsize = AtomicUsize::new(0);
static HELD: AtomicBool = AtomicBool::new(false);
static RELEASED: AtomicBool = AtomicBool::new(false);

/// Write a note down (not idempotent: a call cut mid-flight is not run again).
#[tool(args, crate = "toolcall_core")]
async fn note(_ctx: &ToolContext, text: String) -> Result<String, ToolError> {
    NOTED.fetch_add(1, Ordering::SeqCst);
    Ok(format!("noted `{text}`"))
}

/// Save a note to the team's notes.
#[tool(args, needs_approval, crate = "toolcall_core")]
async fn save_note(_ctx: &ToolContext, text: String) -> Result<String, ToolError> {
    SAVED.fetch_add(1, Ordering::SeqCst);
    Ok(format!("saved `{text}`"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn a_sub_agents_held_call_is_decided_through_the_durable_run() {
    let (inner, outer) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let worker = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = worker.local_addr().unwrap().port();
    let serving = tokio::spawn(toolcall_restate::serve_on(writer([&inner, &outer]), worker));
    let mut restate = Restate::start().await;
    restate.register(port).await;
    restate.send("nested-1", "How big is Oslo?").await;

    // The run waits on the researcher's call, named by its path.
    let held = waiting(&restate, "nested-1").await;
    let pending = &held["pending"];
    assert_eq!(pending.as_array().map(Vec::len), Some(1), "{held}");
    assert_eq!(pending[0]["call"]["name"], "save_note", "{held}");
    assert_eq!(pending[0]["path"], json!(["researcher"]), "{held}");
    assert_eq!(pending[0]["call_path"], json!(["writer-1"]), "{held}");
    assert_eq!(SAVED.load(Ordering::SeqCst), 0);
    assert_eq!((inner.load(Ordering::SeqCst), outer.load(Ordering::SeqCst)), (1, 1));

    // While it waits, the worker goes and the Restate server is killed and
    // started again; a new worker, its agents and models made afresh,
    // takes the run on.
    serving.abort();
    restate.restart().await;
    let (inner, outer) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let worker = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    let serving = tokio::spawn(toolcall_restate::serve_on(writer([&inner, &outer]), worker));

    let (status, body) =
        restate.call("nested-1", "decide", &json!({"writer-1/researcher-1": {"decision": "approve"}})).await;
    assert_eq!(status, 200, "{body}");
    let result: RunResult = restate.output("nested-1").await;
    assert_eq!(result.stop, StopReason::Answered);
    assert_eq!(result.answer, "writer read: researcher read: saved `Oslo: 709,000 people`");
    // The approved call ran once; the researcher went on where it paused
    // (its fresh model asked once, after the pause), the writer too.
    assert_eq!(SAVED.load(Ordering::SeqCst), 1);
    assert_eq!((inner.load(Ordering::SeqCst), outer.load(Ordering::SeqCst)), (1, 1));
    serving.abort();
}

/// `lead`, whose one tool is the sub-agent `sub`: `lead` asks it `prompt`,
/// and `sub` calls its own one tool, `tool`, with `arguments`. Each model
/// a [`Decides`], counting its requests in `asked` (the sub-agent's first).
pub(crate) fn lead_with_sub(
    [lead, sub]: [&'static str; 2],
    prompt: &str,
    tool: impl Tool + 'static,
    arguments: Value,
    [inner, outer]: [&Arc<AtomicUsize>; 2],
) -> Agent {
    let model = Decides { name: sub, tool: tool.spec().name().to_owned(), arguments, asked: inner.clone() };
    let sub_agent = Agent::new(model, Toolset::builder().add(tool).build().unwrap()).unwrap();
    let model = Decides {
        name: lead,
        tool: sub.to_owned(),
        arguments: json!({ "prompt": prompt }),
        asked: outer.clone(),
    };
    Agent::new(model, Toolset::builder().add(sub_agent.as_tool(sub, "Helps.")).build().unwrap()).unwrap()
}

/// The writer, with the researcher as its tool.
fn writer(asked: [&Arc<AtomicUsize>; 2]) -> Agent {
    let note = json!({"text": "Oslo: 709,000 people"});
    lead_with_sub(["writer", "researcher"], "Population of Oslo?", SaveNote, note, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn a_sub_agent_cut_by_a_crash_goes_on_where_it_was() {
    let (inner, outer) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let note = json!({"text": "Bergen: 291,000 people"});
    let writer = lead_with_sub(["writer", "reader"], "Population of Bergen?", Note, note, [&inner, &outer]);

    let worker = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = worker.local_addr().unwrap().port();
    let serving = tokio::spawn(toolcall_restate::serve_on(writer, worker));
    let mut restate = Restate::start().await;
    restate.register(port).await;
    restate.send("nested-crash", "How big is Bergen?").await;
    while !HELD.load(Ordering::SeqCst) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    restate.restart().await;
    RELEASED.store(true, Ordering::SeqCst);
    let result: RunResult = restate.output("nested-crash").await;

    assert_eq!(result.stop, StopReason::Answered);
    // The sub-agent's call was journaled: not run again, and its result
    // known (were the agent tool's call one step, it would be cut).
    assert_eq!(result.answer, "writer read: reader read: noted `Bergen: 291,000 people`");
    assert_eq!(NOTED.load(Ordering::SeqCst), 1);
    // Its first request was journaled too: asked once; the second twice
    // (the attempt the crash cut, then again); the writer once each.
    assert_eq!((inner.load(Ordering::SeqCst), outer.load(Ordering::SeqCst)), (3, 2));
    // What the sub-agent spent before the crash is still the run's (the
    // cut attempt's answer was never journaled: not counted).
    let named = |name: &str| ModelName::new("script", name);
    assert_eq!(result.models, [named("writer"), named("reader"), named("reader"), named("writer")]);
    assert_eq!(result.usage.iter().filter_map(|usage| usage.input_tokens).sum::<u64>(), 40);
    serving.abort();
}
