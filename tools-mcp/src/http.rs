//! Streamable HTTP on axum: loopback by default, Host and Origin checked
//! against DNS rebinding, an optional bearer token, bounded connections and
//! a shutdown that always ends.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tower_http::timeout::RequestBodyTimeoutLayer;

use super::McpServer;
use crate::listen::{self, ConnectionLimits};
use crate::server::Stop;
use crate::wire;

/// The hosts a loopback server answers to: anything else in `Host` is a
/// page from another site that rebound its DNS name to 127.0.0.1.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// The browser origins allowed by default: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];
/// The largest request body read (rmcp's default).
const MAX_BODY: usize = 4 * 1024 * 1024;
/// How long a shutdown gives, after the grace, the cancelled calls to write
/// their error answers, and then the connections to close.
const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(1);

/// How to serve a [`McpServer`] over streamable HTTP.
///
/// ```no_run
/// use tools_core::Toolset;
/// use tools_mcp::{HttpOptions, McpServer};
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
    grace: Duration,
    ctrl_c: bool,
    limits: ConnectionLimits,
    open_to_network: bool,
    max_sessions: usize,
    session_idle: Duration,
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
            grace: Duration::from_secs(10),
            ctrl_c: true,
            limits: ConnectionLimits { max_connections: 512, read_timeout: Duration::from_secs(30) },
            open_to_network: false,
            max_sessions: 1024,
            session_idle: Duration::from_secs(300),
        }
    }
}

impl HttpOptions {
    /// Serve at `/mcp`, sessions on, loopback hosts and origins only, no
    /// token, at most 512 connections, a 30 s read timeout, stop on Ctrl-C.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serve at another path (`/` for the root).
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Require `Authorization: Bearer <token>` on every request (401
    /// otherwise; the scheme's case does not matter). An empty token is
    /// refused by [`Self::bind`].
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

    /// How long a shutdown waits for the tool calls in flight to finish and
    /// answer before it cancels them (default 10 s). The calls cancelled
    /// then answer with a JSON-RPC error, and the server has returned at
    /// most 2 s after the grace, whatever its clients do.
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Serve at most this many connections at once (default 512); more
    /// clients wait in the listen backlog until one closes.
    pub fn with_max_connections(mut self, connections: usize) -> Self {
        self.limits.max_connections = connections;
        self
    }

    /// How long a client may take to send a request's headers, to send each
    /// piece of its body, and how long a kept-alive connection may sit
    /// idle (default 30 s). The connection is closed past it.
    pub fn with_read_timeout(mut self, timeout: Duration) -> Self {
        self.limits.read_timeout = timeout;
        self
    }

    /// Keep at most this many sessions (default 1,024; about 80 KiB each in
    /// a release build, with the client's event stream open).
    /// A client that tries to open one more gets HTTP 503 with a JSON-RPC
    /// error saying so, until a session closes or expires.
    pub fn with_max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// End a session its client has not used for this long (default 5 min).
    pub fn with_session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle = idle;
        self
    }

    /// Allow binding an address other than loopback without a bearer token
    /// (off by default: [`Self::bind`] refuses it, since anyone on the
    /// network could then call the tools). For a server behind a proxy
    /// that authenticates.
    pub fn allow_unauthenticated_network(mut self, yes: bool) -> Self {
        self.open_to_network = yes;
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
        self.router_until(server, self.shutdown.child_token())
    }

    /// The router, its sessions ending when `sessions` is cancelled.
    fn router_until(&self, server: McpServer, sessions: CancellationToken) -> Router {
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(self.allowed_hosts.clone())
            .with_allowed_origins(self.allowed_origins.clone())
            .enforce_origin_validation()
            .with_legacy_session_mode(!self.stateless)
            .with_json_response(self.stateless)
            .with_max_request_body_bytes(MAX_BODY)
            .with_cancellation_token(sessions);
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(self.session_idle);
        let manager = Arc::new(manager);
        let service = StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&manager), config);
        let router = if self.path == "/" || self.path.is_empty() {
            Router::new().fallback_service(service)
        } else {
            Router::new().route_service(&self.path, service)
        };
        let sessions = Sessions { manager, max: self.max_sessions };
        let router = router
            .layer(middleware::from_fn(answer_unreadable))
            .layer(middleware::from_fn_with_state(sessions, Sessions::admit));
        // A body that stalls mid-way frees its connection at the timeout.
        let router = router.layer(RequestBodyTimeoutLayer::new(self.limits.read_timeout));
        match &self.bearer {
            Some(Secret(token)) => {
                router.layer(middleware::from_fn_with_state(Arc::clone(token), require_bearer))
            }
            None => router,
        }
    }

    /// Bind `addr` (port 0 picks a free port) and get ready to serve.
    ///
    /// Refused, with [`std::io::ErrorKind::InvalidInput`]: an empty bearer
    /// token, and an address other than loopback without a token (unless
    /// [`Self::allow_unauthenticated_network`]).
    pub async fn bind(self, server: McpServer, addr: SocketAddr) -> std::io::Result<HttpServer> {
        self.check_exposure(addr)?;
        let listener = listen(addr)?;
        let local_addr = listener.local_addr()?;
        // The calls still running when the grace has passed are cancelled
        // with the sessions: rmcp would leave a stateless request's call
        // running once its connection is closed.
        let (server, calls) = server.with_own_cancellation();
        let sessions = CancellationToken::new();
        let requests = Requests::default();
        let router = self
            .router_until(server, sessions.clone())
            .layer(middleware::from_fn_with_state(requests.clone(), Requests::count));
        Ok(HttpServer { listener, local_addr, router, requests, sessions, calls, options: self })
    }
}

impl HttpOptions {
    fn check_exposure(&self, addr: SocketAddr) -> std::io::Result<()> {
        let refuse = |why: String| Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, why));
        match &self.bearer {
            Some(Secret(token)) if token.trim().is_empty() => {
                refuse("the bearer token is empty: give a real one, or none".into())
            }
            None if !addr.ip().is_loopback() && !self.open_to_network => refuse(format!(
                "refusing to serve {addr} without a bearer token: anyone who can reach it could call \
                 the tools. Set one with HttpOptions::with_bearer_token, or opt in with \
                 HttpOptions::allow_unauthenticated_network(true)"
            )),
            _ => Ok(()),
        }
    }
}

/// A bound streamable HTTP server; [`HttpServer::serve`] runs it.
#[derive(Debug)]
pub struct HttpServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    router: Router,
    requests: Requests,
    /// Cancelled once the requests in flight have been answered (or the
    /// grace has passed): it ends the sessions and their open event
    /// streams, which would hold the shutdown forever.
    sessions: CancellationToken,
    /// Cancelled with `sessions`: the calls of this server.
    calls: Stop,
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

    /// Serve until Ctrl-C or the shutdown token. Then stop taking
    /// connections, let the tool calls in flight finish and answer (for up to
    /// [`HttpOptions::with_shutdown_grace`]; those still running are then
    /// cancelled), end the sessions and return.
    pub async fn serve(self) -> std::io::Result<()> {
        let Self { listener, router, requests, sessions, calls, options, .. } = self;
        let stop = async {
            if options.ctrl_c {
                tokio::select! {
                    () = options.shutdown.cancelled() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            } else {
                options.shutdown.cancelled().await;
            }
        };
        let drain = async {
            let _ = tokio::time::timeout(options.grace, requests.idle()).await;
            // The calls cancelled here answer with an error; the sessions,
            // whose open event streams would hold a connection forever, end
            // once those answers are written.
            calls.cancel();
            let _ = tokio::time::timeout(SHUTDOWN_DEADLINE, requests.idle()).await;
            sessions.cancel();
        };
        listen::serve(listener, router, options.limits, stop, drain, SHUTDOWN_DEADLINE).await;
        Ok(())
    }
}

/// The POST requests being answered: each counts from its arrival until its
/// response body is dropped, sent or abandoned by its client. The calls in
/// flight are among them, and a tool call's answer is written after the
/// tool returns, so this, not the tool calls, is what a shutdown waits for.
/// (A GET is an open event stream, never finished: it is not counted.)
#[derive(Clone, Debug, Default)]
struct Requests(Arc<watch::Sender<usize>>);

/// One request counted while it lives.
struct Pending(Requests);

impl Drop for Pending {
    fn drop(&mut self) {
        (self.0).0.send_modify(|n| *n -= 1);
    }
}

impl Requests {
    async fn count(State(requests): State<Self>, request: Request, next: Next) -> Response {
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
    async fn idle(&self) {
        // The sender is `self.0`: waiting on it cannot fail.
        let _ = self.0.subscribe().wait_for(|n| *n == 0).await;
    }
}

/// In front of rmcp's session manager: the session cap, and DELETE
/// answered as clients read it.
#[derive(Clone)]
struct Sessions {
    manager: Arc<LocalSessionManager>,
    max: usize,
}

impl Sessions {
    async fn admit(State(sessions): State<Self>, request: Request, next: Next) -> Response {
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

/// rmcp answers a body it cannot read as a client message with HTTP 415
/// and plain text, whatever is wrong with it; clients expect HTTP 400 and
/// the JSON-RPC error that says what (see `wire`). The body is kept, as
/// shared bytes, to read it again only then.
async fn answer_unreadable(request: Request, next: Next) -> Response {
    let json = request.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).is_some_and(
        |value| value.split(';').next().unwrap_or_default().trim().eq_ignore_ascii_case("application/json"),
    );
    if request.method() != Method::POST || !json {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(body) => body,
        Err(error) => {
            let too_long = std::error::Error::source(&error)
                .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
            return if too_long {
                json_response(StatusCode::PAYLOAD_TOO_LARGE, &wire::too_long(MAX_BODY))
            } else {
                // The client stopped sending, or took longer than the read timeout.
                (StatusCode::BAD_REQUEST, format!("could not read the request body: {error}")).into_response()
            };
        }
    };
    let response = next.run(Request::from_parts(parts, Body::from(body.clone()))).await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return json_response(StatusCode::BAD_REQUEST, &wire::unreadable(&body));
    }
    response
}

fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

fn json_rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    json_response(status, &wire::answer(code, serde_json::Value::Null, message.to_owned()))
}

async fn require_bearer(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token);
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

/// Connections the kernel queues while the accept loop is busy. Tokio's
/// `TcpListener::bind` asks for 128, and a burst of clients past that
/// (200 connecting at once) loses connection attempts that clients retry
/// only a second later; the kernel still caps this at `somaxconn`.
const BACKLOG: u32 = 4096;

/// A listener on `addr` with a [`BACKLOG`]-deep queue.
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket =
        if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    // As `TcpListener::bind` does: a restarted server can take its port back
    // while old connections linger in TIME_WAIT.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}
