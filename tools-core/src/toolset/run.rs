//! One model turn: every call at once, each ending in a result for the
//! model, whatever the tool does.
//!
//! Most calls finish the first time they are polled (a computation, a
//! lookup, a cache hit), so a call starts by being polled once, in place,
//! inside its span and panic guard; only a call that is still waiting
//! becomes a future of its own, raced against its deadline and the turn's
//! cancellation. A future per call holding all of that, moved into a join
//! and polled there, was most of what the executor cost a call.

use std::any::Any;
use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::future::Either;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use tracing::{Instrument, Span};

use super::approval::unapproved;
use super::{Entry, LayerCall, Next, Toolset, panic_message};
use crate::error::error_object;
use crate::{Outcome, Output, OutputFuture, ToolCall, ToolContext, ToolError, ToolResult};

/// How the race between the tool, the clock and the cancellation ended.
enum Ended {
    Returned(Result<Output, ToolError>),
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
    /// `tokio::task::spawn_blocking`. At most [`TurnOptions::max_concurrency`](super::TurnOptions::max_concurrency)
    /// calls run at once; unbounded by default.
    ///
    /// ```
    /// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Echo(ToolSpec);
    /// # impl Tool for Echo {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
    /// #         Box::pin(async move { Ok(Output::text(arguments)) })
    /// #     }
    /// # }
    /// # let echo = Echo(ToolSpec::from_parameters("echo", "", Parameters::of::<()>()));
    /// use toolcall_core::{Outcome, ToolCall, toolset::Toolset};
    ///
    /// let tools = Toolset::builder().add(echo).build().unwrap();
    /// let calls = [ToolCall::new("1", "echo", "{}"), ToolCall::new("2", "nope", "{}")];
    /// let results = futures::executor::block_on(tools.run_turn(&ToolContext::new(), &calls));
    /// assert_eq!(results[0].outcome, Outcome::Success);
    /// assert_eq!(results[1].outcome, Outcome::NotFound);
    /// assert!(results[1].content.contains("echo"));
    /// ```
    pub async fn run_turn(&self, ctx: &ToolContext, calls: &[ToolCall]) -> Vec<ToolResult> {
        self.turn(ctx, calls, false).await
    }

    /// Run one turn's calls that a person approved: as [`Toolset::run_turn`],
    /// except that calls which need approval ([`Toolset::needs_approval`])
    /// run instead of being denied.
    pub async fn run_turn_approved(&self, ctx: &ToolContext, calls: &[ToolCall]) -> Vec<ToolResult> {
        self.turn(ctx, calls, true).await
    }

    async fn turn(&self, ctx: &ToolContext, calls: &[ToolCall], approved: bool) -> Vec<ToolResult> {
        if let [call] = calls {
            return vec![self.call_gated(ctx, call, approved).await];
        }
        let limit = self.options.max_concurrency.unwrap_or(usize::MAX);
        // Each call's context lives here, beside the futures that borrow it.
        let mut contexts: Vec<Option<ToolContext>> = calls.iter().map(|_| None).collect();
        let mut unstarted = calls.iter().zip(contexts.iter_mut());
        // Calls start in order, so a result is pushed as its call starts:
        // the ended one's own, a waiting one's stand-in until it ends.
        let mut results = Vec::with_capacity(calls.len());
        // Only the woken calls are polled again: a turn's cost stays linear
        // in its calls however many wait at once.
        let mut waiting = FuturesUnordered::new();
        poll_fn(|cx| {
            loop {
                while waiting.len() < limit {
                    let Some((call, slot)) = unstarted.next() else { break };
                    match self.start(ctx, call, approved, slot, cx) {
                        Started::Ended(result) => results.push(result),
                        Started::Waiting(rest) => {
                            let index = results.len();
                            results.push(ToolResult::new(
                                call.id.clone(),
                                call.name.clone(),
                                "",
                                Outcome::Cancelled,
                            ));
                            waiting.push(rest.map(move |result| (index, result)));
                        }
                    }
                }
                // Empty only once every call has started and ended.
                match waiting.poll_next_unpin(cx) {
                    Poll::Ready(Some((index, result))) => results[index] = result,
                    Poll::Ready(None) => return Poll::Ready(()),
                    Poll::Pending => return Poll::Pending,
                }
            }
        })
        .await;
        results
    }

    /// Run one call and turn however it ends into its result.
    ///
    /// The name is looked up ignoring case; an unknown name yields
    /// [`Outcome::NotFound`] with the registered names in the content. The
    /// tool runs with `ctx.for_call(id, name)`, whose deadline is the
    /// earlier of `ctx`'s and the call's timeout (set at registration, else
    /// [`ToolSpec::timeout`](crate::ToolSpec::timeout), else the toolset's
    /// [`TurnOptions::default_timeout`](super::TurnOptions::default_timeout)).
    /// When the deadline passes or `ctx` is cancelled, the tool's future is
    /// dropped and the result says so; a panic is caught and reported as
    /// [`Outcome::Panicked`]. Each call is traced in a `tool_call` span and
    /// counted in [`Toolset::counts`].
    ///
    /// A call that needs approval ([`Toolset::needs_approval`]) does not
    /// run: its result is [`Outcome::Denied`], saying so.
    ///
    /// A call that waits, with a timeout or a deadline, must run inside a
    /// Tokio runtime with its time driver enabled; without one, calls run on
    /// any executor.
    pub async fn call(&self, ctx: &ToolContext, call: &ToolCall) -> ToolResult {
        self.call_gated(ctx, call, false).await
    }

    /// Run one call that a person approved ([`Toolset::run_turn_approved`]).
    pub async fn call_approved(&self, ctx: &ToolContext, call: &ToolCall) -> ToolResult {
        self.call_gated(ctx, call, true).await
    }

    async fn call_gated(&self, ctx: &ToolContext, call: &ToolCall, approved: bool) -> ToolResult {
        let mut slot = None;
        let waker = poll_fn(|cx| Poll::Ready(cx.waker().clone())).await;
        let started = self.start(ctx, call, approved, &mut slot, &mut Context::from_waker(&waker));
        match started {
            Started::Ended(result) => result,
            Started::Waiting(rest) => rest.await,
        }
    }

    /// Start one call: look its tool up, make its context in `slot`, and
    /// poll it once. A call that ended (or never ran: not found, held for
    /// approval, cancelled before it started) has its result; one still
    /// waiting, the future of the rest of it.
    fn start<'a>(
        &'a self,
        turn: &ToolContext,
        call: &'a ToolCall,
        approved: bool,
        slot: &'a mut Option<ToolContext>,
        cx: &mut Context<'_>,
    ) -> Started<impl Future<Output = ToolResult> + Send + use<'a>> {
        let Some(entry) = self.entry(&call.name) else {
            return Started::Ended(self.not_found(call));
        };
        let held = !approved && self.entry_needs_approval(turn, entry, call);
        let tool = &*entry.tool;
        let name = tool.spec().name();
        // OpenTelemetry's execute_tool span (GenAI semantic conventions
        // v1.41.0, docs/gen-ai/gen-ai-spans.md#execute-tool-span), in the
        // field names tracing-opentelemetry maps: `otel.name` to the span's
        // name, `otel.kind` to its kind, the dotted names to attributes.
        let span = tracing::info_span!(
            "tool_call",
            otel.name = format!("execute_tool {name}"),
            otel.kind = "internal",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = name,
            gen_ai.tool.call.id = call.id.as_str(),
            gen_ai.tool.type = "function",
            gen_ai.tool.call.arguments = tracing::field::Empty,
            gen_ai.tool.call.result = tracing::field::Empty,
            "error.type" = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        if self.options.trace_content {
            span.record("gen_ai.tool.call.arguments", call.arguments.as_str());
        }
        // Reading the clock costs as much as a trivial tool: only when
        // someone will see the duration.
        let observed = !self.observers.is_empty() || !entry.options.observers.is_empty();
        let started = (!span.is_disabled() || observed).then(Instant::now);
        self.notify_start(entry, call);

        let timeout =
            entry.options.timeout.or_else(|| tool.spec().timeout()).or(self.options.default_timeout);
        // The tool's own name: a prefix or rename stays out of its logic.
        let mut child = turn.for_call(call.id.clone(), entry.own_name.clone());
        if approved {
            child = child.approved();
        }
        // Whether the call's own timeout, rather than the turn's deadline, is
        // the one that binds: it decides what a timed-out call reports.
        let mut own_timeout = None;
        if let Some(timeout) = timeout {
            let deadline = tokio::time::Instant::now() + timeout;
            if turn.deadline().is_none_or(|outer| deadline <= outer) {
                child = child.with_deadline(deadline);
                own_timeout = Some(timeout);
            }
        }
        let ctx = &*slot.insert(child);
        let running = Running { toolset: self, entry, call, ctx, span, started, own_timeout };
        if held {
            return Started::Ended(running.end(Ended::Returned(Err(unapproved(tool.spec().name())))));
        }
        // A turn cancelled before the call starts never runs it.
        if ctx.is_cancelled() {
            return Started::Ended(running.end(Ended::Cancelled));
        }
        // The tool's own `call` runs inside the guard, so a panic while
        // building its future is caught as well. With no layers, the chain
        // is the tool's own call.
        let first = running.span.in_scope(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let layered = LayerCall { tool, ctx, id: &call.id, arguments: &call.arguments };
                let mut future = Next::new(&self.layers, &entry.options.layers).call(layered);
                match future.as_mut().poll(cx) {
                    Poll::Ready(output) => Err(output),
                    Poll::Pending => Ok(future),
                }
            }))
        });
        match first {
            Ok(Ok(future)) => Started::Waiting(running.wait(future)),
            Ok(Err(output)) => Started::Ended(running.end(Ended::Returned(output))),
            Err(payload) => Started::Ended(running.end(Ended::Panicked(payload))),
        }
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

/// How starting a call went.
enum Started<W> {
    /// The call ended (or never ran) and this is its result.
    Ended(ToolResult),
    /// The call waits; this future ends it.
    Waiting(W),
}

/// A call that started, with what its ending is reported with.
struct Running<'a> {
    toolset: &'a Toolset,
    entry: &'a Entry,
    call: &'a ToolCall,
    ctx: &'a ToolContext,
    span: Span,
    started: Option<Instant>,
    own_timeout: Option<Duration>,
}

impl<'a> Running<'a> {
    /// The rest of a call whose first poll found it waiting: its future
    /// raced against its deadline and the turn's cancellation. The race
    /// waits on the turn's token: the call's own is made only if the tool
    /// asks for it.
    async fn wait(self, future: OutputFuture<'a>) -> ToolResult {
        let ctx = self.ctx;
        let raced = async {
            // `select` polls its first future first.
            let guarded = AssertUnwindSafe(future).catch_unwind();
            match futures::future::select(guarded, pin!(ctx.cancelled_from_above())).await {
                Either::Left((ended, _)) => ended.map_or_else(Ended::Panicked, Ended::Returned),
                Either::Right(((), _)) => Ended::Cancelled,
            }
        };
        let timed = async {
            match ctx.deadline() {
                Some(deadline) => tokio::time::timeout_at(deadline, raced).await.unwrap_or(Ended::TimedOut),
                None => raced.await,
            }
        };
        let ended = timed.instrument(self.span.clone()).await;
        self.end(ended)
    }

    /// The call's result, however it ended: counted, traced and told to the
    /// observers.
    fn end(self, ended: Ended) -> ToolResult {
        let Self { toolset, entry, call, span, started, own_timeout, .. } = self;
        let tool = &*entry.tool;
        let cap = entry.options.output_cap.unwrap_or(toolset.options.output_cap);
        let ended = match ended {
            Ended::Returned(Ok(output)) => Ended::Returned(cap.apply(output, tool.spec().name())),
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
                (Outcome::Panicked, error_object(&format!("tool `{}` panicked", tool.spec().name())))
            }
            Ended::TimedOut => {
                let message = match own_timeout {
                    Some(timeout) => format!("tool `{}` timed out after {timeout:?}", tool.spec().name()),
                    None => {
                        format!("tool `{}` did not finish before the turn's deadline", tool.spec().name())
                    }
                };
                (Outcome::TimedOut, error_object(&message))
            }
            Ended::Cancelled => (
                Outcome::Cancelled,
                error_object(&format!("the call of tool `{}` was cancelled", tool.spec().name())),
            ),
        };

        let elapsed = started.map(|started| started.elapsed()).unwrap_or_default();
        span.record("outcome", outcome.as_str());
        span.record("duration_us", elapsed.as_micros() as u64);
        if outcome == Outcome::Success {
            if toolset.options.trace_content {
                span.record("gen_ai.tool.call.result", content.as_str());
            }
        } else {
            // The outcome is the low-cardinality class the conventions ask
            // of `error.type`; the message stays in the result.
            span.record("error.type", outcome.as_str());
            span.record("otel.status_code", "error");
        }
        entry.counters.record(outcome);
        let result =
            ToolResult { id: call.id.clone(), name: call.name.clone(), content, outcome, parts, artifact };
        toolset.notify_end(entry, call, &result, elapsed);
        result
    }
}
