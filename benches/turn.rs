//! The cost of the turn executor: one trivial call through `Toolset::run`
//! against the same serde parse and function called directly, and a 64-call
//! turn against 64 direct calls.
//!
//! `cargo bench --bench turn -- --warm-up-time 1 --measurement-time 3`
//! prints criterion's numbers, then the ratios and the overhead per call.

use std::hint::black_box;
use std::sync::LazyLock;

use criterion::Criterion;

mod support;
use tools::toolset::Toolset;
use tools::{JsonObject, Tool, ToolCall, ToolContext, ToolError, ToolFuture, ToolSpec, TypedTool};

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
struct RawAdd(JsonObject);

impl Tool for RawAdd {
    fn name(&self) -> &str {
        "add"
    }
    fn description(&self) -> &str {
        "Add two numbers."
    }
    fn parameters(&self) -> &JsonObject {
        &self.0
    }
    fn call<'a>(&'a self, _ctx: &'a ToolContext, input: &'a str) -> ToolFuture<'a> {
        Box::pin(async move {
            let req: AddRequest =
                serde_json::from_str(input).map_err(|e| ToolError::invalid_arguments(e.to_string()))?;
            Ok(add(req))
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

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let schema = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
    let raw = Toolset::new().with(RawAdd(schema.as_object().unwrap().clone())).unwrap();
    let typed = Toolset::new().with(TypedAdd).unwrap();
    let ctx = ToolContext::new();
    let one = calls(1);
    let many = calls(64);

    let mut group = c.benchmark_group("turn");
    group.bench_function("direct_1", |b| {
        b.iter_custom(|iters| support::timed(&rt, iters, || async { direct(black_box(&one[0].arguments)) }))
    });
    let raw_tool = raw.get("add").unwrap();
    group.bench_function("tool_call_1", |b| {
        b.iter_custom(|iters| {
            support::timed(&rt, iters, || raw_tool.call(&ctx, black_box(&one[0].arguments)))
        })
    });
    group.bench_function("run_1", |b| {
        b.iter_custom(|iters| support::timed(&rt, iters, || raw.run(&ctx, black_box(&one))))
    });
    group.bench_function("typed_run_1", |b| {
        b.iter_custom(|iters| support::timed(&rt, iters, || typed.run(&ctx, black_box(&one))))
    });
    group.bench_function("direct_64", |b| {
        b.iter_custom(|iters| {
            support::timed(&rt, iters, || async {
                many.iter().map(|call| direct(black_box(&call.arguments))).collect::<Vec<_>>()
            })
        })
    });
    group.bench_function("run_64", |b| {
        b.iter_custom(|iters| support::timed(&rt, iters, || raw.run(&ctx, black_box(&many))))
    });
    group.finish();
}

fn main() {
    let dir = support::output_directory();
    let mut criterion = Criterion::default().output_directory(&dir).configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();

    let ids = ["direct_1", "tool_call_1", "run_1", "typed_run_1", "direct_64", "run_64"];
    let means: Vec<Option<f64>> = ids.iter().map(|id| support::estimate_ns(&dir, "turn", id)).collect();
    if let [Some(d1), Some(c1), Some(r1), Some(t1), Some(d64), Some(r64)] = means[..] {
        println!("\nsummary of this run:");
        println!(
            "  one call:  direct {d1:.0} ns, run {r1:.0} ns: ratio {:.2}x, overhead {:.0} ns",
            r1 / d1,
            r1 - d1
        );
        println!("             the bare Tool::call, no executor: {c1:.0} ns ({:.2}x direct)", c1 / d1);
        println!("             typed adapter through run {t1:.0} ns ({:.2}x direct)", t1 / d1);
        println!(
            "  64 calls:  direct {d64:.0} ns, run {r64:.0} ns: ratio {:.2}x, overhead {:.0} ns/call ({:.0} ns/call in all)",
            r64 / d64,
            (r64 - d64) / 64.0,
            r64 / 64.0
        );
    }
}
