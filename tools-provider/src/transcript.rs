//! The provider-neutral record of a run: what was said, which tools were
//! called and what they answered. Serializable, so a run can be stored and
//! continued later, on the same client or another provider's. Each
//! provider module writes it in its own wire format (`messages`,
//! `input`, `contents`); `tools-agent` re-exports it.

use serde::{Deserialize, Serialize};
use tools_core::{ToolCall, ToolResult};

/// One message of a run, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user said.
    User {
        /// The user's text.
        text: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The model's text (may be empty when it only calls tools).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        /// The tool calls of this turn, in the model's order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        calls: Vec<ToolCall>,
    },
    /// The results of the previous assistant message's calls, in call order.
    Tool {
        /// One result per call.
        results: Vec<ToolResult>,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User { text: text.into() }
    }
}

/// A run as data: the instructions and every message so far.
///
/// ```
/// use tools_provider::{Message, Transcript};
///
/// let mut transcript = Transcript::new().with_instructions("Answer briefly.");
/// transcript.push(Message::user("Weather in Paris?"));
/// let saved = serde_json::to_string(&transcript).unwrap();
/// let loaded: Transcript = serde_json::from_str(&saved).unwrap();
/// assert_eq!(loaded, transcript);
/// assert_eq!(saved, r#"{"instructions":"Answer briefly.","messages":[{"role":"user","text":"Weather in Paris?"}]}"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    /// The system prompt, sent with every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The messages, oldest first.
    #[serde(default)]
    pub messages: Vec<Message>,
}

impl Transcript {
    /// An empty transcript.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same transcript with these instructions.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Add a message at the end.
    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// The calls of the last message, when it is an assistant message whose
    /// calls have no results yet: a run stopped before running them, and
    /// continuing it runs them first.
    pub fn pending_calls(&self) -> &[ToolCall] {
        match self.messages.last() {
            Some(Message::Assistant { calls, .. }) => calls,
            _ => &[],
        }
    }
}
