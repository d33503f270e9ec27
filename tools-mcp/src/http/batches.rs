//! A JSON-RPC batch POSTed at MCP 2025-03-26, whose Streamable HTTP takes
//! one as the body (<https://modelcontextprotocol.io/specification/2025-03-26/basic/transports#sending-messages-to-the-server>);
//! 2025-06-18 removed them, so any other version has it refused
//! (`wire::unreadable` says why).
//!
//! rmcp reads one message a POST: each of the batch's messages is POSTed
//! to it on its own, with the batch's headers, and their responses make
//! one: 202 when none carries an answer, a JSON array of the answers when
//! each came as JSON, and otherwise one event stream of all their events
//! (the spec's own shape for a POST holding requests).
//!
//! The version is the `MCP-Protocol-Version` header's, which clients send
//! from 2025-06-18 on; without it, the one the session was initialized at,
//! and without a session, 2025-03-26, as the spec has a server assume
//! (<https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#protocol-version-header>).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::router::MAX_BODY;
use crate::batch::VERSION;
use crate::wire;

/// The sessions initialized at 2025-03-26.
#[derive(Clone)]
pub(super) struct Batches {
    manager: Arc<LocalSessionManager>,
    sessions: Arc<Mutex<HashSet<String>>>,
}

impl Batches {
    pub(super) fn new(manager: Arc<LocalSessionManager>) -> Self {
        Self { manager, sessions: Arc::default() }
    }

    pub(super) async fn take(State(batches): State<Self>, request: Request, next: Next) -> Response {
        if request.method() != Method::POST {
            return next.run(request).await;
        }
        let (parts, body) = request.into_parts();
        // The body is already in memory (`unreadable` read it).
        let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
            return (StatusCode::BAD_REQUEST, "could not read the request body").into_response();
        };
        let session = parts.headers.get("mcp-session-id").and_then(|id| id.to_str().ok()).map(str::to_owned);
        let header = parts.headers.get("mcp-protocol-version").and_then(|version| version.to_str().ok());
        let at_2025_03_26 = match (header, &session) {
            (Some(version), _) => version == VERSION.as_str(),
            (None, Some(session)) => batches.lock().contains(session),
            (None, None) => true,
        };
        let items = match serde_json::from_slice::<Vec<&RawValue>>(&body) {
            Ok(items) if at_2025_03_26 => items,
            // One message, or a batch refused by `unreadable`.
            _ => {
                let initialize = session.is_none() && initializes_at_2025_03_26(&body);
                let response = next.run(Request::from_parts(parts, Body::from(body))).await;
                if initialize {
                    batches.initialized(&response);
                }
                return response;
            }
        };
        if items.is_empty() {
            return json(StatusCode::BAD_REQUEST, wire::empty_batch());
        }
        // Each would open a session, past the cap checked once for the POST.
        if items.iter().any(|item| is_initialize(item.get().as_bytes())) {
            return json(StatusCode::BAD_REQUEST, wire::initialize_in_batch());
        }
        let responses = items.iter().map(|item| {
            let mut request = Request::from_parts(parts.clone(), Body::from(item.get().to_owned()));
            request.headers_mut().remove(header::CONTENT_LENGTH);
            let next = next.clone();
            async move {
                let response = next.run(request).await;
                // As `unreadable` answers a body that is one message.
                if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                    return json(StatusCode::BAD_REQUEST, wire::unreadable(item.get().as_bytes()));
                }
                response
            }
        });
        combine(futures::future::join_all(responses).await).await
    }

    /// Record the session an `initialize` at 2025-03-26 opened.
    fn initialized(&self, response: &Response) {
        let Some(id) = response.headers().get("mcp-session-id").and_then(|id| id.to_str().ok()) else {
            return;
        };
        let mut sessions = self.lock();
        // Those that ended are let go as sessions open.
        if let Ok(open) = self.manager.sessions.try_read() {
            sessions.retain(|session| open.contains_key(session.as_str()));
        }
        sessions.insert(id.to_owned());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether `body` is an `initialize` asking for 2025-03-26 (which rmcp
/// takes, and answers with).
fn initializes_at_2025_03_26(body: &[u8]) -> bool {
    serde_json::from_slice::<Initialize<'_>>(body).is_ok_and(|initialize| {
        initialize.method == "initialize"
            && initialize.params.is_some_and(|params| params.protocol_version == Some(VERSION.as_str()))
    })
}

fn is_initialize(body: &[u8]) -> bool {
    serde_json::from_slice::<Initialize<'_>>(body).is_ok_and(|initialize| initialize.method == "initialize")
}

#[derive(Deserialize)]
struct Initialize<'a> {
    method: &'a str,
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    protocol_version: Option<&'a str>,
}

/// The responses to a batch's messages, as one.
async fn combine(responses: Vec<Response>) -> Response {
    let is = |response: &Response, media: &str| {
        response.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).is_some_and(
            |value| value.split(';').next().unwrap_or_default().trim().eq_ignore_ascii_case(media),
        )
    };
    // What is not an answer (a session that is not there, a refused
    // token) is the whole batch's.
    if let Some(failed) = responses.iter().position(|response| {
        response.status() != StatusCode::ACCEPTED
            && !is(response, "application/json")
            && !is(response, "text/event-stream")
    }) {
        return responses.into_iter().nth(failed).unwrap_or_default();
    }
    let answers: Vec<Response> =
        responses.into_iter().filter(|response| response.status() != StatusCode::ACCEPTED).collect();
    let Some(first) = answers.first() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let mut headers = first.headers().clone();
    headers.remove(header::CONTENT_LENGTH);
    if answers.iter().all(|response| is(response, "application/json")) {
        let mut array = vec![b'['];
        for (n, response) in answers.into_iter().enumerate() {
            let Ok(body) = axum::body::to_bytes(response.into_body(), MAX_BODY).await else {
                continue;
            };
            if n > 0 {
                array.push(b',');
            }
            array.extend_from_slice(&body);
        }
        array.push(b']');
        let mut response = (StatusCode::OK, array).into_response();
        *response.headers_mut() = headers;
        return response;
    }
    // An event stream of every answer's events, an answer in JSON as one
    // event of its own. rmcp writes each event as one frame, so frames of
    // different streams interleave whole.
    let streams = answers.into_iter().map(|response| {
        if is(&response, "application/json") {
            let body = response.into_body();
            futures::stream::once(async move {
                let body = axum::body::to_bytes(body, MAX_BODY).await.unwrap_or_default();
                let text = String::from_utf8_lossy(&body).replace('\n', "");
                Ok::<_, axum::Error>(Bytes::from(format!("event: message\ndata: {text}\n\n")))
            })
            .boxed()
        } else {
            response.into_body().into_data_stream().boxed()
        }
    });
    let mut response = Body::from_stream(futures::stream::select_all(streams)).into_response();
    *response.headers_mut() = headers;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    response
}

fn json(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}
