//! The researcher of the guide's chapter "Agents as tools", served over
//! A2A on loopback: it searches, then saves a note, which waits for a
//! person's approval, so the task is `input-required` until the client
//! answers `approve` or `deny` on it. `tests/a2a/researcher.py` drives it
//! with the official Python SDK's client.
//!
//! ```sh
//! cargo run --example researcher --features a2a             # on a free port
//! PORT=9999 cargo run --example researcher --features a2a   # on 9999
//! ```
//!
//! It prints its URL (`http://127.0.0.1:PORT`) on its first line, then
//! serves. Its model is scripted on what it reads, so it runs offline and
//! takes any number of tasks in any order: a question calls `search`; if
//! the question asks to note it ("note" in it) and the search found
//! something, it calls `save_note` with what was found, and answers once
//! the note is saved (or denied); else it answers with what was found. Any `Model` goes in its place
//! (`OpenAiChat::new("gpt-4.1-mini")`, with the same tools).

use futures::future::BoxFuture;
use toolcall::a2a::A2aServer;
use toolcall::agent::{Agent, Message, Model, ModelError, ModelRequest, ModelResponse};
use toolcall::{Outcome, ToolCall, ToolContext, ToolError, Toolset, tool};

/// Search the web: the best result, with its source.
#[tool(args, read_only)]
async fn search(_ctx: &ToolContext, query: String) -> Result<String, ToolError> {
    // A stand-in index, so that the example runs offline.
    Ok(if query.to_lowercase().contains("oslo") {
        "Oslo has 709,000 inhabitants (ssb.no).".to_owned()
    } else {
        format!("Nothing found for {query:?}.")
    })
}

/// Save a note to the team's notes.
#[tool(args, needs_approval)]
async fn save_note(_ctx: &ToolContext, text: String) -> Result<String, ToolError> {
    Ok(format!("saved: {text}"))
}

/// The researcher's model, scripted on the conversation's last message.
#[derive(Debug)]
struct Scripted;

impl Model for Scripted {
    fn provider(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "researcher"
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let messages = request.messages;
        let question = messages.iter().find(|message| matches!(message, Message::User { .. }));
        let asked_to_note = question.is_some_and(|question| question.text().to_lowercase().contains("note"));
        let response = match messages.last() {
            Some(Message::Tool { results }) => match results.first() {
                // Found, and asked to note it: save the note (held for approval).
                Some(found)
                    if found.name == "search" && asked_to_note && !found.content.starts_with("Nothing") =>
                {
                    let note = serde_json::json!({"text": found.content}).to_string();
                    ModelResponse::new("", [ToolCall::new("i2", "save_note", note)])
                }
                Some(found) if found.name == "search" => ModelResponse::new(found.content.clone(), []),
                // The note's result: saved, or denied.
                Some(saved) => {
                    let found = search_result(messages).unwrap_or_default();
                    let text = if saved.outcome == Outcome::Success {
                        format!("{found} Saved to the team's notes.")
                    } else {
                        format!("{found} Not saved: the note was {}.", saved.outcome.as_str())
                    };
                    ModelResponse::new(text, [])
                }
                None => ModelResponse::new("Nothing to say.", []),
            },
            // A question: search for it.
            Some(question) => {
                let query = serde_json::json!({"query": question.text()}).to_string();
                ModelResponse::new("", [ToolCall::new("i1", "search", query)])
            }
            None => ModelResponse::new("Ask me a question.", []),
        };
        Box::pin(async move { Ok(response) })
    }
}

/// What the run's search found.
fn search_result(messages: &[Message]) -> Option<String> {
    messages.iter().find_map(|message| match message {
        Message::Tool { results } => {
            results.iter().find(|result| result.name == "search").map(|result| result.content.clone())
        }
        _ => None,
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = match std::env::var("PORT") {
        Ok(port) => port.parse().map_err(|_| format!("PORT is not a port number: {port}"))?,
        Err(_) => 0,
    };
    let tools = Toolset::builder().add(Search).add(SaveNote).build()?;
    let researcher = Agent::new(Scripted, tools)?.with_instructions(
        "Look facts up with search. If asked to note one, save it with save_note. Answer in one line.",
    );
    let server = A2aServer::new(researcher)
        .with_name("researcher")
        .with_description("Looks facts up, and notes them with a person's approval.");
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    // The first line is the URL; tests/a2a/researcher.py reads it.
    println!("http://{}", listener.local_addr()?);
    server.serve(listener).await?;
    Ok(())
}
