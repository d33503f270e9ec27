use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(name = "a", read_only, name = "b")]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
