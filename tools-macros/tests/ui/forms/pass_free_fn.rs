//! A free async fn: a unit struct, registered in a toolset and called directly.
#![deny(warnings, missing_docs)]

use toolcall::{Tool, ToolContext, Toolset, tool};

/// The request.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct WeatherRequest {
    /// City name.
    pub city: String,
}

/// Current temperature for a city.
#[tool(name = "get_weather")]
pub async fn get_weather(ctx: &ToolContext, req: WeatherRequest) -> Result<String, std::io::Error> {
    Ok(format!("21 in {} ({})", req.city, ctx.call_id()))
}

fn main() {
    let mut tools = Toolset::new();
    tools.add(GetWeather).unwrap();
    let ctx = ToolContext::new().for_call("c1", "get_weather");
    let tool = tools.get("get_weather").unwrap();
    let out = futures::executor::block_on(tool.call_text(&ctx, r#"{"city":"Paris"}"#)).unwrap();
    assert_eq!(out, "21 in Paris (c1)");
    // The fn itself is still there to call.
    let direct = futures::executor::block_on(get_weather(&ctx, WeatherRequest { city: "Oslo".into() }));
    assert_eq!(direct.unwrap(), "21 in Oslo (c1)");
    assert_eq!(GetWeather.spec().parameters()["required"], serde_json::json!(["city"]));
}
