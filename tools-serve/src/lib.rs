//! The accept loop under toolcall's HTTP servers: an axum [`Router`](axum::Router)
//! served on hyper instead of `axum::serve`, which holds every connection a
//! client leaves idle or half-sent, for ever, until the process runs out of
//! file descriptors and normal requests time out.
//!
//! - [`serve`]: the router on a listener, with a read timeout for the
//!   request head (also the idle keep-alive timeout), a deadline for the
//!   body, and a cap on connections that makes room for a new client by
//!   closing the connection idle the longest;
//! - [`Serve`]: the builder it returns, for those bounds and the graceful
//!   shutdown; awaiting it serves.
//!
//! A response being written, such as an event stream, is never cut by them.
//! The MCP server (`toolcall-mcp`), the chat UI's routes (`toolcall-ui`,
//! which re-exports [`serve`] and [`Serve`]) and the A2A server
//! (`toolcall-a2a`) all serve through it.
#![deny(missing_docs)]

mod idle;
mod serve;

pub use serve::{Serve, serve};
