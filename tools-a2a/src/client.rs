//! [`A2aAgent`]: a remote A2A agent as a [`Tool`] the model calls with a
//! prompt.

use crate::new_id;
use std::time::Duration;

use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolcall_agent::{Decision, PausedCall, Pending};
use toolcall_core::{Output, OutputFuture, Tool, ToolCall, ToolContext, ToolError, ToolSpec};

use crate::wire::{
    AGENT_CARD_PATH, AgentCard, Artifact, GetTaskRequest, Message, PROTOCOL_VERSION, Part, RpcError,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState, TaskStatus, VERSION_HEADER,
    method,
};

/// The id of the one pending call that stands for a whole task waiting
/// for input, when the peer does not list calls (a peer that is not a
/// toolcall server): `{a2a call id}/input`.
pub const INPUT_REQUIRED_ID: &str = "input";

/// The name of that call, as a person reviewing it reads it; its
/// arguments are `{"task": ..., "message": <the peer's text>}`.
pub const INPUT_REQUIRED_NAME: &str = "input_required";

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
    /// The peer's stream (`SendStreamingMessage`) was silent, not even a
    /// keep-alive, for longer than the client allows.
    #[error("the A2A agent `{peer}` sent nothing for {after:?} on its stream")]
    Idle {
        /// The peer.
        peer: String,
        /// The silence allowed.
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
    /// The task ended without an answer: failed, canceled, rejected,
    /// waiting for authentication, or waiting for input outside an agent
    /// run (which alone can wait for a person's decision).
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
            Self::Unreachable { .. } | Self::Timeout { .. } | Self::Idle { .. } => true,
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
/// `prompt`, and the call sends the prompt and follows the task to its
/// end, answering the task's text artifacts (or its final message).
///
/// A peer whose card says `capabilities.streaming: true` is asked with
/// `SendStreamingMessage` and its events are read to the task's end (a
/// stream silent for longer than [`A2aAgent::with_idle_timeout`] is an
/// error); another is asked with `SendMessage`, and the task read again
/// with `GetTask` while it works.
///
/// A peer whose task waits for input (`input-required`, a call of its
/// agent held for approval) pauses the calling agent run with it
/// ([`PausedCall`]): the run ends paused, its [`RunState`](toolcall_agent::RunState)
/// holding the remote task (serde, to resume in another process), and
/// lists the peer's held calls among its
/// [`pending`](toolcall_agent::RunState::pending) ones, their path the
/// tool's name and their id `{call id}/{peer's call id}`. Resumed with
/// decisions, the call sends them as the next message on the same task
/// and reads the task to its end; the calling model reads the answer. A
/// toolcall server ([`A2aServer`](crate::A2aServer)) lists its held
/// calls in a data part of the status message, and is sent the decisions
/// as `{"decisions": {...}}`; a peer that says only text gets one pending
/// call for the whole task ([`INPUT_REQUIRED_ID`]), whose approval sends
/// the text `approve`, denial `deny: <reason>` (or `deny`), and approval
/// with arguments those arguments as the text. Called outside an agent
/// run, a task that waits for input is an error.
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
    idle: Duration,
    streaming: bool,
}

/// How one exchange with the peer ended: an answer, or its task waiting
/// for input.
enum Ended {
    Answer(String),
    InputRequired(Box<Task>),
}

/// What a paused call holds of a remote task, to answer it later.
#[derive(Serialize, Deserialize)]
struct HeldTask {
    /// The peer, by its card's name.
    peer: String,
    /// The task that waits.
    task_id: String,
    /// Its conversation.
    context_id: String,
    /// How the peer takes decisions: a `decisions` data part (a toolcall
    /// server, which listed its held calls), or text.
    by: Answer,
}

/// How a held task is answered.
#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Decisions,
    Text,
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

    /// The tool for a card already read, its JSON-RPC endpoint at
    /// `rpc_url`; it streams if the card says the peer does.
    pub fn from_card(card: AgentCard, rpc_url: impl Into<String>, http: reqwest::Client) -> Self {
        let spec = ToolSpec::new::<Ask>(tool_name(&card.name), tool_description(&card)).with_open_world(true);
        let streaming = card.capabilities.streaming == Some(true);
        Self {
            spec,
            card,
            rpc_url: rpc_url.into(),
            http,
            timeout: Duration::from_secs(120),
            poll: Duration::from_millis(500),
            idle: Duration::from_secs(60),
            streaming,
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
    /// default), when the peer does not stream.
    pub fn with_poll_interval(mut self, interval: Duration) -> Self {
        self.poll = interval;
        self
    }

    /// How long a stream may stay silent, keep-alives included, before the
    /// call fails (one minute by default; servers send a keep-alive every
    /// 15 s or so).
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle = idle;
        self
    }

    /// Stream (`SendStreamingMessage`) or not (`SendMessage`, then
    /// `GetTask` while the task works), whatever the card says.
    pub fn with_streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// Whether calls stream: the card says the peer does, or
    /// [`A2aAgent::with_streaming`] said so.
    pub fn streams(&self) -> bool {
        self.streaming
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
    /// of spec or with an error, or ending the task without an answer
    /// (waiting for input included, which only an agent run can wait for:
    /// use the tool).
    pub async fn ask(&self, prompt: &str) -> Result<String, A2aError> {
        match self.exchange(Message::user(vec![Part::text(prompt)])).await? {
            Ended::Answer(answer) => Ok(answer),
            Ended::InputRequired(task) => Err(self.task_error(&task)),
        }
    }

    /// Send `message`, and read its task to its end or its wait for input,
    /// within the timeout.
    async fn exchange(&self, message: Message) -> Result<Ended, A2aError> {
        let after = self.timeout;
        let exchange =
            async { if self.streaming { self.stream(message).await } else { self.send(message).await } };
        tokio::time::timeout(after, exchange)
            .await
            .map_err(|_| A2aError::Timeout { peer: self.peer().to_owned(), after })?
    }

    /// `SendMessage`, then `GetTask` while the task works.
    async fn send(&self, message: Message) -> Result<Ended, A2aError> {
        let params = SendMessageRequest { message, configuration: None, metadata: None };
        let result = self.rpc(method::SEND_MESSAGE, json!(params)).await?;
        match serde_json::from_value::<SendMessageResponse>(result) {
            Ok(SendMessageResponse::Message(message)) => Ok(Ended::Answer(message.text())),
            Ok(SendMessageResponse::Task(task)) => self.follow(task).await,
            Err(e) => Err(self.out_of_spec(format!("its SendMessage result does not read: {e}"))),
        }
    }

    /// Read the task again while it works, to its end.
    async fn follow(&self, mut task: Task) -> Result<Ended, A2aError> {
        loop {
            if let Some(ended) = self.settled(&task) {
                return ended;
            }
            tokio::time::sleep(self.poll).await;
            let params = GetTaskRequest { id: task.id.clone(), history_length: Some(0) };
            let result = self.rpc(method::GET_TASK, json!(params)).await?;
            task = serde_json::from_value::<Task>(result)
                .map_err(|e| self.out_of_spec(format!("its GetTask result does not read: {e}")))?;
        }
    }

    /// How the task ended, if it did (or waits for input); `None` while it
    /// works.
    fn settled(&self, task: &Task) -> Option<Result<Ended, A2aError>> {
        match task.status.state {
            TaskState::Completed => Some(Ok(Ended::Answer(answer_text(task)))),
            TaskState::InputRequired => Some(Ok(Ended::InputRequired(Box::new(task.clone())))),
            state if state.is_terminal() || state.is_interrupted() => Some(Err(self.task_error(task))),
            TaskState::Unspecified => {
                Some(Err(self.out_of_spec(format!("task {} has no state this client knows", task.id))))
            }
            _ => None,
        }
    }

    /// The task ended (or stopped) without an answer.
    fn task_error(&self, task: &Task) -> A2aError {
        let message = task.status.message.as_ref().map(Message::text).unwrap_or_default();
        let state = serde_json::to_value(task.status.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        A2aError::Task { peer: self.peer().to_owned(), state, message }
    }

    /// `SendStreamingMessage`: the task's events, to its end; a stream
    /// that ends before is followed with `GetTask`.
    async fn stream(&self, message: Message) -> Result<Ended, A2aError> {
        let id = new_id();
        let params = SendMessageRequest { message, configuration: None, metadata: None };
        let method = method::SEND_STREAMING_MESSAGE;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let request = self
            .http
            .post(&self.rpc_url)
            .header(VERSION_HEADER, PROTOCOL_VERSION)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .json(&body)
            .send();
        let response = tokio::time::timeout(self.idle, request)
            .await
            .map_err(|_| self.idle_error())?
            .map_err(|source| unreachable(self.peer(), source))?;
        let is_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream {
            // An error (or a refusal) comes as one JSON-RPC answer.
            let bytes = read_body(self.peer(), response).await?;
            let answer = self.answer_of(method, &id, &bytes)?;
            return Err(self.out_of_spec(format!(
                "its {method} answer is not a stream of events: {}",
                answer.to_string().chars().take(200).collect::<String>()
            )));
        }
        if !response.status().is_success() {
            read_body(self.peer(), response).await?;
            return Err(self.out_of_spec(format!("its {method} stream came with an error status")));
        }
        let mut bytes = response.bytes_stream();
        let mut events = SseEvents::default();
        let mut task: Option<Task> = None;
        loop {
            let chunk = match tokio::time::timeout(self.idle, bytes.next()).await {
                Err(_) => return Err(self.idle_error()),
                Ok(None) => break,
                Ok(Some(chunk)) => chunk.map_err(|source| unreachable(self.peer(), source))?,
            };
            for data in events.push(&chunk) {
                let result = self.answer_of(method, &id, data.as_bytes())?;
                let event = serde_json::from_value::<StreamResponse>(result).map_err(|e| {
                    self.out_of_spec(format!("an event of its {method} stream does not read: {e}"))
                })?;
                let current = match event {
                    StreamResponse::Message(message) if task.is_none() => {
                        return Ok(Ended::Answer(message.text()));
                    }
                    StreamResponse::Message(_) => continue,
                    StreamResponse::Task(new) => task.insert(new),
                    StreamResponse::StatusUpdate(update) => {
                        let current =
                            task.get_or_insert_with(|| empty_task(&update.task_id, &update.context_id));
                        current.status = update.status;
                        current
                    }
                    StreamResponse::ArtifactUpdate(update) => {
                        let current =
                            task.get_or_insert_with(|| empty_task(&update.task_id, &update.context_id));
                        add_artifact(current, update.artifact, update.append);
                        current
                    }
                };
                if let Some(ended) = self.settled(current) {
                    return ended;
                }
            }
        }
        // The stream ended before the task did: read it on.
        match task {
            Some(task) => self.follow(task).await,
            None => Err(self.out_of_spec(format!("its {method} stream ended before it named a task"))),
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
        self.answer_of(method, &id, &bytes)
    }

    /// The result of a JSON-RPC answer to request `id`, or its error.
    #[allow(clippy::result_large_err, reason = "the crate's error, as its async callers return it")]
    fn answer_of(&self, method: &str, id: &str, bytes: &[u8]) -> Result<Value, A2aError> {
        let mut answer: Value = serde_json::from_slice(bytes)
            .map_err(|e| self.out_of_spec(format!("its {method} answer is not JSON: {e}")))?;
        if let Some(error) = answer.get_mut("error").map(Value::take) {
            let error = serde_json::from_value::<RpcError>(error)
                .map_err(|e| self.out_of_spec(format!("its {method} error does not read: {e}")))?;
            return Err(A2aError::Rpc { peer: self.peer().to_owned(), error });
        }
        match answer.get_mut("result").map(Value::take) {
            Some(result) if answer.get("id").and_then(Value::as_str) == Some(id) => Ok(result),
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

    fn idle_error(&self) -> A2aError {
        A2aError::Idle { peer: self.peer().to_owned(), after: self.idle }
    }

    /// One call: a new task from the prompt, or the paused one answered
    /// with the decisions taken; a task that waits for input pauses the
    /// calling run with it.
    async fn serve(&self, ctx: &ToolContext, arguments: &str) -> Result<Output, ToolError> {
        let ended = match PausedCall::resumed(ctx) {
            Some(resumed) => {
                let message = self.decisions(resumed)?;
                self.exchange(message).await
            }
            None => {
                let ask: Ask = self.spec.parse(arguments)?;
                self.exchange(Message::user(vec![Part::text(ask.prompt)])).await
            }
        };
        let task = match ended.map_err(A2aError::into_tool_error)? {
            Ended::Answer(answer) => return Ok(Output::text(answer)),
            Ended::InputRequired(task) => task,
        };
        let (held, pending) = self.held(&task);
        let calls: Vec<String> = pending.iter().map(|p| format!("`{}`", p.call.name)).collect();
        let state = serde_json::to_value(&held).map_err(|e| ToolError::failed(e.to_string()))?;
        match PausedCall::new(state, pending).hand_up(ctx) {
            Ok(()) => Err(ToolError::failed(format!(
                "the A2A agent `{}` waits for a person's decision on {} (task {})",
                self.peer(),
                calls.join(", "),
                task.id
            ))),
            // No run above to wait in.
            Err(_) => Err(self.task_error(&task).into_tool_error()),
        }
    }

    /// What a paused call keeps of a task waiting for input: the task, and
    /// the calls it waits on, as its status message lists them (a toolcall
    /// server's data part), or one for the whole task.
    fn held(&self, task: &Task) -> (HeldTask, Vec<Pending>) {
        let message = task.status.message.as_ref();
        let listed = message.and_then(|message| {
            message.parts.iter().find_map(|part| part.data.as_ref()?.get("pending")?.as_array())
        });
        let calls: Vec<ToolCall> =
            listed.map(|listed| listed.iter().filter_map(listed_call).collect()).unwrap_or_default();
        let by = if calls.is_empty() { Answer::Text } else { Answer::Decisions };
        let calls = if calls.is_empty() {
            let text = message.map(Message::text).unwrap_or_default();
            let arguments = json!({"task": task.id, "message": text}).to_string();
            vec![ToolCall::new(INPUT_REQUIRED_ID, INPUT_REQUIRED_NAME, arguments)]
        } else {
            calls
        };
        let held = HeldTask {
            peer: self.peer().to_owned(),
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            by,
        };
        (held, calls.into_iter().map(Pending::of).collect())
    }

    /// The message that answers a held task with the decisions taken.
    fn decisions(&self, resumed: PausedCall) -> Result<Message, ToolError> {
        let held: HeldTask = serde_json::from_value(resumed.state).map_err(|e| {
            ToolError::failed(format!(
                "the call of the A2A agent `{}` could not be resumed: its held task does not read: {e}",
                self.peer()
            ))
        })?;
        let parts = match held.by {
            Answer::Decisions => {
                let decisions: serde_json::Map<String, Value> = resumed
                    .pending
                    .iter()
                    .filter_map(|pending| {
                        let decision = match pending.decision.as_ref()? {
                            Decision::Approve => json!("approve"),
                            other => serde_json::to_value(other).ok()?,
                        };
                        Some((pending.id(), decision))
                    })
                    .collect();
                vec![Part::data(json!({"decisions": decisions}))]
            }
            Answer::Text => {
                let text = match resumed.pending.iter().find_map(|pending| pending.decision.as_ref()) {
                    Some(Decision::Approve) => "approve".to_owned(),
                    Some(Decision::Deny { reason }) if reason.trim().is_empty() => "deny".to_owned(),
                    Some(Decision::Deny { reason }) => format!("deny: {reason}"),
                    Some(Decision::ApproveWith { arguments }) => arguments.clone(),
                    Some(other) => serde_json::to_string(other).unwrap_or_default(),
                    None => {
                        return Err(ToolError::failed(format!(
                            "the call of the A2A agent `{}` was resumed without a decision",
                            self.peer()
                        )));
                    }
                };
                vec![Part::text(text)]
            }
        };
        let mut message = Message::user(parts);
        message.task_id = Some(held.task_id);
        message.context_id = Some(held.context_id);
        Ok(message)
    }
}

impl Tool for A2aAgent {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(self.serve(ctx, arguments))
    }
}

/// A held call as a toolcall server lists it: `{"id", "name", "arguments"}`.
fn listed_call(listed: &Value) -> Option<ToolCall> {
    let id = listed.get("id")?.as_str()?;
    let name = listed.get("name")?.as_str()?;
    let arguments = match listed.get("arguments") {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "{}".to_owned(),
    };
    Some(ToolCall::new(id, name, arguments))
}

/// A task known only by an update of it, before the task itself.
fn empty_task(id: &str, context_id: &str) -> Task {
    Task {
        id: id.to_owned(),
        context_id: context_id.to_owned(),
        status: TaskStatus::new(TaskState::Submitted),
        artifacts: Vec::new(),
        history: Vec::new(),
        metadata: None,
    }
}

/// An artifact update into the task: a new artifact, one replaced, or
/// parts added to one (a text part's text joined to the last part's, as
/// pieces of one answer come).
fn add_artifact(task: &mut Task, artifact: Artifact, append: bool) {
    let Some(known) = task.artifacts.iter_mut().find(|known| known.artifact_id == artifact.artifact_id)
    else {
        task.artifacts.push(artifact);
        return;
    };
    if !append {
        *known = artifact;
        return;
    }
    for part in artifact.parts {
        match (known.parts.last_mut(), &part.text) {
            (Some(Part { text: Some(text), raw: None, url: None, data: None, .. }), Some(more)) => {
                text.push_str(more);
            }
            _ => known.parts.push(part),
        }
    }
}

/// The `data` of server-sent events, as their bytes come.
#[derive(Default)]
struct SseEvents {
    buffer: Vec<u8>,
}

impl SseEvents {
    /// Add a chunk; the data of the events it completes.
    fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        self.buffer.extend(chunk.iter().filter(|&&byte| byte != b'\r'));
        let mut events = Vec::new();
        while let Some(end) = self.buffer.windows(2).position(|pair| pair == b"\n\n") {
            let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
            let block = String::from_utf8_lossy(&block);
            let data: Vec<&str> = block
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            if !data.is_empty() {
                events.push(data.join("\n"));
            }
        }
        events
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_sent_events_are_read_across_chunks_and_line_endings() {
        let mut events = SseEvents::default();
        assert!(events.push(b": keep-alive\r\n\r\ndata: {\"a\"").is_empty());
        assert_eq!(events.push(b":1}\r\n\r\nevent: x\ndata: 2\ndata: 3\n\n"), ["{\"a\":1}", "2\n3"]);
        assert!(events.push(b"data:4").is_empty());
    }

    #[test]
    fn appended_text_joins_the_answer_and_a_new_piece_replaces_it() {
        let mut task = empty_task("t", "c");
        let piece = |text: &str| Artifact {
            artifact_id: "answer".to_owned(),
            name: None,
            description: None,
            parts: vec![Part::text(text)],
            metadata: None,
        };
        add_artifact(&mut task, piece("Hel"), false);
        add_artifact(&mut task, piece("lo."), true);
        assert_eq!(answer_text(&task), "Hello.");
        add_artifact(&mut task, piece("Again."), false);
        assert_eq!(answer_text(&task), "Again.");
    }
}
