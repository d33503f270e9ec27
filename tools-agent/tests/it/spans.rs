//! A run is traced in an `agent_run` span, each model request in a
//! `model_request` span with its provider, model, tokens and duration, and
//! the toolset's `tool_call` spans inside.

#[path = "../../../tools-core/tests/it/spans/mod.rs"]
mod capture;

use capture::{Capture, Spans, field};
use tools_agent::{Agent, ModelResponse, ScriptedModel, Usage};
use tools_core::toolset::Toolset;
use tools_core::{ToolCall, ToolContext, ToolError};
use tools_macros::tool;

/// Echo the text.
#[tool(args, crate = "tools_core")]
async fn echo(_ctx: &ToolContext, text: String) -> Result<String, ToolError> {
    Ok(text)
}

#[test]
fn runs_requests_and_calls_are_traced() {
    let usage = Usage {
        input_tokens: Some(30),
        output_tokens: Some(4),
        cache_read_tokens: Some(20),
        reasoning_tokens: Some(2),
        ..Usage::default()
    };
    let model = ScriptedModel::new()
        .then(Ok(ModelResponse {
            usage,
            ..ModelResponse::new("", [ToolCall::new("c1", "echo", r#"{"text":"hi"}"#)])
        }))
        .then_text("hi");
    let agent = Agent::new(model, Toolset::builder().add(Echo).build().unwrap()).unwrap();
    let spans = Spans::default();
    let result = tracing::subscriber::with_default(Capture(spans.clone()), || {
        futures::executor::block_on(agent.run("say hi"))
    });
    assert_eq!(result.unwrap().answer, "hi");
    let spans = spans.lock().unwrap();
    let names: Vec<&str> = spans.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["agent_run", "model_request", "tool_call", "model_request"]);
    let (_, run) = &spans[0];
    assert_eq!((field(run, "provider"), field(run, "model")), (Some("scripted"), Some("scripted")));
    assert_eq!(field(run, "turns"), Some("2"));
    assert_eq!(field(run, "stop"), Some("Answered"));
    let (_, request) = &spans[1];
    assert_eq!(field(request, "provider"), Some("scripted"));
    assert_eq!((field(request, "input_tokens"), field(request, "output_tokens")), (Some("30"), Some("4")));
    assert_eq!(
        (field(request, "cache_read_tokens"), field(request, "reasoning_tokens")),
        (Some("20"), Some("2"))
    );
    // A count the model did not report is left out, not recorded as zero.
    assert_eq!(field(request, "cache_write_tokens"), None);
    assert_eq!(field(&spans[3].1, "input_tokens"), None);
    assert!(field(request, "duration_ms").is_some_and(|ms| ms.parse::<u64>().is_ok()), "{request:?}");
    assert_eq!(field(&spans[2].1, "tool"), Some("echo"));
}
