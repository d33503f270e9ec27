//! The integration tests of `toolcall-core`, one binary.

mod common;
mod spans;

mod approval;
mod arguments;
mod compose;
mod layers;
mod output;
mod registry;
mod schemas;
mod tracing_spans;
mod turn;
