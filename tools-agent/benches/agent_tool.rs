//! What running an agent as a tool costs over doing the same work in one
//! run, with scripted models (no network, no tokens): the loop's own cost.
//!
//! - `flat`: one agent, 4 requests, 3 calls of `echo`;
//! - `nested`: an agent whose model calls a sub-agent (`researcher`), whose
//!   model calls `echo` then answers: 4 requests, 2 calls, one of them a
//!   whole run (its context, tally, span, event sink).
//!
//! Each run, plainly and streamed, side by side in one criterion group, its
//! agent built outside the timing (`iter_batched`).
//!
//! ```sh
//! cargo bench -p toolcall-agent --bench agent_tool
//! ```

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use futures::executor::block_on;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Agent, AgentEvent};
use toolcall_core::{Tool, ToolCall, ToolContext, ToolError, Toolset};

/// Echo the text.
#[toolcall_macros::tool(args, crate = "toolcall_core")]
async fn echo(_ctx: &ToolContext, text: String) -> Result<String, ToolError> {
    Ok(text)
}

fn echo_call(id: &str) -> ToolCall {
    ToolCall::new(id, "echo", r#"{"text":"hi"}"#)
}

fn echo_tools() -> Toolset {
    Toolset::builder().add(Echo).build().expect("one tool")
}

/// One agent doing it all: 4 requests, 3 calls.
fn flat() -> Agent {
    let model = ScriptedModel::new()
        .then_calls([echo_call("1")])
        .then_calls([echo_call("2")])
        .then_calls([echo_call("3")])
        .then_text("done");
    Agent::new(model, echo_tools()).expect("an agent")
}

/// A lead and its researcher: 4 requests, 2 calls.
fn nested() -> Agent {
    let inner = ScriptedModel::new().then_calls([echo_call("i1")]).then_text("found");
    let researcher = Agent::new(inner, echo_tools()).expect("an agent").as_tool("researcher", "Looks up.");
    let outer = ScriptedModel::new()
        .then_calls([ToolCall::new("1", "researcher", r#"{"prompt":"find it"}"#)])
        .then_text("done");
    let mut tools = Toolset::new();
    tools.add(Arc::new(researcher) as Arc<dyn Tool>).expect("one tool");
    Agent::new(outer, tools).expect("an agent")
}

/// One run of a fresh agent, plainly or streamed, to its answer.
fn run(agent: Agent, streamed: bool) {
    if streamed {
        let events: Vec<AgentEvent> = block_on(agent.stream("go").collect());
        assert!(matches!(events.last(), Some(AgentEvent::Finished(Ok(_)))));
        black_box(events);
    } else {
        let result = block_on(agent.run("go")).expect("a run");
        assert_eq!(result.answer, "done");
        black_box(result);
    }
}

fn bench(c: &mut Criterion) {
    for (kind, streamed) in [("plain", false), ("streamed", true)] {
        let mut group = c.benchmark_group(format!("agent_tool/{kind}"));
        for (name, make) in [("flat", flat as fn() -> Agent), ("nested", nested)] {
            group.bench_function(name, |b| {
                b.iter_batched(make, |agent| run(agent, streamed), BatchSize::SmallInput)
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
