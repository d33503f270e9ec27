//! One mistake, one error: the uses of the tool still compile.
use toolcall::{Tool, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(read_only = 1)]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {
    let mut tools = toolcall::Toolset::new();
    tools.add(GetWeather).unwrap();
    let _ = GetWeather.spec().name();
}
