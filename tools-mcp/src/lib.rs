//! The MCP bridge (feature `mcp`), built on the official rmcp crate.
//!
//! - [`McpServer`]: a [`Toolset`](tools_core::Toolset) as an MCP server, on stdio
//!   ([`McpServer::serve_stdio`]) or streamable HTTP ([`HttpOptions`]);
//!   `tools/call` goes through the same contract as a model turn, so a bad
//!   argument, an error or a panic is an `isError` result;
//! - [`McpResult`], [`McpTool`], [`Rich`]: rich results (images, resources,
//!   structured content) for the tools that want them;
//! - [`McpClient`], [`RemoteTool`]: a remote server's tools as local tools;
//!   [`Registration`]: which of them join a toolset, under what prefix.
//!
//! Progress a tool reports with
//! [`ToolContext::report_progress`](tools_core::ToolContext::report_progress)
//! reaches the client as `notifications/progress` when it asked for it, and
//! a client's `notifications/cancelled` cancels the call's context. A call
//! that needs approval is put to the client's person through MCP
//! elicitation, and runs only on their yes.

mod approval;
mod client;
mod content;
mod http;
mod listen;
mod server;
mod stdio;
mod wire;

pub use client::{McpClient, Registration, RemoteTool};
pub use content::{McpResult, McpTool, Rich};
pub use http::{HttpOptions, HttpServer};
pub use server::McpServer;

/// The rmcp crate this bridge is built on, for its model types.
pub use rmcp;

/// Why an MCP connection or server failed.
#[derive(Debug, thiserror::Error)]
#[error("MCP: {message}")]
pub struct McpError {
    message: String,
}

impl McpError {
    fn from_display(error: impl std::fmt::Display) -> Self {
        Self { message: error.to_string() }
    }
}
