//! The providers' wire formats: tool definitions, native web search, and the
//! messages of a conversation (user, assistant, tool calls, tool results).
//!
//! [`Dialect`] is the one way in: for each provider format it gives the
//! definitions ([`Dialect::tools`]), the tool choice and parallel setting
//! ([`Dialect::tool_choice`], from one [`ToolChoice`]), writes the
//! conversation ([`Dialect::messages`]), reads the model's response
//! ([`Dialect::content`], its calls alone with [`Dialect::parse_calls`],
//! how it ended with [`Dialect::finish`]) and writes the turn's results
//! back ([`Dialect::format_results`]). Behind it, one module per provider
//! holds every rule of that provider, with its documentation cited, and the
//! provider's public constants; its functions are this crate's own, reached
//! through `Dialect` alone:
//!
//! - [`openai`]: Chat Completions ([`openai::chat`]) and Responses
//!   ([`openai::responses`]) function tools, with and without strict mode;
//!   `tool_calls` and `function_call` items;
//! - [`anthropic`]: Messages API tools (`input_schema`), optional strict;
//!   `tool_use` and `tool_result` blocks;
//! - [`gemini`]: function declarations in Gemini's OpenAPI subset;
//!   `functionCall` and `functionResponse` parts;
//! - [`mcp`]: Model Context Protocol tools (JSON Schema 2020-12); MCP has no
//!   model messages, its calls go through the MCP bridge.
//!
//! [`Dialect::format_results`] sends a result's parts (text, JSON, images,
//! files) as the provider documents them, refuses a part the provider
//! cannot take, naming it ([`RefusedPart`]), and never sends the result's
//! artifact.
//!
//! The rest of a conversation is written by [`Dialect::messages`], from the
//! provider-neutral [`Transcript`]'s [`Message`]s: user text, images and
//! files (the parts a tool's result has, written by the same code and
//! refused the same way, [`PartOf`] saying which message held the part),
//! the model's text and calls, and the results, in each provider's shape
//! (Chat Completions `messages`, Responses `input`, Anthropic `messages`,
//! Gemini `contents`); the instructions go in each request's own field.
//! `toolcall-agent` sends them.
//!
//! The reserved `tool_search` entry is in [`search`]: Anthropic's own tool
//! search over the deferred tools, or the local function elsewhere. A tool's
//! example arguments are checked against its schema when the definitions are
//! built, and sent as Anthropic's `input_examples` or after the description.
//!
//! Around them: [`export`] writes every definition to a folder and checks a
//! checked-in folder against it, and [`limits`] reports how a toolset fits
//! each provider's limits. Every transform starts from the canonical schema,
//! [`ToolSpec::parameters`](toolcall_core::ToolSpec::parameters), and a schema that a
//! dialect cannot express is refused here, with a [`DialectError`] naming
//! the tool, the dialect and the keyword.
//!
//! ```
//! use toolcall_provider::Dialect;
//! use toolcall_core::Toolset;
//!
//! let tools = Toolset::new();
//! for dialect in Dialect::EXPORTED {
//!     assert_eq!(dialect.tools(&tools).unwrap(), serde_json::json!([]));
//! }
//! ```
#![deny(missing_docs)]

pub mod anthropic;
mod choice;
mod content;
mod dialect;
mod error;
mod examples;
pub mod export;
mod finish;
pub mod gemini;
pub mod limits;
pub mod mcp;
pub mod openai;
mod parts;
mod payload;
pub mod search;
mod transcript;
mod transform;

pub use choice::ToolChoice;
pub use content::{Content, Reasoning};
pub use dialect::{Definition, Dialect};
pub use error::{DialectError, MessageError, PartOf, RefusedPart, ToolChoiceError, UnknownDialect};
pub use finish::Finish;
pub use transcript::{Message, Transcript, calls_of, text_of};
