//! The contract of the tools SDK.
//!
//! - [`Tool`]: what a toolset holds and a model calls (string in, string out);
//! - [`TypedTool`]: the typed layer a tool's logic is written in, with the one
//!   JSON adapter that turns it into a [`Tool`]; [`Arguments`]: what its
//!   request type must be;
//! - [`ToolContext`], [`ToolError`], [`ToolOutput`]: what a call sees, fails
//!   with and returns; [`Output`], [`Part`], [`Media`]: a result with more
//!   than text (JSON, images, files) and an artifact for the application;
//! - [`ToolSpec`]: what a typed tool declares (name, description, schema...);
//! - [`Toolset`]: the registry, under lower-cased names; [`ToolCall`] and
//!   [`ToolResult`]: one turn's calls as data (ids and names as [`SmolStr`],
//!   which a call's context and result share without copying); [`Renamed`]:
//!   any tool under another name;
//! - [`clean_json`], [`ArgumentLimits`], [`Parameters`]: the steps of the adapter;
//! - [`toolset::Layer`]: code around every call; [`layers`]: ready ones.
//!
//! The layers above it are crates of their own: `tools-provider` (the
//! providers' wire formats), `tools-mcp` (the MCP bridge) and `tools-agent`
//! (the loop); the facade crate `tools` re-exports them all.
#![deny(missing_docs)]

mod arguments;
mod call;
mod context;
mod describe;
mod error;
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
pub use output::{Displayed, Json, ToolOutput};
pub use parts::{Media, Output, Part, Source};
pub use renamed::Renamed;
pub use spec::{Annotations, ToolSpec};
pub use tool::{OutputFuture, Tool, ToolFuture};
pub use toolset::Toolset;
pub use typed::{Arguments, TypedTool};

pub use smol_str::SmolStr;
pub use tokio_util::sync::CancellationToken;
