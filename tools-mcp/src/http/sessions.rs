//! The session cap, and DELETE answered as clients read it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use super::unreadable::json_rpc_error;

/// In front of rmcp's session manager: the session cap, and DELETE
/// answered as clients read it.
#[derive(Clone)]
pub(super) struct Sessions {
    pub(super) manager: Arc<LocalSessionManager>,
    pub(super) max: usize,
}

impl Sessions {
    pub(super) async fn admit(State(sessions): State<Self>, request: Request, next: Next) -> Response {
        let id = request.headers().get("mcp-session-id").and_then(|id| id.to_str().ok()).map(str::to_owned);
        match (request.method().clone(), id) {
            // Checked as each `initialize` arrives: initializations racing
            // each other may pass the cap by their number.
            (Method::POST, None) if sessions.manager.sessions.read().await.len() >= sessions.max => {
                let message = format!(
                    "the server holds its maximum of {} sessions: retry later, or close a session (HTTP DELETE)",
                    sessions.max
                );
                let mut response = json_rpc_error(StatusCode::SERVICE_UNAVAILABLE, -32000, &message);
                response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
                response
            }
            // rmcp answers 202 to every DELETE; clients expect 200 for a
            // session ended and 404 for one that is not there.
            (Method::DELETE, Some(id))
                if !sessions.manager.sessions.read().await.contains_key(id.as_str()) =>
            {
                json_rpc_error(
                    StatusCode::NOT_FOUND,
                    -32001,
                    &format!("no session `{id}`: it ended or expired"),
                )
            }
            (Method::DELETE, Some(_)) => {
                let mut response = next.run(request).await;
                if response.status() == StatusCode::ACCEPTED {
                    *response.status_mut() = StatusCode::OK;
                }
                response
            }
            _ => next.run(request).await,
        }
    }
}
