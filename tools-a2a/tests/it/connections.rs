//! `A2aServer::serve` against clients that hold connections open: idle,
//! with half a request's head, with half its body, and more of them than
//! the server's cap. The card and a JSON-RPC call are still answered, and
//! the connections held are closed by the server (`axum::serve` would hold
//! them all until the process runs out of file descriptors).

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use toolcall_a2a::A2aServer;
use toolcall_agent::Agent;
use toolcall_agent::testing::ScriptedModel;
use toolcall_core::Toolset;

use crate::{message, rpc};

/// The connections the server serves at once by default.
const CAP: usize = 512;
/// How long a test waits, on the real clock, for what should happen well
/// within it.
const BOUND: Duration = Duration::from_secs(10);
/// Half a request's head: the client stops in the middle of a header.
const HALF_HEAD: &[u8] = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: loc";
/// A request's head and half its body.
const HALF_BODY: &[u8] = b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\": \"2.0\",";

/// `A2aServer::serve` on a loopback port, its model answering once: its
/// address and base URL.
async fn start() -> (SocketAddr, String) {
    let agent = Agent::new(ScriptedModel::new().then_text("Done."), Toolset::new()).unwrap();
    let server = A2aServer::new(agent).with_name("janitor").with_description("Cleans up.");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve(listener));
    (addr, format!("http://{addr}"))
}

/// A connection that sends `start` (nothing, for an idle one) and then
/// waits.
async fn hold(addr: SocketAddr, start: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(start).await.unwrap();
    stream
}

/// Whether the server closes `stream` within `bound` (whatever it answered
/// first, such as a 400 for a body sent too slowly).
async fn closed_within(stream: &mut TcpStream, bound: Duration) -> bool {
    let mut buffer = [0u8; 1024];
    let read = async { while stream.read(&mut buffer).await.is_ok_and(|n| n > 0) {} };
    tokio::time::timeout(bound, read).await.is_ok()
}

/// The card and a `SendMessage` are answered.
async fn answered(url: &str) {
    let card = async {
        let card: Value =
            reqwest::get(format!("{url}/.well-known/agent-card.json")).await.unwrap().json().await.unwrap();
        card
    };
    let card = tokio::time::timeout(BOUND, card).await.expect("the card within the bound");
    assert_eq!(card["name"], "janitor");
    let call = rpc(url, "SendMessage", message(json!([{"text": "Tidy up."}]), None));
    let answer = tokio::time::timeout(BOUND, call).await.expect("the answer within the bound");
    assert_eq!(answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
}

/// The soft limit on this process's open files, where the system says it.
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|line| line.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

#[tokio::test]
async fn past_the_connection_cap_the_card_and_a_call_are_answered_and_the_idlest_is_closed() {
    // Both ends of each connection are in this process.
    let limit = open_files_limit();
    assert!(
        limit.is_none_or(|limit| limit >= 4 * CAP as u64),
        "this process may open {limit:?} files, too few for both ends of {} connections: raise the \
         limit (`ulimit -n 4096`) and run again",
        CAP + 8
    );
    let (addr, url) = start().await;
    // More than the cap, idle or with half a head: the oldest are closed
    // to make room for the newest, and for the card's and the call's.
    let mut held = Vec::new();
    for n in 0..CAP + 8 {
        held.push(hold(addr, if n % 2 == 0 { b"" } else { HALF_HEAD }).await);
    }
    answered(&url).await;
    // The read timeout (30 s) is far off: only making room closed them.
    assert!(closed_within(&mut held[0], BOUND).await, "the idlest connection is still open");
    assert!(closed_within(&mut held[1], BOUND).await, "the next idlest connection is still open");
    drop(held);
}

#[tokio::test]
async fn idle_and_half_sent_connections_are_closed_at_the_timeouts() {
    let (addr, url) = start().await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(hold(addr, b"").await);
        held.push(hold(addr, HALF_HEAD).await);
        held.push(hold(addr, HALF_BODY).await);
    }
    answered(&url).await;
    // On a paused clock, time jumps to the next timer whenever every task
    // waits: to the server's read timeout and body deadline (30 s each), if
    // it has them, before the minute a connection is given here.
    tokio::time::pause();
    for (n, stream) in held.iter_mut().enumerate() {
        assert!(closed_within(stream, Duration::from_secs(60)).await, "connection {n} is still open");
    }
}
