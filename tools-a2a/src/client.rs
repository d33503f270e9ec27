//! [`A2aAgent`]: a remote A2A agent as a [`Tool`] the model calls with a
//! prompt.

use crate::new_id;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use toolcall_core::{Output, OutputFuture, Tool, ToolContext, ToolError, ToolSpec};

use crate::wire::{
    AGENT_CARD_PATH, AgentCard, GetTaskRequest, Message, PROTOCOL_VERSION, Part, RpcError,
    SendMessageRequest, SendMessageResponse, Task, TaskState, VERSION_HEADER, method,
};

/// What went wrong talking to a peer agent; each names the peer (its card's
/// name, or its URL before the card is read).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aError {
    /// The peer could not be reached, or the connection broke.
    #[error("the A2A agent `{peer}` could not be reached: {source}")]
    Unreachable {
        /// The peer.
        peer: String,
        /// What the HTTP client said.
        source: reqwest::Error,
    },
    /// The peer took longer than the client allows.
    #[error("the A2A agent `{peer}` did not finish within {after:?}")]
    Timeout {
        /// The peer.
        peer: String,
        /// The time allowed.
        after: Duration,
    },
    /// The peer answered with an HTTP error status.
    #[error("the A2A agent `{peer}` answered HTTP {status}: {body}")]
    Status {
        /// The peer.
        peer: String,
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The peer answered something the protocol does not allow.
    #[error("the A2A agent `{peer}` answered out of spec: {reason}")]
    OutOfSpec {
        /// The peer.
        peer: String,
        /// What was wrong.
        reason: String,
    },
    /// The peer answered with a JSON-RPC error.
    #[error("the A2A agent `{peer}` refused the request: {error}")]
    Rpc {
        /// The peer.
        peer: String,
        /// Its error.
        error: RpcError,
    },
    /// The task ended without an answer: failed, canceled, rejected, or
    /// waiting for input this tool cannot give.
    #[error("the A2A agent `{peer}` ended the task {state}: {message}")]
    Task {
        /// The peer.
        peer: String,
        /// The task's state, as the protocol names it.
        state: String,
        /// The agent's message about it.
        message: String,
    },
}

impl A2aError {
    /// Whether trying again later may work (the peer down, slow, failing
    /// with a 5xx), as [`ToolError::transient`] marks it.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unreachable { .. } | Self::Timeout { .. } => true,
            Self::Status { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }

    /// The error as the tool's: [`ToolError::transient`] when trying
    /// again may work, [`ToolError::failed`] otherwise; its message names
    /// the peer and the cause.
    pub fn into_tool_error(self) -> ToolError {
        if self.is_transient() { ToolError::transient(self) } else { ToolError::failed(self.to_string()) }
    }
}

/// The tool's argument: what to ask the peer agent.
#[derive(Deserialize, schemars::JsonSchema)]
struct Ask {
    /// The request for the agent, in plain language, complete on its own:
    /// the agent sees nothing else of this conversation.
    prompt: String,
}

/// A remote A2A agent (A2A 1.0, JSON-RPC binding) used as a tool: its
/// card names the tool and describes it, the model calls it with a
/// `prompt`, and the call sends `SendMessage` and follows the task
/// (`GetTask`) to its end, answering the task's text artifacts (or its
/// final message).
///
/// A peer that is down, slower than [`A2aAgent::with_timeout`] (two
/// minutes by default) or answering out of spec fails the call with a
/// [`ToolError`] naming the peer and the cause (transient when trying
/// again may help).
///
/// ```no_run
/// # async fn run() -> Result<(), toolcall_a2a::A2aError> {
/// use toolcall_a2a::A2aAgent;
/// use toolcall_core::Toolset;
/// let weather = A2aAgent::connect("http://127.0.0.1:9999").await?;
/// let tools = Toolset::builder().add(weather).build().expect("one tool");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct A2aAgent {
    spec: ToolSpec,
    card: AgentCard,
    rpc_url: String,
    http: reqwest::Client,
    timeout: Duration,
    poll: Duration,
}

impl A2aAgent {
    /// Read the agent card at `url` (the agent's base URL, to which
    /// `/.well-known/agent-card.json` is added, or the card's own URL) and
    /// make the tool from it.
    ///
    /// # Errors
    ///
    /// [`A2aError`] when the card cannot be fetched in 30 s, is not an
    /// agent card, or names no JSON-RPC interface.
    pub async fn connect(url: &str) -> Result<Self, A2aError> {
        let http = reqwest::Client::new();
        let card_url = if url.ends_with(".json") {
            url.to_owned()
        } else {
            format!("{}{AGENT_CARD_PATH}", url.trim_end_matches('/'))
        };
        let peer = url.to_owned();
        let fetch = async {
            let response = http.get(&card_url).send().await.map_err(|source| unreachable(&peer, source))?;
            let body = read_body(&peer, response).await?;
            serde_json::from_slice::<AgentCard>(&body).map_err(|e| A2aError::OutOfSpec {
                peer: peer.clone(),
                reason: format!("its agent card at {card_url} does not read: {e}"),
            })
        };
        let after = Duration::from_secs(30);
        let card = tokio::time::timeout(after, fetch)
            .await
            .map_err(|_| A2aError::Timeout { peer: peer.clone(), after })??;
        let rpc_url = card.jsonrpc_url().map(str::to_owned).ok_or_else(|| A2aError::OutOfSpec {
            peer: card.name.clone(),
            reason: "its card names no JSONRPC interface".to_owned(),
        })?;
        Ok(Self::from_card(card, rpc_url, http))
    }

    /// The tool for a card already read, its JSON-RPC endpoint at `rpc_url`.
    pub fn from_card(card: AgentCard, rpc_url: impl Into<String>, http: reqwest::Client) -> Self {
        let spec = ToolSpec::new::<Ask>(tool_name(&card.name), tool_description(&card)).with_open_world(true);
        Self {
            spec,
            card,
            rpc_url: rpc_url.into(),
            http,
            timeout: Duration::from_secs(120),
            poll: Duration::from_millis(500),
        }
    }

    /// The tool under another name than the card's.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.spec = self.spec.with_name(name.into());
        self
    }

    /// The tool with another description than the card's.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.spec = self.spec.with_description(description.into());
        self
    }

    /// How long one call may take, from sending to the task's end (two
    /// minutes by default).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How often a task that is still working is read again (500 ms by
    /// default).
    pub fn with_poll_interval(mut self, interval: Duration) -> Self {
        self.poll = interval;
        self
    }

    /// The peer's card.
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// Ask the peer: send the prompt, follow its task to the end, and give
    /// back its answer's text.
    ///
    /// # Errors
    ///
    /// [`A2aError`]: the peer down, slower than the timeout, answering out
    /// of spec or with an error, or ending the task without an answer.
    pub async fn ask(&self, prompt: &str) -> Result<String, A2aError> {
        let after = self.timeout;
        tokio::time::timeout(after, self.ask_untimed(prompt))
            .await
            .map_err(|_| A2aError::Timeout { peer: self.peer().to_owned(), after })?
    }

    async fn ask_untimed(&self, prompt: &str) -> Result<String, A2aError> {
        let params = SendMessageRequest {
            message: Message::user(vec![Part::text(prompt)]),
            configuration: None,
            metadata: None,
        };
        let result = self.rpc(method::SEND_MESSAGE, json!(params)).await?;
        let mut task = match serde_json::from_value::<SendMessageResponse>(result) {
            Ok(SendMessageResponse::Message(message)) => return Ok(message.text()),
            Ok(SendMessageResponse::Task(task)) => task,
            Err(e) => return Err(self.out_of_spec(format!("its SendMessage result does not read: {e}"))),
        };
        loop {
            let state = task.status.state;
            if state == TaskState::Completed {
                return Ok(answer_text(&task));
            }
            if state.is_terminal() || state.is_interrupted() {
                let message = task.status.message.as_ref().map(Message::text).unwrap_or_default();
                let state = serde_json::to_value(state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                return Err(A2aError::Task { peer: self.peer().to_owned(), state, message });
            }
            if state == TaskState::Unspecified {
                return Err(self.out_of_spec(format!("task {} has no state this client knows", task.id)));
            }
            tokio::time::sleep(self.poll).await;
            let params = GetTaskRequest { id: task.id.clone(), history_length: Some(0) };
            let result = self.rpc(method::GET_TASK, json!(params)).await?;
            task = serde_json::from_value::<Task>(result)
                .map_err(|e| self.out_of_spec(format!("its GetTask result does not read: {e}")))?;
        }
    }

    /// One JSON-RPC call, its result.
    async fn rpc(&self, method: &str, params: Value) -> Result<Value, A2aError> {
        let id = new_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self
            .http
            .post(&self.rpc_url)
            .header(VERSION_HEADER, PROTOCOL_VERSION)
            .json(&body)
            .send()
            .await
            .map_err(|source| unreachable(self.peer(), source))?;
        let bytes = read_body(self.peer(), response).await?;
        let mut answer: Value = serde_json::from_slice(&bytes)
            .map_err(|e| self.out_of_spec(format!("its {method} answer is not JSON: {e}")))?;
        if let Some(error) = answer.get_mut("error").map(Value::take) {
            let error = serde_json::from_value::<RpcError>(error)
                .map_err(|e| self.out_of_spec(format!("its {method} error does not read: {e}")))?;
            return Err(A2aError::Rpc { peer: self.peer().to_owned(), error });
        }
        match answer.get_mut("result").map(Value::take) {
            Some(result) if answer.get("id").and_then(Value::as_str) == Some(id.as_str()) => Ok(result),
            Some(_) => {
                Err(self.out_of_spec(format!("its {method} answer has another id than the request's")))
            }
            None => Err(self.out_of_spec(format!("its {method} answer has neither result nor error"))),
        }
    }

    fn peer(&self) -> &str {
        &self.card.name
    }

    fn out_of_spec(&self, reason: String) -> A2aError {
        A2aError::OutOfSpec { peer: self.peer().to_owned(), reason }
    }
}

impl Tool for A2aAgent {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, _ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(async move {
            let ask: Ask = self.spec.parse(arguments)?;
            Ok(Output::text(self.ask(&ask.prompt).await.map_err(A2aError::into_tool_error)?))
        })
    }
}

/// The text of a completed task: its artifacts' text parts, else its
/// status message's text.
fn answer_text(task: &Task) -> String {
    let texts: Vec<&str> =
        task.artifacts.iter().flat_map(|a| &a.parts).filter_map(|part| part.text.as_deref()).collect();
    if !texts.is_empty() {
        return texts.join("\n");
    }
    task.status.message.as_ref().map(Message::text).unwrap_or_default()
}

/// A card's name as a tool name: letters, digits, `_` and `-`, at most 64.
fn tool_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(64)
        .collect();
    if cleaned.is_empty() { "a2a_agent".to_owned() } else { cleaned }
}

/// What the model reads about the peer: the card's description and skills.
fn tool_description(card: &AgentCard) -> String {
    let mut description = if card.description.is_empty() {
        format!("Ask the agent `{}`.", card.name)
    } else {
        format!("Ask the agent `{}`: {}", card.name, card.description)
    };
    let skills: Vec<String> = card
        .skills
        .iter()
        .map(|s| {
            if s.description.is_empty() { s.name.clone() } else { format!("{} ({})", s.name, s.description) }
        })
        .collect();
    if !skills.is_empty() {
        description.push_str(" Skills: ");
        description.push_str(&skills.join("; "));
        description.push('.');
    }
    description
}

fn unreachable(peer: &str, source: reqwest::Error) -> A2aError {
    A2aError::Unreachable { peer: peer.to_owned(), source }
}

/// The body of a 2xx answer; another status is an error with the body's start.
async fn read_body(peer: &str, response: reqwest::Response) -> Result<Vec<u8>, A2aError> {
    let status = response.status();
    let bytes = response.bytes().await.map_err(|source| unreachable(peer, source))?;
    if !status.is_success() {
        let body: String = String::from_utf8_lossy(&bytes).chars().take(300).collect();
        return Err(A2aError::Status { peer: peer.to_owned(), status: status.as_u16(), body });
    }
    Ok(bytes.to_vec())
}
