//! A bound server: the exposure check, the listening socket, and the serve
//! loop with its shutdown.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::middleware;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::HttpOptions;
use super::bearer::Secret;
use super::requests::Requests;
use crate::McpServer;
use crate::server::Stop;

/// How long a shutdown gives, after the grace, the cancelled calls to write
/// their error answers, and then the connections to close.
const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(1);

impl HttpOptions {
    /// Bind `addr` (port 0 picks a free port) and get ready to serve.
    ///
    /// Refused, with [`std::io::ErrorKind::InvalidInput`]: an empty bearer
    /// token, and an address other than loopback without a token (unless
    /// [`Self::with_allow_unauthenticated_network`]).
    ///
    /// # Errors
    ///
    /// [`std::io::ErrorKind::InvalidInput`] for the refusals above; the system's error when
    /// `addr` cannot be bound (a port taken, an address not of this machine).
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

    /// Serve until Ctrl-C (or SIGTERM, on Unix) or the shutdown token. Then stop taking
    /// connections, let the tool calls in flight finish and answer (for up to
    /// [`HttpOptions::with_shutdown_grace`]; those still running are then
    /// cancelled), end the sessions and return.
    ///
    /// # Errors
    ///
    /// None in this version: it returns `Ok(())` once shut down, and a failed accept is logged
    /// and retried rather than returned.
    pub async fn serve(self) -> std::io::Result<()> {
        let Self { listener, router, requests, sessions, calls, options, .. } = self;
        let (shutdown, ctrl_c, grace) = (options.shutdown.clone(), options.ctrl_c, options.grace);
        let stop = async move {
            if ctrl_c {
                tokio::select! {
                    () = shutdown.cancelled() => {}
                    () = stop_signal() => {}
                }
            } else {
                shutdown.cancelled().await;
            }
        };
        let drain = async move {
            let _ = tokio::time::timeout(grace, requests.idle()).await;
            // The calls cancelled here answer with an error; the sessions,
            // whose open event streams would hold a connection forever, end
            // once those answers are written.
            calls.cancel();
            let _ = tokio::time::timeout(SHUTDOWN_DEADLINE, requests.idle()).await;
            sessions.cancel();
        };
        // The body's pieces are timed by the router (RequestBodyTimeoutLayer,
        // at the read timeout): no deadline for the whole body here.
        toolcall_serve::serve(listener, router)
            .with_max_connections(options.limits.max_connections)
            .with_read_timeout(options.limits.read_timeout)
            .with_body_timeout(Duration::MAX)
            .with_graceful_shutdown(stop)
            .with_shutdown_drain(drain)
            .with_shutdown_grace(SHUTDOWN_DEADLINE)
            .await
    }
}

/// Ctrl-C, or on Unix SIGTERM: what systemd, Docker and Kubernetes send to
/// stop a service, which without a handler kills the process at once, in
/// the middle of its calls.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            },
            Err(error) => {
                tracing::warn!(%error, "cannot handle SIGTERM: only Ctrl-C stops the server gracefully");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
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
