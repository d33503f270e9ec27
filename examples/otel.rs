//! The agent's spans, exported over OTLP (HTTP, protobuf) as OpenTelemetry's
//! GenAI semantic conventions (v1.41.0) name them: `invoke_agent weather`,
//! `chat scripted`, `execute_tool get_weather`. The SDK traces through
//! `tracing` alone; this example adds tracing-opentelemetry and the OTLP
//! exporter, which read the standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
//! default `http://localhost:4318`; `OTEL_SERVICE_NAME`). A scripted model
//! answers, so it runs offline; point it at any collector (Jaeger, the
//! OpenTelemetry Collector...):
//!
//! ```sh
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 cargo run --example otel --features agent
//! ```
//!
//! Messages, arguments and results are traced only when asked:
//! `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, the variable
//! OpenTelemetry's own GenAI instrumentations read, turns on
//! [`Agent::with_trace_content`](toolcall::agent::Agent::with_trace_content).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use toolcall::agent::testing::ScriptedModel;
use toolcall::agent::{Agent, ModelResponse, Usage};
use toolcall::toolset::Toolset;
use toolcall::{ToolCall, ToolContext, ToolError, tool};
use tracing_subscriber::layer::SubscriberExt;

/// Current temperature for a city, in degrees Celsius.
#[tool(args, read_only)]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    match city.as_str() {
        "Atlantis" => Err(ToolError::failed("no weather station near Atlantis")),
        _ => Ok(format!("{{\"city\":\"{city}\",\"celsius\":{}}}", 12 + city.len() % 10)),
    }
}

/// A model that calls the tool twice (one call fails), then answers, with
/// the token counts a provider would report.
fn model() -> ScriptedModel {
    let usage = Usage {
        input_tokens: Some(120),
        output_tokens: Some(30),
        cache_read_tokens: Some(64),
        reasoning_tokens: Some(12),
        ..Usage::default()
    };
    let calls = [
        ToolCall::new("call_1", "get_weather", r#"{"city":"Paris"}"#),
        ToolCall::new("call_2", "get_weather", r#"{"city":"Atlantis"}"#),
    ];
    ScriptedModel::new()
        .then(Ok(ModelResponse { usage, id: Some("resp_1".into()), ..ModelResponse::new("", calls) }))
        .then(Ok(ModelResponse {
            usage,
            id: Some("resp_2".into()),
            ..ModelResponse::new("Paris is at 17°C; Atlantis has no station.", [])
        }))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The blocking HTTP client is made and dropped outside the async
    // runtime, and the batch processor exports from its own thread.
    let exporter = opentelemetry_otlp::SpanExporter::builder().with_http().build()?;
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("tools"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;

    let content = std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .is_ok_and(|value| value.eq_ignore_ascii_case("true"));
    let agent = Agent::new(model(), Toolset::builder().add(GetWeather).build()?)?
        .with_name("weather")
        .with_instructions("Answer weather questions with the get_weather tool.")
        .with_trace_content(content);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let result = runtime.block_on(agent.run("What's the weather in Paris and Atlantis?"))?;
    println!("answer: {}", result.answer);

    // Send what is left before the process ends. A collector that is not
    // there loses the spans without an error here: the exporter's own logs
    // (its `internal-logs` feature) would say so.
    let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT");
    let endpoint = endpoint.as_deref().unwrap_or("http://localhost:4318");
    match provider.shutdown() {
        Ok(()) => println!("spans sent to {endpoint}"),
        Err(error) => eprintln!("the spans could not be exported to {endpoint}: {error}"),
    }
    Ok(())
}
