//! Serving the chat and AG-UI routes on a real machine: [`serve`], an
//! accept loop on hyper instead of `axum::serve`, because that one holds
//! every connection a client leaves idle or half-sent, for ever, until the
//! process runs out of file descriptors and normal requests time out.
//!
//! The same approach as the MCP server's (`tools-mcp/src/listen`): a read
//! timeout for the request head, which hyper also runs while a kept-alive
//! connection waits for its next request; a deadline for reading the body;
//! and a cap on connections that makes room for a new client by closing the
//! connection idle the longest. A response being written, such as a run's
//! event stream, is never cut by them. The accept loop and the idle table
//! are copied from there; their shared home would be a small module of
//! `toolcall-core` (or a crate of their own) behind a feature that brings in
//! hyper, used by both servers.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Request;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Serve `router` on `listener`, with bounds on what a client can hold (see
/// [`Serve`] for them and their defaults). Await it, as `axum::serve`:
///
/// ```no_run
/// # async fn run(app: axum::Router) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// toolcall_ui::serve(listener, app).await
/// # }
/// ```
pub fn serve(listener: TcpListener, router: Router) -> Serve {
    Serve {
        listener,
        router,
        max_connections: 512,
        read_timeout: Duration::from_secs(30),
        body_timeout: Duration::from_secs(30),
        shutdown: None,
        grace: Duration::from_secs(10),
    }
}

/// A server being set up by [`serve`]; awaiting it serves.
///
/// The defaults, those of the MCP server: at most 512 connections, 30 s to
/// send a request's head (and 30 s of idle keep-alive), 30 s to send its
/// body, and no shutdown.
#[must_use = "a server does nothing until it is awaited"]
pub struct Serve {
    listener: TcpListener,
    router: Router,
    max_connections: usize,
    read_timeout: Duration,
    body_timeout: Duration,
    shutdown: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    grace: Duration,
}

impl std::fmt::Debug for Serve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serve")
            .field("listener", &self.listener)
            .field("max_connections", &self.max_connections)
            .field("read_timeout", &self.read_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("graceful_shutdown", &self.shutdown.is_some())
            .field("grace", &self.grace)
            .finish_non_exhaustive()
    }
}

impl Serve {
    /// Serve at most this many connections at once (default 512). When all
    /// are taken, a new client is served by closing the connection idle the
    /// longest (kept alive between requests, never used, or still sending
    /// its request's head); while every connection is answering a request,
    /// new clients wait, in the listen backlog, until one has answered.
    pub fn with_max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// How long a client may take to send a request's head, counted from
    /// when the connection waits for it: so also how long a kept-alive
    /// connection may sit idle between requests (default 30 s). The
    /// connection is closed past it. It does not run while a response is
    /// written: an event stream lasts as long as its run.
    pub fn with_read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// How long a client may take to send a request's whole body, counted
    /// from its head (default 30 s). Past it, reading the body fails (the
    /// handler answers 400) and the connection is closed.
    pub fn with_body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Stop when `signal` resolves: stop accepting, let each connection
    /// finish its request in progress for up to 10 s (then it is dropped),
    /// and return.
    pub fn with_graceful_shutdown(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    async fn run(self) -> std::io::Result<()> {
        let Self { listener, router, max_connections, read_timeout, body_timeout, shutdown, grace } = self;
        let slots = Arc::new(Semaphore::new(max_connections));
        let connections = Arc::new(Connections::default());
        // Cancelled at the shutdown: each connection closes once its request
        // in progress, if any, is answered.
        let closing = CancellationToken::new();
        let mut tasks = JoinSet::new();
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new()).header_read_timeout(read_timeout);
        let mut stop: Pin<Box<dyn Future<Output = ()> + Send>> =
            shutdown.unwrap_or_else(|| Box::pin(std::future::pending()));
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
            // Past the cap this client waits, and the clients behind it wait
            // in the backlog, until a slot frees: the connection idle the
            // longest is closed to free one, or, with every connection busy,
            // the next to finish its request.
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
            let served = serve_connection(
                &http,
                stream,
                router.clone(),
                body_timeout,
                &connections,
                closing.child_token(),
            );
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
        if tokio::time::timeout(grace, closed).await.is_err() {
            tracing::warn!("connections still open at the shutdown deadline were dropped");
        }
        // Dropping the set aborts the connections still in it.
        Ok(())
    }
}

impl IntoFuture for Serve {
    type Output = std::io::Result<()>;
    type IntoFuture = Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// Serve one connection until its client closes it, or `close` is
/// cancelled and its request in progress, if any, is answered.
fn serve_connection(
    http: &hyper::server::conn::http1::Builder,
    stream: TcpStream,
    router: Router,
    body_timeout: Duration,
    connections: &Arc<Connections>,
    close: CancellationToken,
) -> impl Future<Output = ()> + Send + 'static {
    // Without it each response written in two parts waits for the client's
    // delayed ACK: about 40 ms a request on a kept-alive connection.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "setting TCP_NODELAY failed");
    }
    let counted = Arc::new(connections.add(close.clone()));
    let this = Arc::clone(&counted);
    let router = TowerToHyperService::new(router);
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let busy = counted.busy();
        let deadline = Box::pin(tokio::time::sleep(body_timeout));
        let request = request.map(|body| Body::new(ReadBy { body: Body::new(body), deadline }));
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
            // With no request in progress it goes at once: hyper's graceful
            // shutdown would wait, for the read timeout, for the head a
            // client has begun to send a byte at a time.
            () = close.cancelled() => if this.is_busy() {
                connection.as_mut().graceful_shutdown();
                connection.await
            } else {
                Ok(())
            }
        };
        if let Err(error) = ended {
            tracing::debug!(%error, "connection ended with an error");
        }
    }
}

/// A request body that fails once its deadline has passed: a client
/// sending it a byte at a time cannot hold the connection.
struct ReadBy {
    body: Body,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl hyper::body::Body for ReadBy {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        match Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame),
            Poll::Pending => match self.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the request body was not sent in time",
                ))))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The connections served, by a number of their own, and which of them is
/// doing nothing: when every slot is taken and another client is waiting,
/// the connection idle the longest is closed to make room, instead of every
/// client waiting for some connection's read timeout.
#[derive(Debug, Default)]
struct Connections {
    table: Mutex<Table>,
    /// Told each time a connection has nothing left to do.
    went_idle: Notify,
}

#[derive(Debug, Default)]
struct Table {
    next: u64,
    entries: HashMap<u64, Entry>,
}

#[derive(Debug)]
struct Entry {
    /// Requests being answered: from the request's head until its response
    /// body is written or dropped. An open event stream stays busy.
    busy: usize,
    /// When it last had nothing to do (accepted, or its last answer sent).
    idle_since: Instant,
    /// Cancelled to close it: at once if it has no request in progress, else
    /// once that request is answered.
    close: CancellationToken,
    /// Closed to make room: it is going, and frees a slot soon.
    evicted: bool,
}

/// One connection, counted from its accepting until it is dropped.
#[derive(Debug)]
struct Connection {
    id: u64,
    connections: Arc<Connections>,
}

/// One request being answered on a connection, until it is dropped.
#[derive(Debug)]
struct Busy {
    id: u64,
    connections: Arc<Connections>,
}

impl Connections {
    fn table(&self) -> MutexGuard<'_, Table> {
        // The table holds counts and tokens only: a panic elsewhere while it
        // was held leaves nothing half-done in it.
        self.table.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Count a new connection, which `close` asks to close.
    fn add(self: &Arc<Self>, close: CancellationToken) -> Connection {
        let mut table = self.table();
        let id = table.next;
        table.next += 1;
        table.entries.insert(id, Entry { busy: 0, idle_since: Instant::now(), close, evicted: false });
        Connection { id, connections: Arc::clone(self) }
    }

    /// Close the connection idle the longest, unless one closed for room is
    /// still going. Nothing happens while every connection is busy: the
    /// caller waits for [`Self::went_idle`] and asks again.
    fn make_room(&self) {
        let mut table = self.table();
        if table.entries.values().any(|entry| entry.evicted) {
            return;
        }
        let idlest =
            table.entries.values_mut().filter(|entry| entry.busy == 0).min_by_key(|entry| entry.idle_since);
        if let Some(entry) = idlest {
            entry.evicted = true;
            entry.close.cancel();
        }
    }

    /// Resolves when some connection has gone idle since the last call (or
    /// at once, if one has and nobody was waiting).
    async fn went_idle(&self) {
        self.went_idle.notified().await;
    }
}

impl Connection {
    /// Count a request on this connection until the returned guard is dropped.
    fn busy(&self) -> Busy {
        if let Some(entry) = self.connections.table().entries.get_mut(&self.id) {
            entry.busy += 1;
        }
        Busy { id: self.id, connections: Arc::clone(&self.connections) }
    }

    /// Whether a request is being answered on it.
    fn is_busy(&self) -> bool {
        self.connections.table().entries.get(&self.id).is_some_and(|entry| entry.busy > 0)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.connections.table().entries.remove(&self.id);
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let idle = match self.connections.table().entries.get_mut(&self.id) {
            Some(entry) => {
                entry.busy = entry.busy.saturating_sub(1);
                if entry.busy == 0 {
                    entry.idle_since = Instant::now();
                }
                entry.busy == 0
            }
            None => false,
        };
        if idle {
            self.connections.went_idle.notify_one();
        }
    }
}

/// A response body that keeps its request counted as busy until it is
/// written or dropped.
struct Tracked<B> {
    body: B,
    _busy: Busy,
}

impl<B: hyper::body::Body + Unpin> hyper::body::Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
