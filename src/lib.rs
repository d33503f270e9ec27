#![deny(missing_docs)]
#![doc = include_str!("../README.md")]

/// The contract every tool implements; everything in it is re-exported here.
pub use tools_core;
pub use tools_core::*;
/// `#[tool]` on an async fn or an impl block, and `#[derive(ToolOutput)]`.
pub use tools_macros::{ToolOutput, tool};
