//! Per-tool call counters: a few relaxed atomics bumped on every call.

use std::sync::atomic::{AtomicU64, Ordering};

use super::Toolset;
use crate::Outcome;

/// The live counters of one registered tool.
#[derive(Debug, Default)]
pub(crate) struct ToolCounters {
    calls: AtomicU64,
    failures: AtomicU64,
    invalid_arguments: AtomicU64,
    retries: AtomicU64,
    denied: AtomicU64,
}

impl ToolCounters {
    /// Count one finished call. Relaxed ordering: the counts are statistics,
    /// nothing is synchronised through them.
    pub(crate) fn record(&self, outcome: Outcome) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let extra = match outcome {
            Outcome::InvalidArguments => &self.invalid_arguments,
            Outcome::Retry => &self.retries,
            Outcome::Denied => &self.denied,
            _ if outcome.is_failure() => &self.failures,
            _ => return,
        };
        extra.fetch_add(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> CallCounts {
        CallCounts {
            calls: self.calls.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            invalid_arguments: self.invalid_arguments.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            denied: self.denied.load(Ordering::Relaxed),
        }
    }
}

/// How often one tool was called and how those calls ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallCounts {
    /// Every finished call, whatever its outcome.
    pub calls: u64,
    /// Calls that failed: an error, a timeout, a cancellation or a panic.
    pub failures: u64,
    /// Calls whose arguments did not fit the schema (not failures).
    pub invalid_arguments: u64,
    /// Calls in which the tool asked the model to retry (not failures).
    pub retries: u64,
    /// Calls that needed a person's approval and did not run (not failures).
    pub denied: u64,
}

impl Toolset {
    /// The counts of the tool with this name (ignoring case), if it is registered.
    ///
    /// ```
    /// # use toolcall_core::toolset::Toolset;
    /// assert!(Toolset::new().counts("get_weather").is_none());
    /// ```
    pub fn counts(&self, name: &str) -> Option<CallCounts> {
        self.entry(name).map(|entry| entry.counters.snapshot())
    }

    /// Every tool's display name and counts, in registration order.
    pub fn all_counts(&self) -> impl ExactSizeIterator<Item = (&str, CallCounts)> {
        self.tools.iter().map(|entry| (entry.tool.spec().name(), entry.counters.snapshot()))
    }

    /// How many calls named a tool that is not registered.
    pub fn not_found_count(&self) -> u64 {
        self.not_found.load(Ordering::Relaxed)
    }
}
