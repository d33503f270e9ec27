//! The accept loop under the HTTP server. It is hyper's, not `axum::serve`,
//! because a server on a real machine needs three things axum's loop does
//! not give: a bound on connections, a read timeout (so an idle or
//! half-sent connection cannot be held forever), and a shutdown that ends
//! even when a client never finishes its request.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// What one connection may take.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnectionLimits {
    /// Connections served at once; more wait in the kernel's backlog.
    pub(crate) max_connections: usize,
    /// How long a client may take to send a request's headers, and how long
    /// a kept-alive connection may sit idle between requests.
    pub(crate) read_timeout: Duration,
}

/// Serve `router` until `stop` resolves; then stop accepting, run `drain`
/// (it waits for the calls in flight and ends the sessions) while the
/// connections close, and return once both are done, or `deadline` after
/// `drain` ended: the connections still open then are dropped.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    stop: impl Future<Output = ()>,
    drain: impl Future<Output = ()>,
    deadline: Duration,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.read_timeout);
    let mut stop = std::pin::pin!(stop);
    loop {
        // A slot first, then the connection: past the cap, clients wait in
        // the backlog instead of holding a descriptor here.
        let slot = tokio::select! {
            () = &mut stop => break,
            slot = Arc::clone(&slots).acquire_owned() => slot,
        };
        let Ok(slot) = slot else { break };
        let stream = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of descriptors, most often: wait for some to close.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Without it each response written in two parts waits for the
        // client's delayed ACK: about 40 ms a request on a kept-alive
        // connection.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "setting TCP_NODELAY failed");
        }
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router.clone()));
        let connection = graceful.watch(connection);
        connections.spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
            drop(slot);
        });
        // Reap the finished ones, so the set holds only live connections.
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    let closed = async {
        graceful.shutdown().await;
        while connections.join_next().await.is_some() {}
    };
    let drained = tokio::sync::Notify::new();
    let drain = async {
        drain.await;
        drained.notify_one();
    };
    let close = async {
        tokio::select! {
            () = closed => {}
            () = async { drained.notified().await; tokio::time::sleep(deadline).await } => {
                tracing::warn!("connections still open at the shutdown deadline were dropped");
            }
        }
    };
    tokio::join!(drain, close);
    // Dropping the set aborts the connections still in it.
}
