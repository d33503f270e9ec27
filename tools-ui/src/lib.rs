//! The agent's run as a UI stream: the Vercel AI SDK's UI message stream
//! protocol (v1, server-sent events with the header
//! `x-vercel-ai-ui-message-stream: v1`, as `ai` 7.0.173 reads it), so a
//! page built on `useChat` shows a run as it happens and asks a person
//! about the calls held for approval.
//!
//! - [`UiChunk`]: one chunk of the protocol, framed as an SSE event
//!   ([`UiChunk::to_sse`], [`DONE`], [`HEADERS`]);
//! - [`UiAdapter`]: [`AgentEvent`](toolcall_agent::AgentEvent)s in, chunks
//!   out, and a whole run's events as the SSE body
//!   ([`UiAdapter::stream`]), for any HTTP server;
//! - [`ChatServer`]: the axum routes (`POST /api/chat` and the chat's
//!   messages, stream, stop, and the files too big for the stream) that
//!   read useChat's request ([`ChatRequest`],
//!   [`UiMessage`], [`ApprovalResponse`]) and start a run, or resume the
//!   chat's paused run with the page's approvals, each chat in a session
//!   store (`toolcall-session`) under the user the auth hook names;
//!   [`ui_messages`]: a stored chat as the page's initial messages;
//! - [`AguiEvent`], [`AguiAdapter`], [`AguiServer`]: the same run as
//!   AG-UI events (`@ag-ui/core` 1.0.0; a result's images and files as
//!   content parts, the artifacts as the run's state), and the handler
//!   (`POST /api/agui`) that runs a thread (a conversation in the same
//!   kind of store) from a `RunAgentInput`, or resumes its paused run from
//!   the input's `resume` answers to its interrupts;
//! - [`serve`]: those routes served with read timeouts and a cap on
//!   connections, so that clients left idle cannot hold the server (the
//!   accept loop of `toolcall-serve`, which the MCP and A2A servers share).
//!
//! The facade's feature `ui` brings it in (`toolcall::ui`).
#![deny(missing_docs)]

mod adapter;
mod agui;
mod agui_server;
mod calls;
mod chunk;
mod files;
mod history;
mod host;
mod request;
mod server;
mod track;

pub use adapter::UiAdapter;
pub use agui::{AguiAdapter, AguiEvent, Interrupt, RunOutcome};
pub use agui_server::AguiServer;
pub use chunk::{DONE, HEADERS, UiChunk};
pub use history::ui_messages;
pub use request::{ApprovalResponse, ChatRequest, UiMessage};
pub use server::{ANONYMOUS, Auth, ChatServer};
// Serving those routes on a real machine: toolcall-serve's accept loop,
// with read and body timeouts and a cap on connections.
pub use toolcall_serve::{Serve, serve};
