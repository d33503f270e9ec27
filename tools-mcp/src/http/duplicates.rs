//! A request of a session with the id of one of its requests still in
//! flight, refused with HTTP 400 and a JSON-RPC error of its own (see
//! `in_flight`): rmcp would give its POST the first one's answer, and
//! leave the first POST open without one.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::model::RequestId;
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::router::MAX_BODY;
use crate::in_flight::InFlight;
use crate::wire;

/// A request in flight: its session and its id. (Without a session, each
/// POST is served on its own and ids cannot collide.)
pub(super) type Key = (String, RequestId);

pub(super) async fn refuse_duplicates(
    State(in_flight): State<InFlight<Key>>,
    request: Request,
    next: Next,
) -> Response {
    let session = request.headers().get("mcp-session-id").and_then(|id| id.to_str().ok()).map(str::to_owned);
    let Some(session) = session.filter(|_| request.method() == Method::POST) else {
        return next.run(request).await;
    };
    // The body is already in memory (`unreadable` read it).
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
        return (StatusCode::BAD_REQUEST, "could not read the request body").into_response();
    };
    let Some(id) = request_id(&body) else {
        return next.run(Request::from_parts(parts, Body::from(body))).await;
    };
    let Some(guard) = in_flight.guard((session, id.clone())) else {
        return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], wire::duplicate(&id))
            .into_response();
    };
    let (parts, body) = next.run(Request::from_parts(parts, Body::from(body))).await.into_parts();
    // In flight until its response ends, a moment after the answer it
    // carries: a client that reused the id at once could still be refused,
    // but MCP asks a client never to reuse an id in a session
    // (https://modelcontextprotocol.io/specification/2025-06-18/basic#requests).
    let body = body.into_data_stream().map(move |frame| {
        let _in_flight = &guard;
        frame
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// The id of a request (a message with an id and a method).
fn request_id(body: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Envelope {
        id: Option<RequestId>,
        method: Option<IgnoredAny>,
    }
    let Envelope { id, method } = serde_json::from_slice(body).ok()?;
    method.and(id)
}
