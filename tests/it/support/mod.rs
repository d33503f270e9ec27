//! Helpers shared by the integration tests.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tokio::io::{BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// Build an example and return its executable: the same profile as the
/// test, and the test command's selection and features, so cargo reuses
/// the build it has just made.
pub(crate) fn build_example(name: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--workspace",
            "--all-features",
            "--example",
            name,
            "--message-format=json",
            "--quiet",
        ])
        .arg("--manifest-path")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"));
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "building example {name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo reports the example's executable")
}

/// The example MCP server on stdio, without Tavily's key: the process
/// (killed when dropped), its input, and its output buffered.
// Each test crate uses only some of these helpers.
#[allow(dead_code)]
pub(crate) fn stdio_example() -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = tokio::process::Command::new(build_example("mcp_server"))
        .env_remove("TAVILY_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the example started");
    let stdin = child.stdin.take().expect("its input");
    let stdout = BufReader::new(child.stdout.take().expect("its output"));
    (child, stdin, stdout)
}

/// The next line a server wrote, within 30 s (a guard against a hang, not
/// a timing check).
// Each test crate uses only some of these helpers.
#[allow(dead_code)]
pub(crate) async fn next_line(lines: &mut Lines<BufReader<ChildStdout>>) -> String {
    tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
        .await
        .expect("an answer")
        .expect("read")
        .expect("a line before the end")
}

/// Counts its drops: held by a tool's run, it counts the runs that ended,
/// finished or dropped mid-way.
// Each test crate uses only some of these helpers.
#[allow(dead_code)]
pub(crate) struct CountDrop(pub Arc<AtomicUsize>);

impl Drop for CountDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
