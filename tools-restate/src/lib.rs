//! Durable agent runs on [Restate](https://restate.dev): a run that
//! survives a crash, waits days for a person's approval and spreads over
//! many worker processes.
//!
//! - [`AgentRun`]: the agent loop of `toolcall-agent` as a Restate workflow
//!   (one workflow per run id), named `AgentRun` or as you name it
//!   ([`AgentRun::named`]), with the handlers a person's decisions come
//!   through (call by call if need be: they accumulate);
//! - [`Journal`]: the loop's [`Effects`](toolcall_agent::Effects) over a
//!   workflow's context: each model request (plain or streamed) and each
//!   tool call a journaled step, a model request that fails transiently
//!   retried as a [`ModelRetry`] says, the wait for decisions one durable
//!   promise per held call; a step Restate failed is the run's
//!   `ModelError::Engine`, with the [`StepFailed`] as its source;
//! - [`RunResult`](toolcall_agent::RunResult) (the same value an
//!   in-process run gives), [`Waiting`], [`Decisions`]: what goes in and
//!   out of the handlers, as JSON;
//! - [`serve`], [`serve_on`]: a worker, the workflow served over HTTP for
//!   a Restate server to call, at an address or on a listener bound
//!   beforehand (an address it cannot listen on is a [`ServeError`]
//!   naming it); [`serve_runs`], [`serve_runs_on`]: several agents from
//!   one worker, each a workflow under its own name;
//! - [`Step`]: a run's progress, written to its workflow's state step by
//!   step as the run goes and read through its `steps` handler;
//!   [`Remote`]: runs started on the workers and followed from another
//!   process, a [`Runner`](toolcall_agent::Runner) a chat server takes
//!   (`ChatServer::with_runner`): a page in front of durable runs;
//!   [`Start`]: what the `run` handler takes (a prompt, or a transcript or
//!   a paused run);
//! - [`Admin`]: what the runs wait on, read from the server's state
//!   through its admin API, with no worker up.
//!
//! A worker; register it with the Restate server once (its admin API:
//! `POST /deployments {"uri": "http://127.0.0.1:9080"}`), then start runs
//! through the ingress (`POST /AgentRun/{run id}/run` with the prompt):
//!
//! ```no_run
//! use toolcall_agent::{Agent, OpenAiChat};
//! use toolcall_core::toolset::Toolset;
//!
//! # async fn worker() -> Result<(), Box<dyn std::error::Error>> {
//! let agent = Agent::new(OpenAiChat::new("gpt-4.1-mini"), Toolset::new())?;
//! toolcall_restate::serve(agent, "127.0.0.1:9080".parse()?).await?;
//! # Ok(()) }
//! ```
//!
//! What each kind of step guarantees after a crash, with what replays it:
//!
//! | step | journaled as | after a crash |
//! |---|---|---|
//! | model request | one `ctx.run`, the whole [`ModelResponse`](toolcall_agent::ModelResponse); a transient error (timeout, network, 429/5xx after the client's resends) tried again as the [`ModelRetry`] says (by default 3 attempts, 1 s then 2 s apart), then journaled; any other error journaled at once; a journaled error ends the run, naming the model, the provider, the attempts and the cause | a response already journaled is given back, never asked again (streamed, its text comes as one delta); one cut before it was journaled is asked again |
//! | call of an idempotent or read-only tool | its turn's `begin` step, then one `ctx.run`, the [`ToolResult`](toolcall_core::ToolResult) | a journaled result is given back; a call cut mid-flight runs again, with the same idempotency key: a tool that sends its key to a backend applying one effect per key takes effect exactly once |
//! | call of any other tool | its turn's `begin` step, then one `ctx.run` | runs at most once: a journaled result is given back; a call cut after its turn's `begin` was journaled does not run again, and the model reads that its result is unknown ([`unknown_result`]) |
//! | call of an agent tool (its spec [has nested steps](toolcall_core::ToolSpec::has_nested_steps)) | none of its own: its sub-agent's requests and calls, each as above ([`Effects::below`](toolcall_agent::Effects::below)) | the sub-agent goes on where it was: nothing it did is done again, and what it spent is still the run's usage |
//! | approval | the held calls in the workflow's state, one durable workflow promise per call (`decision:{wait}:{call id}`), resolved only by the `decide` handler | the run waits across restarts, for days; each decision, sent through the ingress from any machine, is recorded on its call's promise, and the run goes on once every held call has one |
//!
//! Exactly-once side effects are at-least-once runs plus a key the
//! effect's backend dedupes by: every call of a durable run has an
//! [`idempotency_key`](toolcall_core::ToolContext::idempotency_key),
//! `{run id}:{turn}:{call id}` (`{name}/{run id}:{turn}:{call id}` for an
//! agent served under a name of its own), the same on every replay. A tool that sends
//! it with its effect (as an `Idempotency-Key` header, say) and is marked
//! `idempotent` is run again after a cut, and its backend applies the
//! effect once:
//!
//! ```
//! use toolcall_core::{ToolContext, ToolError};
//! use toolcall_macros::tool;
//!
//! /// Charge a customer.
//! #[tool(args, idempotent, crate = "toolcall_core")]
//! async fn charge(ctx: &ToolContext, customer: String, cents: u64) -> Result<String, ToolError> {
//!     let key = ctx.idempotency_key().ok_or_else(|| ToolError::failed("no idempotency key"))?;
//!     // POST to the payment API with the header `Idempotency-Key: {key}`.
//!     Ok(format!("charged {customer} {cents} cents under {key}"))
//! }
//! ```
//!
//! A turn's calls run at once, as in process: the `begin` step, then the
//! calls together, the agent tools' sub-agents taking their steps first,
//! then each other call's result journaled as soon as it and the calls
//! before it are done, in call order. The journal alone takes one step at
//! a time: restate-sdk 0.13 runs two `ctx.run` steps awaited at once, but
//! cannot replay them after a crash cut them (the replay stops on a
//! journal mismatch, `RT0016`, and the run stays in backoff). A call as an
//! invocation of its own, which Restate can await together with others,
//! would cost a round trip through the server and take the call away from
//! its run's context (the tools a `prepare` step showed, the agent a
//! handoff went to, the run's extensions).
#![deny(missing_docs)]

mod admin;
mod journal;
mod progress;
mod remote;
mod serve;
mod workflow;

pub use admin::{Admin, AdminError};
pub use journal::{Decisions, Journal, ModelRetry, StepFailed, unknown_result};
pub use progress::Step;
pub use remote::{Remote, RemoteError};
pub use serve::{ServeError, serve, serve_on, serve_runs, serve_runs_on};
pub use workflow::{AgentRun, DEFAULT_NAME, InvalidName, Start, Waiting};
