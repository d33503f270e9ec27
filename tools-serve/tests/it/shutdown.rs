//! The graceful shutdown: the connections that hold nothing close at once,
//! a request in progress is answered in full, the drain runs, and the grace
//! after it bounds what is still open.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::connections::{BOUND, kept_alive_ok, request, until_closed};

/// Well within [`BOUND`], which the servers here have as their timeouts
/// and grace: what closes before it was closed by the shutdown itself.
const SOON: Duration = Duration::from_secs(3);

fn app() -> Router {
    Router::new()
        .route("/ok", get(|| async { "ok" }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                "slow"
            }),
        )
        .route("/forever", get(std::future::pending::<&'static str>))
}

/// A server that stops when the sender is used: its address, the sender,
/// and the task that returns when it has stopped.
async fn start(
    configure: impl FnOnce(toolcall_serve::Serve) -> toolcall_serve::Serve,
) -> (SocketAddr, oneshot::Sender<()>, JoinHandle<std::io::Result<()>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel();
    let server = configure(toolcall_serve::serve(listener, app())).with_graceful_shutdown(async {
        let _ = stopped.await;
    });
    (addr, stop, tokio::spawn(server.into_future()))
}

#[tokio::test]
async fn a_shutdown_closes_held_connections_and_answers_the_request_in_progress() {
    let (addr, stop, served) =
        start(|serve| serve.with_read_timeout(BOUND).with_body_timeout(BOUND).with_shutdown_grace(BOUND))
            .await;
    // Never used, half a head, and kept alive after an answer.
    let (mut idle, _idle) = TcpStream::connect(addr).await.unwrap().into_split();
    let (mut half, mut half_write) = TcpStream::connect(addr).await.unwrap().into_split();
    half_write.write_all(b"GET /ok HTTP/1.1\r\nHost: loc").await.unwrap();
    let (mut kept, kept_write) = TcpStream::connect(addr).await.unwrap().into_split();
    let _kept_write = kept_alive_ok(&mut kept, kept_write).await;
    // A request in progress when the shutdown comes.
    let slow = tokio::spawn(request(addr, "/slow"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let began = Instant::now();
    stop.send(()).unwrap();
    for (name, stream) in [("never used", &mut idle), ("half a head", &mut half), ("kept alive", &mut kept)] {
        let read = until_closed(stream).await.unwrap_or_else(|| panic!("{name}: still open"));
        assert!(read.is_empty(), "{name}: {}", String::from_utf8_lossy(&read));
        assert!(began.elapsed() < SOON, "{name}: closed at {:?}", began.elapsed());
    }
    let slow = slow.await.unwrap();
    assert!(slow.starts_with("HTTP/1.1 200 OK"), "{slow}");
    assert!(slow.ends_with("slow"), "{slow}");
    tokio::time::timeout(SOON, served).await.expect("returned").unwrap().unwrap();
}

#[tokio::test]
async fn the_grace_counts_from_the_drain_and_then_what_is_still_open_is_dropped() {
    let drained = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&drained);
    let (addr, stop, served) = start(|serve| {
        serve.with_shutdown_grace(Duration::from_millis(200)).with_shutdown_drain(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            flag.store(true, Ordering::SeqCst);
        })
    })
    .await;
    // A request its handler never answers: only the deadline ends it.
    let (mut forever, mut write) = TcpStream::connect(addr).await.unwrap().into_split();
    write.write_all(b"GET /forever HTTP/1.1\r\nHost: localhost\r\n\r\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let began = Instant::now();
    stop.send(()).unwrap();
    tokio::time::timeout(BOUND, served).await.expect("returned").unwrap().unwrap();
    let took = began.elapsed();
    assert!(drained.load(Ordering::SeqCst), "the drain did not run to its end");
    assert!(took >= Duration::from_millis(500), "returned before the drain and the grace: {took:?}");
    assert!(took < SOON, "returned at {took:?}");
    until_closed(&mut forever).await.expect("dropped with the server");
}
