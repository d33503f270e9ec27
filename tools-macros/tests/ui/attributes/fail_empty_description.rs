use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(description = "  ")]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
