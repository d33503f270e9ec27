//! What to serve over streamable HTTP and how: the path, the token, the
//! hosts and origins, the limits and the shutdown.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::bearer::Secret;

/// The hosts a loopback server answers to: anything else in `Host` is a
/// page from another site that rebound its DNS name to 127.0.0.1.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// The browser origins allowed by default: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// What one connection may take (the accept loop is `toolcall-serve`'s).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnectionLimits {
    /// Connections served at once: past it, the connection idle the
    /// longest is closed for a new one; with all busy, new ones wait.
    pub(crate) max_connections: usize,
    /// How long a client may take to send a request's headers, and how long
    /// a kept-alive connection may sit idle between requests; also the
    /// router's timeout for each piece of a body.
    pub(crate) read_timeout: Duration,
}

/// How to serve a [`McpServer`](crate::McpServer) over streamable HTTP.
///
/// ```no_run
/// use toolcall_core::Toolset;
/// use toolcall_mcp::{HttpOptions, McpServer};
/// # async fn run(tools: Toolset) -> std::io::Result<()> {
/// let server = HttpOptions::new()
///     .with_bearer_token("s3cret")
///     .bind(McpServer::new(tools), "127.0.0.1:8000".parse().unwrap())
///     .await?;
/// println!("serving {}", server.url());
/// server.serve().await // until Ctrl-C or SIGTERM
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub(super) path: String,
    pub(super) bearer: Option<Secret>,
    pub(super) stateless: bool,
    pub(super) allowed_hosts: Vec<String>,
    pub(super) allowed_origins: Vec<String>,
    pub(super) shutdown: CancellationToken,
    pub(super) grace: Duration,
    pub(super) ctrl_c: bool,
    pub(super) limits: ConnectionLimits,
    pub(super) open_to_network: bool,
    pub(super) max_sessions: usize,
    pub(super) session_idle: Duration,
    pub(super) max_streams: Option<usize>,
    pub(super) stream_lifetime: Duration,
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
            max_streams: None,
            stream_lifetime: Duration::from_secs(60),
        }
    }
}

impl HttpOptions {
    /// Serve at `/mcp`, sessions on, loopback hosts and origins only, no
    /// token, at most 512 connections, a 30 s read timeout, stop on Ctrl-C or
    /// SIGTERM.
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

    /// Keep no sessions: each POST is answered on its own, so that replicas
    /// of the same toolset behind a round-robin load balancer can each
    /// answer any request (off by default).
    ///
    /// What still works, whichever replica a request reaches: `initialize`,
    /// `tools/list`, `tools/call`, the progress of a call (it travels on
    /// the call's own answer, which is then an event stream, not JSON), and
    /// approval for clients at MCP 2026-07-28, which call again with the
    /// person's answer. What does not: approval for older clients (the
    /// server would have to send them a request whose answer has no way
    /// back; their calls that need approval are refused, saying so),
    /// `notifications/cancelled` (acknowledged and dropped: closing the
    /// call's connection cancels it instead), the event stream (GET gets
    /// 405) and with it `tools/list_changed`, and resumption with
    /// `Last-Event-ID`. With sessions (the default), put the
    /// replicas behind a balancer sticky on `Mcp-Session-Id` instead: the
    /// MCP guide has an HAProxy configuration.
    ///
    /// ```no_run
    /// use toolcall_core::Toolset;
    /// use toolcall_mcp::{HttpOptions, McpServer};
    /// # async fn run(tools: Toolset) -> std::io::Result<()> {
    /// // One replica; start as many as needed, the same way.
    /// HttpOptions::new()
    ///     .with_stateless(true)
    ///     .with_bearer_token("s3cret")
    ///     .with_allowed_hosts(["mcp.example.com"])
    ///     .bind(McpServer::new(tools), "0.0.0.0:8000".parse().unwrap())
    ///     .await?
    ///     .serve()
    ///     .await
    /// # }
    /// ```
    pub fn with_stateless(mut self, yes: bool) -> Self {
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

    /// Stop when this token is cancelled (as well as on Ctrl-C or SIGTERM).
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

    /// Serve at most this many connections at once (default 512). When all
    /// are taken, a new client is served by closing the connection idle the
    /// longest (kept alive between requests, never used, or still sending
    /// its request's head); while every connection is in the middle of a
    /// request, new clients wait, in the listen backlog, until one has
    /// answered.
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

    /// Keep at most this many event streams (GET) open at once (default:
    /// half the connections, so that calls, which are POSTs, always have
    /// room). A session holds at most 2: its newest replaces its oldest.
    /// One more gets HTTP 503 with a JSON-RPC error saying so; the client
    /// still calls tools, and misses only the notifications sent outside a
    /// call's answer (such as `tools/list_changed`) until it gets one.
    pub fn with_max_event_streams(mut self, streams: usize) -> Self {
        self.max_streams = Some(streams);
        self
    }

    /// End an event stream (GET) after this long (default 60 s), so that a
    /// stream nobody reads frees its connection. The stream's first event
    /// gives its client a retry delay, after which it opens another and
    /// resumes where it was.
    pub fn with_event_stream_lifetime(mut self, lifetime: Duration) -> Self {
        self.stream_lifetime = lifetime;
        self
    }

    pub(super) fn max_event_streams(&self) -> usize {
        self.max_streams.unwrap_or(self.limits.max_connections / 2).max(1)
    }

    /// Allow binding an address other than loopback without a bearer token
    /// (off by default: [`Self::bind`] refuses it, since anyone on the
    /// network could then call the tools). For a server behind a proxy
    /// that authenticates.
    pub fn with_allow_unauthenticated_network(mut self, yes: bool) -> Self {
        self.open_to_network = yes;
        self
    }

    /// Whether Ctrl-C, and on Unix SIGTERM (what systemd and container
    /// runtimes send), stop the server gracefully (on by default). Off, the
    /// process's default handling is left alone, and only the shutdown
    /// token stops it.
    pub fn with_stop_on_ctrl_c(mut self, yes: bool) -> Self {
        self.ctrl_c = yes;
        self
    }
}
