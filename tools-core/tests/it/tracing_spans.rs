//! Each call is traced in a `tool_call` span: OpenTelemetry's
//! `execute_tool` span (GenAI semantic conventions v1.41.0) with the tool,
//! the call id and, for a call that did not succeed, `error.type`; the
//! outcome and the duration beside them. Arguments and results only when
//! the toolset's options ask for them.

use crate::common;
use crate::spans;

use std::sync::Arc;

use common::{FnTool, echo};
use spans::{Capture, Spans, field, traced};
use toolcall_core::toolset::{Toolset, TurnOptions};
use toolcall_core::{ToolCall, ToolContext, ToolError};

/// The `tool_call` spans of one turn of `calls` on `tools`.
fn tool_spans(tools: &Toolset, calls: &[ToolCall]) -> Vec<Vec<(String, String)>> {
    let spans = Spans::default();
    traced(Capture(Arc::clone(&spans)), || {
        futures::executor::block_on(tools.run_turn(&ToolContext::new(), calls));
    });
    let spans = spans.lock().unwrap();
    spans.iter().filter(|(name, _)| name == "tool_call").map(|(_, fields)| fields.clone()).collect()
}

fn echo_and_fail() -> Toolset {
    Toolset::builder()
        .add(echo("echo"))
        .add(FnTool::new("fail", |_, _| async { Err(ToolError::failed("no")) }))
        .build()
        .unwrap()
}

#[test]
fn every_call_gets_a_span_with_its_outcome_and_duration() {
    let calls = [ToolCall::new("a1", "echo", r#"{"text":"hi"}"#), ToolCall::new("a2", "FAIL", "{}")];
    let spans = tool_spans(&echo_and_fail(), &calls);
    assert_eq!(spans.len(), 2);
    for (fields, (tool, id, outcome, error)) in
        spans.iter().zip([("echo", "a1", "success", None), ("fail", "a2", "failed", Some("failed"))])
    {
        let get = |key: &str| field(fields, key);
        assert_eq!(
            (get("otel.name"), get("otel.kind"), get("gen_ai.operation.name")),
            (Some(format!("execute_tool {tool}").as_str()), Some("internal"), Some("execute_tool")),
            "{fields:?}"
        );
        assert_eq!(
            (get("gen_ai.tool.name"), get("gen_ai.tool.call.id"), get("gen_ai.tool.type")),
            (Some(tool), Some(id), Some("function")),
            "{fields:?}"
        );
        assert_eq!((get("outcome"), get("error.type")), (Some(outcome), error), "{fields:?}");
        assert_eq!(get("otel.status_code"), error.map(|_| "error"), "{fields:?}");
        assert!(get("duration_us").is_some_and(|us| us.parse::<u64>().is_ok()), "{fields:?}");
        // Content is opt-in.
        assert_eq!((get("gen_ai.tool.call.arguments"), get("gen_ai.tool.call.result")), (None, None));
    }
}

#[test]
fn arguments_and_results_are_traced_only_when_asked() {
    let tools = echo_and_fail().with_options(TurnOptions::new().with_trace_content(true));
    let calls = [ToolCall::new("a1", "echo", r#"{"text":"hi"}"#), ToolCall::new("a2", "fail", r#"{"x":1}"#)];
    let spans = tool_spans(&tools, &calls);
    let (echoed, failed) = (&spans[0], &spans[1]);
    assert_eq!(field(echoed, "gen_ai.tool.call.arguments"), Some(r#"{"text":"hi"}"#));
    let result = field(echoed, "gen_ai.tool.call.result").expect("the result");
    assert!(result.contains("hi"), "{result}");
    // A failed call's arguments are traced; it has no result to trace.
    assert_eq!(field(failed, "gen_ai.tool.call.arguments"), Some(r#"{"x":1}"#));
    assert_eq!(field(failed, "gen_ai.tool.call.result"), None);
}
