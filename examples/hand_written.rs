//! A tool written by hand on the typed layer, without the `#[tool]` macro:
//! a request type, a spec built once, and `run`.
//!
//! Run it with `cargo run --example hand_written`. Its tool is also in the
//! export set (`examples/export_set/mod.rs`), whose schemas are checked in.

use std::sync::LazyLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolcall::{Json, Tool, ToolContext, ToolError, ToolSpec, TypedTool};

/// The arguments the model sends.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct ForecastRequest {
    /// City name, e.g. "Paris".
    city: String,
    /// Number of days to forecast (1 to 16); today only if absent.
    #[schemars(range(min = 1, max = 16))]
    days: Option<u8>,
}

/// What the tool returns: serialized as compact JSON for the model.
#[derive(Serialize)]
pub(crate) struct Forecast {
    city: String,
    celsius: Vec<f32>,
}

/// A forecast tool with no state.
pub(crate) struct GetForecast;

impl TypedTool for GetForecast {
    type Request = ForecastRequest;
    type Output = Json<Forecast>;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new::<ForecastRequest>("get_forecast", "Daily temperatures for a city, in Celsius.")
                .with_read_only(true)
        });
        &SPEC
    }

    async fn run(&self, _ctx: &ToolContext, req: ForecastRequest) -> Result<Json<Forecast>, ToolError> {
        if req.city.trim().is_empty() {
            return Err(ToolError::retry("`city` is empty: ask the user which city they mean"));
        }
        let days = req.days.unwrap_or(1);
        let celsius = (0..days).map(|day| 18.0 + f32::from(day) * 0.5).collect();
        Ok(Json(Forecast { city: req.city, celsius }))
    }
}

#[tokio::main]
async fn main() {
    let tool = GetForecast;
    // `TypedTool::spec` and `Tool::spec` are the same value; with both
    // traits in scope, name one.
    let spec = Tool::spec(&tool);
    let schema = serde_json::Value::Object(spec.parameters().clone());
    println!("{}: {}", spec.name(), spec.description());
    println!("schema: {schema}\n");

    let shapes = [
        ("clean JSON", r#"{"city":"Paris","days":2}"#),
        ("fenced JSON", "```json\n{\"city\":\"Oslo\"}\n```"),
        ("prose around JSON", r#"Sure, calling it now: {"city":"Lima","days":3} - done."#),
        ("a wrong type", r#"{"city":"Paris","days":"three"}"#),
        ("out of range", r#"{"city":"Paris","days":17}"#),
        ("an empty city", r#"{"city":" "}"#),
    ];
    let ctx = ToolContext::new();
    for (label, arguments) in shapes {
        let shown = match tool.call_text(&ctx, arguments).await {
            Ok(content) => format!("ok    {content}"),
            Err(error) => format!("{:<5} {}", kind(&error), error.model_content()),
        };
        println!("{label:<18} {arguments:?}\n  -> {shown}");
    }
}

fn kind(error: &ToolError) -> &'static str {
    match error {
        ToolError::InvalidArguments(_) => "fix",
        ToolError::Retry(_) => "retry",
        _ => "error",
    }
}
