//! The event streams clients open with GET: each holds a connection for as
//! long as it is open, so they are capped, in all and per session, below
//! the connection cap (the POSTs that carry the calls keep the rest), and
//! each ends after a while: the client reconnects (the stream's first event
//! gave it a retry delay), resuming where it was.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::unreadable::json_rpc_error;

/// The streams a session may hold open: its own (the standalone GET) and
/// the resumption of a call's answer (a GET with `Last-Event-ID`).
const PER_SESSION: usize = 2;

/// The open event streams, and their limits.
#[derive(Clone, Debug)]
pub(super) struct Streams {
    open: Arc<Mutex<Open>>,
    max: usize,
    lifetime: Duration,
}

#[derive(Debug, Default)]
struct Open {
    next: u64,
    /// Each stream's session, and what ends it early.
    streams: HashMap<u64, (Option<String>, CancellationToken)>,
}

/// A stream's place, held from its request until its body is dropped.
struct Place {
    id: u64,
    open: Arc<Mutex<Open>>,
    /// Cancelled when a newer stream of the same session replaces it.
    replaced: CancellationToken,
}

impl Drop for Place {
    fn drop(&mut self) {
        lock(&self.open).streams.remove(&self.id);
    }
}

fn lock(open: &Mutex<Open>) -> MutexGuard<'_, Open> {
    // Only ids and tokens: nothing is left half-done by a panic.
    open.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Streams {
    pub(super) fn new(max: usize, lifetime: Duration) -> Self {
        Self { open: Arc::default(), max, lifetime }
    }

    /// A place for a stream of `session`: past [`PER_SESSION`], a session's
    /// newest stream replaces its oldest (a client that reconnects before
    /// the server has seen its old connection drop), and past the cap there
    /// is none.
    fn reserve(&self, session: Option<String>) -> Option<Place> {
        let mut open = lock(&self.open);
        if let Some(session) = &session {
            let mut older: Vec<u64> = open
                .streams
                .iter()
                .filter(|(_, (of, _))| of.as_ref() == Some(session))
                .map(|(id, _)| *id)
                .collect();
            older.sort_unstable();
            let surplus = (older.len() + 1).saturating_sub(PER_SESSION);
            for id in &older[..surplus] {
                if let Some((_, replaced)) = open.streams.remove(id) {
                    replaced.cancel();
                }
            }
        }
        if open.streams.len() >= self.max {
            return None;
        }
        let id = open.next;
        open.next += 1;
        let replaced = CancellationToken::new();
        open.streams.insert(id, (session, replaced.clone()));
        Some(Place { id, open: Arc::clone(&self.open), replaced })
    }

    pub(super) async fn admit(State(streams): State<Self>, request: Request, next: Next) -> Response {
        if request.method() != Method::GET {
            return next.run(request).await;
        }
        let session =
            request.headers().get("mcp-session-id").and_then(|id| id.to_str().ok()).map(str::to_owned);
        let Some(place) = streams.reserve(session) else {
            let message = format!(
                "the server holds its maximum of {} event streams (GET): retry later; calls (POST) are still served",
                streams.max
            );
            let mut response = json_rpc_error(StatusCode::SERVICE_UNAVAILABLE, -32000, &message);
            response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
            return response;
        };
        let response = next.run(request).await;
        let event_stream = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        if !response.status().is_success() || !event_stream {
            return response;
        }
        // The stream ends, as a whole chunked body the client reads as a
        // clean end, at its lifetime or once replaced.
        let ended = {
            let (lifetime, replaced) = (streams.lifetime, place.replaced.clone());
            async move {
                tokio::select! {
                    () = tokio::time::sleep(lifetime) => {}
                    () = replaced.cancelled() => {}
                }
            }
        };
        let (parts, body) = response.into_parts();
        let body = body.into_data_stream().take_until(ended).map(move |frame| {
            let _held = &place;
            frame
        });
        Response::from_parts(parts, Body::from_stream(body))
    }
}
