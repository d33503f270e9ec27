use toolcall::{ToolContext, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool]
async fn get_weather(_ctx: &mut ToolContext, _req: Req) -> String {
    String::new()
}

fn main() {}
