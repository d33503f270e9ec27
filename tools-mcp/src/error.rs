//! Why an MCP connection or server failed, one variant a failing step, so
//! a caller can tell a missing program from a refused token or a name
//! collision without reading the message.

/// Why an MCP connection or server failed: one variant a failing step,
/// each keeping the error beneath it as its [`source`](std::error::Error::source).
///
/// ```no_run
/// use toolcall_mcp::{McpClient, McpError};
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
    /// The server's process could not be started ([`McpClient::stdio`](crate::McpClient::stdio)).
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
    /// The server's side of the handshake failed ([`McpServer::serve_stdio`](crate::McpServer::serve_stdio)).
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
    /// names the tool ([`McpClient::register_with`](crate::McpClient::register_with)).
    #[error("MCP: {source}")]
    Register {
        /// The label of the server's tools, when they had one.
        server: Option<String>,
        /// The toolset's refusal.
        #[source]
        source: toolcall_core::toolset::ToolsetError,
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

#[cfg(test)]
mod tests {
    use super::McpError;

    #[tokio::test]
    async fn a_program_that_is_not_there_is_a_spawn_error_naming_it() {
        let command = tokio::process::Command::new("/nonexistent/mcp-server");
        let error = crate::McpClient::stdio(command).await.expect_err("no such program");
        let McpError::Spawn { program, source } = &error else { panic!("{error:?}") };
        assert_eq!(program, "/nonexistent/mcp-server");
        assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        assert!(error.to_string().starts_with("MCP: could not start `/nonexistent/mcp-server`: "), "{error}");
    }
}
