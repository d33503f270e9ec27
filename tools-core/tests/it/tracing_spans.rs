//! Each call is traced in a `tool_call` span carrying the tool, the call id,
//! the outcome and the duration.

use crate::common;
use crate::spans;

use std::sync::Arc;

use common::{FnTool, echo};
use spans::{Capture, Spans};
use tools_core::toolset::Toolset;
use tools_core::{ToolCall, ToolContext, ToolError};

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
        futures::executor::block_on(tools.run_turn(&ToolContext::new(), &calls));
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
