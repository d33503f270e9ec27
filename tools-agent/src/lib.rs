//! The agent loop of the tools SDK: what runs a toolset against a model,
//! turn after turn.
//!
//! - [`RunBudget`] and [`RunLimits`]: what a run may spend across turns
//!   (tool calls in all, calls of unknown tools, retries of one tool in a
//!   row), and [`LimitExceeded`], the limit it went past.
#![deny(missing_docs)]

mod budget;

pub use budget::{LimitExceeded, RunBudget, RunLimits};
