use toolcall::tool;

struct MyContext;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {}

/// Doc.
#[tool]
async fn get_weather(ctx: &MyContext, _req: Req) -> String {
    let _ = ctx;
    String::new()
}

fn main() {}
