//! The per-argument form: the macro writes the request struct; doc comments
//! become property descriptions, Option arguments are not required.
#![deny(warnings, missing_docs)]

use toolcall::{Tool, ToolContext, tool};

/// Daily temperatures for a city.
#[tool(args)]
pub async fn get_forecast(
    /// City name.
    city: String,
    /// Days ahead, 1 to 16.
    #[schemars(range(min = 1, max = 16))]
    days: Option<u8>,
    ctx: &ToolContext,
) -> String {
    format!("{city} x{} {}", days.unwrap_or(1), ctx.call_id().is_empty())
}

/// A tool without arguments.
#[tool(args)]
pub async fn now() -> u64 {
    1_700_000_000
}

fn main() {
    let schema = serde_json::Value::Object(GetForecast.spec().parameters().clone());
    assert_eq!(schema["required"], serde_json::json!(["city"]));
    assert_eq!(schema["properties"]["city"]["description"], "City name.");
    assert_eq!(schema["properties"]["days"]["description"], "Days ahead, 1 to 16.");
    assert!(schema.get("description").is_none(), "{schema}");
    let ctx = ToolContext::new();
    let out = futures::executor::block_on(GetForecast.call_text(&ctx, r#"{"city":"Oslo","days":3}"#)).unwrap();
    assert_eq!(out, "Oslo x3 true");
    let err = futures::executor::block_on(GetForecast.call_text(&ctx, r#"{"city":"Oslo","days":17}"#)).unwrap_err();
    assert_eq!(err.to_string(), "invalid arguments: `days` must be at most 16");
    assert_eq!(Now.spec().parameters()["properties"], serde_json::json!({}));
    assert_eq!(futures::executor::block_on(Now.call_text(&ctx, "{}")).unwrap(), "1700000000");
}
