//! What the MCP load and memory benches share: each server under test runs
//! as a child process of the bench (the bench binary started again with
//! `MCP_LOAD_SERVE=ours|rmcp`), so that its resident memory, read from
//! /proc, is the server's alone; and rmcp's streamable HTTP client opening,
//! using and closing sessions against it.
//!
//! Needs `#[path = "support/add.rs"] mod add;` at the bench's root.
// Each bench uses only some of these.
#![allow(dead_code)]

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use toolcall::mcp::HttpOptions;

use crate::add;

/// Set in a child's environment to make it the server named by its value.
const SERVE: &str = "MCP_LOAD_SERVE";

/// Our server's session and connection caps in these benches, raised from
/// the defaults (1,024 sessions, 512 connections): rmcp's client keeps a
/// GET event stream open per session, so 2,000 sessions hold 2,000
/// connections, and plain rmcp on `axum::serve` has no cap at all.
pub(crate) const CAP: usize = 10_000;

/// How long opening or closing a batch of sessions may take.
const DEADLINE: Duration = Duration::from_secs(180);

/// The two servers of the same `add` tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Server {
    /// Our bridge on our HTTP server (`HttpOptions::bind`), caps raised to [`CAP`].
    Ours,
    /// A plain rmcp `#[tool_router]` server on rmcp's `StreamableHttpService`
    /// and `axum::serve`, as rmcp's examples serve it.
    Rmcp,
}

impl Server {
    pub(crate) const BOTH: [Server; 2] = [Server::Ours, Server::Rmcp];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Server::Ours => "tools (HttpOptions::bind)",
            Server::Rmcp => "plain rmcp (axum::serve)",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Server::Ours => "ours",
            Server::Rmcp => "rmcp",
        }
    }
}

/// If this process was started as a server, serve until the bench closes
/// its stdin (or dies), then exit; otherwise return at once. First thing
/// in the bench's `main`. With `heap` (a bench's counting allocator), each
/// line the bench writes to the server's stdin is answered with a line
/// giving the bytes live on its heap ([`Child::heap`]).
pub(crate) fn serve_if_asked(heap: Option<fn() -> usize>) {
    let Ok(which) = std::env::var(SERVE) else { return };
    // As `#[tokio::main]` would: a worker a core.
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let url = match which.as_str() {
            "ours" => {
                let options = HttpOptions::new()
                    .with_stop_on_ctrl_c(false)
                    .with_max_sessions(CAP)
                    .with_max_connections(CAP);
                add::serve_with_options(options).await
            }
            "rmcp" => add::serve_with_rmcp(add::Plain).await,
            other => panic!("{SERVE}={other}: expected `ours` or `rmcp`"),
        };
        println!("{url}");
        let _ = tokio::task::spawn_blocking(move || {
            for _ in std::io::stdin().lines().map_while(Result::ok) {
                println!("{}", heap.map_or(0, |live| live()));
            }
        })
        .await;
    });
    std::process::exit(0);
}

/// A server under test, running as a child process; killed when dropped.
pub(crate) struct Child {
    pub server: Server,
    pub url: String,
    pid: u32,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    _process: tokio::process::Child,
}

/// A process's resident memory, in KiB.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Memory {
    /// Resident now (`VmRSS`).
    pub rss: u64,
    /// The peak resident size so far (`VmHWM`).
    pub peak: u64,
}

impl Child {
    /// Start `server` as a child of this bench and wait for its URL.
    pub(crate) async fn spawn(server: Server) -> Self {
        let exe = std::env::current_exe().expect("the bench's own executable");
        let mut process = tokio::process::Command::new(exe)
            .env(SERVE, server.key())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("the server starts");
        let pid = process.id().expect("a running child has a pid");
        let stdin = process.stdin.take().expect("its stdin");
        let mut stdout = tokio::io::BufReader::new(process.stdout.take().expect("its stdout")).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), stdout.next_line()).await;
        let url = line.expect("the server prints its URL within 30 s").ok().flatten().expect("a URL");
        Self { server, url, pid, stdin, stdout, _process: process }
    }

    /// The bytes live on its heap, from its bench's counting allocator
    /// (0 where the bench has none).
    pub(crate) async fn heap(&mut self) -> u64 {
        self.stdin.write_all(b"heap\n").await.expect("the server reads its stdin");
        self.stdin.flush().await.expect("the server reads its stdin");
        let line = self.stdout.next_line().await.ok().flatten().expect("the server answers");
        line.trim().parse().expect("a number of bytes")
    }

    /// Its resident memory now, and its peak so far.
    pub(crate) fn memory(&self) -> Memory {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid)).expect("/proc/<pid>/status");
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        Memory { rss: field("VmRSS:"), peak: field("VmHWM:") }
    }

    /// Its resident memory once it has stopped moving: read every 250 ms
    /// until two reads agree (at most 5 s), so that the event streams
    /// opened after each `initialize` are counted.
    pub(crate) async fn settled_memory(&self) -> Memory {
        let mut last = self.memory();
        for _ in 0..20 {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let now = self.memory();
            if now.rss == last.rss {
                return now;
            }
            last = now;
        }
        last
    }

    /// Its open file descriptors: its listener and its connections, mostly.
    pub(crate) fn descriptors(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid)).map(|dir| dir.count()).unwrap_or(0)
    }

    /// Wait (at most 15 s) until it holds `descriptors` file descriptors or
    /// more: each open session's event stream is a connection, opened by
    /// the client after its `initialize` is answered, and a connection
    /// refused by a full listen backlog is retried seconds later. Then its
    /// [`Self::settled_memory`].
    pub(crate) async fn memory_holding(&self, descriptors: usize) -> Memory {
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.descriptors() < descriptors && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        if self.descriptors() < descriptors {
            eprintln!(
                "{}: {} descriptors, not {descriptors}, after 15 s",
                self.server.name(),
                self.descriptors()
            );
        }
        self.settled_memory().await
    }

    /// Open a session, call `add` once and close it: the server's lazily
    /// made state (its runtime's threads, the tool's schema, the first
    /// buffers) is then there before anything is measured.
    pub(crate) async fn warm_up(&self) {
        let session = open(&self.url).await;
        call(&session).await;
        close(vec![session]).await;
    }
}

/// A client's session: rmcp's client on its streamable HTTP transport.
pub(crate) type Session = RunningService<RoleClient, ()>;

/// Open a session (`initialize`, `notifications/initialized`; the client
/// then opens its GET event stream).
pub(crate) async fn open(url: &str) -> Session {
    match ().serve(StreamableHttpClientTransport::from_uri(url)).await {
        Ok(session) => session,
        Err(error) => panic!("a session did not open on {url}: {error}"),
    }
}

/// Open `n` sessions at once, each on its own task; the time taken.
pub(crate) async fn open_many(url: &str, n: usize) -> (Vec<Session>, Duration) {
    let started = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let url = url.to_owned();
            tokio::spawn(async move { open(&url).await })
        })
        .collect();
    let opened = tokio::time::timeout(DEADLINE, futures::future::join_all(tasks))
        .await
        .unwrap_or_else(|_| panic!("{n} sessions did not open within {DEADLINE:?}"));
    let sessions = opened.into_iter().map(|task| task.expect("opening a session panicked")).collect();
    (sessions, started.elapsed())
}

/// Close the sessions, all at once (each client sends its DELETE).
pub(crate) async fn close(sessions: Vec<Session>) {
    let closing = futures::future::join_all(sessions.into_iter().map(|session| session.cancel()));
    if tokio::time::timeout(DEADLINE, closing).await.is_err() {
        eprintln!("closing the sessions took more than {DEADLINE:?}; carrying on");
    }
}

/// One `add(2, 40)`, checked.
pub(crate) async fn call(session: &Session) {
    let result = session.call_tool(add::request()).await.expect("the call is answered");
    assert_eq!(result.content[0].as_text().map(|t| t.text.as_str()), Some("42"), "{result:?}");
}

/// Loopback sockets in TIME_WAIT, from /proc/net/sockstat. rmcp's client
/// keeps no idle connection (`pool_max_idle_per_host(0)`), so every POST is
/// a new connection, and each leaves a socket in TIME_WAIT for 60 s: a load
/// round leaves some 4,600, and with tens of thousands of them connecting
/// slows down and stalls (SYNs retried a second later).
pub(crate) fn time_wait() -> usize {
    let stats = std::fs::read_to_string("/proc/net/sockstat").unwrap_or_default();
    stats
        .lines()
        .find_map(|line| line.strip_prefix("TCP:"))
        .and_then(|tcp| {
            let fields: Vec<&str> = tcp.split_whitespace().collect();
            fields.windows(2).find(|pair| pair[0] == "tw").and_then(|pair| pair[1].parse().ok())
        })
        .unwrap_or(0)
}

/// Wait (at most 65 s) until fewer than `most` sockets are in TIME_WAIT,
/// so that a round does not pay for the connections of the rounds before.
pub(crate) async fn drain_time_wait(most: usize) {
    let deadline = Instant::now() + Duration::from_secs(65);
    while time_wait() >= most && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The kernel's counts, since boot, of connections dropped because a
/// listener's accept queue was full (`ListenOverflows`) and of SYNs sent
/// again (`TCPSynRetrans`, a second or more later): from /proc/net/netstat.
pub(crate) fn tcp_drops() -> (u64, u64) {
    let stats = std::fs::read_to_string("/proc/net/netstat").unwrap_or_default();
    let mut lines = stats.lines().filter(|line| line.starts_with("TcpExt:"));
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else { return (0, 0) };
    let find = |wanted: &str| {
        names
            .split_whitespace()
            .zip(values.split_whitespace())
            .find(|(name, _)| *name == wanted)
            .and_then(|(_, value)| value.parse().ok())
            .unwrap_or(0)
    };
    (find("ListenOverflows"), find("TCPSynRetrans"))
}

/// KiB as MB, for the tables.
pub(crate) fn mb(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}
