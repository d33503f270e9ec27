//! What the Anthropic and Gemini client tests share: a small toolset, an
//! event stream response, the bodies received, the text streamed.

#![allow(dead_code, reason = "each test file uses a part of it")]

use serde_json::Value;
use toolcall_agent::AgentEvent;
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolContext, ToolError};
use toolcall_macros::tool;
use wiremock::ResponseTemplate;

/// Current temperature for a city.
#[tool(args, crate = "toolcall_core")]
pub(crate) async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    if city == "Atlantis" {
        return Err(ToolError::failed("no station there"));
    }
    Ok(format!("12°C in {city}"))
}

/// The local time in a time zone.
#[tool(args, crate = "toolcall_core")]
pub(crate) async fn local_time(_ctx: &ToolContext, zone: String) -> Result<String, ToolError> {
    Ok(format!("12:00 in {zone}"))
}

pub(crate) fn tools() -> Toolset {
    Toolset::builder().add(GetWeather).add(LocalTime).build().expect("a valid toolset")
}

/// A server-sent events body.
pub(crate) fn sse(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into_bytes(), "text/event-stream")
}

/// The JSON bodies the mock server received, in order.
pub(crate) async fn bodies(server: &wiremock::MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests.iter().map(|request| request.body_json::<Value>().expect("a JSON request body")).collect()
}

/// The text deltas of a streamed run, joined.
pub(crate) fn streamed_text(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
