//! A stored conversation as the UI messages `useChat` takes as its initial
//! `messages`: what a page that reloads shows again.

use serde_json::{Map, Value, json};
use toolcall_agent::{Content, Decision, Message, PausedTurn, Reasoning};
use toolcall_core::Outcome;

use crate::adapter::{extras, output_value};
use crate::files::FileLinks;

/// The conversation's messages as UI messages (the AI SDK's `UIMessage`
/// JSON): a user message each, and one assistant message for all the
/// model's turns between two questions, a `step-start` before each turn,
/// its reasoning (visible text only), text and tool parts, each call in
/// the state its result left it (`output-available`, its output as JSON
/// when it is a JSON object or array, `output-error`, `output-denied`), or
/// `approval-requested` while the paused run holds it (`approval-responded`
/// once decided, while the run that took the decision goes); after a result, its
/// images and files (`file` parts, as [`UiAdapter`](crate::UiAdapter) sends them with its
/// default size; [`ChatServer`](crate::ChatServer) links bigger ones to its
/// file route, as its stream does) and its artifact (the `data-{tool}` part). The typed
/// answer is not in the stored chat: it has no `data-answer` part. Summaries a context policy wrote are history for the model, not
/// for the page: they are left out.
///
/// ```
/// use toolcall_agent::Message;
///
/// let page = toolcall_ui::ui_messages(&[Message::user("Hi"), Message::assistant("Hello!", [])], None);
/// assert_eq!(page[0]["parts"][0]["text"], "Hi");
/// assert_eq!(page[1]["role"], "assistant");
/// assert_eq!(page[1]["parts"][1], serde_json::json!({"type": "text", "text": "Hello!", "state": "done"}));
/// ```
pub fn ui_messages(messages: &[Message], paused: Option<&PausedTurn>) -> Vec<Value> {
    page(messages, paused, &FileLinks::default())
}

/// The conversation's messages as UI messages, its images and files linked
/// as `links` says (the chat server links bigger ones to its file route).
pub(crate) fn page(messages: &[Message], paused: Option<&PausedTurn>, links: &FileLinks) -> Vec<Value> {
    let mut page: Vec<Value> = Vec::new();
    // The parts of the assistant message being built.
    let mut parts: Option<Vec<Value>> = None;
    let close = |page: &mut Vec<Value>, parts: &mut Option<Vec<Value>>| {
        if let Some(parts) = parts.take() {
            let id = format!("msg-{}", page.len());
            page.push(json!({"id": id, "role": "assistant", "parts": parts}));
        }
    };
    for message in messages {
        match message {
            Message::User { .. } => {
                close(&mut page, &mut parts);
                let id = format!("msg-{}", page.len());
                let text = message.text();
                page.push(json!({"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}));
            }
            Message::Assistant { content } => {
                let parts = parts.get_or_insert_with(Vec::new);
                parts.push(json!({"type": "step-start"}));
                parts.extend(content.iter().filter_map(part));
            }
            Message::Tool { results } => {
                let parts = parts.get_or_insert_with(Vec::new);
                for result in results {
                    let Some(call) =
                        parts.iter_mut().rev().find(|part| part["toolCallId"] == result.id.as_str())
                    else {
                        continue;
                    };
                    let update: Value = match result.outcome {
                        Outcome::Success => {
                            json!({"state": "output-available", "output": output_value(&result.content)})
                        }
                        Outcome::Denied => json!({
                            "state": "output-denied",
                            "approval": {"id": result.id.as_str(), "approved": false},
                        }),
                        _ => json!({"state": "output-error", "errorText": result.content}),
                    };
                    merge(call, update);
                    // Its images, files and artifact, as the stream gave them.
                    let extras = extras(result, links);
                    parts.extend(extras.iter().filter_map(|chunk| serde_json::to_value(chunk).ok()));
                }
            }
            _ => {}
        }
    }
    if let (Some(turn), Some(parts)) = (paused, parts.as_mut()) {
        for pending in turn.pending() {
            // A sub-agent's call is asked on the agent-tool call it is inside.
            let asks = pending.call_path.first().map_or(pending.call.id.as_str(), String::as_str);
            // A decision taken by a run going now, or cut off, shows as given.
            let update = match &pending.decision {
                None => json!({"state": "approval-requested", "approval": {"id": pending.id()}}),
                Some(decision) => json!({
                    "state": "approval-responded",
                    "approval": {"id": pending.id(), "approved": !matches!(decision, Decision::Deny { .. })},
                }),
            };
            if let Some(call) = parts.iter_mut().rev().find(|part| part["toolCallId"] == asks) {
                merge(call, update);
            }
        }
    }
    close(&mut page, &mut parts);
    page
}

/// One piece of the model's answer as a UI part, if the page shows it.
fn part(content: &Content) -> Option<Value> {
    match content {
        Content::Text { text } if !text.is_empty() => {
            Some(json!({"type": "text", "text": text, "state": "done"}))
        }
        Content::Call(call) => {
            // The arguments as the model wrote them, as JSON where they read as it.
            let input = serde_json::from_str::<Value>(&call.arguments)
                .unwrap_or_else(|_| call.arguments.clone().into());
            Some(json!({
                "type": format!("tool-{}", call.name),
                "toolCallId": call.id.as_str(),
                "state": "input-available",
                "input": input,
            }))
        }
        Content::Reasoning(reasoning) => {
            let text = match reasoning {
                Reasoning::Thinking { thinking, .. } => thinking.clone(),
                Reasoning::Thought { text } => text.clone(),
                Reasoning::Item { summary, .. } => summary.join("\n\n"),
                _ => return None,
            };
            (!text.is_empty()).then(|| json!({"type": "reasoning", "text": text, "state": "done"}))
        }
        _ => None,
    }
}

fn merge(part: &mut Value, update: Value) {
    if let (Value::Object(part), Value::Object(update)) = (part, update) {
        let update: Map<String, Value> = update;
        part.extend(update);
    }
}
