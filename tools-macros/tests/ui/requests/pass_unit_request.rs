//! `()` as the request of a tool without arguments, and a request behind a path.
use toolcall::{Tool, ToolContext, tool};

mod api {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct Req {
        pub n: u8,
    }
}

/// Always the same.
#[tool]
async fn constant(_req: ()) -> &'static str {
    "42"
}

/// Doubles.
#[tool]
async fn double(req: api::Req) -> u16 {
    u16::from(req.n) * 2
}

fn main() {
    let ctx = ToolContext::new();
    assert_eq!(Constant.spec().parameters()["type"], "object");
    assert_eq!(futures::executor::block_on(Constant.call_text(&ctx, "")).unwrap(), "42");
    assert_eq!(futures::executor::block_on(Constant.call_text(&ctx, "{}")).unwrap(), "42");
    assert_eq!(futures::executor::block_on(Double.call_text(&ctx, r#"{"n":21}"#)).unwrap(), "42");
}
