//! The axum router: rmcp's streamable HTTP service behind the bearer
//! check, the session cap, the read timeout, the answer to an unreadable
//! body, a batch at 2025-03-26 and the refusal of a request id in flight.

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower_http::timeout::RequestBodyTimeoutLayer;

use super::HttpOptions;
use super::batches::Batches;
use super::bearer::{Secret, require_bearer};
use super::duplicates::{Key, refuse_duplicates};
use super::host::one_host;
use super::resume::{Resumable, refuse_lost};
use super::sessions::Sessions;
use super::streams::Streams;
use super::unreadable::answer_unreadable;
use crate::McpServer;
use crate::in_flight::InFlight;

/// The largest request body read (rmcp's default).
pub(super) const MAX_BODY: usize = 4 * 1024 * 1024;

impl HttpOptions {
    /// The axum router serving `server` at the path, with these options' checks,
    /// to merge into an application of one's own. Its sessions end when the
    /// shutdown token is cancelled.
    pub fn router(&self, server: McpServer) -> Router {
        self.router_until(server, self.shutdown.child_token())
    }

    /// The router, its sessions ending when `sessions` is cancelled.
    pub(super) fn router_until(&self, server: McpServer, sessions: CancellationToken) -> Router {
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(self.allowed_hosts.clone())
            .with_allowed_origins(self.allowed_origins.clone())
            .enforce_origin_validation()
            .with_legacy_session_mode(!self.stateless)
            .with_json_response(self.stateless)
            .with_max_request_body_bytes(MAX_BODY)
            .with_cancellation_token(sessions);
        let server = server.answering_statelessly(self.stateless);
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(self.session_idle);
        let manager = Arc::new(manager);
        let resumable = Resumable::new(Arc::clone(&manager));
        let kept = resumable.kept();
        let service = StreamableHttpService::new(move || Ok(server.clone()), Arc::new(resumable), config);
        let router = if self.path == "/" || self.path.is_empty() {
            Router::new().fallback_service(service)
        } else {
            Router::new().route_service(&self.path, service)
        };
        let batches = Batches::new(Arc::clone(&manager));
        let sessions = Sessions { manager, max: self.max_sessions };
        let streams = Streams::new(self.max_event_streams(), self.stream_lifetime);
        let router = router
            .layer(middleware::from_fn_with_state(kept, refuse_lost))
            .layer(middleware::from_fn_with_state(InFlight::<Key>::default(), refuse_duplicates))
            .layer(middleware::from_fn_with_state(batches, Batches::take))
            .layer(middleware::from_fn(answer_unreadable))
            .layer(middleware::from_fn_with_state(sessions, Sessions::admit))
            .layer(middleware::from_fn_with_state(streams, Streams::admit));
        // A body that stalls mid-way frees its connection at the timeout.
        let router = router.layer(RequestBodyTimeoutLayer::new(self.limits.read_timeout));
        let router = match &self.bearer {
            Some(Secret(token)) => {
                router.layer(middleware::from_fn_with_state(Arc::clone(token), require_bearer))
            }
            None => router,
        };
        // Outermost: the host is settled before anything reads it.
        router.layer(middleware::from_fn(one_host))
    }
}
