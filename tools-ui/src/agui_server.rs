//! The AG-UI endpoint: [`AguiServer`], an agent served as an axum handler
//! that reads AG-UI's `RunAgentInput` and answers with the run's events,
//! each thread a session of a store, a paused run resumed by the `resume`
//! entries that answer its interrupts.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use toolcall_agent::{Agent, RunInput, Runner};
use toolcall_session::{ConversationKey, SessionError, SessionRun, SessionStore, StoreError};

use crate::AguiAdapter;
use crate::host::{Host, Live, Refusal, refuse};

/// The reason a denied call's result gives the model when the answer gave none.
const DECLINED: &str = "the user declined";

/// The reason a cancelled interrupt's call gives the model.
const CANCELLED: &str = "the user cancelled the call";

/// The part of AG-UI's `RunAgentInput` a run starts from (its `tools`,
/// `context` and `forwardedProps` are accepted and not used; its `state`
/// is the state the run's artifacts go into, [`AguiAdapter::with_state`]).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunAgentInput {
    thread_id: String,
    run_id: String,
    messages: Vec<Value>,
    #[serde(default)]
    resume: Vec<ResumeEntry>,
    #[serde(default)]
    state: Value,
}

/// AG-UI's `ResumeEntry`: the answer to one interrupt.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResumeEntry {
    interrupt_id: String,
    status: ResumeStatus,
    #[serde(default)]
    payload: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum ResumeStatus {
    Resolved,
    Cancelled,
}

impl ResumeEntry {
    /// Whether the call runs, and if not, the reason the model reads.
    fn decision(&self) -> Result<Result<(), String>, String> {
        match self.status {
            ResumeStatus::Cancelled => Ok(Err(CANCELLED.into())),
            ResumeStatus::Resolved => {
                let approved = match &self.payload {
                    Value::Bool(approved) => Some(*approved),
                    payload => payload["approved"].as_bool(),
                };
                match approved {
                    Some(true) => Ok(Ok(())),
                    Some(false) => Ok(Err(self.payload["reason"]
                        .as_str()
                        .filter(|r| !r.is_empty())
                        .unwrap_or(DECLINED)
                        .into())),
                    None => Err(format!(
                        "the resume entry for interrupt `{}` has no payload {{\"approved\": true|false}}",
                        self.interrupt_id
                    )),
                }
            }
        }
    }
}

/// An agent behind `POST /api/agui`, speaking AG-UI (`@ag-ui/core` 1.0.0)
/// to a client such as `@ag-ui/client`'s `HttpAgent`, each thread kept in
/// a [`SessionStore`].
///
/// **A thread is a conversation.** A `RunAgentInput`'s `threadId` names a
/// session of the store, under the user the auth hook names
/// ([`AguiServer::with_auth`]; without one, every request is
/// [`ANONYMOUS`](crate::ANONYMOUS)): a request whose last message is the user's (a string,
/// or the `text` parts of a list) runs from the thread's stored messages
/// and that text, so the model is sent the thread so far; the other
/// messages of the input are not read (the store is the thread). The
/// response is the run's [`AguiEvent`](crate::AguiEvent)s as server-sent
/// events; what the run added is kept before `RUN_FINISHED` is sent.
///
/// **Interrupts.** A run held for approval finishes with the outcome
/// `interrupt`, one interrupt per held call, its id the call's (see
/// [`AguiAdapter`]), and the thread keeps the paused run. A
/// `RunAgentInput` with `resume` entries resumes it (its messages are not
/// read): each entry answers one interrupt by its `interruptId`, `status`
/// `resolved` with `payload` `{"approved": true}` (or `true`) to run the
/// call, `{"approved": false, "reason": "..."}` (or `false`) to deny it,
/// the model reading the reason, and `status` `cancelled` to deny it too.
/// Every interrupt must be answered.
///
/// **Refused** before any stream, with a plain-text reason: a body that is
/// not a `RunAgentInput` (400) or too large (413); a new message whose
/// last message is not a user's with text (400); a new message while the
/// thread's interrupts wait (409); resume entries for an interrupt the
/// thread does not have, that leave one unanswered, or without an answer
/// (400: the run stays paused), for a thread with no paused run (409) or
/// no thread (404); any request while the thread's run is going (409); a
/// store that fails (500).
///
/// ```no_run
/// # async fn serve() -> std::io::Result<()> {
/// use toolcall_agent::{Agent, OpenAiChat};
/// use toolcall_core::toolset::Toolset;
/// use toolcall_ui::AguiServer;
///
/// let agent = Agent::new(OpenAiChat::new("gpt-4o-mini"), Toolset::builder().build().unwrap()).unwrap();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// axum::serve(listener, AguiServer::new(agent).router()).await
/// # }
/// ```
#[derive(Clone)]
pub struct AguiServer {
    host: Arc<Host>,
}

impl std::fmt::Debug for AguiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AguiServer").field("running", &self.running()).finish_non_exhaustive()
    }
}

impl AguiServer {
    /// A server for this agent, its threads in a [`MemoryStore`](toolcall_session::MemoryStore) of 1,000
    /// (the least recently used forgotten), every request the same user.
    pub fn new(agent: Agent) -> Self {
        Self { host: Arc::new(Host::new(agent)) }
    }

    /// Keep the threads in `store` (`toolcall_session::SqlStore` for SQLite
    /// or PostgreSQL): they outlive the process, a paused run included.
    pub fn with_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        Arc::make_mut(&mut self.host).store = store;
        self
    }

    /// Make the runs on `runner` (a durable engine's workers:
    /// `toolcall_restate::Remote`) rather than with the agent in this
    /// process: the chats, their approvals and the streams are the same,
    /// each run's events coming as the runner reports them.
    pub fn with_runner(mut self, runner: Arc<dyn Runner>) -> Self {
        Arc::make_mut(&mut self.host).runner = Some(runner);
        self
    }

    /// Who a request is from: `auth` reads the request's parts and gives
    /// the user's id, or the response that refuses the request. A thread
    /// belongs to its user: another user's `threadId` is a thread of their own.
    pub fn with_auth<F>(mut self, auth: F) -> Self
    where
        F: Fn(&Parts) -> BoxFuture<'static, Result<String, Response>> + Send + Sync + 'static,
    {
        Arc::make_mut(&mut self.host).auth = Some(Arc::new(auth));
        self
    }

    /// The largest request body taken (4 MiB by default); a larger one is
    /// refused with 413.
    pub fn with_max_body(mut self, bytes: usize) -> Self {
        Arc::make_mut(&mut self.host).max_body = bytes;
        self
    }

    /// Send a result's images and files of up to `bytes` bytes in its
    /// `TOOL_CALL_RESULT`, base64 (256 KiB by default); bigger ones given
    /// as bytes are left out ([`AguiAdapter::with_max_inline_bytes`]).
    pub fn with_max_inline_bytes(mut self, bytes: usize) -> Self {
        Arc::make_mut(&mut self.host).max_inline = bytes;
        self
    }

    /// A router with `POST /api/agui` on this server; to mount the handler
    /// elsewhere, call [`AguiServer::respond`] from a handler of your own.
    pub fn router(&self) -> Router {
        Router::new().route("/api/agui", post(run)).with_state(self.clone())
    }

    /// The ids of the interrupts (the held calls) the user's thread waits
    /// on (empty: none, or no such thread).
    ///
    /// # Errors
    ///
    /// The store's.
    pub async fn pending(&self, user: &str, thread_id: &str) -> Result<Vec<String>, StoreError> {
        self.host.pending(ConversationKey::new(user, thread_id)).await
    }

    /// How many runs are going now.
    pub fn running(&self) -> usize {
        self.host.running()
    }

    /// Answer one `RunAgentInput` body from `user`: the events of the run
    /// it starts or resumes, or a refusal.
    pub async fn respond(&self, user: &str, body: &[u8]) -> Response {
        let input: RunAgentInput = match serde_json::from_slice(body) {
            Ok(input) => input,
            Err(error) => {
                return refuse(StatusCode::BAD_REQUEST, format!("not a RunAgentInput: {error}"))
                    .into_response();
            }
        };
        let key = ConversationKey::new(user, input.thread_id.clone());
        if let Err(invalid) = key.check() {
            return refuse(StatusCode::BAD_REQUEST, invalid.to_string()).into_response();
        }
        let Some(live) = self.host.take(&key) else {
            let reason = format!("thread `{}` has a run going: wait for its end", input.thread_id);
            return refuse(StatusCode::CONFLICT, reason).into_response();
        };
        match self.begin(&key, &input).await {
            Ok(run) => {
                let adapter = if input.resume.is_empty() {
                    AguiAdapter::new(input.thread_id, input.run_id)
                } else {
                    AguiAdapter::resuming(input.thread_id, input.run_id)
                };
                let adapter = adapter.with_state(input.state).with_max_inline_bytes(self.host.max_inline);
                self.stream(key, live, adapter, run)
            }
            Err(refused) => {
                self.host.release(&key);
                refused.into_response()
            }
        }
    }

    /// The run the input asks for, made ready in the thread's session.
    async fn begin(&self, key: &ConversationKey, input: &RunAgentInput) -> Result<SessionRun, Refusal> {
        let agent = &self.host.agent;
        let session = self.host.session(key.clone());
        if !input.resume.is_empty() {
            let Some(mut state) = session.paused().await.map_err(unavailable)? else {
                return Err(match session.store().load(key).await.map_err(unavailable)? {
                    Some(_) => refuse(
                        StatusCode::CONFLICT,
                        format!("thread `{}` has no run waiting on interrupts", key.id),
                    ),
                    None => refuse(StatusCode::NOT_FOUND, format!("there is no thread `{}`", key.id)),
                });
            };
            for entry in &input.resume {
                let decision = entry.decision().map_err(|reason| refuse(StatusCode::BAD_REQUEST, reason))?;
                let decided = match decision {
                    Ok(()) => state.approve(&entry.interrupt_id),
                    Err(reason) => state.deny(&entry.interrupt_id, reason),
                };
                if let Err(unknown) = decided {
                    // Nothing was decided: the run waits as it was.
                    return Err(refuse(
                        StatusCode::BAD_REQUEST,
                        format!("thread `{}` has no interrupt `{}`: {unknown}", key.id, entry.interrupt_id),
                    ));
                }
            }
            let open: Vec<String> = state
                .pending()
                .iter()
                .filter(|pending| pending.decision.is_none())
                .map(toolcall_agent::Pending::id)
                .collect();
            if !open.is_empty() {
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    format!("the resume entries leave interrupts {} unanswered", open.join(", ")),
                ));
            }
            return session.begin(agent, RunInput::Paused(state)).await.map_err(refusal);
        }
        let text = match input.messages.last().map(user_text) {
            Some(Ok(text)) => text,
            Some(Err(reason)) => return Err(refuse(StatusCode::BAD_REQUEST, reason)),
            None => return Err(refuse(StatusCode::BAD_REQUEST, "the input has no messages")),
        };
        session.begin(agent, text).await.map_err(refusal)
    }

    /// The run as AG-UI events, going on to its end even if the client
    /// leaves; its end is kept, and the thread is free again, before
    /// `RUN_FINISHED` is sent.
    fn stream(
        &self,
        key: ConversationKey,
        live: Arc<Live>,
        adapter: AguiAdapter,
        run: SessionRun,
    ) -> Response {
        let frames = live.listen();
        self.host.spawn(key, live, run, move |events| adapter.stream(events));
        // `text/event-stream`, `no-cache`, and a keep-alive comment while
        // no event comes.
        self.host.sse(frames, &[])
    }
}

/// The text of a user message, or why there is none.
fn user_text(message: &Value) -> Result<String, String> {
    if message["role"] != "user" {
        return Err(format!("the last message's role is {}, not \"user\"", message["role"]));
    }
    let text = match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|part| part["type"] == "text")
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    if text.is_empty() { Err("the last user message has no text".into()) } else { Ok(text) }
}

fn unavailable(error: StoreError) -> Refusal {
    refuse(StatusCode::INTERNAL_SERVER_ERROR, format!("the thread could not be read: {error}"))
}

/// A session's refusal as the client reads it.
fn refusal(error: SessionError) -> Refusal {
    match error {
        SessionError::Waiting { key, pending } => refuse(
            StatusCode::CONFLICT,
            format!(
                "thread `{}` waits on interrupts {}: answer them with resume entries first",
                key.id,
                pending.join(", ")
            ),
        ),
        SessionError::NotPaused { key } => refuse(
            StatusCode::CONFLICT,
            format!("thread `{}` has no run waiting on these interrupts", key.id),
        ),
        SessionError::Store(error @ (StoreError::Conflict { .. } | StoreError::Busy { .. })) => {
            refuse(StatusCode::CONFLICT, error.to_string())
        }
        SessionError::Store(error) => unavailable(error),
        other => refuse(StatusCode::INTERNAL_SERVER_ERROR, other.to_string()),
    }
}

/// The `POST /api/agui` handler of [`AguiServer::router`].
async fn run(State(server): State<AguiServer>, request: Request) -> Response {
    match server.host.read(request).await {
        Ok((user, body)) => server.respond(&user, &body).await,
        Err(refused) => refused,
    }
}
