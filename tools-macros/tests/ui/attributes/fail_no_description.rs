use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

#[tool]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
