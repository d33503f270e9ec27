//! One model turn: every call at once, each ending in a result for the
//! model, whatever the tool does.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::pin::pin;

use futures::future::Either;
use futures::{FutureExt, StreamExt};
use tracing::Instrument;

use super::approval::unapproved;
use super::{Entry, LayerCall, Next, Toolset, panic_message};
use crate::error::error_object;
use crate::{Outcome, ToolCall, ToolContext, ToolError, ToolResult};

/// How the race between the tool, the clock and the cancellation ended.
enum Ended {
    Returned(Result<crate::Output, ToolError>),
    Panicked(Box<dyn Any + Send>),
    TimedOut,
    Cancelled,
}

impl Toolset {
    /// Run one turn's calls concurrently and return their results in call
    /// order.
    ///
    /// Every call gets a result: a tool's error, panic or timeout becomes
    /// that call's result and never touches the others (see [`Toolset::call`]).
    /// Calls run on the current task, interleaved at their `.await` points:
    /// a tool with heavy CPU work should move it to
    /// `tokio::task::spawn_blocking`. At most [`RunOptions::max_concurrency`](super::RunOptions::max_concurrency)
    /// calls run at once; unbounded by default.
    ///
    /// ```
    /// # use tools_core::{JsonObject, Tool, ToolContext, ToolFuture};
    /// # struct Echo(JsonObject);
    /// # impl Tool for Echo {
    /// #     fn name(&self) -> &str { "echo" }
    /// #     fn description(&self) -> &str { "" }
    /// #     fn parameters(&self) -> &JsonObject { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, input: &'a str) -> ToolFuture<'a> {
    /// #         Box::pin(async move { Ok(input.to_owned()) })
    /// #     }
    /// # }
    /// # let echo = Echo(serde_json::json!({"type": "object"}).as_object().unwrap().clone());
    /// use tools_core::{Outcome, ToolCall, toolset::Toolset};
    ///
    /// let tools = Toolset::builder().add(echo).build().unwrap();
    /// let calls = [ToolCall::new("1", "echo", "{}"), ToolCall::new("2", "nope", "{}")];
    /// let results = futures::executor::block_on(tools.run(&ToolContext::new(), &calls));
    /// assert_eq!(results[0].outcome, Outcome::Success);
    /// assert_eq!(results[1].outcome, Outcome::NotFound);
    /// assert!(results[1].content.contains("echo"));
    /// ```
    pub async fn run(&self, ctx: &ToolContext, calls: &[ToolCall]) -> Vec<ToolResult> {
        self.run_turn(ctx, calls, false).await
    }

    /// Run one turn's calls that a person approved: as [`Toolset::run`],
    /// except that calls which need approval ([`Toolset::needs_approval`])
    /// run instead of being denied.
    pub async fn run_approved(&self, ctx: &ToolContext, calls: &[ToolCall]) -> Vec<ToolResult> {
        self.run_turn(ctx, calls, true).await
    }

    async fn run_turn(&self, ctx: &ToolContext, calls: &[ToolCall], approved: bool) -> Vec<ToolResult> {
        match (calls, self.options.max_concurrency) {
            ([], _) => Vec::new(),
            // One call needs no combinator.
            ([call], _) => vec![self.call_gated(ctx, call, approved).await],
            (_, None) => self.run_unbounded(ctx, calls, approved).await,
            (_, Some(limit)) => {
                // The futures are made first: a stream holding the
                // closure that makes them would not be provably `Send`.
                let pending: Vec<_> = calls.iter().map(|call| self.call_gated(ctx, call, approved)).collect();
                futures::stream::iter(pending).buffered(limit).collect().await
            }
        }
    }

    /// Run one call and turn however it ends into its result.
    ///
    /// The name is looked up ignoring case; an unknown name yields
    /// [`Outcome::NotFound`] with the registered names in the content. The
    /// tool runs with `ctx.for_call(id, name)`, whose deadline is the
    /// earlier of `ctx`'s and the call's timeout (set at registration, else
    /// [`Tool::timeout`](crate::Tool::timeout), else the toolset's
    /// [`RunOptions::default_timeout`](super::RunOptions::default_timeout)).
    /// When the deadline passes or `ctx` is cancelled, the tool's future is
    /// dropped and the result says so; a panic is caught and reported as
    /// [`Outcome::Panicked`]. Each call is traced in a `tool_call` span and
    /// counted in [`Toolset::counts`].
    ///
    /// A call that needs approval ([`Toolset::needs_approval`]) does not
    /// run: its result is [`Outcome::Denied`], saying so.
    ///
    /// A call with a timeout or a deadline must run inside a Tokio runtime
    /// with its time driver enabled; without one, calls run on any executor.
    pub async fn call(&self, ctx: &ToolContext, call: &ToolCall) -> ToolResult {
        self.call_gated(ctx, call, false).await
    }

    /// Run one call that a person approved ([`Toolset::run_approved`]).
    pub async fn call_approved(&self, ctx: &ToolContext, call: &ToolCall) -> ToolResult {
        self.call_gated(ctx, call, true).await
    }

    async fn call_gated(&self, ctx: &ToolContext, call: &ToolCall, approved: bool) -> ToolResult {
        match self.entry(&call.name) {
            Some(entry) => {
                let held = !approved && self.entry_needs_approval(ctx, entry, call);
                self.call_entry(ctx, entry, call, held).await
            }
            None => self.not_found(call),
        }
    }

    /// Every call at once. `join_all` polls up to 30 futures in one
    /// allocation, and past that gives each its own task node; a turn of up
    /// to a few hundred calls is cheaper as groups of at most 30, at the
    /// price of polling a group's pending calls whenever one of them wakes.
    async fn run_unbounded(&self, ctx: &ToolContext, calls: &[ToolCall], approved: bool) -> Vec<ToolResult> {
        const GROUP: usize = 30;
        const GROUPED_MAX: usize = 300;
        let each = |call| self.call_gated(ctx, call, approved);
        if calls.len() <= GROUP || calls.len() > GROUPED_MAX {
            return futures::future::join_all(calls.iter().map(each)).await;
        }
        let size = calls.len().div_ceil(calls.len().div_ceil(GROUP));
        let groups = calls.chunks(size).map(|group| futures::future::join_all(group.iter().map(each)));
        futures::future::join_all(groups).await.into_iter().flatten().collect()
    }

    /// Run a registered tool's call; a `held` one (it needs approval and has
    /// none) ends denied without running, seen like any other ending.
    async fn call_entry(&self, ctx: &ToolContext, entry: &Entry, call: &ToolCall, held: bool) -> ToolResult {
        let tool = &*entry.tool;
        let span = tracing::info_span!(
            "tool_call",
            tool = tool.name(),
            call_id = call.id.as_str(),
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        // Reading the clock costs as much as a trivial tool: only when
        // someone will see the duration.
        let observed = !self.observers.is_empty() || !entry.options.observers.is_empty();
        let started = (!span.is_disabled() || observed).then(std::time::Instant::now);
        self.notify_start(entry, call);

        let timeout = entry.options.timeout.or_else(|| tool.timeout()).or(self.options.default_timeout);
        // The tool's own name: a prefix or rename stays out of its logic.
        let mut child = ctx.for_call(call.id.as_str(), std::sync::Arc::clone(&entry.own_name));
        // Whether the call's own timeout, rather than the turn's deadline, is
        // the one that binds: it decides what a timed-out call reports.
        let mut own_timeout = None;
        if let Some(timeout) = timeout {
            let deadline = tokio::time::Instant::now() + timeout;
            if ctx.deadline().is_none_or(|outer| deadline <= outer) {
                child = child.with_deadline(deadline);
                own_timeout = Some(timeout);
            }
        }

        let ended = async {
            // The tool's own `call` runs inside the guarded future, so a panic
            // while building its future is caught as well.
            // With no layers, `run` is the tool's own call.
            let layered = LayerCall { tool, ctx: &child, id: &call.id, arguments: &call.arguments };
            let run =
                AssertUnwindSafe(async { Next::new(&self.layers, &entry.options.layers).run(layered).await })
                    .catch_unwind();
            // The tool is polled first, so one that finishes without waiting
            // never registers with the cancellation token (a lock and a list
            // insert); a turn cancelled before the call starts never runs it.
            // The race waits on the turn's token: the call's own is made only
            // if the tool asks for it.
            let raced = async {
                if held {
                    return Ended::Returned(Err(unapproved(tool.name())));
                }
                if child.is_cancelled() {
                    return Ended::Cancelled;
                }
                // `select` polls its first future first.
                match futures::future::select(pin!(run), pin!(child.cancelled_from_above())).await {
                    Either::Left((ended, _)) => ended.map_or_else(Ended::Panicked, Ended::Returned),
                    Either::Right(((), _)) => Ended::Cancelled,
                }
            };
            match child.deadline() {
                Some(deadline) => tokio::time::timeout_at(deadline, raced).await.unwrap_or(Ended::TimedOut),
                None => raced.await,
            }
        }
        .instrument(span.clone())
        .await;

        let cap = entry.options.output_cap.unwrap_or(self.options.output_cap);
        let ended = match ended {
            Ended::Returned(Ok(output)) => Ended::Returned(cap.apply(output, tool.name())),
            other => other,
        };
        let (mut parts, mut artifact) = (Vec::new(), None);
        let (outcome, content) = match ended {
            Ended::Returned(Ok(output)) => {
                (parts, artifact) = (output.parts, output.artifact);
                (Outcome::Success, output.text)
            }
            Ended::Returned(Err(error)) => (error.outcome(), error.model_content()),
            Ended::Panicked(payload) => {
                // The panic message stays in the logs: it may hold internals
                // the model has no use for.
                let _enter = span.enter();
                tracing::error!(panic = panic_message(&*payload), "tool panicked");
                (Outcome::Panicked, error_object(&format!("tool `{}` panicked", tool.name())))
            }
            Ended::TimedOut => {
                let message = match own_timeout {
                    Some(timeout) => format!("tool `{}` timed out after {timeout:?}", tool.name()),
                    None => format!("tool `{}` did not finish before the turn's deadline", tool.name()),
                };
                (Outcome::TimedOut, error_object(&message))
            }
            Ended::Cancelled => (
                Outcome::Cancelled,
                error_object(&format!("the call of tool `{}` was cancelled", tool.name())),
            ),
        };

        let elapsed = started.map(|started| started.elapsed()).unwrap_or_default();
        span.record("outcome", outcome.as_str());
        span.record("duration_us", elapsed.as_micros() as u64);
        entry.counters.record(outcome);
        let result =
            ToolResult { id: call.id.clone(), name: call.name.clone(), content, outcome, parts, artifact };
        self.notify_end(entry, call, &result, elapsed);
        result
    }

    fn not_found(&self, call: &ToolCall) -> ToolResult {
        self.not_found.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::warn!(tool = call.name.as_str(), call_id = call.id.as_str(), "tool not found");
        self.notify_not_found(call);
        let message = if self.is_empty() {
            format!("there is no tool named `{}`, and no tools are available", call.name)
        } else {
            let names: Vec<&str> = self.names().collect();
            format!("there is no tool named `{}`; the available tools are: {}", call.name, names.join(", "))
        };
        ToolResult::new(call.id.clone(), call.name.clone(), error_object(&message), Outcome::NotFound)
    }
}
