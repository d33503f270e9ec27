// The guide: each chapter a markdown file of this folder, included on an
// empty module so that every example in it is a doc test (as clap's
// `_tutorial` and axum's `src/docs` do).
#![doc = include_str!("index.md")]

#[doc = include_str!("tools.md")]
pub mod tools {}

#[doc = include_str!("toolset.md")]
pub mod toolset {}

#[doc = include_str!("providers.md")]
pub mod providers {}

#[doc = include_str!("agent.md")]
pub mod agent {}

#[doc = include_str!("approval.md")]
pub mod approval {}

#[doc = include_str!("sessions.md")]
pub mod sessions {}

#[doc = include_str!("durable.md")]
pub mod durable {}

#[doc = include_str!("ui.md")]
pub mod ui {}

#[doc = include_str!("mcp.md")]
pub mod mcp {}

#[doc = include_str!("a2a.md")]
pub mod a2a {}

#[doc = include_str!("subagents.md")]
pub mod subagents {}

#[doc = include_str!("observability.md")]
pub mod observability {}

#[doc = include_str!("testing.md")]
pub mod testing {}
