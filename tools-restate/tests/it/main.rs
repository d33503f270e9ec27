//! tools-restate against a real Restate server (the npm package's binary,
//! which `npm ci --prefix tests/restate` installs), started on loopback
//! with a temporary base dir, and worker processes (the `worker` example)
//! that the tests kill and restart.

mod approval;
mod chaos;
mod durable;
mod serve;
mod support;
mod waiting;
