//! The core of toolcall: the contract every tool implements, the
//! argument pipeline and schemas behind it, and the [`Toolset`] that runs a
//! turn's calls (its executor, layers and tool search).
//!
//! - [`Tool`]: what a toolset holds and a model calls: one [`ToolSpec`] and
//!   one call from the raw arguments to an [`Output`] ([`Tool::call_text`]
//!   for its text alone);
//! - [`TypedTool`]: the typed layer a tool's logic is written in, with the one
//!   JSON adapter that turns it into a [`Tool`]; [`Arguments`]: what its
//!   request type must be;
//! - [`ToolContext`], [`ToolError`], [`ToolOutput`]: what a call sees, fails
//!   with and returns; [`Output`], [`Part`], [`Media`]: a result with more
//!   than text (JSON, images, files) and an artifact for the application;
//!   [`IdempotencyScope`]: where a call's idempotency key
//!   ([`ToolContext::idempotency_key`]) comes from, for a side effect a
//!   durable engine may run again;
//! - [`ToolSpec`], [`Annotations`]: what a tool declares (name, description,
//!   schema, hints, examples, timeout, approval);
//! - [`clean_json`], [`ArgumentLimits`], [`Parameters`]: the argument
//!   pipeline (cleaning, limits, the JSON Schema of a request type);
//! - [`Toolset`]: the registry, under lower-cased names, and the executor of
//!   a turn ([`Toolset::run_turn`]: timeouts, panics, approval, output caps);
//!   [`ToolCall`] and [`ToolResult`]: one turn's calls as data (ids and names
//!   as [`SmolStr`], which a call's context and result share without
//!   copying); [`Renamed`]: any tool under another name;
//! - [`toolset::Layer`]: code around every call; [`layers`]: ready ones
//!   (cache, rerun, repair, guardrail, concurrency limit);
//!   [`toolset::ToolSearch`]: the deferred tools a model finds by search.
//!
//! No features. The layers above it are crates of their own:
//! `toolcall-provider` (the providers' wire formats), `toolcall-mcp` (the MCP
//! bridge) and `toolcall-agent` (the loop and the model clients); the facade
//! crate `toolcall` re-exports them all.
#![deny(missing_docs)]

mod arguments;
mod call;
mod context;
mod describe;
mod error;
mod idempotency;
mod output;
mod parts;
mod renamed;
mod spec;
mod tool;
mod typed;

pub mod layers;
pub mod toolset;

#[doc(hidden)]
pub mod __private;

pub use arguments::{ArgumentLimits, JsonObject, Parameters, clean_json};
pub use call::{Outcome, ToolCall, ToolResult};
pub use context::ToolContext;
pub use describe::to_markdown;
pub use error::{BoxError, ToolError};
pub use idempotency::IdempotencyScope;
pub use output::{Displayed, Json, ToolOutput};
pub use parts::{Media, Output, Part, Source};
pub use renamed::Renamed;
pub use spec::{Annotations, ToolSpec};
pub use tool::{OutputFuture, Tool, ToolFuture};
pub use toolset::Toolset;
pub use typed::{Arguments, TypedTool};

pub use smol_str::SmolStr;
pub use tokio_util::sync::CancellationToken;
