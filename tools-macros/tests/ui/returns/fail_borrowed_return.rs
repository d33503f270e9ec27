use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool]
async fn get_weather(_req: Req) -> impl std::fmt::Display {
    1
}

fn main() {}
