//! The accept loop under the HTTP server. It is hyper's, not `axum::serve`,
//! because a server on a real machine needs what axum's loop does not give:
//! a bound on connections, which makes room for a new client by closing the
//! connection idle the longest (`idle`); a read timeout (so an idle or
//! half-sent connection cannot be held forever); and a shutdown that ends
//! even when a client never finishes its request.

mod idle;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use idle::{Connections, Tracked};

/// What one connection may take.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnectionLimits {
    /// Connections served at once: past it, the connection idle the
    /// longest is closed for a new one; with all busy, new ones wait.
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
    let connections = Arc::new(Connections::default());
    // Cancelled at the shutdown: each connection closes once its request
    // in progress, if any, is answered.
    let closing = CancellationToken::new();
    let mut tasks = JoinSet::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.read_timeout);
    let mut stop = std::pin::pin!(stop);
    loop {
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
        // Past the cap this client waits, and the clients behind it wait in
        // the backlog, until a slot frees: the connection idle the longest
        // is closed to free one, or, with every connection busy, the next
        // to finish its request.
        let slot = match Arc::clone(&slots).try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                let slot = loop {
                    connections.make_room();
                    tokio::select! {
                        () = &mut stop => break None,
                        slot = Arc::clone(&slots).acquire_owned() => break slot.ok(),
                        () = connections.went_idle() => {}
                    }
                };
                let Some(slot) = slot else { break };
                slot
            }
        };
        let served = serve_connection(&http, stream, router.clone(), &connections, closing.child_token());
        tasks.spawn(async move {
            served.await;
            drop(slot);
        });
        // Reap the finished ones, so the set holds only live connections.
        while tasks.try_join_next().is_some() {}
    }
    drop(listener);
    closing.cancel();
    let closed = async { while tasks.join_next().await.is_some() {} };
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

/// Serve one connection until its client closes it, or `close` is
/// cancelled and its request in progress, if any, is answered.
fn serve_connection(
    http: &hyper::server::conn::http1::Builder,
    stream: TcpStream,
    router: Router,
    connections: &Arc<Connections>,
    close: CancellationToken,
) -> impl Future<Output = ()> + Send + 'static {
    // Without it each response written in two parts waits for the
    // client's delayed ACK: about 40 ms a request on a kept-alive
    // connection.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "setting TCP_NODELAY failed");
    }
    let counted = Arc::new(connections.add(close.clone()));
    let router = TowerToHyperService::new(router);
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let busy = counted.busy();
        let answer = hyper::service::Service::call(&router, request);
        async move {
            let response = answer.await?;
            Ok::<_, Infallible>(response.map(|body| Tracked { body, _busy: busy }))
        }
    });
    let connection = http.serve_connection(TokioIo::new(stream), service);
    async move {
        let mut connection = std::pin::pin!(connection);
        let ended = tokio::select! {
            ended = connection.as_mut() => ended,
            () = close.cancelled() => {
                connection.as_mut().graceful_shutdown();
                connection.await
            }
        };
        if let Err(error) = ended {
            tracing::debug!(%error, "connection ended with an error");
        }
    }
}
