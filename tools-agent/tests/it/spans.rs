//! A run is traced in an `agent_run` span, each model request in a
//! `model_request` span with its provider, model, tokens and duration, and
//! the toolset's `tool_call` spans inside, their fields named as
//! OpenTelemetry's GenAI conventions name them (`otel.rs` sees them
//! through tracing-opentelemetry).

#[path = "../../../tools-core/tests/it/spans/mod.rs"]
pub(crate) mod capture;

use capture::{Capture, Spans, field};
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{
    Agent, Anthropic, ApiKey, FallbackModel, ModelResponse, OpenAiChat, ResendPolicy, Usage,
};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;

/// Echo the text.
#[tool(args, crate = "toolcall_core")]
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
    let result = capture::traced(Capture(spans.clone()), || futures::executor::block_on(agent.run("say hi")));
    assert_eq!(result.unwrap().answer, "hi");
    let spans = spans.lock().unwrap();
    let names: Vec<&str> = spans.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["agent_run", "model_request", "tool_call", "model_request"]);
    let (_, run) = &spans[0];
    assert_eq!(
        (field(run, "gen_ai.provider.name"), field(run, "gen_ai.request.model")),
        (Some("scripted"), Some("scripted"))
    );
    assert_eq!(field(run, "turns"), Some("2"));
    assert_eq!(field(run, "stop"), Some("Answered"));
    // The run's tokens are its requests' together.
    assert_eq!(field(run, "gen_ai.usage.input_tokens"), Some("30"));
    let (_, request) = &spans[1];
    // A model that stands for no other answered itself.
    assert_eq!(
        (field(request, "gen_ai.provider.name"), field(request, "gen_ai.response.model")),
        (Some("scripted"), Some("scripted"))
    );
    assert_eq!(
        (field(request, "gen_ai.usage.input_tokens"), field(request, "gen_ai.usage.output_tokens")),
        (Some("30"), Some("4"))
    );
    assert_eq!(
        (
            field(request, "gen_ai.usage.cache_read.input_tokens"),
            field(request, "gen_ai.usage.reasoning.output_tokens")
        ),
        (Some("20"), Some("2"))
    );
    // A count the model did not report is left out, not recorded as zero.
    assert_eq!(field(request, "gen_ai.usage.cache_creation.input_tokens"), None);
    assert_eq!(field(&spans[3].1, "gen_ai.usage.input_tokens"), None);
    assert!(field(request, "duration_ms").is_some_and(|ms| ms.parse::<u64>().is_ok()), "{request:?}");
    assert_eq!(field(&spans[2].1, "gen_ai.tool.name"), Some("echo"));
}

/// A fallback's request span asks the fallback's model
/// (`gen_ai.request.model`), and names the provider and the model that
/// answered (`gen_ai.provider.name`, `gen_ai.response.model`), with that
/// model's response id and tokens.
#[test]
fn a_fallbacks_request_span_names_the_model_that_answered() {
    use crate::scenarios::{ProviderMock, Turn, mock};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (down, up) = runtime.block_on(async {
        let message = "The server had an error while processing your request. Sorry about that!";
        let down = mock(vec![crate::support::openai::error(500, message)]).await;
        let up = mock(vec![crate::anthropic::Mock::reply(&Turn::text("Hi."), false)]).await;
        (down, up)
    });
    let gpt =
        OpenAiChat::from_values("gpt-4.1", Some(ApiKey::new("sk-test")), Some(&format!("{}/v1", down.uri())))
            .with_resend(ResendPolicy::none());
    let claude =
        Anthropic::from_values("claude-sonnet-4-5", Some(ApiKey::new("sk-ant-test")), Some(&up.uri()));
    let agent = Agent::new(FallbackModel::new(gpt).or(claude), Toolset::new()).unwrap();
    let spans = Spans::default();
    let result = capture::traced(Capture(spans.clone()), || runtime.block_on(agent.run("Hi")));
    assert_eq!(result.unwrap().answer, "Hi.");
    let spans = spans.lock().unwrap();
    let requests: Vec<_> = spans.iter().filter(|(name, _)| name == "model_request").collect();
    assert_eq!(requests.len(), 1);
    let (_, request) = requests[0];
    assert_eq!(field(request, "gen_ai.request.model"), Some("openai:gpt-4.1,anthropic:claude-sonnet-4-5"));
    assert_eq!(
        (field(request, "gen_ai.provider.name"), field(request, "gen_ai.response.model")),
        (Some("anthropic"), Some("claude-sonnet-4-5"))
    );
    assert_eq!(field(request, "gen_ai.response.id"), Some("msg_01XFDUDYJgAACzvnptvVoYEL"));
    let tokens = crate::anthropic::Mock::USAGE;
    assert_eq!(
        field(request, "gen_ai.usage.input_tokens"),
        tokens.input_tokens.map(|n| n.to_string()).as_deref()
    );
}
