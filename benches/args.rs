//! The argument path of one call (clean, limits, parse, a trivial `run`,
//! the output) for 100 B, 10 KB and 1 MB arguments, clean, fenced and
//! wrapped in prose: a `#[tool]` against plain `serde_json::from_str` plus
//! `to_string`. And `clean_json` alone on 1 MB, in GB/s.
//!
//! `cargo bench --bench args -- --warm-up-time 1 --measurement-time 3`
//! prints criterion's numbers, then the ratios and the cleaner's speed.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use tools::{Tool, ToolContext, clean_json, tool};

mod support;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Note {
    /// A title.
    title: String,
    /// The text: what makes the argument big.
    text: String,
}

/// The logic both sides run: as trivial as it gets.
fn measure(note: &Note) -> usize {
    note.title.len() + note.text.len()
}

/// Counts the characters of a note.
#[tool]
async fn count(req: Note) -> String {
    measure(&req).to_string()
}

/// The baseline: what a hand-rolled tool does with clean input.
fn direct(arguments: &str) -> String {
    match serde_json::from_str::<Note>(arguments) {
        Ok(note) => measure(&note).to_string(),
        Err(err) => err.to_string(),
    }
}

/// A clean argument of about `size` bytes, with escapes in the text as a
/// model's would have.
fn clean(size: usize) -> String {
    let line = "A line of the note, with \\\"quotes\\\" and a tab\\t. ";
    let text = line.repeat(size / line.len() + 1);
    let mut json = format!(r#"{{"title":"note","text":"{text}"}}"#);
    while json.len() > size {
        let cut = json.len() - size;
        let text = &text[..text.len().saturating_sub(cut + 8)];
        // Never end the text inside an escape.
        let text = text.trim_end_matches('\\');
        json = format!(r#"{{"title":"note","text":"{text}"}}"#);
    }
    json
}

const SIZES: [(&str, usize); 3] = [("100B", 100), ("10KB", 10_000), ("1MB", 1_000_000)];

fn shapes(json: &str) -> [(&'static str, String); 3] {
    [
        ("clean", json.to_owned()),
        ("fenced", format!("```json\n{json}\n```")),
        ("prose", format!("Sure! Here are the arguments: {json} Let me know if you need more.")),
    ]
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let ctx = ToolContext::new();
    let mut group = c.benchmark_group("args");
    for (size_name, size) in SIZES {
        let json = clean(size);
        assert_eq!(rt.block_on(Count.call(&ctx, &json)).unwrap(), direct(&json), "both sides agree");
        group.throughput(Throughput::Bytes(json.len() as u64));
        group.bench_function(format!("serde_{size_name}"), |b| b.iter(|| direct(black_box(&json))));
        for (shape, input) in shapes(&json) {
            group.bench_function(format!("tool_{shape}_{size_name}"), |b| {
                b.iter_custom(|iters| support::timed(&rt, iters, || Count.call(&ctx, black_box(&input))))
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("clean_json");
    let json = clean(1_000_000);
    for (shape, input) in shapes(&json) {
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_function(format!("{shape}_1MB"), |b| b.iter(|| clean_json(black_box(&input)).len()));
    }
    group.finish();
}

fn main() {
    let dir = support::run(bench);

    println!(
        "\nsummary of this run (the #[tool] call against serde_json::from_str + to_string on clean input):"
    );
    for (size_name, _) in SIZES {
        let serde = support::estimate_ns(&dir, "args", &format!("serde_{size_name}"));
        for shape in ["clean", "fenced", "prose"] {
            let tool = support::estimate_ns(&dir, "args", &format!("tool_{shape}_{size_name}"));
            if let (Some(serde), Some(tool)) = (serde, tool) {
                println!(
                    "  {size_name:>4} {shape:<6}  serde {serde:>10.0} ns, tool {tool:>10.0} ns: {:.2}x",
                    tool / serde
                );
            }
        }
    }
    let json = clean(1_000_000);
    for (shape, input) in shapes(&json) {
        if let Some(ns) = support::estimate_ns(&dir, "clean_json", &format!("{shape}_1MB")) {
            println!("  clean_json {shape:<6} 1 MB: {:.2} GB/s", input.len() as f64 / ns);
        }
    }
}
