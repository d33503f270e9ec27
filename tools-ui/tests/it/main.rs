//! The integration tests of `tools-ui`, one binary.

mod support;

// AgentEvents in, UI message chunks out.
mod adapter;
// The useChat endpoint over HTTP, against the scripted server.
mod server;
