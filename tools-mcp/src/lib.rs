//! The MCP bridge (feature `mcp`), built on the official rmcp crate.
//!
//! - [`McpServer`]: a [`Toolset`](tools_core::Toolset) as an MCP server, on stdio
//!   ([`McpServer::serve_stdio`]) or streamable HTTP ([`HttpOptions`]);
//!   `tools/call` goes through the same contract as a model turn, so a bad
//!   argument, an error or a panic is an `isError` result;
//! - [`McpClient`], [`RemoteTool`]: a remote server's tools as local tools;
//!   [`Registration`]: which of them join a toolset, under what prefix;
//! - [`McpResult`], [`McpTool`], [`Rich`]: results written as MCP content
//!   blocks, for tools that speak MCP's types (others return an
//!   [`Output`](tools_core::Output)).
//!
//! A tool's [`Output`](tools_core::Output) travels as MCP content blocks
//! both ways: the server sends text and JSON parts as text (a JSON object
//! that fits the tool's output schema also as `structuredContent`), images
//! as `ImageContent`, `audio/*` as `AudioContent`, files as embedded
//! resources (`tool://<tool>/<name>`), URLs as resource links; a remote
//! tool's blocks come back as the same parts, bytes decoded. The artifact
//! is the application's: the server does not send it.
//!
//! Progress a tool reports with
//! [`ToolContext::report_progress`](tools_core::ToolContext::report_progress)
//! reaches the client as `notifications/progress` when it asked for it, and
//! a client's `notifications/cancelled` cancels the call's context. A call
//! that needs approval is put to the client's person through MCP
//! elicitation, and runs only on their yes.

#![deny(missing_docs)]

mod approval;
mod blocks;
mod client;
mod http;
mod listen;
mod rich;
mod server;
mod stdio;
mod wire;

pub use client::{McpClient, Registration, RemoteTool};
pub use http::{HttpOptions, HttpServer};
pub use rich::{McpResult, McpTool, Rich};
pub use server::McpServer;

/// The rmcp crate this bridge is built on, for its model types.
pub use rmcp;

/// Why an MCP connection or server failed: one variant a failing step,
/// each keeping the error beneath it as its [`source`](std::error::Error::source).
///
/// ```no_run
/// use tools_mcp::{McpClient, McpError};
/// # async fn run() {
/// match McpClient::stdio(tokio::process::Command::new("my-mcp-server")).await {
///     Ok(client) => { let _ = client; }
///     Err(McpError::Spawn { program, .. }) => eprintln!("is `{program}` installed?"),
///     Err(other) => eprintln!("{other}"),
/// }
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's process could not be started ([`McpClient::stdio`]).
    #[error("MCP: could not start `{program}`: {source}")]
    Spawn {
        /// The program that was to run.
        program: String,
        /// Why the operating system refused.
        #[source]
        source: std::io::Error,
    },
    /// The transport failed before the handshake was done: the process
    /// exited, nothing answered at the URL, the server refused the token...
    /// (`source` is rmcp's, and its own source the transport's error).
    #[error("MCP: {source}, when {context}")]
    Transport {
        /// What the connection was doing, in rmcp's words.
        context: std::borrow::Cow<'static, str>,
        /// The transport's error.
        #[source]
        source: rmcp::transport::DynamicTransportError,
    },
    /// The client's side of the handshake failed for another reason: the
    /// server answered something else, or no protocol version both speak.
    #[error("MCP: {0}")]
    Connect(#[source] rmcp::service::ClientInitializeError),
    /// The server's side of the handshake failed ([`McpServer::serve_stdio`]).
    #[error("MCP: {0}")]
    Accept(#[source] rmcp::service::ServerInitializeError),
    /// A request to the server failed, or its answer was an error.
    #[error("MCP: `{request}` failed: {source}")]
    Request {
        /// The request, such as `tools/list`.
        request: &'static str,
        /// rmcp's error.
        #[source]
        source: rmcp::service::ServiceError,
    },
    /// The server's tools could not join the toolset: a name breaks the
    /// rules, collides, or a prefix makes it too long. The toolset error
    /// names the tool ([`McpClient::register_with`]).
    #[error("MCP: {source}")]
    Register {
        /// The label of the server's tools, when they had one.
        server: Option<String>,
        /// The toolset's refusal.
        #[source]
        source: tools_core::toolset::ToolsetError,
    },
    /// The task serving the connection panicked or was aborted.
    #[error("MCP: the service task failed: {0}")]
    Task(#[source] tokio::task::JoinError),
}

impl From<rmcp::service::ClientInitializeError> for McpError {
    fn from(error: rmcp::service::ClientInitializeError) -> Self {
        match error {
            // Lifted out so its source chain reaches the transport's own
            // error: rmcp's variant does not mark it as a source.
            rmcp::service::ClientInitializeError::TransportError { error, context } => {
                Self::Transport { context, source: error }
            }
            other => Self::Connect(other),
        }
    }
}

impl From<rmcp::service::ServerInitializeError> for McpError {
    fn from(error: rmcp::service::ServerInitializeError) -> Self {
        match error {
            rmcp::service::ServerInitializeError::TransportError { error, context } => {
                Self::Transport { context, source: error }
            }
            other => Self::Accept(other),
        }
    }
}
