//! Reading criterion's results back, so a bench can print its ratios.

use std::path::{Path, PathBuf};

/// Where criterion writes its results: `target/criterion`.
pub fn output_directory() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join("criterion")
}

/// Criterion's estimate for one benchmark of this run, in nanoseconds: the
/// slope it prints as the middle value, or the mean where it has no slope.
pub fn estimate_ns(dir: &Path, group: &str, id: &str) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join(group).join(id).join("new").join("estimates.json")).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value["slope"]["point_estimate"].as_f64().or_else(|| value["mean"]["point_estimate"].as_f64())
}
