//! The MCP bridge (the facade's feature `mcp`), built on the official rmcp
//! crate, over `toolcall-core`'s toolset and `toolcall-provider`'s MCP schemas. No
//! features of its own.
//!
//! - [`McpServer`]: a [`Toolset`](toolcall_core::Toolset) as an MCP server, on stdio
//!   ([`McpServer::serve_stdio`]) or streamable HTTP ([`HttpOptions`]);
//!   `tools/call` goes through the same contract as a model turn, so a bad
//!   argument, an error or a panic is an `isError` result, its outcome
//!   (`invalid_arguments`, `failed`...) in `_meta` as `tools-sdk/outcome`;
//! - [`McpClient`], [`RemoteTool`]: a remote server's tools as local tools,
//!   whose errors end as the server's call did and read the same;
//!   [`Registration`]: which of them join a toolset, under what prefix;
//! - [`McpResult`]: a result written as MCP content blocks, for typed tools
//!   that speak MCP's types (others return an [`Output`](toolcall_core::Output)).
//!
//! A tool's [`Output`](toolcall_core::Output) travels as MCP content blocks
//! both ways: the server sends text and JSON parts as text (a JSON object
//! that fits the tool's output schema also as `structuredContent`), images
//! as `ImageContent`, `audio/*` as `AudioContent`, files as embedded
//! resources (`tool://<tool>/<name>`), URLs as resource links; a remote
//! tool's blocks come back as the same parts, bytes decoded. The artifact
//! is the application's: the server does not send it.
//!
//! Progress a tool reports with
//! [`ToolContext::report_progress`](toolcall_core::ToolContext::report_progress)
//! reaches the client as `notifications/progress` when it asked for it, and
//! a client's `notifications/cancelled` cancels the call's context. A call
//! that needs approval is put to the client's person through MCP
//! elicitation, and runs only on their yes; an [`McpClient`] holds such a
//! remote tool's calls for its own person (the agent pauses before them)
//! and answers the server's question with their decision.
//!
//! A JSON-RPC batch (an array of messages) is taken in a session at MCP
//! 2025-03-26, the one version that had them, on stdio (the answers as one
//! array line) and over HTTP (one event stream, or a JSON array when
//! stateless); in any other session it is refused with `-32600`, naming
//! that version
//! ([2025-03-26](https://modelcontextprotocol.io/specification/2025-03-26/basic#batching),
//! [2025-06-18's changelog](https://modelcontextprotocol.io/specification/2025-06-18/changelog)).

#![deny(missing_docs)]

mod approval;
mod approved;
mod batch;
mod blocks;
mod client;
mod error;
mod http;
mod in_flight;
mod result;
mod server;
mod stdio;
mod wire;

pub use client::{McpClient, Registration, RemoteTool};
pub use error::McpError;
pub use http::{HttpOptions, HttpServer};
pub use result::McpResult;
pub use server::McpServer;

/// The rmcp types this crate's API names, and only those: a result's
/// content blocks and the MCP result they make, the client's peer and the
/// transports it connects over. rmcp is pinned (`=3.11.0`) and moves fast;
/// naming these here rather than re-exporting rmcp keeps its other items
/// out of this crate's API.
pub mod types {
    pub use rmcp::model::{CallToolResult, ContentBlock};
    pub use rmcp::service::{Peer, RoleClient};
    pub use rmcp::transport::IntoTransport;
}
