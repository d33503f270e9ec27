//! What the benches share: reading criterion's results back, so a bench
//! can print its ratios, and timing async rounds.
// Each bench uses only some of these.
#![allow(dead_code)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;

/// Run `bench` under criterion, configured from the command line, print
/// criterion's summary, and return where it wrote its results, for
/// [`estimate_ns`].
pub(crate) fn run(bench: impl FnOnce(&mut Criterion)) -> PathBuf {
    let dir = output_directory();
    let mut criterion = Criterion::default().output_directory(&dir).configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    dir
}

/// Where criterion writes its results: `target/criterion`.
fn output_directory() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("criterion")
}

/// Criterion's estimate for one benchmark of this run, in nanoseconds: the
/// slope it prints as the middle value, or the mean where it has no slope.
pub(crate) fn estimate_ns(dir: &Path, group: &str, id: &str) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join(group).join(id).join("new").join("estimates.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value["slope"]["point_estimate"].as_f64().or_else(|| value["mean"]["point_estimate"].as_f64())
}

/// Time `iters` rounds of `round` inside one `block_on`, so the runtime's
/// entry cost is not charged to every iteration.
pub(crate) fn timed<F: Future>(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    round: impl FnMut() -> F,
) -> Duration {
    rt.block_on(rounds(iters, round))
}

async fn rounds<F: Future>(iters: u64, mut round: impl FnMut() -> F) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        black_box(round().await);
    }
    start.elapsed()
}

/// How many times slower `subject` is than `base`: the median of the ratios
/// of batches of each, run alternately, so that the drift of a shared
/// machine (a neighbour's load, the clock) hits both sides alike. Criterion
/// times one side after the other, seconds apart, and on this machine its
/// ratios move by tens of percent from run to run; these move by a few.
pub(crate) fn paired_ratio<A: Future, B: Future>(
    rt: &tokio::runtime::Runtime,
    base: impl FnMut() -> A,
    subject: impl FnMut() -> B,
) -> f64 {
    paired(rt, base, subject).ratio
}

/// What [`paired`] measured: the median ratio, and each side's median time
/// of one round in nanoseconds.
#[allow(dead_code)] // Not every bench reads the times.
pub(crate) struct Paired {
    pub ratio: f64,
    pub base_ns: f64,
    pub subject_ns: f64,
}

/// [`paired_ratio`], with each side's time per round beside the ratio.
pub(crate) fn paired<A: Future, B: Future>(
    rt: &tokio::runtime::Runtime,
    mut base: impl FnMut() -> A,
    mut subject: impl FnMut() -> B,
) -> Paired {
    const PAIRS: usize = 301;
    const BATCH: Duration = Duration::from_millis(2);
    rt.block_on(async {
        let mut iters = 1;
        while iters < 1 << 24 && rounds(iters, &mut base).await < BATCH {
            iters *= 2;
        }
        let (mut ratios, mut bases, mut subjects) = (Vec::new(), Vec::new(), Vec::new());
        for pair in 0..PAIRS {
            // Alternate which side goes first, so neither always runs on
            // caches the other warmed.
            let (b, s) = if pair % 2 == 0 {
                let b = rounds(iters, &mut base).await;
                (b, rounds(iters, &mut subject).await)
            } else {
                let s = rounds(iters, &mut subject).await;
                (rounds(iters, &mut base).await, s)
            };
            ratios.push(s.as_secs_f64() / b.as_secs_f64());
            bases.push(b.as_secs_f64() * 1e9 / iters as f64);
            subjects.push(s.as_secs_f64() * 1e9 / iters as f64);
        }
        let median = |mut values: Vec<f64>| {
            values.sort_by(f64::total_cmp);
            values[PAIRS / 2]
        };
        Paired { ratio: median(ratios), base_ns: median(bases), subject_ns: median(subjects) }
    })
}
