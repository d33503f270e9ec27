use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(timeout = "30 seconds")]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
