//! The agent loop of the tools SDK: a model, a toolset and a loop that runs
//! the model's calls until it answers.
//!
//! - [`Agent`]: the loop ([`Agent::run`], [`Agent::stream`]), its settings
//!   and what a run gives back ([`RunResult`], [`StopReason`]);
//! - [`Model`]: one request, one response (or a stream of [`ModelEvent`]s),
//!   implemented by the provider clients and by [`ScriptedModel`];
//! - [`OpenAiChat`] (Chat Completions, and the servers that speak it),
//!   [`OpenAiResponses`], [`Anthropic`] (Messages) and [`Gemini`]
//!   (generateContent): the built-in clients, plain and streamed;
//! - [`Transcript`] and [`Message`]: the run as provider-neutral data, to
//!   save and continue;
//! - [`RunBudget`] and [`RunLimits`]: what a run may spend across turns;
//! - [`RunState`], [`Decision`]: a run paused for a person's approval, and
//!   what they decided ([`Agent::resume`]);
//! - [`ModelError`], [`AgentError`]: what can go wrong talking to a model;
//!   [`ApiKey`] and [`RetryPolicy`]: what every HTTP client shares.
#![deny(missing_docs)]

mod agent;
mod approval;
mod budget;
mod clients;
mod error;
mod http;
mod model;
mod run;
mod scripted;
mod stream;
mod transcript;

pub use agent::{Agent, RunResult, StopReason};
pub use approval::{Decision, Pending, RunState, UnknownCall};
pub use budget::{LimitExceeded, RunBudget, RunLimits};
pub use clients::{Anthropic, Gemini, OpenAiChat, OpenAiResponses};
pub use error::{AgentError, ModelError};
pub use http::{ApiKey, RetryPolicy};
pub use model::{
    CallAssembler, Model, ModelEvent, ModelRequest, ModelResponse, ModelSettings, ModelStream, ToolChoice,
    Usage,
};
pub use scripted::{ScriptedModel, SeenRequest};
pub use stream::AgentEvent;
pub use transcript::{Message, Transcript};
