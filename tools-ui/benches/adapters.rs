//! How fast the adapters render a run: the agent's events into UI message
//! stream chunks (`UiAdapter`) and AG-UI events (`AguiAdapter`), each
//! framed as SSE, for a long streamed answer (10,000 text deltas) and a
//! turn of many calls (200 calls, each streamed in five pieces, run, and
//! answered). Throughput is in the agent's events per second.
//!
//! ```sh
//! cargo bench -p toolcall-ui --bench adapters
//! ```

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use toolcall_agent::AgentEvent;
use toolcall_core::{Outcome, ToolCall, ToolResult};
use toolcall_ui::{AguiAdapter, UiAdapter};

/// A long answer, streamed a few words at a time.
fn long_answer() -> Vec<AgentEvent> {
    (0..10_000).map(|n| AgentEvent::TextDelta(format!("word {n} "))).collect()
}

/// One turn of 200 calls: each streamed (its id and name, then four
/// argument pieces), made, and answered.
fn many_calls() -> Vec<AgentEvent> {
    let mut events = Vec::new();
    for index in 0..200 {
        let id = format!("call_{index}");
        events.push(AgentEvent::CallDelta {
            index,
            id: Some(id.clone()),
            name: Some("get_weather".into()),
            arguments: String::new(),
        });
        for piece in [r#"{"ci"#, r#"ty":"#, r#""Par"#, r#"is"}"#] {
            events.push(AgentEvent::CallDelta { index, id: None, name: None, arguments: piece.into() });
        }
    }
    for index in 0..200 {
        let call = ToolCall::new(format!("call_{index}"), "get_weather", r#"{"city":"Paris"}"#);
        events.push(AgentEvent::ToolCall(call.clone()));
        let result =
            ToolResult::new(call.id.as_str(), "get_weather", "18°C and sunny in Paris", Outcome::Success);
        events.push(AgentEvent::ToolResult(result));
    }
    events
}

/// The bytes of the SSE frames each adapter writes for `events`.
fn ui(events: &[AgentEvent]) -> usize {
    let mut adapter = UiAdapter::new();
    events.iter().flat_map(|event| adapter.push(event)).map(|chunk| chunk.to_sse().len()).sum()
}

fn agui(events: &[AgentEvent]) -> usize {
    let mut adapter = AguiAdapter::new("thread", "run");
    events.iter().flat_map(|event| adapter.push(event)).map(|event| event.to_sse().len()).sum()
}

fn adapters(c: &mut Criterion) {
    for (name, events) in [("long answer", long_answer()), ("200 calls", many_calls())] {
        let mut group = c.benchmark_group(format!("render {name}"));
        group.throughput(Throughput::Elements(events.len() as u64));
        group.bench_function("ui message stream", |b| b.iter(|| ui(std::hint::black_box(&events))));
        group.bench_function("ag-ui", |b| b.iter(|| agui(std::hint::black_box(&events))));
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = adapters
}
criterion_main!(benches);
