//! tools-restate against a real Restate server (the npm package's binary,
//! which `npm ci --prefix tests/restate` installs), started on loopback
//! with a temporary base dir, and worker processes (the `worker` example)
//! that the tests kill and restart.
//!
//! Like every test that needs a server of its own, those that start Restate
//! are `#[ignore]`d, so `cargo test --workspace` passes on a machine with
//! the Rust toolchain alone (and lists them as ignored, with the reason);
//! `./scripts/test.sh` installs the server and runs them with `--ignored`.

mod approval;
mod chaos;
mod chat;
mod decisions;
mod door;
mod durable;
mod names;
mod nested;
mod parallel;
mod retries;
mod serve;
mod server_kills;
mod status;
mod support;
mod waiting;
