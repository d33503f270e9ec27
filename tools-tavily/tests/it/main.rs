//! The integration tests of `tools-tavily`, one binary; but `env.rs` (it
//! changes the process environment) and `logs.rs` (it installs the global
//! tracing subscriber) stay binaries of their own.

mod http;
mod registration;
