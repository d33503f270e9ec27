//! A toolset as an rmcp server: `tools/list`, `tools/call` through the
//! toolset's contract, `notifications/tools/list_changed` on updates.
//!
//! - `mcp_server`: [`McpServer`], its settings, its toolset swapped live,
//!   and stdio;
//! - `state`: one version of the toolset, with its listing and validators;
//! - `handler`: the MCP methods, as rmcp's `ServerHandler`;
//! - `call`: one `tools/call`, with its progress reports and cancellation;
//! - `stop`: the calls cut off when the HTTP server stops.

mod call;
mod handler;
mod mcp_server;
mod state;
mod stop;

pub use mcp_server::McpServer;
pub(crate) use stop::Stop;
