//! Every return shape: std errors, anyhow, ToolError and its retry, an alias,
//! a plain output.
use toolcall::{Json, Tool, ToolContext, ToolError, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Req {
    n: i32,
}

/// std error.
#[tool]
async fn parse(req: Req) -> Result<i32, std::num::TryFromIntError> {
    u8::try_from(req.n).map(i32::from)
}

/// anyhow.
#[tool]
async fn with_anyhow(req: Req) -> Result<String, anyhow::Error> {
    anyhow::ensure!(req.n > 0, "n must be positive");
    Ok(req.n.to_string())
}

/// ToolError, asking for a retry.
#[tool]
async fn picky(req: Req) -> Result<Json<Vec<i32>>, ToolError> {
    if req.n == 0 {
        return Err(ToolError::retry("n is 0: ask the user for a number"));
    }
    Ok(Json(vec![req.n; 2]))
}

/// An alias with one parameter.
#[tool]
async fn alias(req: Req) -> anyhow::Result<i32> {
    Ok(req.n)
}

/// io::Result.
#[tool]
async fn io(req: Req) -> std::io::Result<i32> {
    Err(std::io::Error::other(format!("disk {}", req.n)))
}

/// Infallible.
#[tool]
async fn plain(req: Req) -> serde_json::Value {
    serde_json::json!({ "n": req.n })
}

/// Nothing at all.
#[tool]
async fn nothing(_req: Req) {}

fn call(tool: &dyn Tool, input: &str) -> Result<String, ToolError> {
    futures::executor::block_on(tool.call_text(&ToolContext::new(), input))
}

fn main() {
    assert_eq!(call(&Parse, r#"{"n":7}"#).unwrap(), "7");
    let err = call(&Parse, r#"{"n":300}"#).unwrap_err();
    assert!(err.is_failure());
    assert!(err.model_content().starts_with(r#"{"error":"#));
    assert_eq!(call(&WithAnyhow, r#"{"n":-1}"#).unwrap_err().model_content(), r#"{"error":"n must be positive"}"#);
    let retry = call(&Picky, r#"{"n":0}"#).unwrap_err();
    assert!(matches!(retry, ToolError::Retry(_)) && !retry.is_failure());
    assert_eq!(call(&Picky, r#"{"n":2}"#).unwrap(), "[2,2]");
    assert_eq!(call(&Alias, r#"{"n":5}"#).unwrap(), "5");
    assert_eq!(call(&Io, r#"{"n":5}"#).unwrap_err().model_content(), r#"{"error":"disk 5"}"#);
    assert_eq!(call(&Plain, r#"{"n":5}"#).unwrap(), r#"{"n":5}"#);
    assert_eq!(call(&Nothing, r#"{"n":5}"#).unwrap(), "done: the call succeeded and has no result to return");
    assert!(matches!(call(&Plain, r#"{"n":"five"}"#), Err(ToolError::InvalidArguments(_))));
}
