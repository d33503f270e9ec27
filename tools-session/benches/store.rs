//! What a session store costs per run of an agent: `load` of a whole
//! conversation and `append` of one run's four messages (the user's
//! question, the assistant's text with a tool call, a tool result of about
//! 1 KB, the answer) to conversations of 10, 1,000 and 100,000 messages
//! already stored, in the memory store (the baseline), in SQLite (a file in
//! a temporary directory) and in PostgreSQL (when `TOOLS_TEST_POSTGRES_URL`
//! names a server and the bench is built with the `postgres` feature;
//! otherwise one line says why its rows were not run), side by side in one
//! run. Each conversation is filled once per size, in appends of 1,000
//! messages, and the fill is timed. Appends grow the conversation: past a
//! tenth of its size (40 messages at least) it is cut back to its size,
//! outside the timed appends, by an append that keeps only the first ones
//! (`Append::keep`). At the end the medians, and each store's ratio to the
//! memory store's, print as a table.
//!
//! ```sh
//! url=$(scripts/postgres.sh start /tmp/pgbench | tail -n1)
//! TOOLS_TEST_POSTGRES_URL=$url cargo bench -p toolcall-session --bench store --features postgres
//! scripts/postgres.sh stop /tmp/pgbench
//! ```

use std::cell::Cell;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode};
use serde_json::json;
use toolcall_agent::{Content, Message};
use toolcall_core::{Outcome, ToolCall, ToolResult};
use toolcall_session::{Append, ConversationKey, MemoryStore, SessionStore, SqlStore};

/// The conversations' sizes, in messages already stored.
const SIZES: [usize; 3] = [10, 1_000, 100_000];

/// How many messages one append of the fill writes.
const FILL_CHUNK: usize = 1_000;

/// The messages of one run.
const RUN: usize = 4;

/// The environment variable naming a PostgreSQL server (the tests' own).
const POSTGRES_URL: &str = "TOOLS_TEST_POSTGRES_URL";

/// The `n`th run: a question, a call to look the order up, its result
/// (an order as JSON, about 1 KB), the answer.
fn run(n: usize) -> [Message; RUN] {
    let order = 10_000 + n;
    let id = format!("call_{n:06}");
    let items: Vec<_> = (0..4)
        .map(|i| {
            json!({"sku": format!("SKU-{:05}", (n * 7 + i) % 100_000), "title": "Stainless steel water bottle, 750 ml",
                   "quantity": i + 1, "unit_price": {"amount": "24.90", "currency": "EUR"}, "status": "shipped"})
        })
        .collect();
    let result = json!({
        "order": order, "customer": "c-48213", "placed_at": "2026-11-28T09:14:03Z", "status": "in_transit",
        "items": items,
        "shipments": [{"carrier": "DHL", "tracking": format!("JD0146000{order}"), "last_event": "Arrived at the sorting centre in Leipzig", "at": "2026-12-01T17:40:12Z"}],
        "total": {"amount": "248.00", "currency": "EUR"}
    });
    [
        Message::user(format!(
            "Where is my order #{order}? It was due on Monday and the tracking page has not changed since."
        )),
        Message::Assistant {
            content: vec![
                Content::text("Let me look that order up."),
                Content::Call(ToolCall::new(
                    id.clone(),
                    "find_order",
                    format!(r#"{{"order":{order},"include":["items","shipments"]}}"#),
                )),
            ],
        },
        Message::Tool {
            results: vec![ToolResult::new(id, "find_order", result.to_string(), Outcome::Success)],
        },
        Message::assistant(
            format!(
                "Your order #{order} is on its way: DHL has it at the sorting centre in Leipzig since 1 December, \
                 so it should reach you in one or two working days. The tracking number is JD0146000{order}."
            ),
            [],
        ),
    ]
}

/// A store under test.
struct Subject {
    name: &'static str,
    store: Box<dyn SessionStore>,
}

/// One conversation of a store, filled to `size` messages, and where the
/// timed appends have taken it.
struct Filled<'a> {
    store: &'a dyn SessionStore,
    key: ConversationKey,
    size: usize,
    revision: Cell<u64>,
    messages: Cell<usize>,
}

impl<'a> Filled<'a> {
    /// Fill a new conversation of `store` with `messages`, in appends of
    /// [`FILL_CHUNK`]; the conversation and how long that took.
    async fn new(
        store: &'a dyn SessionStore,
        key: ConversationKey,
        messages: &[Message],
    ) -> (Self, Duration) {
        let start = Instant::now();
        let mut revision = 0;
        for chunk in messages.chunks(FILL_CHUNK) {
            let append = Append::new(revision, chunk.to_vec());
            revision = store.append(&key, append).await.expect("the fill appends");
        }
        let took = start.elapsed();
        let filled = Self {
            store,
            key,
            size: messages.len(),
            revision: Cell::new(revision),
            messages: Cell::new(messages.len()),
        };
        (filled, took)
    }

    /// How many messages the timed appends may add before the
    /// conversation is cut back to its size.
    fn growth(&self) -> usize {
        (self.size / 10).max(40)
    }

    /// Time `iters` appends of `run`, the conversation cut back (untimed)
    /// whenever it has grown by [`Filled::growth`].
    async fn appends(&self, iters: u64, run: &[Message]) -> Duration {
        let mut elapsed = Duration::ZERO;
        let mut left = iters;
        while left > 0 {
            let room = ((self.size + self.growth()).saturating_sub(self.messages.get()) / run.len()) as u64;
            if room == 0 {
                self.cut_back().await;
                continue;
            }
            let batch = left.min(room);
            let first = self.revision.get();
            // The messages are the caller's to give: made before the clock starts.
            let appends: Vec<Append> = (0..batch).map(|i| Append::new(first + i, run.to_vec())).collect();
            let start = Instant::now();
            let mut revision = first;
            for append in appends {
                revision = black_box(self.store.append(&self.key, append).await.expect("an append"));
            }
            elapsed += start.elapsed();
            self.revision.set(revision);
            self.messages.set(self.messages.get() + batch as usize * run.len());
            left -= batch;
        }
        elapsed
    }

    /// Drop the messages the timed appends added.
    async fn cut_back(&self) {
        let append = Append { keep: Some(self.size as u64), ..Append::new(self.revision.get(), vec![]) };
        self.revision.set(self.store.append(&self.key, append).await.expect("the cut"));
        self.messages.set(self.size);
    }
}

/// The PostgreSQL store, or why there is none.
#[cfg(feature = "postgres")]
async fn postgres() -> Result<SqlStore, String> {
    let Ok(url) = std::env::var(POSTGRES_URL) else {
        return Err(format!(
            "{POSTGRES_URL} is not set (start a server with `scripts/postgres.sh start DIR` and set it to the URL \
             it prints)"
        ));
    };
    SqlStore::postgres(&url).await.map_err(|error| error.to_string())
}

#[cfg(not(feature = "postgres"))]
async fn postgres() -> Result<SqlStore, String> {
    Err(match std::env::var_os(POSTGRES_URL) {
        Some(_) => format!(
            "{POSTGRES_URL} is set, but the bench was built without the `postgres` feature (add `--features postgres`)"
        ),
        None => format!("{POSTGRES_URL} is not set, and the bench was built without the `postgres` feature"),
    })
}

/// Where criterion writes its results: the workspace's `target/criterion`.
fn output_directory() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("target"))
        .join("criterion")
}

/// Criterion's median time of one iteration, in nanoseconds.
fn median_ns(dir: &Path, group: &str, store: &str, size: usize) -> Option<f64> {
    let path = dir.join(group).join(store).join(size.to_string()).join("new").join("estimates.json");
    let value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    value["median"]["point_estimate"].as_f64()
}

fn duration(ns: f64) -> String {
    match ns {
        ns if ns >= 1e9 => format!("{:.2} s", ns / 1e9),
        ns if ns >= 1e6 => format!("{:.2} ms", ns / 1e6),
        ns if ns >= 1e3 => format!("{:.1} µs", ns / 1e3),
        ns => format!("{ns:.0} ns"),
    }
}

fn ratio(ratio: f64) -> String {
    if ratio >= 10.0 { format!("{ratio:.0}x") } else { format!("{ratio:.1}x") }
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut subjects = vec![
        Subject { name: "memory", store: Box::new(MemoryStore::new(16)) },
        Subject {
            name: "sqlite",
            store: Box::new(
                rt.block_on(SqlStore::sqlite(dir.path().join("sessions.db"))).expect("a SQLite store"),
            ),
        },
    ];
    match rt.block_on(postgres()) {
        Ok(store) => subjects.push(Subject { name: "postgres", store: Box::new(store) }),
        Err(why) => println!("PostgreSQL rows not run: {why}."),
    }

    let largest = SIZES.iter().max().copied().unwrap_or(0);
    let all: Vec<Message> = (0..largest.div_ceil(RUN)).flat_map(run).take(largest).collect();
    // The timed appends add the run after the largest fill's last.
    let timed_run = run(largest.div_ceil(RUN)).to_vec();
    let bytes = serde_json::to_string(&timed_run).map_or(0, |text| text.len());
    let result_bytes = match &timed_run[2] {
        Message::Tool { results } => results[0].content.len(),
        _ => 0,
    };
    println!(
        "one run: {RUN} messages, {bytes} bytes of JSON, the tool result's content {result_bytes} bytes"
    );
    // The PostgreSQL database outlives the run: an owner of this run alone.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let owner = format!("bench-{nanos}");

    let out = output_directory();
    let mut criterion = Criterion::default().output_directory(&out).configure_from_args();
    for size in SIZES {
        let mut filled = Vec::new();
        for subject in &subjects {
            let key = ConversationKey::new(owner.clone(), format!("conversation-{size}"));
            let (conversation, took) = rt.block_on(Filled::new(subject.store.as_ref(), key, &all[..size]));
            println!(
                "fill: {} messages into {} in {} appends: {:.2} s",
                thousands(size),
                subject.name,
                size.div_ceil(FILL_CHUNK),
                took.as_secs_f64()
            );
            let loaded = rt
                .block_on(subject.store.load(&conversation.key))
                .expect("a load")
                .expect("the conversation");
            assert_eq!(loaded.messages.len(), size, "{} holds the whole conversation", subject.name);
            filled.push((subject.name, conversation));
        }
        let configure = |group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>| {
            if size >= 100_000 {
                group
                    .sampling_mode(SamplingMode::Flat)
                    .sample_size(10)
                    .measurement_time(Duration::from_secs(3));
            } else {
                group.sample_size(20).measurement_time(Duration::from_secs(2));
            }
            group.warm_up_time(Duration::from_secs(1));
        };
        let mut group = criterion.benchmark_group("load");
        configure(&mut group);
        for (name, conversation) in &filled {
            group.bench_function(BenchmarkId::new(*name, size), |b| {
                b.to_async(&rt).iter(|| conversation.store.load(&conversation.key));
            });
        }
        group.finish();
        let mut group = criterion.benchmark_group("append");
        configure(&mut group);
        for (name, conversation) in &filled {
            group.bench_function(BenchmarkId::new(*name, size), |b| {
                b.to_async(&rt).iter_custom(|iters| conversation.appends(iters, &timed_run));
            });
        }
        group.finish();
        for (_, conversation) in &filled {
            rt.block_on(conversation.store.delete(&conversation.key)).expect("the conversation deleted");
        }
    }
    criterion.final_summary();

    println!();
    println!("medians, and each store's ratio to the memory store's:");
    let stores: Vec<&str> = subjects.iter().map(|subject| subject.name).collect();
    println!("| operation | messages stored | {} |", stores.join(" | "));
    println!("|---|---:|{}", "---:|".repeat(stores.len()));
    for group in ["load", "append"] {
        for size in SIZES {
            let base = median_ns(&out, group, "memory", size);
            let cells: Vec<String> = stores
                .iter()
                .map(|store| match (median_ns(&out, group, store, size), base) {
                    (Some(ns), _) if *store == "memory" => duration(ns),
                    (Some(ns), Some(base)) => format!("{} ({})", duration(ns), ratio(ns / base)),
                    (Some(ns), None) => duration(ns),
                    (None, _) => "-".to_owned(),
                })
                .collect();
            println!("| {group} | {} | {} |", thousands(size), cells.join(" | "));
        }
    }
}
