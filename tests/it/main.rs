//! The integration tests of the `toolcall` facade, one binary; the MCP ones
//! need its `mcp` feature (scripts/test.sh runs with `--all-features`).

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
mod mcp_approval;
#[cfg(feature = "mcp")]
mod mcp_batch;
#[cfg(feature = "mcp")]
mod mcp_errors;
#[cfg(feature = "mcp")]
mod mcp_http_limits;
#[cfg(feature = "mcp")]
mod mcp_parts;
#[cfg(feature = "mcp")]
mod mcp_remote_errors;
#[cfg(feature = "mcp")]
mod mcp_resume;
