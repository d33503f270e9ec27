//! `toolcall_serve::serve` against raw connections on loopback: clients that send
//! a byte at a time or sit idle are closed, a normal request is answered
//! past the cap, and a long event stream is not cut.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::routing::{get, post};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The short timeouts the servers here are given.
const SHORT: Duration = Duration::from_millis(200);
/// How long a test waits for what should happen well within it.
pub(crate) const BOUND: Duration = Duration::from_secs(10);
/// The events of the long stream, one every 100 ms: longer than the timeouts.
const EVENTS: u64 = 15;

fn app() -> Router {
    Router::new()
        .route("/ok", get(|| async { "ok" }))
        .route("/echo", post(|body: String| async move { body }))
        .route(
            "/sse",
            get(|| async {
                let events = futures::stream::unfold(0, |n| async move {
                    if n == EVENTS {
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Some((Ok::<_, std::io::Error>(Bytes::from(format!("data: {n}\n\n"))), n + 1))
                });
                ([("content-type", "text/event-stream")], Body::from_stream(events))
            }),
        )
}

async fn start(configure: impl FnOnce(toolcall_serve::Serve) -> toolcall_serve::Serve) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = configure(toolcall_serve::serve(listener, app()));
    tokio::spawn(async move { server.await.unwrap() });
    addr
}

/// Read until the server closes the connection; `None` if it has not within
/// [`BOUND`].
pub(crate) async fn until_closed(stream: &mut tokio::net::tcp::OwnedReadHalf) -> Option<Vec<u8>> {
    let mut read = Vec::new();
    let closed = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    closed.ok().map(|()| read)
}

/// A request on its own connection, answered in full.
pub(crate) async fn request(addr: SocketAddr, path: &str) -> String {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let head = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    write.write_all(head.as_bytes()).await.unwrap();
    let answer = until_closed(&mut read).await.expect("the answer within the bound");
    String::from_utf8_lossy(&answer).into_owned()
}

/// `GET /ok` on a connection kept alive, answered; the write half back, to
/// hold while the connection should stay open (dropping it sends a FIN).
pub(crate) async fn kept_alive_ok(
    read: &mut tokio::net::tcp::OwnedReadHalf,
    mut write: tokio::net::tcp::OwnedWriteHalf,
) -> tokio::net::tcp::OwnedWriteHalf {
    write.write_all(b"GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n").await.unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    while !answer.ends_with(b"\r\n\r\nok") {
        let n = tokio::time::timeout(BOUND, read.read(&mut buf)).await.expect("the answer").unwrap();
        assert!(n > 0, "closed before answering");
        answer.extend_from_slice(&buf[..n]);
    }
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200 OK"));
    write
}

/// Send `start`, then one byte every 50 ms, up to 5 s of them or until the
/// server closes; the bytes sent after `start`.
fn drip(mut write: tokio::net::tcp::OwnedWriteHalf, start: &'static str) -> tokio::task::JoinHandle<usize> {
    tokio::spawn(async move {
        if write.write_all(start.as_bytes()).await.is_err() {
            return 0;
        }
        for sent in 0..100 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if write.write_all(b"a").await.is_err() {
                return sent;
            }
        }
        100
    })
}

#[tokio::test]
async fn a_head_sent_a_byte_at_a_time_is_closed_at_the_read_timeout() {
    let addr = start(|serve| serve.with_read_timeout(SHORT)).await;
    let mut clients = Vec::new();
    for _ in 0..3 {
        let (read, write) = TcpStream::connect(addr).await.unwrap().into_split();
        clients.push((read, drip(write, "GET /ok HTTP/1.1\r\nX-Drip: ")));
    }
    for (mut read, dripping) in clients {
        let answer = until_closed(&mut read).await.expect("closed within the bound");
        assert!(!String::from_utf8_lossy(&answer).contains("200 OK"));
        // Closed well before the 5 s the client would go on.
        assert!(dripping.await.unwrap() < 100);
    }
}

#[tokio::test]
async fn a_body_sent_a_byte_at_a_time_is_closed_at_the_body_timeout() {
    // The read timeout is long: the body's deadline is what closes it.
    let addr = start(|serve| serve.with_read_timeout(BOUND).with_body_timeout(SHORT)).await;
    let (mut read, write) = TcpStream::connect(addr).await.unwrap().into_split();
    let dripping = drip(write, "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n");
    let answer = until_closed(&mut read).await.expect("closed within the bound");
    assert!(!String::from_utf8_lossy(&answer).contains("200 OK"));
    assert!(dripping.await.unwrap() < 100);
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed() {
    let addr = start(|serve| serve.with_read_timeout(SHORT)).await;
    let (mut read, write) = TcpStream::connect(addr).await.unwrap().into_split();
    let _write = kept_alive_ok(&mut read, write).await;
    // Kept alive, then sent nothing more: closed at the read timeout.
    until_closed(&mut read).await.expect("closed within the bound");
}

#[tokio::test]
async fn past_the_cap_a_normal_request_is_answered() {
    // Long timeouts: only making room can serve the request in time.
    let addr = start(|serve| serve.with_max_connections(4).with_read_timeout(BOUND * 3)).await;
    let mut held = Vec::new();
    for _ in 0..12 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"GET /ok HTTP/1.1\r\nX-Drip: a").await.unwrap();
        held.push(stream);
    }
    for _ in 0..3 {
        let answer =
            tokio::time::timeout(BOUND, request(addr, "/ok")).await.expect("answered within the bound");
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.ends_with("ok"), "{answer}");
    }
    drop(held);
}

#[tokio::test]
async fn a_long_event_stream_is_not_cut() {
    let addr =
        start(|serve| serve.with_max_connections(2).with_read_timeout(SHORT).with_body_timeout(SHORT)).await;
    let stream = tokio::spawn(request(addr, "/sse"));
    // Other clients come and go, idle ones too, while it streams: making
    // room for them must not close it.
    let mut idle = Vec::new();
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        idle.push(TcpStream::connect(addr).await.unwrap());
        let answer =
            tokio::time::timeout(BOUND, request(addr, "/ok")).await.expect("answered within the bound");
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    }
    let answer =
        tokio::time::timeout(BOUND, stream).await.expect("the whole stream within the bound").unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    for n in 0..EVENTS {
        assert!(answer.contains(&format!("data: {n}\n\n")), "event {n} missing: {answer}");
    }
    // The chunked body's end: the stream was finished, not cut.
    assert!(answer.ends_with("0\r\n\r\n"), "{answer}");
    drop(idle);
}
