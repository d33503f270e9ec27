use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(read_only = "yes")]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
