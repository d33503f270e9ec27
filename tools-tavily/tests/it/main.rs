//! The integration tests of `toolcall-tavily`, one binary; but `env.rs` (it
//! changes the process environment) and `logs.rs` (it installs the global
//! tracing subscriber) stay binaries of their own.

mod http;
mod registration;
