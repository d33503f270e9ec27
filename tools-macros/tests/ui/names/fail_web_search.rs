use toolcall::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Search the web.
#[tool]
async fn web_search(_req: Req) -> String {
    String::new()
}

fn main() {}
