//! A misspelled key is one error, with the key it meant; the description it
//! was meant to give is not reported missing as well.
use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

#[tool(desciption = "Current temperature for a city.")]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
