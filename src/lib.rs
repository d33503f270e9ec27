#![deny(missing_docs)]
#![doc = include_str!("../README.md")]

// The guide, one chapter a topic; its docs are src/guide/index.md.
pub mod guide;

/// The Agent2Agent protocol both ways: serve an agent to other agents,
/// use a remote agent as a tool (feature `a2a`).
#[cfg(feature = "a2a")]
pub use toolcall_a2a as a2a;
/// The agent loop and the model clients (OpenAI Chat and Responses,
/// Anthropic, Gemini) (feature `agent`).
#[cfg(feature = "agent")]
pub use toolcall_agent as agent;
/// The tool contract, the argument pipeline and the toolset; everything in
/// it is re-exported here.
pub use toolcall_core;
pub use toolcall_core::*;
/// `#[tool]` on an async fn or an impl block, and `#[derive(ToolOutput)]`.
pub use toolcall_macros::{ToolOutput, tool};
/// The MCP bridge: serve a toolset, use a remote server's tools (feature `mcp`).
#[cfg(feature = "mcp")]
pub use toolcall_mcp as mcp;
/// The providers' wire formats: tool definitions, calls and results.
pub use toolcall_provider as provider;
/// Durable agent runs on Restate: each model request and tool call a
/// journaled step, approval on an awakeable (feature `restate`).
#[cfg(feature = "restate")]
pub use toolcall_restate as restate;
/// Conversations that last: an agent's runs kept in a session store
/// (in memory, SQLite; PostgreSQL with feature `postgres`), owned by a
/// user (feature `session`).
#[cfg(feature = "session")]
pub use toolcall_session as session;
/// The agent's run as a Vercel AI SDK UI message stream, and the axum
/// handler for `useChat` (feature `ui`).
#[cfg(feature = "ui")]
pub use toolcall_ui as ui;
