//! Memory per MCP session as the sessions grow: our server
//! (`HttpOptions::bind`) against a plain rmcp `#[tool_router]` server with
//! the same `add` tool (rmcp's `StreamableHttpService` on `axum::serve`),
//! each a fresh child process of the bench, its resident size (`VmRSS`)
//! read from /proc, and the bytes live on its heap (a counting global
//! allocator in the child), with 0, 500, 1,000 and 2,000 sessions open. rmcp's
//! client opens the sessions, on loopback, a batch at a time, and keeps
//! them open (each with its GET event stream, so a connection).
//!
//! Our server's caps are raised for this bench (sessions from 1,024 and
//! connections from 512 to 10,000).
//!
//! Run by hand, not in CI:
//!
//! ```sh
//! cargo bench --bench mcp_memory --features mcp        # one fresh child per server
//! cargo bench --bench mcp_memory --features mcp -- 3   # three each, interleaved
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use load::{Child, Server};

#[path = "support/add.rs"]
mod add;
#[path = "support/load.rs"]
mod load;

/// The numbers of sessions open at which the memory is read.
const STEPS: [usize; 3] = [500, 1_000, 2_000];

/// Counts the bytes live on the heap, so that a server can say how much of
/// its resident size its sessions hold, apart from the allocator's own
/// overhead and free pages. Both servers pay the same relaxed add a call.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// One fresh server's memory with no session open (after a warm-up), and
/// above that at each step, in KiB: (resident, live heap).
struct Growth {
    idle_rss: u64,
    idle_heap: u64,
    steps: Vec<(u64, u64)>,
}

async fn grow(server: Server) -> Growth {
    let mut child = Child::spawn(server).await;
    child.warm_up().await;
    let idle = child.settled_memory().await;
    let idle_heap = child.heap().await / 1024;
    let descriptors = child.descriptors();
    let mut sessions = Vec::new();
    let mut steps = Vec::new();
    for step in STEPS {
        let (more, _) = load::open_many(&child.url, step - sessions.len()).await;
        sessions.extend(more);
        let held = child.memory_holding(descriptors + step).await;
        let heap = child.heap().await / 1024;
        eprintln!(
            "{}: {step} sessions, RSS {:.1} MB, heap {:.1} MB, {} descriptors",
            server.name(),
            load::mb(held.rss),
            load::mb(heap),
            child.descriptors()
        );
        steps.push((held.rss.saturating_sub(idle.rss), heap.saturating_sub(idle_heap)));
    }
    load::close(sessions).await;
    Growth { idle_rss: idle.rss, idle_heap, steps }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

async fn run(runs: usize) {
    // rss[server][step], heap[server][step]: KiB a session, one a run.
    let mut rss = vec![vec![Vec::new(); STEPS.len()]; 2];
    let mut heap = vec![vec![Vec::new(); STEPS.len()]; 2];
    let mut idle = [Vec::new(), Vec::new()];
    for run in 0..runs {
        let order = if run % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            // rmcp's client opens a connection for every POST: let those of
            // the run before leave TIME_WAIT (see `load::time_wait`).
            load::drain_time_wait(15_000).await;
            let growth = grow(Server::BOTH[i]).await;
            idle[i].push((load::mb(growth.idle_rss), load::mb(growth.idle_heap)));
            for (s, (step, (r, h))) in STEPS.iter().zip(growth.steps).enumerate() {
                rss[i][s].push(r as f64 / *step as f64);
                heap[i][s].push(h as f64 / *step as f64);
            }
        }
    }
    println!(
        "\nmemory per open session, above the idle server's / sessions, in KiB: resident (VmRSS) and live \
         heap; {runs} fresh child(ren) per server, median:"
    );
    for (i, server) in Server::BOTH.iter().enumerate() {
        let (r, h) = idle[i][0];
        println!("  {} idle (first run): RSS {r:.1} MB, heap {h:.1} MB", server.name());
    }
    println!(
        "  {:>8} {:>10} {:>10} {:>8}   {:>10} {:>10} {:>8}",
        "sessions", "tools RSS", "rmcp RSS", "ratio", "tools heap", "rmcp heap", "ratio"
    );
    for (s, step) in STEPS.iter().enumerate() {
        let (ours, rmcp) = (median(rss[0][s].clone()), median(rss[1][s].clone()));
        let (ours_heap, rmcp_heap) = (median(heap[0][s].clone()), median(heap[1][s].clone()));
        println!(
            "  {step:>8} {ours:>10.1} {rmcp:>10.1} {:>8.2}   {ours_heap:>10.1} {rmcp_heap:>10.1} {:>8.2}",
            ours / rmcp,
            ours_heap / rmcp_heap
        );
    }
    if runs > 1 {
        for (i, server) in Server::BOTH.iter().enumerate() {
            let runs: Vec<String> = rss[i]
                .iter()
                .map(|each| each.iter().map(|kib| format!("{kib:.1}")).collect::<Vec<_>>().join(" / "))
                .collect();
            println!("  {} RSS KiB a session each run, by step: {}", server.name(), runs.join(", "));
        }
    }
}

fn main() {
    load::serve_if_asked(Some(live));
    // `cargo bench` passes `--bench`; the one number is the runs.
    let runs = std::env::args().skip(1).find_map(|arg| arg.parse().ok()).unwrap_or(1);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(run(runs));
}
