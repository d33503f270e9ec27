//! Streamable HTTP on axum: loopback by default, Host and Origin checked
//! against DNS rebinding, an optional bearer token, graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::McpServer;

/// The hosts a loopback server answers to: anything else in `Host` is a
/// page from another site that rebound its DNS name to 127.0.0.1.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// The browser origins allowed by default: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// How to serve a [`McpServer`] over streamable HTTP.
///
/// ```no_run
/// use tools_core::{Toolset, mcp::{HttpOptions, McpServer}};
/// # async fn run(tools: Toolset) -> std::io::Result<()> {
/// let server = HttpOptions::new()
///     .with_bearer_token("s3cret")
///     .bind(McpServer::new(tools), "127.0.0.1:8000".parse().unwrap())
///     .await?;
/// println!("serving {}", server.url());
/// server.serve().await // until Ctrl-C
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct HttpOptions {
    path: String,
    bearer: Option<Secret>,
    stateless: bool,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    shutdown: CancellationToken,
    ctrl_c: bool,
}

/// The bearer token, which `Debug` (of the options and the server) never shows.
#[derive(Clone)]
struct Secret(Arc<str>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".into(),
            bearer: None,
            stateless: false,
            allowed_hosts: LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect(),
            allowed_origins: LOOPBACK_ORIGINS.iter().map(|o| (*o).to_owned()).collect(),
            shutdown: CancellationToken::new(),
            ctrl_c: true,
        }
    }
}

impl HttpOptions {
    /// Serve at `/mcp`, sessions on, loopback hosts and origins only, no
    /// token, stop on Ctrl-C.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serve at another path (`/` for the root).
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Require `Authorization: Bearer <token>` on every request (401 otherwise).
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(Secret(Arc::from(token.into())));
        self
    }

    /// Keep no sessions: each POST is answered on its own (for servers behind
    /// a load balancer). Server-to-client notifications outside a request's
    /// response, such as `tools/list_changed`, are then not delivered.
    pub fn stateless(mut self, yes: bool) -> Self {
        self.stateless = yes;
        self
    }

    /// The `Host` values accepted (`name` or `name:port`), replacing the
    /// loopback names: needed when binding anything but loopback.
    pub fn with_allowed_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// The browser `Origin`s accepted (`scheme://host:port`, `:*` for any
    /// port), replacing the loopback origins. Requests without `Origin`
    /// (non-browser clients) always pass.
    pub fn with_allowed_origins<S: Into<String>>(mut self, origins: impl IntoIterator<Item = S>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Stop when this token is cancelled (as well as on Ctrl-C).
    pub fn with_shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }

    /// Whether Ctrl-C stops the server (on by default).
    pub fn stop_on_ctrl_c(mut self, yes: bool) -> Self {
        self.ctrl_c = yes;
        self
    }

    /// The axum router serving `server` at the path, with the checks above,
    /// to merge into an application of one's own. Its sessions end when the
    /// shutdown token is cancelled.
    pub fn router(&self, server: McpServer) -> Router {
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(self.allowed_hosts.clone())
            .with_allowed_origins(self.allowed_origins.clone())
            .enforce_origin_validation()
            .with_legacy_session_mode(!self.stateless)
            .with_json_response(self.stateless)
            .with_cancellation_token(self.shutdown.child_token());
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = if self.path == "/" || self.path.is_empty() {
            Router::new().fallback_service(service)
        } else {
            Router::new().route_service(&self.path, service)
        };
        match &self.bearer {
            Some(Secret(token)) => {
                router.layer(middleware::from_fn_with_state(Arc::clone(token), require_bearer))
            }
            None => router,
        }
    }

    /// Bind `addr` (port 0 picks a free port) and get ready to serve.
    pub async fn bind(self, server: McpServer, addr: SocketAddr) -> std::io::Result<HttpServer> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let router = self.router(server);
        Ok(HttpServer { listener, local_addr, router, options: self })
    }
}

/// A bound streamable HTTP server; [`HttpServer::serve`] runs it.
#[derive(Debug)]
pub struct HttpServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    router: Router,
    options: HttpOptions,
}

impl HttpServer {
    /// The address it listens on (the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The URL clients connect to, e.g. `http://127.0.0.1:8000/mcp`.
    pub fn url(&self) -> String {
        let path = if self.options.path.starts_with('/') {
            self.options.path.clone()
        } else {
            format!("/{}", self.options.path)
        };
        format!("http://{}{}", self.local_addr, path)
    }

    /// Serve until Ctrl-C or the shutdown token, then finish the requests in
    /// flight and return.
    pub async fn serve(self) -> std::io::Result<()> {
        let shutdown = self.options.shutdown.clone();
        let ctrl_c = self.options.ctrl_c;
        let stop = async move {
            if ctrl_c {
                tokio::select! {
                    () = shutdown.cancelled() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            } else {
                shutdown.cancelled().await;
            }
            // Open SSE streams would hold a graceful shutdown forever: end them.
            shutdown.cancel();
        };
        axum::serve(self.listener, self.router).with_graceful_shutdown(stop).await
    }
}

async fn require_bearer(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")));
    match presented {
        Some(presented) if same_secret(presented.trim().as_bytes(), token.as_bytes()) => {
            next.run(request).await
        }
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "missing or wrong bearer token",
        )
            .into_response(),
    }
}

/// Compare without stopping at the first difference, so the time taken does
/// not tell an attacker how much of a guess was right.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
