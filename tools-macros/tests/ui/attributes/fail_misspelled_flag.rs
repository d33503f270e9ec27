use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Current temperature for a city.
#[tool(readonly, idempotant, readOnly)]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
