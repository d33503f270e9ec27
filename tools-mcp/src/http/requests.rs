//! The requests in flight, counted for the shutdown to wait on.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use tokio::sync::watch;

/// The POST requests being answered: each counts from its arrival until its
/// response body is dropped, sent or abandoned by its client. The calls in
/// flight are among them, and a tool call's answer is written after the
/// tool returns, so this, not the tool calls, is what a shutdown waits for.
/// (A GET is an open event stream, never finished: it is not counted.)
#[derive(Clone, Debug, Default)]
pub(super) struct Requests(Arc<watch::Sender<usize>>);

/// One request counted while it lives.
struct Pending(Requests);

impl Drop for Pending {
    fn drop(&mut self) {
        (self.0).0.send_modify(|n| *n -= 1);
    }
}

impl Requests {
    pub(super) async fn count(State(requests): State<Self>, request: Request, next: Next) -> Response {
        if request.method() != Method::POST {
            return next.run(request).await;
        }
        requests.0.send_modify(|n| *n += 1);
        let pending = Pending(requests);
        let (parts, body) = next.run(request).await.into_parts();
        let body = body.into_data_stream().map(move |frame| {
            let _counted = &pending;
            frame
        });
        Response::from_parts(parts, Body::from_stream(body))
    }

    /// Resolves once no request is being answered (at once if none is).
    pub(super) async fn idle(&self) {
        // The sender is `self.0`: waiting on it cannot fail.
        let _ = self.0.subscribe().wait_for(|n| *n == 0).await;
    }
}
