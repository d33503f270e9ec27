//! [`serve`] and its builder: the accept loop, one connection's service, and
//! the request body's deadline.

use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

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

use crate::idle::{Closing, Connections, Tracked};

/// A future the server runs, boxed so that [`Serve`] has no type parameter.
type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Serve `router` on `listener`, with bounds on what a client can hold (see
/// [`Serve`] for them and their defaults). Await it, as `axum::serve`:
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use axum::{Router, routing::get};
///
/// let app = Router::new().route("/", get(|| async { "hello" }));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// toolcall_serve::serve(listener, app)
///     .with_max_connections(1024)
///     .with_graceful_shutdown(async {
///         let _ = tokio::signal::ctrl_c().await;
///     })
///     .await
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
        drain: None,
        grace: Duration::from_secs(10),
    }
}

/// A server being set up by [`serve`]; awaiting it serves.
///
/// The defaults: at most 512 connections, 30 s to send a request's head
/// (and 30 s of idle keep-alive), 30 s to send its body, and no shutdown
/// (with one, 10 s for the connections to finish their requests).
#[must_use = "a server does nothing until it is awaited"]
pub struct Serve {
    listener: TcpListener,
    router: Router,
    max_connections: usize,
    read_timeout: Duration,
    body_timeout: Duration,
    shutdown: Option<Task>,
    drain: Option<Task>,
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
            .field("shutdown_drain", &self.drain.is_some())
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
    /// written: an event stream lasts as long as it has events.
    pub fn with_read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// How long a client may take to send a request's whole body, counted
    /// from its head (default 30 s). Past it, reading the body fails (an
    /// axum extractor answers 400) and the connection is closed.
    /// [`Duration::MAX`] sets no deadline, for a router that bounds its
    /// bodies itself (the MCP server times each piece of a body instead).
    pub fn with_body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Stop when `signal` resolves: stop accepting, let each connection
    /// finish its request in progress for up to the grace (10 s by default,
    /// [`Self::with_shutdown_grace`]; then it is dropped), and return.
    pub fn with_graceful_shutdown(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// How long the connections may take to finish their requests once the
    /// shutdown has begun (default 10 s), counted from the end of the
    /// drain if there is one ([`Self::with_shutdown_drain`]). The
    /// connections still open then are dropped.
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Run `drain` when the shutdown begins, while the connections close:
    /// the server returns once it has ended and the connections have closed
    /// (or the grace after its end has passed). For what must happen before
    /// some requests can end, such as cancelling the work in flight or
    /// ending the event streams that would otherwise hold their
    /// connections until the grace passes.
    pub fn with_shutdown_drain(mut self, drain: impl Future<Output = ()> + Send + 'static) -> Self {
        self.drain = Some(Box::pin(drain));
        self
    }

    async fn run(self) -> std::io::Result<()> {
        let Self { listener, router, max_connections, read_timeout, body_timeout, shutdown, drain, grace } =
            self;
        let slots = Arc::new(Semaphore::new(max_connections));
        let connections = Arc::new(Connections::default());
        // Cancelled at the shutdown: each connection closes once its request
        // in progress, if any, is answered.
        let closing = CancellationToken::new();
        let mut tasks = JoinSet::new();
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new()).header_read_timeout(read_timeout);
        let mut stop = shutdown.unwrap_or_else(|| Box::pin(std::future::pending()));
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
        // The grace counts from the drain's end: until then the requests may
        // be waiting for it.
        let drained = Notify::new();
        let drain = async {
            if let Some(drain) = drain {
                drain.await;
            }
            drained.notify_one();
        };
        let close = async {
            tokio::select! {
                () = closed => {}
                () = async { drained.notified().await; tokio::time::sleep(grace).await } => {
                    tracing::warn!("connections still open at the shutdown deadline were dropped");
                }
            }
        };
        tokio::join!(drain, close);
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
        let request = if body_timeout == Duration::MAX {
            request.map(Body::new)
        } else {
            let deadline = Box::pin(tokio::time::sleep(body_timeout));
            request.map(|body| Body::new(ReadBy { body: Body::new(body), deadline }))
        };
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
            () = close.cancelled() => match this.closing() {
                Closing::AtOnce => Ok(()),
                Closing::Gracefully => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            },
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
