//! One turn's calls as data: what the model asked for and what it gets back.
//! Serializable, so a run's transcript can be stored and continued.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use smol_str::SmolStr;

use crate::{Part, ToolError};

/// One tool call the model made: its id, the tool's name and the raw
/// argument string, exactly as the provider sent them.
///
/// The id and name are [`SmolStr`]s (`"call_1".into()`; they compare with
/// `&str` and deref to it): the call's context and its result hold them
/// too, and a clone of one is a copy of a short string in place or a
/// reference count, never an allocation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call, echoed back in the result.
    pub id: SmolStr,
    /// The name the model called (looked up ignoring case).
    pub name: SmolStr,
    /// The raw arguments, before cleaning.
    pub arguments: String,
}

impl ToolCall {
    /// A call with these parts.
    pub fn new(id: impl Into<SmolStr>, name: impl Into<SmolStr>, arguments: impl Into<String>) -> Self {
        Self { id: id.into(), name: name.into(), arguments: arguments.into() }
    }
}

/// How one call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The tool ran and returned content.
    Success,
    /// The arguments did not fit the schema; the model is asked to fix them.
    InvalidArguments,
    /// The tool asked the model to try again ([`ToolError::Retry`](crate::ToolError::Retry)).
    Retry,
    /// The tool failed ([`ToolError::Failed`](crate::ToolError::Failed)); the
    /// content is `{"error": "..."}`.
    Failed,
    /// No tool has that name; the content lists the tools that exist.
    NotFound,
    /// The call ran past its timeout.
    TimedOut,
    /// The turn was cancelled before the call finished.
    Cancelled,
    /// The tool panicked.
    Panicked,
    /// The call needed a person's approval and did not get it, so it did not
    /// run ([`ToolError::Denied`](crate::ToolError::Denied)).
    Denied,
}

impl Outcome {
    /// Whether the tool produced its content normally.
    pub fn is_success(self) -> bool {
        self == Self::Success
    }

    /// Whether this counts as a failure of the tool. Invalid arguments, a
    /// retry request and an unknown name are the model's to fix, not failures.
    /// Every outcome but [`Outcome::Success`] is still flagged to the model as
    /// an error where a provider has the flag (Anthropic's `is_error`, MCP's
    /// `isError`).
    pub fn is_failure(self) -> bool {
        matches!(self, Self::Failed | Self::TimedOut | Self::Cancelled | Self::Panicked)
    }

    /// A short lower-case name, for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::InvalidArguments => "invalid_arguments",
            Self::Retry => "retry",
            Self::Failed => "failed",
            Self::NotFound => "not_found",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
            Self::Panicked => "panicked",
            Self::Denied => "denied",
        }
    }
}

/// The result of one call, in the order of the turn's calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub id: SmolStr,
    /// The name the model called.
    pub name: SmolStr,
    /// The content string for the model: the output's text, or what went
    /// wrong.
    pub content: String,
    /// How the call ended.
    pub outcome: Outcome,
    /// What follows the text for the model (JSON, images, files, more text);
    /// each provider format sends them its own way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// The tool's data for the application, which no model sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Value>,
}

impl ToolResult {
    /// A result of text alone.
    pub fn new(
        id: impl Into<SmolStr>,
        name: impl Into<SmolStr>,
        content: impl Into<String>,
        outcome: Outcome,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            content: content.into(),
            outcome,
            parts: Vec::new(),
            artifact: None,
        }
    }

    /// The result of `call` ending in `error`: what the error shows the model.
    pub fn error(call: &ToolCall, error: &ToolError) -> Self {
        Self::new(call.id.clone(), call.name.clone(), error.model_content(), error.outcome())
    }

    /// The result as text alone: the content, then each text and JSON part
    /// on a line of its own. What a format that takes only text sends.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        crate::output::joined(&self.content, &self.parts)
    }
}
