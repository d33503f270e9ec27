//! A tool that takes nothing but the context, or nothing at all, needs no
//! `args`: its request is the empty object.
use toolcall::{Tool, ToolContext, tool};

/// Is the server up?
#[tool]
async fn ping(_ctx: &ToolContext) -> String {
    "pong".into()
}

/// The time, in seconds since the epoch.
#[tool]
async fn now() -> u64 {
    0
}

fn main() {
    assert_eq!(serde_json::Value::Object(Ping.spec().parameters().clone())["properties"], serde_json::json!({}));
    let ctx = ToolContext::new();
    assert_eq!(futures::executor::block_on(Ping.call_text(&ctx, "{}")).unwrap(), "pong");
    assert_eq!(futures::executor::block_on(Now.call_text(&ctx, "")).unwrap(), "0");
}
