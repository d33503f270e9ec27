//! Each call is traced in a `tool_call` span carrying the tool, the call id,
//! the outcome and the duration.

mod common;

use std::sync::{Arc, Mutex};

use common::{FnTool, echo};
use tools_core::toolset::Toolset;
use tools_core::{ToolCall, ToolContext, ToolError};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Span name and fields, in creation order.
type Spans = Arc<Mutex<Vec<(String, Vec<(String, String)>)>>>;

struct Capture(Spans);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut spans = self.0.lock().unwrap();
        let mut fields = Vec::new();
        span.record(&mut Fields(&mut fields));
        spans.push((span.metadata().name().to_owned(), fields));
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.0.lock().unwrap();
        let index = span.into_u64() as usize - 1;
        values.record(&mut Fields(&mut spans[index].1));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn every_call_gets_a_span_with_its_outcome_and_duration() {
    let spans = Spans::default();
    let tools = Toolset::builder()
        .add(echo("echo"))
        .add(FnTool::new("fail", |_, _| async { Err(ToolError::failed("no")) }))
        .build()
        .unwrap();
    let calls = [ToolCall::new("a1", "echo", "{}"), ToolCall::new("a2", "FAIL", "{}")];
    tracing::subscriber::with_default(Capture(Arc::clone(&spans)), || {
        futures::executor::block_on(tools.run(&ToolContext::new(), &calls));
    });
    let spans = spans.lock().unwrap();
    let calls: Vec<_> = spans.iter().filter(|(name, _)| name == "tool_call").collect();
    assert_eq!(calls.len(), 2);
    for ((_, fields), (tool, id, outcome)) in
        calls.iter().zip([("echo", "a1", "success"), ("fail", "a2", "failed")])
    {
        let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!(
            (get("tool"), get("call_id"), get("outcome")),
            (Some(tool), Some(id), Some(outcome)),
            "{fields:?}"
        );
        assert!(get("duration_us").is_some_and(|us| us.parse::<u64>().is_ok()), "{fields:?}");
    }
}
