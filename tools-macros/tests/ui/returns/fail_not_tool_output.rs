use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

struct Weather;

/// Doc.
#[tool]
async fn get_weather(_req: Req) -> Weather {
    Weather
}

fn main() {}
