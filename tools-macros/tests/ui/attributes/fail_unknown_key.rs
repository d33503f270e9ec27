use tools::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(nmae = "get_weather")]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
