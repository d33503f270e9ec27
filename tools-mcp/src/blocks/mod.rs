//! A call's [`Output`] as MCP content blocks, and MCP content blocks as an
//! [`Output`]: what the server sends for each part, and what a remote
//! tool's result becomes.
//!
//! | [`Output`] (server sends)            | MCP                                   |
//! |--------------------------------------|---------------------------------------|
//! | `text`, [`Part::Text`]               | `TextContent`                         |
//! | [`Part::Json`]                       | `TextContent` of its JSON, and `structuredContent` (below) |
//! | [`Part::Image`] with bytes           | `ImageContent` (base64, `mimeType`)   |
//! | an `audio/*` image or file, bytes    | `AudioContent`                        |
//! | [`Part::File`] with bytes            | `EmbeddedResource`: a text resource for UTF-8 text types, else a blob; `uri` `tool://<tool>/<name>` |
//! | an image or file at a URL            | `ResourceLink`                        |
//! | the artifact                         | not sent                              |
//!
//! | MCP (client reads)                   | [`Output`]                            |
//! |--------------------------------------|---------------------------------------|
//! | a first `TextContent`                | `text`                                |
//! | any later `TextContent`              | [`Part::Text`]                        |
//! | `ImageContent`                       | [`Part::Image`] with the decoded bytes |
//! | `AudioContent`                       | [`Part::File`] with the decoded bytes |
//! | `EmbeddedResource`, blob or text     | [`Part::File`], named by the uri's last segment |
//! | `ResourceLink`                       | [`Part::Image`] (`image/*`) or [`Part::File`] at the URL |
//! | `structuredContent`                  | [`Part::Json`], unless a text block says the same |//!
//! - `send`: an output as blocks, the server's side;
//! - `read`: blocks as an output, the client's side;
//! - `uri`: the file names in resource URIs, escaped and read back.

mod read;
mod send;
mod uri;

pub(crate) use read::{output_of, remote_error};
pub(crate) use send::{call_result, error_result};

/// The `_meta` key of a result flagged `isError` that says how the call
/// ended ([`Outcome::as_str`](toolcall_core::Outcome::as_str), such as
/// `invalid_arguments`): MCP has one flag for every ending, and the
/// contract tells bad arguments, which the model fixes, from failures.
/// A key with a prefix of our own, as MCP asks of `_meta` keys
/// (<https://modelcontextprotocol.io/specification/2025-06-18/basic#meta>).
pub(crate) const OUTCOME: &str = "tools-sdk/outcome";

#[cfg(test)]
mod tests;
