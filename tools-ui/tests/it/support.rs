//! What the tests share: an SSE body read into its chunks, and the
//! weather agent on the scripted Chat Completions server.

use serde_json::Value;
use toolcall_agent::testing::{Reply, ScriptedServer};
use toolcall_agent::{Agent, OpenAiChat};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;

/// The chunks of a UI message stream body, in order; panics unless every
/// event is `data: ` JSON and the last is `[DONE]`.
pub(crate) fn chunks(body: &str) -> Vec<Value> {
    let events: Vec<&str> = body.split("\n\n").filter(|event| !event.is_empty()).collect();
    assert_eq!(events.last(), Some(&"data: [DONE]"), "{body}");
    events[..events.len() - 1]
        .iter()
        .map(|event| {
            let data = event.strip_prefix("data: ").unwrap_or_else(|| panic!("not a data event: {event}"));
            serde_json::from_str(data).unwrap_or_else(|error| panic!("{error}: {data}"))
        })
        .collect()
}

/// Each chunk's type.
pub(crate) fn types(chunks: &[Value]) -> Vec<&str> {
    chunks.iter().map(|chunk| chunk["type"].as_str().unwrap_or("?")).collect()
}

/// The text of the chunks' `text-delta`s.
pub(crate) fn text(chunks: &[Value]) -> String {
    chunks
        .iter()
        .filter(|chunk| chunk["type"] == "text-delta")
        .filter_map(|chunk| chunk["delta"].as_str())
        .collect()
}

/// The current weather in a city.
#[tool(args, needs_approval, crate = "toolcall_core")]
pub(crate) async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("18°C and sunny in {city}"))
}

/// A model on the scripted server: a question calls `get_weather` for
/// Paris (call ids `call_1`, `call_2`... by request); a tool result is
/// answered with what it says.
pub(crate) async fn weather_agent() -> (Agent, ScriptedServer) {
    let count = std::sync::atomic::AtomicUsize::new(0);
    let server = ScriptedServer::answering(move |request: &Value| {
        let n = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let last = request["messages"].as_array()?.last()?;
        if last["role"] != "tool" {
            let id = format!("call_{n}");
            return Some(Reply::calls([ToolCall::new(id.as_str(), "get_weather", r#"{"city":"Paris"}"#)]));
        }
        Some(Reply::text(format!("The tool said: {}", last["content"].as_str()?)))
    })
    .await
    .unwrap();
    let model = OpenAiChat::from_values("gpt-4o", None, Some(server.base_url()));
    let tools = Toolset::builder().add(GetWeather).build().unwrap();
    (Agent::new(model, tools).unwrap(), server)
}

/// Look a thing up, slowly: the call waits until the test lets it go.
#[tool(args, read_only, crate = "toolcall_core")]
pub(crate) async fn slow_lookup(ctx: &ToolContext, what: String) -> Result<String, ToolError> {
    let gate = ctx.get::<Gate>().cloned().ok_or_else(|| ToolError::failed("no gate"))?;
    gate.started.add_permits(1);
    let _permit = gate.release.acquire().await.map_err(|_| ToolError::failed("closed"))?;
    Ok(format!("found {what}"))
}

/// When the slow call started, and what lets it finish (shared through
/// the agent's context).
#[derive(Clone)]
pub(crate) struct Gate {
    pub(crate) started: std::sync::Arc<tokio::sync::Semaphore>,
    pub(crate) release: std::sync::Arc<tokio::sync::Semaphore>,
}

impl Default for Gate {
    fn default() -> Self {
        let closed = || std::sync::Arc::new(tokio::sync::Semaphore::new(0));
        Self { started: closed(), release: closed() }
    }
}

/// An agent whose model calls `slow_lookup` once (id `call_1`) and answers
/// with its result; the gate that holds the call.
pub(crate) async fn slow_agent() -> (Agent, ScriptedServer, Gate) {
    let server = ScriptedServer::answering(|request: &Value| {
        let last = request["messages"].as_array()?.last()?;
        if last["role"] != "tool" {
            return Some(Reply::calls([ToolCall::new("call_1", "slow_lookup", r#"{"what":"the answer"}"#)]));
        }
        Some(Reply::text(format!("Done: {}", last["content"].as_str()?)))
    })
    .await
    .unwrap();
    let gate = Gate::default();
    let model = OpenAiChat::from_values("gpt-4o", None, Some(server.base_url()));
    let tools = Toolset::builder().add(SlowLookup).build().unwrap();
    let agent =
        Agent::new(model, tools).unwrap().with_context(ToolContext::new().with_extension(gate.clone()));
    (agent, server, gate)
}
