//! A model whose answers are written in advance: for examples that run
//! offline and for tests of the loop itself.

use std::collections::VecDeque;
use std::sync::Mutex;

use futures::future::BoxFuture;
use toolcall_core::ToolCall;

use crate::model::{ModelRequest, ModelResponse};
use crate::{Message, Model, ModelError};

/// What a [`ScriptedModel`] saw of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenRequest {
    /// The messages sent.
    pub messages: Vec<Message>,
    /// The names of the tools offered; `None` for a tool-less request.
    pub tools: Option<Vec<String>>,
}

/// A [`Model`] that answers each request with the next scripted response,
/// and remembers what it was asked.
///
/// ```
/// use toolcall_agent::{Model};
/// use toolcall_agent::testing::{ScriptedModel};
/// use toolcall_core::ToolCall;
///
/// let model = ScriptedModel::new()
///     .then_calls([ToolCall::new("c1", "get_weather", r#"{"city":"Oslo"}"#)])
///     .then_text("12°C in Oslo.");
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Debug, Default)]
pub struct ScriptedModel {
    script: Mutex<VecDeque<Result<ModelResponse, ModelError>>>,
    seen: Mutex<Vec<SeenRequest>>,
}

impl ScriptedModel {
    /// A model with nothing to say yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Next, answer with this text.
    pub fn then_text(self, text: impl Into<String>) -> Self {
        self.then(Ok(ModelResponse::new(text, [])))
    }

    /// Next, call these tools.
    pub fn then_calls(self, calls: impl IntoIterator<Item = ToolCall>) -> Self {
        self.then(Ok(ModelResponse::new("", calls)))
    }

    /// Next, this response or error.
    pub fn then(self, response: Result<ModelResponse, ModelError>) -> Self {
        if let Ok(mut script) = self.script.lock() {
            script.push_back(response);
        }
        self
    }

    /// The responses not given yet.
    pub fn remaining(&self) -> usize {
        self.script.lock().map_or(0, |script| script.len())
    }

    /// What the model was asked, in order.
    pub fn seen(&self) -> Vec<SeenRequest> {
        self.seen.lock().map(|seen| seen.clone()).unwrap_or_default()
    }
}

impl Model for ScriptedModel {
    fn provider(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "scripted"
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let seen = SeenRequest {
            messages: request.messages.to_vec(),
            tools: request.tools.map(|tools| tools.names().map(str::to_owned).collect()),
        };
        if let Ok(mut log) = self.seen.lock() {
            log.push(seen);
        }
        let next = self.script.lock().ok().and_then(|mut script| script.pop_front());
        Box::pin(async move { next.unwrap_or(Err(ModelError::ScriptEnded)) })
    }
}
