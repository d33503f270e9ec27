//! Every key of #[tool], and what each puts in the spec.
#![deny(warnings, missing_docs)]

use std::time::Duration;
use toolcall::{Tool, ToolContext, tool};

/// The request.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Req {
    /// A city.
    pub city: String,
}

/// Ignored: the description key wins.
#[tool(
    name = "lookup-city",
    description = "Look a city up.",
    title = "City lookup",
    read_only,
    destructive = false,
    idempotent = true,
    open_world = false,
    timeout = "1m30s",
    struct_name = "Lookup",
    deny_unknown_fields,
    needs_approval,
    example = r#"{"city": "Oslo"}"#,
    example = r#"{"city": "Lima"}"#,
    crate = "toolcall"
)]
pub async fn lookup(req: Req) -> String {
    req.city
}

/// A timeout in milliseconds.
#[tool(timeout = "250ms")]
pub async fn quick(req: Req) -> String {
    req.city
}

fn main() {
    let tool = Lookup;
    assert_eq!(tool.spec().name(), "lookup-city");
    assert_eq!(tool.spec().description(), "Look a city up.");
    let hints = tool.spec().annotations();
    assert_eq!(hints.title.as_deref(), Some("City lookup"));
    assert_eq!(
        (hints.read_only, hints.destructive, hints.idempotent, hints.open_world),
        (Some(true), Some(false), Some(true), Some(false))
    );
    assert_eq!(tool.spec().timeout(), Some(Duration::from_secs(90)));
    assert_eq!(Quick.spec().timeout(), Some(Duration::from_millis(250)));
    assert!(Quick.spec().annotations().is_empty());
    assert!(tool.spec().needs_approval() && !Quick.spec().needs_approval());
    let examples: Vec<String> = tool.spec().examples().iter().map(ToString::to_string).collect();
    assert_eq!(examples, [r#"{"city":"Oslo"}"#, r#"{"city":"Lima"}"#]);
    assert!(Quick.spec().examples().is_empty());
    let out = futures::executor::block_on(tool.call_text(&ToolContext::new(), r#"{"city":"Oslo"}"#)).unwrap();
    assert_eq!(out, "Oslo");
    assert_eq!(tool.spec().parameters()["additionalProperties"], false);
    let err = futures::executor::block_on(tool.call_text(&ToolContext::new(), r#"{"city":"Oslo","country":"NO"}"#));
    assert_eq!(
        err.unwrap_err().model_content(),
        "Invalid arguments: unknown field `country`: the fields are `city`. Fix the arguments to match the tool's \
         JSON schema and call the tool again."
    );
    let quick = futures::executor::block_on(Quick.call_text(&ToolContext::new(), r#"{"city":"Oslo","country":"NO"}"#));
    assert_eq!(quick.unwrap(), "Oslo", "without the key, an unknown field is ignored");
}
