use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

#[derive(Debug)]
struct NotAnError;

/// Doc.
#[tool]
async fn get_weather(_req: Req) -> Result<String, NotAnError> {
    Err(NotAnError)
}

fn main() {}
