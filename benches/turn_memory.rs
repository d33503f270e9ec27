//! Memory per call of one turn as the turn grows: one `Toolset::run_turn` of
//! 1,000, 5,000 and 10,000 calls against the same tool's calls joined by
//! hand (`join_all` of the bare `Tool::call` futures, no executor), counted
//! by a counting global allocator: bytes allocated, the peak of live bytes
//! above what was live before the turn, and the bytes the results keep.
//!
//! Two tools: `add`, a `#[tool]` that returns when first polled, and
//! `gather`, which waits until every call of the turn has started, so that
//! all of them are in flight at once (a turn of slow tools).
//!
//! Run by hand, not in CI:
//!
//! ```sh
//! cargo bench --bench turn_memory
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use tokio::sync::Barrier;
use toolcall::toolset::Toolset;
use toolcall::{Tool, ToolCall, ToolContext, ToolError, ToolSpec, TypedTool, tool};

/// The turn sizes.
const SIZES: [usize; 3] = [1_000, 5_000, 10_000];

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddRequest {
    a: i64,
    b: i64,
}

/// Add two numbers.
#[tool(name = "add")]
async fn add(_ctx: &ToolContext, req: AddRequest) -> Result<i64, ToolError> {
    Ok(req.a + req.b)
}

/// The same sum, once every call of the turn has started.
struct Gather(Arc<Barrier>);

impl TypedTool for Gather {
    type Request = AddRequest;
    type Output = i64;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<AddRequest>("add", "Add two numbers, with the others."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: AddRequest) -> Result<i64, ToolError> {
        self.0.wait().await;
        Ok(req.a + req.b)
    }
}

/// Counts allocations, the bytes allocated, and the live bytes with their
/// peak. A `realloc` counts as an allocation of its new size.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grown(by: usize) {
    let live = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is passed to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED.fetch_add(layout.size(), Ordering::Relaxed);
        grown(layout.size());
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED.fetch_add(new_size, Ordering::Relaxed);
        if new_size >= layout.size() {
            grown(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What one turn cost, per call.
#[derive(Clone, Copy, Default)]
struct Usage {
    allocations: f64,
    allocated: f64,
    /// Peak live bytes above those live before the turn.
    peak: f64,
    /// Live bytes after the turn, above those before: the results.
    kept: f64,
}

/// One round of `round` measured (after a warm-up round), per call.
fn measure<F: Future>(rt: &tokio::runtime::Runtime, calls: usize, mut round: impl FnMut() -> F) -> Usage {
    rt.block_on(async {
        drop(black_box(round().await));
        let allocations = ALLOCATIONS.load(Ordering::Relaxed);
        let allocated = ALLOCATED.load(Ordering::Relaxed);
        let live = LIVE.load(Ordering::Relaxed);
        PEAK.store(live, Ordering::Relaxed);
        let output = black_box(round().await);
        let kept = LIVE.load(Ordering::Relaxed).saturating_sub(live);
        let per_call = |n: usize| n as f64 / calls as f64;
        let usage = Usage {
            allocations: per_call(ALLOCATIONS.load(Ordering::Relaxed) - allocations),
            allocated: per_call(ALLOCATED.load(Ordering::Relaxed) - allocated),
            peak: per_call(PEAK.load(Ordering::Relaxed).saturating_sub(live)),
            kept: per_call(kept),
        };
        drop(output);
        usage
    })
}

fn calls(n: usize) -> Vec<ToolCall> {
    (0..n).map(|i| ToolCall::new(format!("call_{i}"), "add", format!(r#"{{"a": {i}, "b": 2}}"#))).collect()
}

/// The turn through the executor, and the same calls joined by hand.
fn both(rt: &tokio::runtime::Runtime, tools: &Toolset, n: usize) -> (Usage, Usage) {
    let turn = calls(n);
    let ctx = ToolContext::new();
    let tool = tools.get("add").expect("registered");
    let bare = measure(rt, n, || {
        futures::future::join_all(turn.iter().map(|call| tool.call(&ctx, &call.arguments)))
    });
    let run = measure(rt, n, || tools.run_turn(&ctx, &turn));
    (bare, run)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let adding = Toolset::builder().add(Add).build().unwrap();
    let mut rows = Vec::new();
    for n in SIZES {
        let gathering = Toolset::builder().add(Gather(Arc::new(Barrier::new(n)))).build().unwrap();
        rows.push(("add", n, both(&rt, &adding, n)));
        rows.push(("gather", n, both(&rt, &gathering, n)));
    }
    rows.sort_by_key(|(tool, n, _)| (*tool, *n));
    println!("\none turn, per call: by hand (join_all of Tool::call) / through Toolset::run_turn");
    println!(
        "  {:<7} {:>6} {:>15} {:>21} {:>19} {:>17}",
        "tool", "calls", "allocations", "bytes allocated", "peak live bytes", "results kept"
    );
    for (tool, n, (bare, run)) in rows {
        println!(
            "  {tool:<7} {n:>6} {:>6.1} / {:<6.1} {:>9.0} / {:<9.0} {:>8.0} / {:<8.0} {:>7.0} / {:<7.0}",
            bare.allocations,
            run.allocations,
            bare.allocated,
            run.allocated,
            bare.peak,
            run.peak,
            bare.kept,
            run.kept
        );
    }
}
