use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(name = "get.weather")]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
