//! MCP over streamable HTTP under load: our server (`HttpOptions::bind`)
//! against a plain rmcp `#[tool_router]` server with the same `add` tool
//! (rmcp's `StreamableHttpService` on `axum::serve`), in the same run, each
//! a child process of the bench so that its memory is its own. rmcp's
//! client on the other side, on loopback.
//!
//! 1. Load: 200 sessions at once, each making 20 `tools/call`s one after
//!    the other: throughput (calls / wall time), p50 and p99 latency of a
//!    call, and the server's peak resident size. A round in which a call
//!    waited a second or more (its connection dropped by a full accept
//!    queue, the SYN sent again) is counted as stalled, and the throughput
//!    of the other rounds given apart. In rounds, alternating
//!    which server goes first; one warm-up round each first (20 sessions).
//!    rmcp's client opens a connection for every POST, so each round waits
//!    until fewer than 15,000 sockets are left in TIME_WAIT by the rounds
//!    before it (at most 65 s).
//! 2. Sessions held: 2,000 sessions opened at once on a fresh child and
//!    kept open: resident size before and after, per session, then closed.
//!
//! Our server's caps are raised for this bench (sessions from 1,024 and
//! connections from 512 to 10,000): rmcp's client holds a GET event stream,
//! so a connection, for each open session.
//!
//! Run by hand, not in CI:
//!
//! ```sh
//! cargo bench --bench mcp_load --features mcp          # 9 load rounds
//! cargo bench --bench mcp_load --features mcp -- 5     # 5 load rounds
//! ```

use std::time::{Duration, Instant};

use load::{Child, Server};

#[path = "support/add.rs"]
mod add;
#[path = "support/load.rs"]
mod load;

/// Sessions making calls at once.
const SESSIONS: usize = 200;
/// Calls each of them makes, one after the other.
const CALLS: usize = 20;
/// Sessions held open at once.
const HELD: usize = 2_000;

/// Each round and each hold waits (at most 65 s) until fewer sockets than
/// this are in TIME_WAIT (see [`load::time_wait`]).
const TIME_WAIT: usize = 15_000;

/// One load round against one server.
struct Round {
    /// Calls per second: every call of every session over the wall time.
    throughput: f64,
    /// Every call's latency, sorted.
    latencies: Vec<Duration>,
    /// Connections dropped by a full accept queue, and SYNs sent again, on
    /// the machine during the round (see [`load::tcp_drops`]).
    drops: (u64, u64),
}

impl Round {
    /// Whether a call waited a second or more: a connection dropped by the
    /// server's full accept queue (a 128-entry backlog, `TcpListener::bind`'s),
    /// its SYN sent again a second later. One such call stretches the
    /// round's wall time by a second.
    fn stalled(&self) -> bool {
        self.percentile(1.0) >= Duration::from_millis(900)
    }

    fn percentile(&self, p: f64) -> Duration {
        let rank = ((self.latencies.len() as f64 * p).ceil() as usize).clamp(1, self.latencies.len());
        self.latencies[rank - 1]
    }
}

/// `sessions` sessions opened (not timed), then all of them making `calls`
/// calls each, one after the other; then closed.
async fn load_round(url: &str, sessions: usize, calls: usize) -> Round {
    let drops = load::tcp_drops();
    let (open, _) = load::open_many(url, sessions).await;
    let open: Vec<_> = open.into_iter().map(std::sync::Arc::new).collect();
    let started = Instant::now();
    let tasks: Vec<_> = open
        .iter()
        .map(|session| {
            let session = std::sync::Arc::clone(session);
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(calls);
                for _ in 0..calls {
                    let call = Instant::now();
                    load::call(&session).await;
                    latencies.push(call.elapsed());
                }
                latencies
            })
        })
        .collect();
    let done = tokio::time::timeout(Duration::from_secs(300), futures::future::join_all(tasks))
        .await
        .expect("the round ends within 5 minutes");
    let wall = started.elapsed();
    let mut latencies: Vec<Duration> =
        done.into_iter().flat_map(|task| task.expect("a session's calls panicked")).collect();
    latencies.sort();
    let open = open.into_iter().map(|session| std::sync::Arc::into_inner(session).expect("its tasks ended"));
    load::close(open.collect()).await;
    let after = load::tcp_drops();
    let drops = (after.0 - drops.0, after.1 - drops.1);
    Round { throughput: latencies.len() as f64 / wall.as_secs_f64(), latencies, drops }
}

/// What holding [`HELD`] sessions costs a fresh server.
struct Held {
    before: load::Memory,
    after: load::Memory,
    closed: load::Memory,
    /// Before, held, after closing.
    descriptors: (usize, usize, usize),
    opening: Duration,
}

impl Held {
    fn per_session_kib(&self) -> f64 {
        (self.after.rss as f64 - self.before.rss as f64) / HELD as f64
    }
}

async fn hold(server: Server) -> Held {
    let child = Child::spawn(server).await;
    child.warm_up().await;
    let before = child.settled_memory().await;
    let fds_before = child.descriptors();
    let (sessions, opening) = load::open_many(&child.url, HELD).await;
    let after = child.memory_holding(fds_before + HELD).await;
    let fds_after = child.descriptors();
    load::close(sessions).await;
    let closed = child.settled_memory().await;
    Held { before, after, closed, descriptors: (fds_before, fds_after, child.descriptors()), opening }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

async fn run(rounds: usize) {
    // 1. Load, on one child per server.
    let children = [Child::spawn(Server::Ours).await, Child::spawn(Server::Rmcp).await];
    for child in &children {
        child.warm_up().await;
        load_round(&child.url, SESSIONS / 10, CALLS).await;
    }
    let mut results: [Vec<Round>; 2] = [Vec::new(), Vec::new()];
    for round in 0..rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            load::drain_time_wait(TIME_WAIT).await;
            let time_wait = load::time_wait();
            let result = load_round(&children[i].url, SESSIONS, CALLS).await;
            eprintln!(
                "round {} of {rounds}, {} (from {time_wait} in TIME_WAIT): {:.0} calls/s, p50 {:.2} ms, \
                 p99 {:.2} ms, max {:.0} ms; accept queue overflows {}, SYNs resent {}",
                round + 1,
                children[i].server.name(),
                result.throughput,
                ms(result.percentile(0.5)),
                ms(result.percentile(0.99)),
                ms(result.percentile(1.0)),
                result.drops.0,
                result.drops.1,
            );
            results[i].push(result);
        }
    }
    let peaks = [children[0].memory(), children[1].memory()];
    drop(children);

    // 2. Sessions held, each server a fresh child.
    let mut held = Vec::new();
    for server in Server::BOTH {
        load::drain_time_wait(TIME_WAIT).await;
        let result = hold(server).await;
        eprintln!(
            "{} sessions held on {}: {:.1} KiB a session",
            HELD,
            server.name(),
            result.per_session_kib()
        );
        held.push(result);
    }

    println!(
        "\n{SESSIONS} sessions at once, {CALLS} sequential tools/call each ({} calls), {rounds} rounds \
         (after a warm-up round of 20 sessions each):",
        SESSIONS * CALLS
    );
    println!(
        "  {:<28} {:>10} {:>10} {:>10} {:>14} {:>14} {:>22}",
        "server", "calls/s", "p50 ms", "p99 ms", "peak RSS MB", "stalled rounds", "calls/s, unstalled"
    );
    let mut all = Vec::new();
    let mut unstalled = Vec::new();
    for (i, server) in Server::BOTH.iter().enumerate() {
        let throughput = median(results[i].iter().map(|r| r.throughput).collect());
        let p50 = median(results[i].iter().map(|r| ms(r.percentile(0.5))).collect());
        let p99 = median(results[i].iter().map(|r| ms(r.percentile(0.99))).collect());
        let clean: Vec<f64> = results[i].iter().filter(|r| !r.stalled()).map(|r| r.throughput).collect();
        let stalled = rounds - clean.len();
        let clean = if clean.is_empty() { f64::NAN } else { median(clean) };
        println!(
            "  {:<28} {throughput:>10.0} {p50:>10.2} {p99:>10.2} {:>14.1} {:>14} {clean:>22.0}",
            server.name(),
            load::mb(peaks[i].peak),
            format!("{stalled} of {rounds}"),
        );
        for (n, r) in results[i].iter().enumerate() {
            println!(
                "    round {}: {:>8.0} calls/s, p50 {:.2} ms, p99 {:.2} ms, max {:.0} ms, SYNs resent {}",
                n + 1,
                r.throughput,
                ms(r.percentile(0.5)),
                ms(r.percentile(0.99)),
                ms(r.percentile(1.0)),
                r.drops.1,
            );
        }
        all.push(throughput);
        unstalled.push(clean);
    }
    let paired =
        median(results[0].iter().zip(&results[1]).map(|(o, r)| o.throughput / r.throughput).collect());
    println!(
        "  throughput tools / plain rmcp: {:.3} (medians), {paired:.3} (median of the rounds' ratios), \
         {:.3} (medians of the unstalled rounds); aim >= 0.95",
        all[0] / all[1],
        unstalled[0] / unstalled[1],
    );

    println!("\n{HELD} sessions opened at once and held, on a fresh server (fds: before > held > closed):");
    println!(
        "  {:<28} {:>11} {:>11} {:>12} {:>12} {:>12} {:>16} {:>10}",
        "server", "RSS before", "RSS held", "KiB/session", "peak RSS", "after close", "fds", "opened in"
    );
    for (held, server) in held.iter().zip(Server::BOTH) {
        let (before, during, after) = held.descriptors;
        println!(
            "  {:<28} {:>8.1} MB {:>8.1} MB {:>12.1} {:>9.1} MB {:>9.1} MB {:>16} {:>8.2} s",
            server.name(),
            load::mb(held.before.rss),
            load::mb(held.after.rss),
            held.per_session_kib(),
            load::mb(held.after.peak),
            load::mb(held.closed.rss),
            format!("{before} > {during} > {after}"),
            held.opening.as_secs_f64(),
        );
    }
    println!(
        "  memory per session tools / plain rmcp: {:.2}; aim <= 1.00",
        held[0].per_session_kib() / held[1].per_session_kib()
    );
}

fn main() {
    load::serve_if_asked(None);
    // `cargo bench` passes `--bench`; the one number is the rounds.
    let rounds = std::env::args().skip(1).find_map(|arg| arg.parse().ok()).unwrap_or(9);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(run(rounds));
}
