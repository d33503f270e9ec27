use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use futures::future::BoxFuture;

use crate::toolset::{Layer, LayerCall, OnError};
use crate::{JsonObject, ToolError};

/// What the repair function gets: the tool, its schema, the arguments that
/// did not fit, and why.
#[derive(Clone, Copy, Debug)]
pub struct Repair<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The JSON Schema the arguments must fit.
    pub schema: &'a JsonObject,
    /// The arguments as they were sent.
    pub arguments: &'a str,
    /// What was wrong with them, as the model would have read it.
    pub reason: &'a str,
}

/// When a call's arguments do not fit its tool's schema, `repair` may
/// return repaired arguments (asking a small model, fixing a known slip),
/// which are checked like any call's; `None` leaves the error to the model.
/// At most `max_repairs` per call (1 by default), and, when the call's
/// context holds a [`RepairBudget`] (the agent loop's runs do), at most what
/// is left of it across the run.
///
/// ```
/// use toolcall_core::{Toolset, layers::RepairArguments};
/// // A model that writes `"days": "three"` for an integer.
/// let tools = Toolset::new().with_layer(RepairArguments::new(|repair| {
///     let fixed = repair.arguments.replace("\"three\"", "3");
///     Box::pin(async move { Some(fixed) })
/// }));
/// ```
pub struct RepairArguments<F> {
    repair: F,
    max_repairs: u32,
}

impl<F> RepairArguments<F>
where
    F: for<'a> Fn(Repair<'a>) -> BoxFuture<'a, Option<String>> + Send + Sync,
{
    /// Repair with `repair`, once per call.
    pub fn new(repair: F) -> Self {
        Self { repair, max_repairs: 1 }
    }

    /// At most this many repairs of one call.
    pub fn with_max_repairs(mut self, max_repairs: u32) -> Self {
        self.max_repairs = max_repairs;
        self
    }
}

impl<F> Layer for RepairArguments<F>
where
    F: for<'a> Fn(Repair<'a>) -> BoxFuture<'a, Option<String>> + Send + Sync,
{
    fn on_error<'a>(&'a self, call: LayerCall<'a>, error: ToolError, attempt: u32) -> BoxFuture<'a, OnError> {
        Box::pin(async move {
            let ToolError::InvalidArguments(reason) = &error else {
                return OnError::Fail(error);
            };
            if attempt >= self.max_repairs || call.ctx.get::<RepairBudget>().is_some_and(|run| !run.take()) {
                return OnError::Fail(error);
            }
            let repair = Repair {
                tool: call.tool.spec().name(),
                schema: call.tool.spec().parameters(),
                arguments: call.arguments,
                reason,
            };
            match (self.repair)(repair).await {
                Some(repaired) => OnError::RerunWith(repaired),
                None => OnError::Fail(error),
            }
        })
    }
}

impl<F> std::fmt::Debug for RepairArguments<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RepairArguments").field("max_repairs", &self.max_repairs).finish()
    }
}

/// The repairs left to a whole run, shared by all its calls: put it in the
/// context the calls run with, and every [`RepairArguments`] takes one per
/// repair until none is left.
///
/// ```
/// use toolcall_core::layers::RepairBudget;
/// let budget = RepairBudget::new(2);
/// let ctx = toolcall_core::ToolContext::new().with_extension(budget.clone());
/// # let _ = ctx;
/// assert_eq!(budget.remaining(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct RepairBudget(Arc<AtomicU32>);

impl RepairBudget {
    /// A budget of this many repairs.
    pub fn new(repairs: u32) -> Self {
        Self(Arc::new(AtomicU32::new(repairs)))
    }

    /// The repairs left.
    pub fn remaining(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    /// Take one repair; `false` when none is left.
    fn take(&self) -> bool {
        self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(1)).is_ok()
    }
}
