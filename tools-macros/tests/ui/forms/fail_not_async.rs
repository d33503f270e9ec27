use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool]
fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {
    let _ = GetWeather;
}
