//! The JSON adapter of a `#[tool]` (size and depth limits, clean_json, serde
//! with the field path, the schema's constraints): whatever a model sends is
//! a result or invalid arguments, never a panic or a failure of the tool.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolcall::{Tool, ToolContext, ToolError, tool};

/// Where.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Place {
    /// City name.
    #[schemars(length(min = 1, max = 40))]
    city: String,
    /// Country code.
    #[schemars(regex(pattern = r"^[A-Z]{2}$"))]
    country: Option<String>,
}

/// The arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Request {
    /// Where.
    place: Place,
    /// Days ahead.
    #[schemars(range(min = 1, max = 16))]
    days: Option<u8>,
    /// Tags.
    tags: Vec<String>,
}

/// Echoes what it read.
#[tool]
async fn forecast(req: Request) -> String {
    format!("{} {:?} {:?} {}", req.place.city, req.place.country, req.days, req.tags.len())
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match futures::executor::block_on(Forecast.call(&ToolContext::new(), &text)) {
        Ok(_) | Err(ToolError::InvalidArguments(_)) => {}
        Err(other) => panic!("{text:?} gave {other:?}"),
    }
});
