//! Which calls wait for a person's approval: the tool's own declaration,
//! a predicate of its registration, the toolset's rules. A call that needs
//! approval never runs through [`Toolset::run_turn`]; it runs through
//! [`Toolset::run_turn_approved`] once someone said yes.

use std::sync::Arc;

use serde_json::Value;

use super::{Entry, ToolOptions, Toolset};
use crate::{Tool, ToolCall, ToolContext, ToolError};

/// A predicate over one call: its context and its arguments as JSON.
pub(super) type CallRule = Arc<dyn Fn(&ToolContext, &Value) -> bool + Send + Sync>;

/// A toolset rule over the tool itself (its annotations, its name).
pub(super) type ToolRule = Arc<dyn Fn(&dyn Tool) -> bool + Send + Sync>;

impl ToolOptions {
    /// Hold a call of this tool for approval when `rule` says so, given the
    /// call's context and arguments (arguments that are not JSON are held:
    /// the rule cannot clear what it cannot read).
    ///
    /// ```
    /// use toolcall_core::toolset::ToolOptions;
    /// // Transfers above 100 wait for a person.
    /// let options = ToolOptions::new().with_approval_when(|_ctx, args| args["amount"].as_f64().is_none_or(|a| a > 100.0));
    /// # let _ = options;
    /// ```
    pub fn with_approval_when(
        mut self,
        rule: impl Fn(&ToolContext, &Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.approval = Some(Arc::new(rule));
        self
    }
}

impl Toolset {
    /// This toolset holding every call of the tools `rule` picks for
    /// approval, for tools registered before or after, e.g. every
    /// destructive tool. A tool the rule picks stays held when its toolset
    /// is merged into another, and when it is prefixed, renamed or
    /// re-described ([`Toolset::merge`]): composition never clears an
    /// approval.
    ///
    /// ```
    /// use toolcall_core::Toolset;
    /// let tools = Toolset::new().with_approval_rule(|tool| tool.spec().annotations().destructive == Some(true));
    /// ```
    pub fn with_approval_rule(mut self, rule: impl Fn(&dyn Tool) -> bool + Send + Sync + 'static) -> Self {
        self.approval_rules.push(Arc::new(rule));
        self
    }

    /// Whether this call waits for a person's approval: its tool declares
    /// it ([`ToolSpec::needs_approval`](crate::ToolSpec::needs_approval)), its registration's predicate says so
    /// ([`ToolOptions::with_approval_when`]), or a toolset rule picks the
    /// tool ([`Toolset::with_approval_rule`]). A call of no tool needs none:
    /// it cannot run.
    pub fn needs_approval(&self, ctx: &ToolContext, call: &ToolCall) -> bool {
        self.entry(&call.name).is_some_and(|entry| self.entry_needs_approval(ctx, entry, call))
    }

    pub(super) fn entry_needs_approval(&self, ctx: &ToolContext, entry: &Entry, call: &ToolCall) -> bool {
        let tool = &*entry.tool;
        tool.spec().needs_approval()
            || entry.options.held
            || self.approval_rules.iter().any(|rule| rule(tool))
            || entry.options.approval.as_ref().is_some_and(|rule| {
                serde_json::from_str::<Value>(&call.arguments).map_or(true, |arguments| rule(ctx, &arguments))
            })
    }
}

/// What a call that needs approval answers when it is run without one.
pub(super) fn unapproved(tool: &str) -> ToolError {
    ToolError::Denied(format!(
        "tool `{tool}` needs a person's approval before it runs, and none was given: it did not run"
    ))
}
