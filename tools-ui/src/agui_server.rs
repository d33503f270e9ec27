//! The AG-UI endpoint: [`AguiServer`], an agent served as an axum handler
//! that reads AG-UI's `RunAgentInput` and answers with the run's events.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::Value;
use tools_agent::Agent;

use crate::AguiAdapter;

/// The part of AG-UI's `RunAgentInput` a run starts from (its `tools`,
/// `state`, `context` and `forwardedProps` are accepted and not used).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunAgentInput {
    thread_id: String,
    run_id: String,
    messages: Vec<Value>,
}

/// An agent behind `POST /api/agui`, speaking AG-UI (`@ag-ui/core` 1.0.0)
/// to a client such as `@ag-ui/client`'s `HttpAgent`.
///
/// Each request starts a run from the text of its last message, which
/// must be the user's (a string, or the `text` parts of a list); the
/// response is the run's [`AguiEvent`](crate::AguiEvent)s as server-sent
/// events. A run held for approval finishes with the outcome `interrupt`
/// (see [`AguiAdapter`]); this endpoint does not resume it. Refused with
/// 400 and a plain-text reason: a body that is not a `RunAgentInput`, or
/// whose last message is not a user's with text.
///
/// ```no_run
/// # async fn serve() -> std::io::Result<()> {
/// use tools_agent::{Agent, OpenAiChat};
/// use tools_core::toolset::Toolset;
/// use tools_ui::AguiServer;
///
/// let agent = Agent::new(OpenAiChat::new("gpt-4o-mini"), Toolset::builder().build().unwrap()).unwrap();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// axum::serve(listener, AguiServer::new(agent).router()).await
/// # }
/// ```
#[derive(Clone)]
pub struct AguiServer {
    agent: Agent,
}

impl std::fmt::Debug for AguiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AguiServer").finish_non_exhaustive()
    }
}

impl AguiServer {
    /// A server for this agent.
    pub fn new(agent: Agent) -> Self {
        Self { agent }
    }

    /// A router with `POST /api/agui` on this server; to mount the handler
    /// elsewhere, call [`AguiServer::respond`] from a handler of your own.
    pub fn router(&self) -> Router {
        Router::new().route("/api/agui", post(run)).with_state(self.clone())
    }

    /// Answer one `RunAgentInput` body: the run's events, or a refusal.
    pub fn respond(&self, body: &[u8]) -> Response {
        let input: RunAgentInput = match serde_json::from_slice(body) {
            Ok(input) => input,
            Err(error) => {
                return (StatusCode::BAD_REQUEST, format!("not a RunAgentInput: {error}")).into_response();
            }
        };
        let text = match input.messages.last().map(user_text) {
            Some(Ok(text)) => text,
            Some(Err(reason)) => return (StatusCode::BAD_REQUEST, reason).into_response(),
            None => return (StatusCode::BAD_REQUEST, "the input has no messages").into_response(),
        };
        let adapter = AguiAdapter::new(input.thread_id, input.run_id);
        let (frames, body) = futures::channel::mpsc::unbounded::<String>();
        let agent = self.agent.clone();
        // The run goes on to its end even if the client leaves.
        tokio::spawn(async move {
            let mut events = std::pin::pin!(adapter.stream(agent.stream(text)));
            while let Some(frame) = events.next().await {
                let _ = frames.unbounded_send(frame);
            }
        });
        let mut response = Response::new(Body::from_stream(body.map(Ok::<_, std::convert::Infallible>)));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }
}

/// The text of a user message, or why there is none.
fn user_text(message: &Value) -> Result<String, String> {
    if message["role"] != "user" {
        return Err(format!("the last message's role is {}, not \"user\"", message["role"]));
    }
    let text = match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|part| part["type"] == "text")
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    if text.is_empty() { Err("the last user message has no text".into()) } else { Ok(text) }
}

/// The `POST /api/agui` handler of [`AguiServer::router`].
async fn run(State(server): State<AguiServer>, body: Bytes) -> Response {
    server.respond(&body)
}
