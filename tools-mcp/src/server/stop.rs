//! The calls of a server cut off when the HTTP server stops: they answer
//! with a JSON-RPC error, unlike calls the context's owner cancels.

use super::McpServer;

impl McpServer {
    /// The same server, and what cancels its calls when the HTTP server
    /// stops (the context's own token still cancels them too).
    pub(crate) fn with_own_cancellation(self) -> (Self, Stop) {
        let calls = self.context.cancellation().child_token();
        let context = self.context.clone().with_cancellation(calls.clone());
        let stopping = tokio_util::sync::CancellationToken::new();
        let server = Self { context, stopping: Some(stopping.clone()), ..self };
        (server, Stop { calls, stopping })
    }
}

/// Stops a server's calls because the server stops.
#[derive(Debug)]
pub(crate) struct Stop {
    calls: tokio_util::sync::CancellationToken,
    stopping: tokio_util::sync::CancellationToken,
}

impl Stop {
    pub(crate) fn cancel(&self) {
        // First, so every cancelled call sees why.
        self.stopping.cancel();
        self.calls.cancel();
    }
}
