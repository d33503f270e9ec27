//! A chat page for an agent whose weather tool needs a person's approval:
//! the page (React and the AI SDK's `useChat`, in this folder) talks to
//! [`ChatServer`] over the UI message stream protocol; the run pauses on
//! the call, the page asks, and the answer resumes the run.
//!
//! ```sh
//! cargo run --example chat_ui --features ui            # on a free port
//! PORT=3000 cargo run --example chat_ui --features ui  # on 3000
//! CHAT_DB=/tmp/chats.db cargo run --example chat_ui --features ui
//! ```
//!
//! The chats live in a SQLite file (`CHAT_DB`, by default
//! `target/chat_ui.db`): stop the example while a call waits for approval,
//! start it again, and the page's Approve still finishes the run. The
//! page keeps its chat's id in its address (`?chat=...`): reloaded, it
//! shows the chat again and reattaches to a run still going.
//!
//! It prints `listening on http://127.0.0.1:PORT` once it listens, and
//! serves `GET /` (index.html), `GET /app.js` (dist/app.js, the bundled
//! page), the chat routes of [`ChatServer`] (`POST /api/chat`, `GET
//! /api/chat/{id}` and `/api/chat/{id}/stream`, `POST
//! /api/chat/{id}/stop`) and, for AG-UI clients, `POST /api/agui`
//! ([`AguiServer`]: the same agent, a run per request). Offline, the model is a [`ScriptedServer`]
//! on loopback, reached through the real OpenAI client, streamed: asked
//! anything, it calls `get_weather {"city":"Paris"}` (the arguments in
//! several pieces); given the weather it says it, told the person declined
//! it says so. With `OPENAI_API_KEY` set, the model is OpenAI's
//! (`OPENAI_MODEL`, default gpt-4o-mini).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;
use tools::agent::scripted_server::{Reply, ScriptedServer};
use tools::agent::{Agent, OpenAiChat};
use tools::session::SqlStore;
use tools::toolset::Toolset;
use tools::ui::{AguiServer, ChatServer};
use tools::{ToolCall, ToolContext, ToolError, tool};

/// The current weather in a city.
#[tool(args, needs_approval)]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    // A made-up station: the example runs offline.
    Ok(format!("18°C and sunny in {city}"))
}

/// The offline model's next turn, from the request OpenAI's client sent:
/// a user's question calls the tool (call ids count the requests, so each
/// is new in the chat); the tool's result is answered.
fn scripted_turn(request: &Value, count: usize) -> Option<Reply> {
    let last = request["messages"].as_array()?.last()?;
    if last["role"] != "tool" {
        let id = format!("call_weather_{count}");
        return Some(Reply::calls([ToolCall::new(id.as_str(), "get_weather", r#"{"city":"Paris"}"#)]));
    }
    let result = last["content"].as_str()?;
    // A denied call's result says so (`ToolError::Denied`).
    Some(if result.contains("denied") {
        Reply::text("You declined the weather lookup, so I did not check the weather in Paris.")
    } else {
        Reply::text(format!("Right now it is {result}."))
    })
}

/// A file of the page, or a 404 that says which is missing.
async fn page_file(relative: &str, content_type: &'static str) -> Response {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/chat_ui").join(relative);
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, content_type)], bytes).into_response(),
        Err(error) => (StatusCode::NOT_FOUND, format!("{}: {error}", path.display())).into_response(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = match std::env::var("PORT") {
        Ok(port) => port.parse().map_err(|_| format!("PORT is not a port number: {port}"))?,
        Err(_) => 0,
    };
    // Kept alive for as long as the example serves.
    let mut _offline = None;
    let model = if std::env::var_os("OPENAI_API_KEY").is_some() {
        OpenAiChat::new(std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into()))
    } else {
        let requests = AtomicUsize::new(0);
        let server = ScriptedServer::answering(move |request| {
            scripted_turn(request, requests.fetch_add(1, Ordering::Relaxed) + 1)
        })
        .await?;
        let model = OpenAiChat::from_values("scripted", None, Some(server.base_url()));
        _offline = Some(server);
        model
    };
    let tools = Toolset::builder().add(GetWeather).build()?;
    let agent = Agent::new(model, tools)?
        .with_instructions("You tell people the weather. Use get_weather; if a call is declined, say so.");
    let path = std::env::var_os("CHAT_DB")
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/chat_ui.db"), PathBuf::from);
    let store = SqlStore::sqlite(&path).await?;
    let app = Router::new()
        .route("/", get(|| page_file("index.html", "text/html; charset=utf-8")))
        .route("/app.js", get(|| page_file("dist/app.js", "text/javascript; charset=utf-8")))
        .merge(AguiServer::new(agent.clone()).router())
        .merge(ChatServer::new(agent).with_store(Arc::new(store)).router());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
