use toolcall::tool;

mod mine {
    pub struct ToolContext;
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool]
async fn get_weather(_ctx: &mine::ToolContext, _req: Req) -> String {
    String::new()
}

fn main() {}
