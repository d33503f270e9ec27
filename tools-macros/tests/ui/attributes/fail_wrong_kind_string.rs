use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(name = get_weather, title = 3)]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
