//! The integration tests of the `toolcall` facade, one binary; the MCP ones
//! need its `mcp` feature (scripts/test.sh runs with `--all-features`).
//! They run the examples end to end; the MCP bridge's own tests, against
//! in-process servers, are tools-mcp's (tools-mcp/tests/it).

mod support;

#[cfg(feature = "mcp")]
mod adversarial;
mod blocking;
#[cfg(feature = "ui")]
mod chat_ui_example;
mod examples;
mod exported_schemas;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(all(feature = "mcp", feature = "agent"))]
mod mcp_agent_approval;
#[cfg(feature = "mcp")]
mod mcp_batch;
#[cfg(feature = "mcp")]
mod mcp_errors;
