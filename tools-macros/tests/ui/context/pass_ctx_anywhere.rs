//! The context is optional, and may come before or after the request.
use toolcall::{Tool, ToolContext, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {
    n: u8,
}

/// Reads the call id.
#[tool]
async fn after(req: Req, ctx: &ToolContext) -> String {
    format!("{}{}", req.n, ctx.call_id())
}

/// Under another name.
#[tool]
async fn renamed(context: &toolcall::ToolContext, req: Req) -> String {
    format!("{}{}", req.n, context.tool_name())
}

/// No context at all.
#[tool]
async fn without(req: Req) -> u8 {
    req.n
}

fn main() {
    let ctx = ToolContext::new().for_call("c", "t");
    assert_eq!(futures::executor::block_on(After.call_text(&ctx, r#"{"n":1}"#)).unwrap(), "1c");
    assert_eq!(futures::executor::block_on(Renamed.call_text(&ctx, r#"{"n":2}"#)).unwrap(), "2t");
    assert_eq!(futures::executor::block_on(Without.call_text(&ctx, r#"{"n":3}"#)).unwrap(), "3");
}
