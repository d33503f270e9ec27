//! The main example: a tool written with `#[tool]`, its schema, and what it
//! answers to the argument shapes a model sends. No network, no key.
//!
//! Run it with `cargo run --example get_weather`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolcall::{Tool, ToolContext, ToolError, ToolOutput, tool};

/// The arguments the model sends.
#[derive(Deserialize, JsonSchema)]
struct WeatherRequest {
    /// City name, e.g. "Paris".
    city: String,
    /// Days ahead to forecast, 1 to 16; today if absent.
    #[schemars(range(min = 1, max = 16))]
    days: Option<u8>,
}

/// What the tool returns: compact JSON for the model.
#[derive(Serialize, ToolOutput)]
struct Weather {
    city: String,
    celsius: Vec<f32>,
}

/// Why the lookup failed (a std error: the model reads `{"error": "..."}`).
#[derive(Debug, thiserror::Error)]
enum WeatherError {
    #[error("no weather station near {0}")]
    UnknownCity(String),
}

/// Current temperature for a city, and a forecast for the days ahead.
#[tool(name = "get_weather", title = "Weather", read_only, timeout = "5s")]
async fn get_weather(_ctx: &ToolContext, req: WeatherRequest) -> Result<Weather, WeatherError> {
    if req.city.eq_ignore_ascii_case("atlantis") {
        return Err(WeatherError::UnknownCity(req.city));
    }
    let days = req.days.unwrap_or(1);
    let celsius = (0..days).map(|day| 18.0 + f32::from(day) * 0.5).collect();
    Ok(Weather { city: req.city, celsius })
}

#[tokio::main]
async fn main() {
    let tool = GetWeather;
    let schema = serde_json::Value::Object(tool.spec().parameters().clone());
    println!("{}: {}", tool.spec().name(), tool.spec().description());
    println!("schema: {schema}\n");

    let shapes = [
        ("clean JSON", r#"{"city":"Paris","days":2}"#),
        ("fenced JSON", "```json\n{\"city\":\"Oslo\"}\n```"),
        ("prose around JSON", r#"Sure, calling it now: {"city":"Lima","days":3} - done."#),
        ("a wrong type", r#"{"city":"Paris","days":"three"}"#),
        ("out of range", r#"{"city":"Paris","days":17}"#),
        ("a failing call", r#"{"city":"Atlantis"}"#),
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
