//! What an assistant message holds, in the order the model sent it: its
//! text, its tool calls, and the reasoning state a provider asks to have
//! back in the next request.
//!
//! Reasoning state is opaque and provider-bound: Anthropic's signed
//! `thinking` and `redacted_thinking` blocks, Gemini's thought signatures,
//! OpenAI Responses' `reasoning` items, the `reasoning_content` of
//! OpenAI-compatible servers. Each provider's writer sends back its own
//! exactly, in place, and leaves out another provider's (a signature is
//! only valid for the provider, often the model, that made it).

use serde::{Deserialize, Serialize};
use toolcall_core::ToolCall;

/// One piece of an assistant message.
///
/// ```
/// use toolcall_core::ToolCall;
/// use toolcall_provider::{Content, Reasoning};
///
/// let content = vec![
///     Content::Reasoning(Reasoning::Thinking { thinking: "Paris, so...".into(), signature: "EqQB".into() }),
///     Content::text("Checking."),
///     Content::Call(ToolCall::new("toolu_01", "get_weather", r#"{"city":"Paris"}"#)),
/// ];
/// let json = serde_json::to_value(&content).unwrap();
/// assert_eq!(json[0], serde_json::json!({"type": "reasoning", "format": "thinking", "thinking": "Paris, so...", "signature": "EqQB"}));
/// assert_eq!(json[2], serde_json::json!({"type": "call", "id": "toolu_01", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text of the answer.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call.
    Call(ToolCall),
    /// The model's reasoning, or the opaque state that stands for it.
    Reasoning(Reasoning),
    /// A provider's own item, sent back to that provider as it came and
    /// left out for others: Anthropic's server tools (`server_tool_use`,
    /// `web_search_tool_result`...), whose paused turn continues only if
    /// they go back unchanged, and the opaque summaries of server-side
    /// compaction (Anthropic's `compaction` blocks, the Responses API's
    /// `compaction` items), which stand for the conversation before them
    /// for that provider alone.
    ///
    /// ```
    /// use toolcall_provider::{Content, Message, openai};
    ///
    /// let compaction = Content::Native {
    ///     provider: openai::responses::NATIVE.into(),
    ///     item: serde_json::json!({"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA"}),
    /// };
    /// let message = Message::Assistant { content: vec![compaction] };
    /// let saved = serde_json::to_string(&message).unwrap();
    /// assert_eq!(serde_json::from_str::<Message>(&saved).unwrap(), message);
    /// ```
    Native {
        /// The provider whose item it is (`"anthropic"`, `"openai_responses"`).
        provider: String,
        /// The item.
        item: serde_json::Value,
    },
}

impl Content {
    /// A text piece.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// The reasoning state of one provider, as it came.
///
/// | provider | what it sends | sent back |
/// |---|---|---|
/// | Anthropic | `thinking` blocks (text + `signature`), `redacted_thinking` (`data`) | unchanged, in place: required when a tool-use turn continues ([thinking with tools](https://platform.claude.com/docs/en/build-with-claude/extended-thinking#preserving-thinking-blocks)) |
/// | Gemini | `thoughtSignature` on a part; `thought: true` summary parts when asked for | each signature on the part it came on ([thought signatures](https://ai.google.dev/gemini-api/docs/thought-signatures)), summaries as `thought` parts |
/// | OpenAI Responses | `reasoning` items (`id`, `summary`, `encrypted_content`) | each item before the calls it came with ([reasoning items](https://platform.openai.com/docs/guides/reasoning)) |
/// | OpenAI-compatible Chat servers | `reasoning_content` beside the message | on the assistant message, as DeepSeek asks in tool-use turns ([thinking mode](https://api-docs.deepseek.com/guides/thinking_mode)) |
///
/// Another provider's writer leaves a piece out: its signatures would be
/// refused, and its text is the model's private reasoning, not the answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "format", rename_all = "snake_case")]
pub enum Reasoning {
    /// An Anthropic `thinking` block: the (summarized) thinking and the
    /// signature that lets the API check it.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// Anthropic's signature of it.
        signature: String,
    },
    /// An Anthropic `redacted_thinking` block: thinking the safety
    /// systems encrypted.
    RedactedThinking {
        /// The encrypted thinking.
        data: String,
    },
    /// A Gemini thought signature, which came on the part that follows it
    /// in the message (a call or text), or on an empty part when nothing
    /// follows.
    ThoughtSignature {
        /// The signature.
        signature: String,
    },
    /// A Gemini thought summary (a `thought: true` part).
    Thought {
        /// The summary.
        text: String,
    },
    /// An OpenAI Responses `reasoning` item.
    Item {
        /// The item's id (`rs_...`).
        id: String,
        /// The texts of its `summary` parts.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summary: Vec<String>,
        /// The encrypted reasoning, when `reasoning.encrypted_content` was
        /// asked for (with every request but to models without reasoning, as the client does not store responses).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    /// The `reasoning_content` an OpenAI-compatible server sends beside
    /// the message (DeepSeek, vLLM, llama.cpp).
    ReasoningContent {
        /// The reasoning text.
        text: String,
    },
}

impl Reasoning {
    /// The reasoning a person may read, if this piece has any: thinking,
    /// a thought summary, a summary, reasoning content.
    pub fn visible(&self) -> Option<String> {
        let text = match self {
            Self::Thinking { thinking, .. } => thinking.clone(),
            Self::Thought { text } | Self::ReasoningContent { text } => text.clone(),
            Self::Item { summary, .. } => summary.join("\n\n"),
            Self::RedactedThinking { .. } | Self::ThoughtSignature { .. } => String::new(),
        };
        (!text.is_empty()).then_some(text)
    }
}
