//! The per-turn prepare step: which of a toolset's tools the model sees in
//! a turn, decided from the turn's context.

use std::borrow::Cow;
use std::sync::Arc;

use super::{Entry, Toolset};
use crate::{Tool, ToolContext};

/// A prepare step: whether the model sees this tool this turn.
pub(super) type PrepareStep = Arc<dyn Fn(&ToolContext, &dyn Tool) -> bool + Send + Sync>;

impl Toolset {
    /// Show a tool to the model in a turn only when `step` says so, given
    /// the turn's context (its extensions hold whatever the decision needs:
    /// the user's plan, a phase the tools moved on, a feature flag). Every
    /// step must say yes. The agent loop asks [`Toolset::prepared`] once per
    /// turn: the tools hidden that turn are not offered, and a call of one
    /// is answered as an unknown tool. A step runs once per tool per turn:
    /// keep it quick.
    ///
    /// ```
    /// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolSpec};
    /// # struct Named(ToolSpec);
    /// # impl Tool for Named {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// # fn tool(name: &'static str) -> Named {
    /// #     Named(ToolSpec::from_parameters(name, "", Parameters::of::<()>()))
    /// # }
    /// use toolcall_core::{ToolContext, Toolset};
    ///
    /// /// Set by the application once the user signed in.
    /// #[derive(Clone)]
    /// struct SignedIn;
    ///
    /// # fn main() -> Result<(), toolcall_core::toolset::ToolsetError> {
    /// let tools = Toolset::builder()
    ///     .add(tool("search"))
    ///     .add(tool("account_delete"))
    ///     .build()?
    ///     .with_prepare(|ctx, tool| !tool.spec().name().starts_with("account_") || ctx.get::<SignedIn>().is_some());
    ///
    /// let guest = ToolContext::new();
    /// assert_eq!(tools.prepared(&guest).names().collect::<Vec<_>>(), ["search"]);
    /// let user = ToolContext::new().with_extension(SignedIn);
    /// assert_eq!(tools.prepared(&user).names().collect::<Vec<_>>(), ["search", "account_delete"]);
    /// # Ok(()) }
    /// ```
    pub fn with_prepare(
        mut self,
        step: impl Fn(&ToolContext, &dyn Tool) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.prepare.push(Arc::new(step));
        self
    }

    /// The tools the model sees in a turn with this context: the ones every
    /// prepare step says yes to ([`Toolset::with_prepare`]; a tool merged
    /// from another toolset answers to that toolset's steps as well).
    ///
    /// It is this toolset itself, borrowed, when there is no step or every
    /// tool is shown: nothing is cloned. Otherwise it is a toolset of the
    /// shown tools that shares their registrations, counters, layers,
    /// observers and approval rules; a call of a hidden tool is answered
    /// as an unknown tool, listing the shown ones. The native web search
    /// follows its fallback function when it has one, and is always shown
    /// when it has none.
    pub fn prepared(&self, ctx: &ToolContext) -> Cow<'_, Toolset> {
        let shown = |entry: &Entry| {
            self.prepare.iter().chain(&entry.options.prepare).all(|step| step(ctx, &*entry.tool))
        };
        if self.prepare.is_empty() && self.tools.iter().all(|entry| entry.options.prepare.is_empty()) {
            return Cow::Borrowed(self);
        }
        let hidden: Vec<bool> = self.tools.iter().map(|entry| !shown(entry)).collect();
        if !hidden.contains(&true) {
            return Cow::Borrowed(self);
        }
        let mut prepared = self.clone();
        let mut hidden = hidden.into_iter();
        prepared.retain(|_| !hidden.next().unwrap_or(false));
        Cow::Owned(prepared)
    }
}
