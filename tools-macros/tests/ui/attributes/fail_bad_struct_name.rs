use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(struct_name = "Get Weather")]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
