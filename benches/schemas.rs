//! Schemas: generating a request type's schema (schemars, then the
//! validator) against reading the one a tool caches, and each dialect's
//! transform over 1,000 tools, as an export of a large toolset does.
//!
//! `cargo bench --bench schemas -- --warm-up-time 1 --measurement-time 3`
//! prints criterion's numbers, then the ratio and the cost per tool.

use std::hint::black_box;
use std::sync::Arc;

use criterion::Criterion;
use toolcall::provider::Dialect;
use toolcall::{Parameters, Renamed, Tool, tool};

mod support;

/// How to order the results.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Order {
    Newest,
    Relevance,
}

/// A place.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Place {
    /// City name.
    city: String,
    /// ISO country code.
    #[schemars(length(min = 2, max = 2))]
    country: Option<String>,
}

/// A request of the usual richness: nested, optional, constrained, listed
/// (and no open map, which strict dialects refuse).
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct SearchRequest {
    /// What to look for.
    query: String,
    /// Where.
    place: Option<Place>,
    /// At most this many results.
    #[schemars(range(min = 1, max = 50))]
    limit: Option<u8>,
    /// How to order them.
    order: Option<Order>,
    /// Sites to leave out.
    exclude: Vec<String>,
}

/// Searches the catalogue.
#[tool]
async fn search(req: SearchRequest) -> String {
    req.query
}

const TOOLS: usize = 1000;

fn bench(c: &mut Criterion, toolset: &[Renamed<Arc<Search>>]) {
    let mut group = c.benchmark_group("schemas");
    group.bench_function("generate", |b| b.iter(Parameters::of::<SearchRequest>));
    group.bench_function("cached", |b| b.iter(|| black_box(&Search).spec().parameters().len()));
    for dialect in Dialect::ALL {
        group.bench_function(format!("export_{TOOLS}_{}", dialect.name()), |b| {
            b.iter(|| toolset.iter().filter(|tool| dialect.function(*tool).is_ok()).count())
        });
    }
    group.finish();
}

fn main() {
    let tool = Arc::new(Search);
    let toolset: Vec<_> =
        (0..TOOLS).map(|i| Renamed::new(Arc::clone(&tool)).with_name(format!("search_{i}"))).collect();
    for dialect in Dialect::ALL {
        dialect.function(&toolset[0]).unwrap_or_else(|e| panic!("{}: {e}", dialect.name()));
    }
    let dir = support::run(|c| bench(c, &toolset));

    let estimate = |id: &str| support::estimate_ns(&dir, "schemas", id);
    println!("\nsummary of this run:");
    if let (Some(generate), Some(cached)) = (estimate("generate"), estimate("cached")) {
        println!("  schema: generated {generate:.0} ns, cached {cached:.1} ns: {:.0}x", generate / cached);
    }
    for dialect in Dialect::ALL {
        if let Some(ns) = estimate(&format!("export_{TOOLS}_{}", dialect.name())) {
            println!(
                "  {:<24} {TOOLS} tools in {:.2} ms ({:.1} us per tool)",
                dialect.name(),
                ns / 1e6,
                ns / 1e3 / TOOLS as f64
            );
        }
    }
}
