//! How a model ended one response: each provider's reason, read into the
//! one meaning a loop acts on. A response cut off is never an answer, and
//! a refusal is its own ending.

use serde::{Deserialize, Serialize};

/// How a model ended its response.
///
/// | provider | `Truncated` | `Refused` | `Paused` | `Malformed` |
/// |---|---|---|---|---|
/// | OpenAI Chat | `finish_reason: "length"` | `finish_reason: "content_filter"`, or a `refusal` in the message | | |
/// | OpenAI Responses | `status: "incomplete"`, `incomplete_details.reason: "max_output_tokens"` | `incomplete_details.reason: "content_filter"`, or a `refusal` part | | |
/// | Anthropic | `stop_reason: "max_tokens"` or `"model_context_window_exceeded"` | `stop_reason: "refusal"` | `stop_reason: "pause_turn"` | |
/// | Gemini | `finishReason: "MAX_TOKENS"` | `finishReason: "SAFETY"`, `"RECITATION"`, `"BLOCKLIST"`, `"PROHIBITED_CONTENT"`, `"SPII"`, `"IMAGE_SAFETY"`, `"LANGUAGE"`, `"IMAGE_PROHIBITED_CONTENT"`, `"IMAGE_RECITATION"`, `"MODEL_ARMOR"` | | `finishReason: "MALFORMED_FUNCTION_CALL"`, `"UNEXPECTED_TOOL_CALL"`, `"TOO_MANY_TOOL_CALLS"` |
///
/// A Responses `status: "failed"` is no ending but an error, and so is a
/// Gemini candidate with nothing in it that ended with another reason
/// (`STOP`, `OTHER`, `MALFORMED_RESPONSE`, `MISSING_THOUGHT_SIGNATURE`...):
/// the clients report both as errors naming what the provider said.
///
/// Sources: <https://platform.openai.com/docs/api-reference/chat/object>
/// (`finish_reason`), <https://platform.openai.com/docs/api-reference/responses/object>
/// (`status`, `incomplete_details`),
/// <https://docs.anthropic.com/en/docs/build-with-claude/handling-stop-reasons>,
/// <https://ai.google.dev/api/generate-content#FinishReason>.
///
/// [`Dialect::finish`](crate::Dialect::finish) reads a provider's reason into it:
///
/// ```
/// use toolcall_provider::{Dialect, Finish};
/// assert_eq!(Dialect::OpenAiChat.finish("length"), Finish::Truncated { reason: "length".into() });
/// assert_eq!(Dialect::Anthropic.finish("refusal"), Finish::Refused { reason: "refusal".into() });
/// assert_eq!(Dialect::Gemini.finish("STOP"), Finish::Complete);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Finish {
    /// The model finished: an answer, or calls to run.
    #[default]
    Complete,
    /// The model was cut off (its output limit, the context window): what
    /// came is partial, and its calls may be cut too.
    Truncated {
        /// The provider's reason, as it sent it.
        reason: String,
    },
    /// The model refused, or a safety filter stopped it.
    Refused {
        /// The provider's reason, as it sent it.
        reason: String,
    },
    /// The provider paused a long turn (its own server tools at work):
    /// sending the turn back as it is, with no new message, continues it.
    Paused {
        /// The provider's reason, as it sent it.
        reason: String,
    },
    /// The model wrote a tool call the provider could not read, or one it
    /// was not allowed to make: the model is told, to try again.
    Malformed {
        /// The provider's reason, and its message when it sent one.
        reason: String,
    },
}

impl Finish {
    /// `Truncated` with this reason.
    pub(crate) fn truncated(reason: &str) -> Self {
        Self::Truncated { reason: reason.to_owned() }
    }

    /// `Refused` with this reason.
    pub(crate) fn refused(reason: &str) -> Self {
        Self::Refused { reason: reason.to_owned() }
    }

    /// The provider's reason, for any ending but `Complete`.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Self::Complete => None,
            Self::Truncated { reason }
            | Self::Refused { reason }
            | Self::Paused { reason }
            | Self::Malformed { reason } => Some(reason),
        }
    }
}
