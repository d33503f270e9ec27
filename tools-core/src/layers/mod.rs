//! Ready layers ([`Layer`](crate::toolset::Layer)), each one small type:
//!
//! - [`Rerun`]: run a call again, with backoff, when the tool failed
//!   [transiently](crate::ToolError::transient);
//! - [`ConcurrencyLimit`]: at most so many calls of each tool at once;
//! - [`Cache`]: the output of `read_only` and `idempotent` tools, by their
//!   cleaned arguments, bounded in size and time;
//! - [`RepairArguments`]: a function (one that asks a model, say) repairs
//!   arguments that do not fit the schema, within a run's [`RepairBudget`];
//! - [`Guardrail`]: a check over each output that can replace it with an
//!   error the model reads.

mod cache;
mod guardrail;
mod limit;
mod repair;
mod rerun;

pub use cache::Cache;
pub use guardrail::Guardrail;
pub use limit::ConcurrencyLimit;
pub use repair::{Repair, RepairArguments, RepairBudget};
pub use rerun::Rerun;
