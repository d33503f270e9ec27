//! The description defaults to the doc comment, lines trimmed and joined.
use toolcall::{Tool, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Current temperature
///    for a city.
///
/// Celsius.
#[tool]
async fn get_weather(_req: Req) -> &'static str {
    "21"
}

fn main() {
    assert_eq!(GetWeather.spec().name(), "get_weather");
    assert_eq!(GetWeather.spec().description(), "Current temperature for a city.\n\nCelsius.");
    assert_eq!(GetWeather::tool_spec().name(), "get_weather");
}
