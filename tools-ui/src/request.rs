//! The request `useChat` sends (`DefaultChatTransport`: the chat's id, its
//! UI messages with their parts, the trigger), and what the handler reads
//! from it: the last user message's text, the approval responses.

use serde::Deserialize;
use serde_json::Value;

/// The body of a `useChat` request: `{ id, messages, trigger, messageId }`
/// and whatever else the page's `body` option adds.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ChatRequest {
    /// The chat's id: the key under which a paused run waits.
    pub id: String,
    /// The whole conversation as the page holds it.
    pub messages: Vec<UiMessage>,
    /// `submit-message` or `regenerate-message`.
    #[serde(default)]
    pub trigger: Option<String>,
    /// The message the request is about, when the client names one.
    #[serde(default)]
    pub message_id: Option<String>,
}

/// One UI message: its role and its parts, each kept as the JSON the
/// client sent.
#[derive(Clone, Debug, Deserialize)]
#[non_exhaustive]
pub struct UiMessage {
    /// The message's id.
    #[serde(default)]
    pub id: String,
    /// `user`, `assistant` or `system`.
    pub role: String,
    /// The parts: `{ "type": "text", "text": ... }`, tool parts
    /// (`tool-{name}` or `dynamic-tool`), `step-start`, ...
    #[serde(default)]
    pub parts: Vec<Value>,
}

/// A person's answer to one `tool-approval-request`, as a tool part in
/// state `approval-responded` carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalResponse {
    /// The approval's id (the call's id, as the adapter sends it).
    pub approval_id: String,
    /// Approved or denied.
    pub approved: bool,
    /// The reason the person gave, if any.
    pub reason: Option<String>,
}

impl UiMessage {
    /// The text of the message's text parts, joined by blank lines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter(|part| part["type"] == "text")
            .filter_map(|part| part["text"].as_str())
            .collect();
        texts.join("\n\n")
    }

    /// The approval responses in the message's tool parts that are
    /// answered and not yet acted on (state `approval-responded`).
    pub fn approval_responses(&self) -> Vec<ApprovalResponse> {
        self.parts
            .iter()
            .filter(|part| {
                part["type"].as_str().is_some_and(|kind| kind.starts_with("tool-") || kind == "dynamic-tool")
                    && part["state"] == "approval-responded"
            })
            .filter_map(|part| {
                let approval = &part["approval"];
                Some(ApprovalResponse {
                    approval_id: approval["id"].as_str()?.to_owned(),
                    approved: approval["approved"].as_bool()?,
                    reason: approval["reason"].as_str().map(str::to_owned),
                })
            })
            .collect()
    }
}
