//! The context is found by its type, not its name: with #[tool(args)],
//! `context: String` and `ctx: String` are request fields like any other.
use toolcall::{Tool, ToolContext, tool};

/// Echoes its `context` argument, with the call id from the real context.
#[tool(args)]
async fn echo(context: String, call: &ToolContext) -> String {
    format!("{context}/{}", call.call_id())
}

/// The real context is called `context`, the string argument `ctx`.
#[tool(args)]
async fn swapped(context: &toolcall::ToolContext, ctx: String) -> String {
    format!("{ctx}/{}", context.tool_name())
}

fn main() {
    let schema = serde_json::Value::Object(Echo.spec().parameters().clone());
    assert_eq!(schema["required"], serde_json::json!(["context"]), "{schema}");
    assert_eq!(schema["properties"]["context"]["type"], "string", "{schema}");
    let schema = serde_json::Value::Object(Swapped.spec().parameters().clone());
    assert_eq!(schema["required"], serde_json::json!(["ctx"]), "{schema}");

    let ctx = ToolContext::new().for_call("c1", "t1");
    let out = futures::executor::block_on(Echo.call_text(&ctx, r#"{"context":"from the model"}"#)).unwrap();
    assert_eq!(out, "from the model/c1");
    let out = futures::executor::block_on(Swapped.call_text(&ctx, r#"{"ctx":"also"}"#)).unwrap();
    assert_eq!(out, "also/t1");
}
