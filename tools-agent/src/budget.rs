//! Limits of an agent loop across turns: how many calls in all, how many of
//! unknown tools, how many retries of one tool in a row.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toolcall_core::{Outcome, ToolCall, ToolResult};

/// The limits a [`RunBudget`] enforces. Each is the most allowed: going past
/// it is an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunLimits {
    /// Turns that may offer tools (at least one); past them the loop makes
    /// one last request without tools, whose answer ends the run
    /// ([`StopReason::MaxTurns`](crate::StopReason::MaxTurns)).
    pub max_turns: usize,
    /// Tool calls in the whole run, over all turns.
    pub max_tool_calls: usize,
    /// Calls of names no tool has, over all turns.
    pub max_not_found: usize,
    /// Calls of one tool in a row that ended in invalid arguments or a retry
    /// request; a success of that tool starts the count again.
    pub max_retries_per_tool: usize,
    /// Argument repairs ([`RepairArguments`](toolcall_core::layers::RepairArguments))
    /// in the whole run; once spent, invalid arguments go back to the model.
    pub max_repairs: usize,
}

impl Default for RunLimits {
    /// 10 turns with tools, 128 tool calls, 3 unknown names, 3 retries in
    /// a row per tool, 16 argument repairs.
    fn default() -> Self {
        Self {
            max_turns: 10,
            max_tool_calls: 128,
            max_not_found: 3,
            max_retries_per_tool: 3,
            max_repairs: 16,
        }
    }
}

impl RunLimits {
    /// The same limits with another number of turns with tools (at least one).
    pub fn with_max_turns(mut self, turns: usize) -> Self {
        self.max_turns = turns.max(1);
        self
    }

    /// The same limits with another total of tool calls.
    pub fn with_max_tool_calls(mut self, max: usize) -> Self {
        self.max_tool_calls = max;
        self
    }

    /// The same limits with another number of unknown-tool calls.
    pub fn with_max_not_found(mut self, max: usize) -> Self {
        self.max_not_found = max;
        self
    }

    /// The same limits with another number of retries in a row per tool.
    pub fn with_max_retries_per_tool(mut self, max: usize) -> Self {
        self.max_retries_per_tool = max;
        self
    }

    /// The same limits with another number of argument repairs.
    pub fn with_max_repairs(mut self, max: usize) -> Self {
        self.max_repairs = max;
        self
    }
}

/// Which limit a run went past. It serializes as part of a
/// [`StopReason`](crate::StopReason) (`{"tool_calls": {"limit": 20,
/// "requested": 21}}`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LimitExceeded {
    /// The run asked for more tool calls than allowed.
    #[error("tool calls limit is exceeded: the run asked for {requested} calls, the limit is {limit}")]
    ToolCalls {
        /// The most calls allowed.
        limit: usize,
        /// The calls made so far plus those of the refused turn.
        requested: usize,
    },
    /// The model kept calling tools that do not exist.
    #[error("unknown tools were called {count} times (the last was `{name}`), the limit is {limit}")]
    NotFound {
        /// The most unknown-tool calls allowed.
        limit: usize,
        /// The unknown-tool calls so far.
        count: usize,
        /// The last unknown name called.
        name: String,
    },
    /// The model kept writing calls its provider could not read.
    #[error(
        "the model's tool calls could not be read {count} times in a row (the last: {reason}), the limit is {limit}"
    )]
    Malformed {
        /// The most such turns in a row allowed.
        limit: usize,
        /// Such turns in a row so far.
        count: usize,
        /// The provider's reason for the last one.
        reason: String,
    },
    /// The model could not produce arguments one tool accepts.
    #[error(
        "tool `{tool}` ended in invalid arguments or a retry request {count} times in a row, the limit is {limit}"
    )]
    Retries {
        /// The tool's name as the model called it.
        tool: String,
        /// The most retries in a row allowed.
        limit: usize,
        /// The retries in a row so far.
        count: usize,
    },
}

/// What an agent loop has spent of its [`RunLimits`], turn after turn.
///
/// Call [`admit`](RunBudget::admit) with a turn's calls before running them,
/// and [`record`](RunBudget::record) with their results after.
///
/// ```
/// use toolcall_agent::{LimitExceeded, RunBudget, RunLimits};
/// use toolcall_core::ToolCall;
///
/// let mut budget = RunBudget::new(RunLimits::default().with_max_tool_calls(2));
/// let turn = [ToolCall::new("1", "get_weather", "{}"), ToolCall::new("2", "get_weather", "{}")];
/// assert!(budget.admit(&turn).is_ok());
/// let err = budget.admit(&turn[..1]).unwrap_err();
/// assert!(matches!(err, LimitExceeded::ToolCalls { limit: 2, requested: 3 }));
/// assert!(err.to_string().starts_with("tool calls limit is exceeded"));
/// ```
///
/// It serializes what was spent, not the limits: a paused run resumed by
/// another agent spends under that agent's limits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunBudget {
    #[serde(skip)]
    limits: RunLimits,
    calls: usize,
    not_found: usize,
    #[serde(default)]
    repairs: usize,
    /// Retries in a row, by lower-cased tool name.
    retries: BTreeMap<String, usize>,
    /// Turns in a row whose calls the provider could not read.
    #[serde(default)]
    malformed: usize,
}

impl RunBudget {
    /// A fresh budget under these limits.
    pub fn new(limits: RunLimits) -> Self {
        Self { limits, ..Self::default() }
    }

    /// What this budget spent, under other limits.
    pub fn under(mut self, limits: RunLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits this budget enforces.
    pub fn limits(&self) -> &RunLimits {
        &self.limits
    }

    /// Count a turn's calls before they run; refuse the turn (counting
    /// nothing) if it would pass the total.
    ///
    /// # Errors
    ///
    /// [`LimitExceeded::ToolCalls`] when the turn's calls would pass
    /// [`max_tool_calls`](RunLimits::max_tool_calls); nothing is counted, and the turn should not run.
    pub fn admit(&mut self, calls: &[ToolCall]) -> Result<(), LimitExceeded> {
        let requested = self.calls.saturating_add(calls.len());
        if requested > self.limits.max_tool_calls {
            return Err(LimitExceeded::ToolCalls { limit: self.limits.max_tool_calls, requested });
        }
        self.calls = requested;
        self.malformed = 0;
        Ok(())
    }

    /// Count a turn whose calls the provider could not read (its
    /// `reason`): the model is asked again, up to
    /// [`max_retries_per_tool`](RunLimits::max_retries_per_tool) turns in
    /// a row; a turn whose calls are read starts the count again.
    ///
    /// # Errors
    ///
    /// [`LimitExceeded::Malformed`] when more turns in a row than
    /// [`max_retries_per_tool`](RunLimits::max_retries_per_tool) could not be read: stop the run.
    pub fn record_malformed(&mut self, reason: &str) -> Result<(), LimitExceeded> {
        self.malformed += 1;
        let limit = self.limits.max_retries_per_tool;
        if self.malformed > limit {
            return Err(LimitExceeded::Malformed { limit, count: self.malformed, reason: reason.to_owned() });
        }
        Ok(())
    }

    /// Count a turn's results; the first limit passed is the error. All the
    /// results are counted either way.
    ///
    /// # Errors
    ///
    /// The first limit passed: [`LimitExceeded::NotFound`] for too many calls of unknown tools,
    /// [`LimitExceeded::Retries`] for a tool that ended in invalid arguments or a retry request
    /// too many times in a row. The results are counted either way.
    pub fn record(&mut self, results: &[ToolResult]) -> Result<(), LimitExceeded> {
        let mut exceeded = None;
        for result in results {
            let breach = match result.outcome {
                Outcome::NotFound => {
                    self.not_found += 1;
                    (self.not_found > self.limits.max_not_found).then(|| LimitExceeded::NotFound {
                        limit: self.limits.max_not_found,
                        count: self.not_found,
                        name: result.name.to_string(),
                    })
                }
                Outcome::InvalidArguments | Outcome::Retry => {
                    let count = self.retries.entry(result.name.to_ascii_lowercase()).or_default();
                    *count += 1;
                    (*count > self.limits.max_retries_per_tool).then(|| LimitExceeded::Retries {
                        tool: result.name.to_string(),
                        limit: self.limits.max_retries_per_tool,
                        count: *count,
                    })
                }
                Outcome::Success => {
                    self.retries.remove(&result.name.to_ascii_lowercase());
                    None
                }
                _ => None,
            };
            exceeded = exceeded.or(breach);
        }
        exceeded.map_or(Ok(()), Err)
    }

    /// Tool calls admitted so far.
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// Argument repairs made so far.
    pub fn repairs(&self) -> usize {
        self.repairs
    }

    /// Count calls made by the runs of agent tools this run called: they
    /// spend its allowance as its own do.
    pub(crate) fn add_calls(&mut self, made: usize) {
        self.calls = self.calls.saturating_add(made);
    }

    /// Count repairs the calls made.
    pub(crate) fn add_repairs(&mut self, made: usize) {
        self.repairs = self.repairs.saturating_add(made);
    }

    /// Calls of unknown names so far.
    pub fn not_found(&self) -> usize {
        self.not_found
    }

    /// The retries in a row of this tool (ignoring case).
    pub fn retries(&self, tool: &str) -> usize {
        self.retries.get(&tool.to_ascii_lowercase()).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, outcome: Outcome) -> ToolResult {
        ToolResult::new("1", name, "", outcome)
    }

    #[test]
    fn defaults_are_sensible() {
        let limits = RunLimits::default();
        assert_eq!((limits.max_tool_calls, limits.max_not_found, limits.max_retries_per_tool), (128, 3, 3));
    }

    #[test]
    fn a_refused_turn_counts_nothing() {
        let mut budget = RunBudget::new(RunLimits::default().with_max_tool_calls(3));
        let calls: Vec<_> = (0..2).map(|i| ToolCall::new(i.to_string(), "t", "{}")).collect();
        budget.admit(&calls).unwrap();
        assert!(budget.admit(&calls).is_err());
        assert_eq!(budget.calls(), 2);
        budget.admit(&calls[..1]).unwrap();
        assert_eq!(budget.calls(), 3);
    }

    #[test]
    fn not_found_calls_add_up_across_turns() {
        let mut budget = RunBudget::new(RunLimits::default().with_max_not_found(2));
        budget.record(&[result("a", Outcome::NotFound)]).unwrap();
        budget.record(&[result("b", Outcome::NotFound), result("t", Outcome::Success)]).unwrap();
        let err = budget.record(&[result("c", Outcome::NotFound)]).unwrap_err();
        assert_eq!(err, LimitExceeded::NotFound { limit: 2, count: 3, name: "c".into() });
        assert!(err.to_string().contains("`c`"), "{err}");
    }

    #[test]
    fn retries_are_per_tool_in_a_row() {
        let mut budget = RunBudget::new(RunLimits::default().with_max_retries_per_tool(2));
        for _ in 0..2 {
            budget.record(&[result("get_weather", Outcome::InvalidArguments)]).unwrap();
            budget.record(&[result("search", Outcome::Retry)]).unwrap();
        }
        assert_eq!(budget.retries("GET_WEATHER"), 2);
        // A success resets that tool only.
        budget.record(&[result("Get_Weather", Outcome::Success)]).unwrap();
        assert_eq!(budget.retries("get_weather"), 0);
        let err = budget.record(&[result("search", Outcome::InvalidArguments)]).unwrap_err();
        assert_eq!(err, LimitExceeded::Retries { tool: "search".into(), limit: 2, count: 3 });
    }

    #[test]
    fn failures_spend_no_retries() {
        let mut budget = RunBudget::new(RunLimits::default().with_max_retries_per_tool(0));
        let failed = [Outcome::Failed, Outcome::TimedOut, Outcome::Cancelled, Outcome::Panicked];
        budget.record(&failed.map(|outcome| result("t", outcome))).unwrap();
        assert!(budget.record(&[result("t", Outcome::Retry)]).is_err());
    }
}
