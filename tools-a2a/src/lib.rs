//! The Agent2Agent protocol (A2A) both ways, for toolcall agents: serve an
//! [`Agent`](toolcall_agent::Agent) to other agents, and use another
//! agent as a tool.
//!
//! The protocol is A2A 1.0 over its JSON-RPC binding, as the official SDKs
//! 1.3.0 speak it (`a2a-sdk` on PyPI, `@a2a-js/sdk` on npm): the agent card
//! at `/.well-known/agent-card.json`, the methods `SendMessage`,
//! `SendStreamingMessage` (server-sent events), `GetTask` and `CancelTask`,
//! the `A2A-Version: 1.0` header, and the `lf.a2a.v1` messages in
//! protobuf's JSON mapping ([`wire`]).
//!
//! - [`A2aServer`]: an agent as an A2A agent (axum routes, or
//!   [`A2aServer::serve`]): a task per run, its answer as an artifact and
//!   the final status's message, streamed as artifact pieces; a run paused
//!   for approval makes the task `input-required`, and the client's
//!   `approve` / `deny` on the task resumes it; an auth hook
//!   ([`A2aServer::with_auth`]) names each request's user, and a task is
//!   its owner's alone (another's id is not found); tasks live in a
//!   session store ([`A2aServer::with_store`]), so servers sharing it
//!   serve every task, and a held call decided on two at once runs once;
//! - [`A2aAgent`]: a remote A2A agent as a [`Tool`](toolcall_core::Tool)
//!   the model calls with a prompt, streamed (`SendStreamingMessage`)
//!   when the peer's card says it streams, polled (`GetTask`) otherwise;
//!   a peer's task waiting for input pauses the calling agent run
//!   ([`PausedCall`](toolcall_agent::PausedCall)), its held calls among
//!   the run's pending ones, the decisions sent back on the task; a peer
//!   down, slow or out of spec is a
//!   [`ToolError`](toolcall_core::ToolError) naming it ([`A2aError`]);
//! - [`wire`]: the protocol's data model, its methods and error codes.
//!
//! The facade's feature `a2a` brings it in (`toolcall::a2a`).
#![deny(missing_docs)]

mod client;
mod server;
mod tasks;
pub mod wire;

pub use client::{A2aAgent, A2aError, INPUT_REQUIRED_ID, INPUT_REQUIRED_NAME};
pub use server::{A2aServer, ANONYMOUS};

/// A new random id (a UUID v4, as the SDKs make them) for a task, a
/// context or a message.
pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
