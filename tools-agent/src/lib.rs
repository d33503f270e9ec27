//! The agent loop of toolcall: a model, a toolset and a loop that runs
//! the model's calls until it answers.
//!
//! - [`Agent`]: the loop ([`Agent::run`], [`Agent::stream`], each from a
//!   [`RunInput`]: a prompt, a saved transcript or a paused run), its settings
//!   and what a run gives back ([`RunResult`], [`StopReason`]);
//! - [`Model`]: one request, one response (or a stream of [`ModelEvent`]s),
//!   implemented by the provider clients and by
//!   [`testing::ScriptedModel`];
//! - [`OpenAiChat`] (Chat Completions, and the servers that speak it),
//!   [`OpenAiResponses`], [`Anthropic`] (Messages) and [`Gemini`]
//!   (generateContent): the built-in clients, plain and streamed, each a
//!   [`Client`] (key, base URL, headers, retries) over its provider's API;
//! - [`FallbackModel`]: several models as one, the next asked when one is
//!   down (rate limited, overloaded, failing), with the model that
//!   answered recorded ([`ModelName`]);
//! - [`AgentTool`]: an agent as a tool ([`Agent::as_tool`]) in another
//!   agent's toolset (or served over MCP), its run nested in the caller's:
//!   its tokens and calls counted there, its events on the caller's stream
//!   ([`AgentEvent::Nested`]), its span inside the call's, its depth
//!   bounded, a call of its that needs approval pausing the caller's run
//!   ([`Pending::path`], [`Pending::id`]);
//! - [`Handoff`]: an agent handing the conversation to another
//!   ([`Agent::with_handoff`]), which answers from there with its own
//!   instructions, tools and model ([`RunResult::agent`] names it), the
//!   conversation carried as [`HandoffHistory`] says;
//! - [`AnswerType`]: a run that ends in a typed answer ([`Agent::run_as`]),
//!   given natively or through a tool ([`AnswerMode`]);
//! - [`Transcript`] and [`Message`]: the run as provider-neutral data, to
//!   save and continue;
//! - [`RunBudget`] and [`RunLimits`]: what a run may spend across turns;
//! - [`ContextPolicy`]: what is sent kept under a token budget (old tool
//!   results cleared, the oldest turns dropped, older turns summarized:
//!   [`Strategy`], [`Summarizer`]) while the transcript keeps everything;
//! - [`ToolIndex`]: the local tool search (BM25) behind the `tool_search`
//!   function the agent registers when the toolset has tool search on (it
//!   runs as every tool does);
//! - [`RunState`], [`Pending`], [`Decision`]: a run paused for a person's
//!   approval (its sub-agents' calls among its pending ones, with their
//!   path), and what they decided (resumed by [`Agent::run`]);
//!   [`PausedCall`]: how a tool call pauses the run with it, holding its
//!   state and the calls it waits on (an agent tool's sub-agent, a remote
//!   A2A agent waiting for input);
//! - [`Effects`]: the seam a run's side effects go through (model
//!   requests, plain or streamed, tool calls with their [`Approval`], the
//!   wait for a decision), in-process by default ([`InProcess`]), journaled
//!   by a durable engine ([`Agent::run_with`], [`Agent::stream_with`]);
//! - [`Runner`]: a run made elsewhere (a durable engine's worker) and
//!   streamed here, for a server that shows runs;
//! - [`ModelSettings`] and [`ToolChoice`]: how each request is made, the
//!   choice mapped to each provider's fields in one place
//!   ([`Dialect::tool_choice`](toolcall_provider::Dialect::tool_choice));
//!   sampling, [`ReasoningSettings`], [`CacheSettings`] (the prompt cache:
//!   Anthropic breakpoints on by default, OpenAI's key and retention), and
//!   extra JSON for the fields the SDK does not model, refused before
//!   sending where a provider cannot take them;
//! - [`ModelError`], [`AgentError`]: what can go wrong talking to a model;
//!   [`DialectError`]: a toolset the model's dialect cannot express, refused
//!   by [`Agent::new`];
//! - [`ApiKey`] and [`ResendPolicy`]: what every HTTP client shares;
//! - [`testing`]: the test doubles: [`testing::ScriptedModel`], a model
//!   whose answers are written in advance, and a Chat Completions stand-in
//!   for offline use, its replies written in advance
//!   ([`testing::Reply`]), served on loopback, plain and streamed, by
//!   `ScriptedServer` (feature `scripted-server`).
//!
//! Features: `clients` (on by default), the four HTTP clients with
//! reqwest and the server-sent events stack under them (off, the crate is
//! the loop and the model contract, which is what `toolcall-ui`,
//! `toolcall-restate` and `toolcall-session` build on: an application
//! gives them a model); `scripted-server`, the stand-in's server (the
//! facade's feature `agent` brings the crate in with its clients; its
//! features `scripted-server` and `ui` turn the server on); and `otel`, with which
//! a paused run keeps its span's W3C trace context
//! ([`RunState::traceparent`]) and the run that resumes it links its span
//! to it, an OpenTelemetry span link, through tracing-opentelemetry (off,
//! the crate depends on no OpenTelemetry crate; the spans themselves need
//! no feature). It sits on
//! `toolcall-core` (the tools and the toolset that runs their calls) and
//! `toolcall-provider` (each provider's wire format, which the clients send).
#![deny(missing_docs)]

mod agent;
mod agent_tool;
mod answer;
mod approval;
mod budget;
#[cfg(feature = "clients")]
mod clients;
mod context;
mod effects;
mod error;
mod fallback;
mod handoff;
mod model;
mod run;
mod runner;
mod search;
mod settings;
mod stream;
pub mod testing;
mod trace;

pub use agent::{Agent, RunInput, RunResult, StopReason};
pub use agent_tool::{AgentTool, DEFAULT_MAX_DEPTH};
pub use answer::{AnswerMode, AnswerType, Typed};
pub use approval::{Decision, HandedUp, PausedCall, PausedTurn, Pending, RunState, UnknownCall};
pub use budget::{LimitExceeded, RunBudget, RunLimits};
#[cfg(feature = "clients")]
pub use clients::{Anthropic, ApiKey, Client, Gemini, OpenAiChat, OpenAiResponses, ResendPolicy};
pub use context::{ContextPolicy, NativeContext, Strategy, Summarizer};
pub use effects::{Approval, Effects, InProcess, cut_off};
pub use error::{AgentError, ModelError};
pub use fallback::FallbackModel;
pub use handoff::{Handoff, HandoffError, HandoffHistory};
pub use model::{
    ContentAssembler, Model, ModelEvent, ModelName, ModelRequest, ModelResponse, ModelSettings, ModelStream,
    ToolChoice, Usage,
};
pub use runner::Runner;
pub use search::ToolIndex;
pub use settings::{
    CacheRetention, CacheSettings, CacheTtl, ReasoningEffort, ReasoningSettings, ReasoningSummary,
};
pub use stream::AgentEvent;
pub use toolcall_provider::{Content, Message, Reasoning, Transcript};
pub use toolcall_provider::{DialectError, Finish, ToolChoiceError};
