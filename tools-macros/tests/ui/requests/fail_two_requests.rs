use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Place {}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct When {}

/// Doc.
#[tool]
async fn get_weather(_place: Place, _when: When) -> String {
    String::new()
}

fn main() {}
