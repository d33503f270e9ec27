use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool(name = "a_name_that_goes_on_and_on_far_beyond_what_any_provider_would_ever_accept")]
async fn get_weather(_req: Req) -> String {
    String::new()
}

fn main() {}
