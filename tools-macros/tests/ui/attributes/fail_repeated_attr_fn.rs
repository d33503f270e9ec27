//! A second #[tool] on a free fn: one error on it, and the tool type is
//! defined once, so its uses still compile.
use toolcall::{Tool, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(name = "get_weather")]
#[tool(read_only)]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {
    let _ = GetWeather.spec().name();
}
