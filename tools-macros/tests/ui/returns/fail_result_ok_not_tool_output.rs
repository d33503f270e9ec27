use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

struct Weather;

/// Doc.
#[tool]
async fn get_weather(_req: Req) -> Result<Weather, std::io::Error> {
    Ok(Weather)
}

fn main() {}
