//! Test doubles for code that runs agents, kept apart as tokio-test is
//! from tokio, so nothing in the loop's own API is there for tests:
//!
//! - [`ScriptedModel`]: a [`Model`](crate::Model) in process whose answers
//!   are written in advance, and what it was asked ([`SeenRequest`]);
//! - a stand-in for an OpenAI-compatible server: [`Reply`], one model turn written in advance, and the Chat
//!   Completions bodies it is sent as, whole ([`chat_completion`]) or
//!   streamed ([`chat_chunks`]); with the feature `scripted-server`,
//!   [`ScriptedServer`], which serves them on loopback and records what it
//!   was asked.
//!
//!   The bodies are shaped as OpenAI documents them: the response object
//!   (<https://platform.openai.com/docs/api-reference/chat/object>), the
//!   chunk object (<https://platform.openai.com/docs/api-reference/chat-streaming/streaming>:
//!   `chat.completion.chunk`s, the usage chunk with empty `choices` that
//!   `stream_options.include_usage` adds, then `data: [DONE]`), and the error
//!   object (<https://platform.openai.com/docs/guides/error-codes>).

mod model;
mod server;

pub use model::{ScriptedModel, SeenRequest};
#[cfg(feature = "scripted-server")]
pub use server::ScriptedServer;
pub use server::{
    Reply, argument_pieces, chat_chunk, chat_chunks, chat_completion, chat_error, chat_usage_chunk,
};
