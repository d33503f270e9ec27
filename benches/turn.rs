//! The cost of the turn executor: turns of 1, 8, 64 and 512 trivial calls
//! through `Toolset::run_turn` against the same serde parse and function called
//! directly, in time and in allocations per call.
//!
//! `cargo bench --bench turn -- --warm-up-time 1 --measurement-time 3`
//! prints criterion's numbers, then the ratios, the overhead and the
//! allocations per call.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::Criterion;

mod support;
use toolcall::toolset::Toolset;
use toolcall::{
    JsonObject, Output, OutputFuture, Parameters, Tool, ToolCall, ToolContext, ToolError, ToolSpec, TypedTool,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddRequest {
    a: i64,
    b: i64,
}

/// The tool's logic, shared by every variant.
fn add(req: AddRequest) -> String {
    (req.a + req.b).to_string()
}

/// The trivial tool as a bare `Tool`: exactly the serde parse and the
/// function, so the difference from the direct call is the executor alone.
struct RawAdd(ToolSpec);

impl RawAdd {
    fn new(schema: JsonObject) -> Self {
        Self(ToolSpec::from_parameters("add", "Add two numbers.", Parameters::from_schema(schema)))
    }
}

impl Tool for RawAdd {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn call<'a>(&'a self, _ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(async move {
            let req: AddRequest =
                serde_json::from_str(arguments).map_err(|e| ToolError::invalid_arguments(e.to_string()))?;
            Ok(Output::text(add(req)))
        })
    }
}

/// The same tool on the typed layer, whose adapter also cleans, checks
/// limits and validates: shown for scale, not part of the ratios.
struct TypedAdd;

impl TypedTool for TypedAdd {
    type Request = AddRequest;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<AddRequest>("add", "Add two numbers."));
        &SPEC
    }
    async fn run(&self, _ctx: &ToolContext, req: AddRequest) -> Result<String, ToolError> {
        Ok(add(req))
    }
}

fn direct(arguments: &str) -> String {
    match serde_json::from_str::<AddRequest>(arguments) {
        Ok(req) => add(req),
        Err(err) => err.to_string(),
    }
}

fn calls(n: usize) -> Vec<ToolCall> {
    (0..n).map(|i| ToolCall::new(format!("call_{i}"), "add", format!(r#"{{"a": {i}, "b": 2}}"#))).collect()
}

/// Turn sizes, from one call to a turn far past what a model sends.
const SIZES: [usize; 4] = [1, 8, 64, 512];

/// Counts every allocation, so the summary can give allocations per call.
/// Both sides pay the same relaxed increment per allocation.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations per call of one round of `round` (after a warm-up round).
fn allocations_per_call<F: Future>(
    rt: &tokio::runtime::Runtime,
    calls: usize,
    mut round: impl FnMut() -> F,
) -> f64 {
    rt.block_on(async {
        black_box(round().await);
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        black_box(round().await);
        (ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / calls as f64
    })
}

struct Fixture {
    rt: tokio::runtime::Runtime,
    raw: Toolset,
    typed: Toolset,
    /// `raw` with one layer each: what a layer costs a call.
    layered: Vec<(&'static str, Toolset)>,
    ctx: ToolContext,
}

/// A layer with every step left as it is.
struct Noop;
impl toolcall::toolset::Layer for Noop {}

/// The layers measured, each alone on the trivial tool (which is neither
/// read-only nor idempotent, so the cache passes it through; nothing fails,
/// so retry and repair only look).
fn layered(schema: &JsonObject) -> Vec<(&'static str, Toolset)> {
    use toolcall::layers::{Cache, ConcurrencyLimit, Guardrail, RepairArguments, Rerun};
    let with = |layer: Box<dyn FnOnce(Toolset) -> Toolset>| {
        layer(Toolset::builder().add(RawAdd::new(schema.clone())).build().unwrap())
    };
    vec![
        ("noop", with(Box::new(|t| t.with_layer(Noop)))),
        ("retry", with(Box::new(|t| t.with_layer(Rerun::new(3))))),
        ("concurrency_limit", with(Box::new(|t| t.with_layer(ConcurrencyLimit::new(1_000))))),
        ("cache", with(Box::new(|t| t.with_layer(Cache::new(1_000, std::time::Duration::from_secs(60)))))),
        ("repair", with(Box::new(|t| t.with_layer(RepairArguments::new(|_| Box::pin(async { None })))))),
        ("guardrail", with(Box::new(|t| t.with_layer(Guardrail::new(|_, _| Ok(())))))),
    ]
}

impl Fixture {
    fn new() -> Self {
        let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
        Self {
            rt: tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap(),
            raw: Toolset::builder().add(RawAdd::new(schema.as_object().unwrap().clone())).build().unwrap(),
            typed: Toolset::builder().add(TypedAdd).build().unwrap(),
            layered: layered(schema.as_object().unwrap()),
            ctx: ToolContext::new(),
        }
    }
}

async fn direct_all(calls: &[ToolCall]) -> Vec<String> {
    calls.iter().map(|call| direct(black_box(&call.arguments))).collect()
}

/// The typed tool's calls by hand, one after the other: its whole adapter
/// (clean, limits, parse) and no executor, the baseline of a `#[tool]`'s turn.
async fn typed_all(ctx: &ToolContext, calls: &[ToolCall]) -> Vec<String> {
    let mut out = Vec::with_capacity(calls.len());
    for call in calls {
        out.push(
            TypedAdd.call_typed(ctx, black_box(&call.arguments)).await.unwrap_or_else(|e| e.to_string()),
        );
    }
    out
}

fn bench(c: &mut Criterion, f: &Fixture) {
    let (rt, raw, typed, ctx) = (&f.rt, &f.raw, &f.typed, &f.ctx);
    let one = calls(1);

    let mut group = c.benchmark_group("turn");
    let raw_tool = raw.get("add").unwrap();
    group.bench_function("tool_call_1", |b| {
        b.iter_custom(|iters| support::timed(rt, iters, || raw_tool.call(ctx, black_box(&one[0].arguments))))
    });
    group.bench_function("typed_run_1", |b| {
        b.iter_custom(|iters| support::timed(rt, iters, || typed.run_turn(ctx, black_box(&one))))
    });
    for n in SIZES {
        let turn = calls(n);
        group.bench_function(format!("direct_{n}"), |b| {
            b.iter_custom(|iters| support::timed(rt, iters, || direct_all(&turn)))
        });
        group.bench_function(format!("run_{n}"), |b| {
            b.iter_custom(|iters| support::timed(rt, iters, || raw.run_turn(ctx, black_box(&turn))))
        });
    }
    let turn = calls(LAYERED);
    for (name, tools) in &f.layered {
        group.bench_function(format!("layer_{name}_{LAYERED}"), |b| {
            b.iter_custom(|iters| support::timed(rt, iters, || tools.run_turn(ctx, black_box(&turn))))
        });
    }
    group.finish();
}

/// The turn size the layers are measured at.
const LAYERED: usize = 8;

fn main() {
    let fixture = Fixture::new();
    let dir = support::run(|c| bench(c, &fixture));

    let estimate = |id: &str| support::estimate_ns(&dir, "turn", id);
    println!(
        "\nsummary of this run (a trivial tool: through Toolset::run_turn against the same parse and fn called directly):"
    );
    for n in SIZES {
        let turn = calls(n);
        let allocs_direct = allocations_per_call(&fixture.rt, n, || direct_all(&turn));
        let allocs_run = allocations_per_call(&fixture.rt, n, || fixture.raw.run_turn(&fixture.ctx, &turn));
        // Paired, not criterion's estimates: those of the same code moved
        // by 2x between runs here.
        let paired =
            support::paired(&fixture.rt, || direct_all(&turn), || fixture.raw.run_turn(&fixture.ctx, &turn));
        println!(
            "  {n:>3} call(s), paired: direct {:>9.0} ns, run {:>9.0} ns: ratio {:.2}x, overhead {:.0} ns/call; \
             allocations per call {allocs_direct:.1} direct, {allocs_run:.1} run",
            paired.base_ns,
            paired.subject_ns,
            paired.ratio,
            (paired.subject_ns - paired.base_ns) / n as f64,
        );
    }
    for n in [64, 512] {
        let turn = calls(n);
        let allocs_by_hand = allocations_per_call(&fixture.rt, n, || typed_all(&fixture.ctx, &turn));
        let allocs_run = allocations_per_call(&fixture.rt, n, || fixture.typed.run_turn(&fixture.ctx, &turn));
        let paired = support::paired(
            &fixture.rt,
            || typed_all(&fixture.ctx, &turn),
            || fixture.typed.run_turn(&fixture.ctx, &turn),
        );
        println!(
            "  {n:>3} call(s) of a TypedTool (one box a call), paired: call_typed by hand {:>9.0} ns, run {:>9.0} ns: \
             ratio {:.2}x, overhead {:.0} ns/call; allocations per call {allocs_by_hand:.1} by hand, {allocs_run:.1} run",
            paired.base_ns,
            paired.subject_ns,
            paired.ratio,
            (paired.subject_ns - paired.base_ns) / n as f64,
        );
    }
    if let Some(bare) = estimate(&format!("run_{LAYERED}")) {
        for (name, _) in &fixture.layered {
            if let Some(layered) = estimate(&format!("layer_{name}_{LAYERED}")) {
                println!(
                    "  one layer, {name:>17}: {:.2}x run without layers, {:+.0} ns/call",
                    layered / bare,
                    (layered - bare) / LAYERED as f64
                );
            }
        }
    }
    if let (Some(direct), Some(call), Some(typed)) =
        (estimate("direct_1"), estimate("tool_call_1"), estimate("typed_run_1"))
    {
        println!("  the bare Tool::call, no executor: {call:.0} ns ({:.2}x direct)", call / direct);
        println!(
            "  the typed adapter (clean, limits, parse) through run: {typed:.0} ns ({:.2}x direct)",
            typed / direct
        );
    }
}
