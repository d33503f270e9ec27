//! [`A2aServer`]: an [`Agent`] behind the A2A JSON-RPC binding, each task's
//! runs a conversation of a session store (`tasks`).

use crate::new_id;
use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use futures::StreamExt as _;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use toolcall_agent::{Agent, AgentEvent, Decision, RunInput, RunResult, RunState, StopReason};
use toolcall_core::{CancellationToken, Media, Source, ToolResult};
use toolcall_session::{
    ConversationKey, MemoryStore, Session, SessionError, SessionRun, SessionStore, StoreError,
};

use crate::tasks::{self, Record, run_key, status_message_id};

use crate::wire::{
    AGENT_CARD_PATH, AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Artifact, CancelTaskRequest,
    GetTaskRequest, JSONRPC_BINDING, Message, PROTOCOL_VERSION, Part, RpcError, SecurityRequirement,
    SecurityScheme, SendMessageRequest, SendMessageResponse, StreamResponse, StringList, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent, VERSION_HEADER, code, method,
};

/// The id of the artifact that holds a run's answer.
const ANSWER_ARTIFACT: &str = "answer";

/// Who every request is when the server has no auth hook (the chat
/// server's word for it too): all tasks then have the same owner.
pub const ANONYMOUS: &str = "anonymous";

/// The auth hook ([`A2aServer::with_auth`]): the same shape as the chat
/// server's (`toolcall_ui::Auth`), declared again here so that this crate
/// does not depend on the UI's.
type Auth = Arc<dyn Fn(&Parts) -> BoxFuture<'static, Result<String, Response>> + Send + Sync>;

/// An [`Agent`] served as an A2A agent (A2A 1.0, the JSON-RPC binding, as
/// the official SDKs 1.3.0 speak it): the agent card at
/// `/.well-known/agent-card.json`, and `POST /` for `SendMessage`,
/// `SendStreamingMessage` (server-sent events), `GetTask` and
/// `CancelTask`.
///
/// Each new message starts a task: the agent runs on the message's parts
/// (text, data as JSON, files), its answer becomes the task's `answer`
/// artifact and the completed status's message. A run that pauses for
/// approval ([`StopReason::Paused`]) leaves the task `input-required`, its
/// status message naming the held calls; the client's next message on the
/// task (same `taskId`) decides: the text `approve` or `deny` for all, or a
/// data part `{"decisions": {"<call id>": "approve" | "deny" | {"decision": ...}}}`,
/// and the run resumes.
///
/// **Where tasks are kept.** In a session store ([`A2aServer::with_store`];
/// by default one in memory, [`A2aServer::with_max_tasks`] of them), the
/// chat server's: each task's runs are a [`Session`] of the conversation
/// `(owner, task id)`, which holds the transcript, the paused run while
/// the task is `input-required`, and the lease of the run going; beside it
/// a log, `(owner, "a2a-task:{task id}")`, keeps what the wire shows that
/// no run holds (the context, the client's messages as sent, each run's
/// final status). Every server sharing the store (replicas behind a
/// balancer, on one PostgreSQL or one SQLite file) serves every task:
/// `GetTask` rebuilds it from the store (working while a run holds the
/// conversation anywhere, input-required, completed, failed for a run
/// that failed or whose server stopped, canceled); a message that decides
/// held calls claims the conversation before anything runs, so two
/// requests deciding the same calls at once, on one server or two, run
/// them once and the second is answered `UnsupportedOperationError`
/// (-32004); `CancelTask` reaches a run going on another server through
/// the store (at its next lease renewal, within a second).
///
/// **Whose task.** The auth hook ([`A2aServer::with_auth`]) runs first on
/// every JSON-RPC request and names the user (the card stays public); a
/// task belongs to the user whose message started it. Another user's task
/// id is answered exactly as an id no task has (`TaskNotFoundError`,
/// -32001), by `GetTask`, `CancelTask`, and a message that continues the
/// task or decides its held calls (streamed or not), as A2A 1.0 asks
/// (servers "MUST NOT reveal the existence of resources the client is not
/// authorized to access"): the store keeps a task under its owner's key,
/// so another user's lookup finds nothing there, on any server. Contexts
/// are each user's own: a `contextId` another user made, named in a new
/// message, is not refused (that would tell that it exists, where an
/// unknown one is taken) but is a context of the sender's own under that
/// id, sharing nothing with the other's (the spec lets an agent accept and
/// keep a client's `contextId`, and refusing one it cannot accept must not
/// make up another). Without a hook every request is the same user,
/// [`ANONYMOUS`]: a demo's, or a private network's, setting.
///
/// ```no_run
/// # async fn run(agent: toolcall_agent::Agent) -> std::io::Result<()> {
/// use toolcall_a2a::A2aServer;
/// let server = A2aServer::new(agent).with_name("weather").with_description("Forecasts by city.");
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:9999").await?;
/// server.serve(listener).await
/// # }
/// ```
#[derive(Clone)]
pub struct A2aServer {
    inner: Arc<Inner>,
}

struct Inner {
    agent: Agent,
    card: CardSettings,
    /// Where the tasks are kept.
    store: Arc<dyn SessionStore>,
    /// Whether `store` is the default one, which [`A2aServer::with_max_tasks`] sizes.
    default_store: bool,
    /// The runs going in this process, by task (owner and id): what only
    /// this process holds of them, the token that stops one at once.
    live: Mutex<HashMap<ConversationKey, CancellationToken>>,
    auth: Option<Auth>,
    max_body: usize,
    keep_alive: Duration,
}

/// What the builder says about the card; the rest comes from the agent.
#[derive(Clone)]
struct CardSettings {
    name: String,
    description: String,
    url: Option<String>,
    version: String,
    skills: Vec<AgentSkill>,
    security: BTreeMap<String, SecurityScheme>,
}

/// How many tasks the default store keeps.
const MAX_TASKS: usize = 1024;

impl std::fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServer")
            .field("name", &self.inner.card.name)
            .field("url", &self.inner.card.url)
            .field("running", &self.live().len())
            .finish_non_exhaustive()
    }
}

impl A2aServer {
    /// Serve this agent; its card names it `agent`, with one skill per tool
    /// of its toolset (none when the toolset is empty), until the setters
    /// say otherwise.
    pub fn new(agent: Agent) -> Self {
        let skills = agent
            .toolset()
            .iter()
            .map(|tool| {
                let spec = tool.spec();
                AgentSkill {
                    id: spec.name().to_owned(),
                    name: spec.name().to_owned(),
                    description: spec.description().to_owned(),
                    tags: vec!["tool".to_owned()],
                    examples: Vec::new(),
                }
            })
            .collect();
        let card = CardSettings {
            name: "agent".to_owned(),
            description: String::new(),
            url: None,
            version: "1.0.0".to_owned(),
            skills,
            security: BTreeMap::new(),
        };
        Self {
            inner: Arc::new(Inner {
                agent,
                card,
                store: Arc::new(MemoryStore::new(2 * MAX_TASKS)),
                default_store: true,
                live: Mutex::default(),
                auth: None,
                max_body: 4 << 20,
                keep_alive: Duration::from_secs(15),
            }),
        }
    }

    /// Change the settings before the server is shared.
    fn inner_mut(&mut self) -> &mut Inner {
        Arc::get_mut(&mut self.inner).expect("the builder's setters run before the server is cloned")
    }

    /// The card's name, which a client (and its model) knows the agent by.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.inner_mut().card.name = name.into();
        self
    }

    /// The card's description: what the agent does, for a client choosing one.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.inner_mut().card.description = description.into();
        self
    }

    /// The URL clients send requests to (the router's `POST /`, as the
    /// world reaches it). Without it the card names `http://<Host>/`, the
    /// host the card's request was sent to, which is right unless a proxy
    /// or a path prefix is in between.
    pub fn with_url(mut self, url: impl Into<String>) -> Self {
        self.inner_mut().card.url = Some(url.into());
        self
    }

    /// The card's version: the agent's own, not the protocol's.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.inner_mut().card.version = version.into();
        self
    }

    /// The card's skills, instead of one per tool: what the agent is
    /// good at, as a client choosing an agent should read it.
    pub fn with_skills(mut self, skills: impl IntoIterator<Item = AgentSkill>) -> Self {
        self.inner_mut().card.skills = skills.into_iter().collect();
        self
    }

    /// Who a request is from: `auth` reads the request's parts (a bearer
    /// token, an API key, a client certificate's name put there by a
    /// proxy) and gives the user's id, or the response that refuses the
    /// request (401, 403), which is sent as it is. It runs first on every
    /// `POST /`, before the body is read; the card is served to anyone,
    /// as clients read it to learn how to authenticate (say how with
    /// [`A2aServer::with_security_scheme`]). Each task then belongs to
    /// its user: see "Whose task" on [`A2aServer`].
    ///
    /// ```
    /// use axum::http::{Request, StatusCode};
    /// use axum::response::IntoResponse;
    /// use toolcall_a2a::A2aServer;
    /// use toolcall_a2a::wire::SecurityScheme;
    /// use toolcall_agent::{Agent, testing::ScriptedModel};
    /// use toolcall_core::Toolset;
    ///
    /// let agent = Agent::new(ScriptedModel::new().then_text("Hello."), Toolset::new()).unwrap();
    /// let server = A2aServer::new(agent)
    ///     .with_auth(|parts| {
    ///         // A real hook checks a token; this one trusts a header.
    ///         let user = parts.headers.get("x-user").and_then(|v| v.to_str().ok()).map(str::to_owned);
    ///         Box::pin(async move { user.ok_or_else(|| StatusCode::UNAUTHORIZED.into_response()) })
    ///     })
    ///     .with_security_scheme("user", SecurityScheme::api_key("header", "x-user"));
    /// let _app = server.router(); // to serve, as without a hook
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let body = br#"{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-1"}}"#;
    /// let (nobody, ()) = Request::post("/").body(()).unwrap().into_parts();
    /// assert_eq!(server.respond(&nobody, body).await.status(), StatusCode::UNAUTHORIZED);
    /// let (alice, ()) = Request::post("/").header("x-user", "alice").body(()).unwrap().into_parts();
    /// assert_eq!(server.respond(&alice, body).await.status(), StatusCode::OK); // -32001: no such task
    /// # });
    /// ```
    pub fn with_auth<F>(mut self, auth: F) -> Self
    where
        F: Fn(&Parts) -> BoxFuture<'static, Result<String, Response>> + Send + Sync + 'static,
    {
        self.inner_mut().auth = Some(Arc::new(auth));
        self
    }

    /// Say on the card that requests authenticate with `scheme`, under
    /// `name` (the card's `securitySchemes`, and a `securityRequirements`
    /// entry naming it alone, without scopes: any one of the schemes
    /// declared will do). The card only tells clients; the checking is the
    /// auth hook's ([`A2aServer::with_auth`]).
    pub fn with_security_scheme(mut self, name: impl Into<String>, scheme: SecurityScheme) -> Self {
        self.inner_mut().card.security.insert(name.into(), scheme);
        self
    }

    /// Keep the tasks in `store` (`toolcall_session::SqlStore` for SQLite
    /// or PostgreSQL; the one a `ChatServer` keeps its chats in, if you
    /// like, since the owners are the same users): they outlive the
    /// process, and every server sharing the store serves them (see
    /// "Where tasks are kept" on [`A2aServer`]). A task takes two of the
    /// store's conversations, its runs' and its log (`a2a-task:{id}`),
    /// both listed among the owner's ([`SessionStore::list`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolcall_a2a::A2aServer;
    /// use toolcall_agent::{Agent, testing::ScriptedModel};
    /// use toolcall_core::Toolset;
    /// use toolcall_session::SqlStore;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = Arc::new(SqlStore::sqlite(dir.path().join("tasks.db")).await.unwrap());
    /// let agent = Agent::new(ScriptedModel::new().then_text("Hello."), Toolset::new()).unwrap();
    /// // Replicas each build theirs on the same store.
    /// let server = A2aServer::new(agent).with_store(store);
    /// let _app = server.router();
    /// # });
    /// ```
    pub fn with_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        let inner = self.inner_mut();
        inner.store = store;
        inner.default_store = false;
        self
    }

    /// How many tasks the default store keeps (1024): it is a
    /// `MemoryStore` of twice as many conversations (a task's runs and its
    /// log), which forgets the least recently used past it; a task
    /// forgotten is not found. It means nothing with a store of your own
    /// ([`A2aServer::with_store`]), which keeps what it keeps.
    pub fn with_max_tasks(mut self, tasks: usize) -> Self {
        let inner = self.inner_mut();
        if inner.default_store {
            inner.store = Arc::new(MemoryStore::new(tasks.max(1).saturating_mul(2)));
        }
        self
    }

    /// The largest request body read (4 MiB by default); a larger one is
    /// refused with 413.
    pub fn with_max_body(mut self, bytes: usize) -> Self {
        self.inner_mut().max_body = bytes;
        self
    }

    /// How often a stream sends a comment while the agent is quiet (15 s by
    /// default), so that proxies keep it open.
    pub fn with_keep_alive(mut self, interval: Duration) -> Self {
        self.inner_mut().keep_alive = interval;
        self
    }

    /// The card as served when the request came to `host`.
    pub fn card(&self, host: Option<&str>) -> AgentCard {
        let settings = &self.inner.card;
        let url = settings.url.clone().unwrap_or_else(|| format!("http://{}/", host.unwrap_or("localhost")));
        AgentCard {
            name: settings.name.clone(),
            description: settings.description.clone(),
            supported_interfaces: vec![AgentInterface {
                url,
                protocol_binding: JSONRPC_BINDING.to_owned(),
                protocol_version: PROTOCOL_VERSION.to_owned(),
            }],
            version: settings.version.clone(),
            capabilities: AgentCapabilities { streaming: Some(true), push_notifications: Some(false) },
            security_schemes: settings.security.clone(),
            security_requirements: settings
                .security
                .keys()
                .map(|name| SecurityRequirement {
                    schemes: BTreeMap::from([(name.clone(), StringList::default())]),
                })
                .collect(),
            default_input_modes: vec!["text/plain".into(), "application/json".into()],
            default_output_modes: vec!["text/plain".into(), "application/json".into()],
            skills: settings.skills.clone(),
        }
    }

    /// The routes: `GET /.well-known/agent-card.json` and `POST /`; nest
    /// it under a prefix (and say so with [`A2aServer::with_url`]) to serve
    /// it beside other routes.
    pub fn router(&self) -> Router {
        Router::new()
            .route(AGENT_CARD_PATH, get(card_route))
            .route("/", post(rpc_route))
            .with_state(self.clone())
    }

    /// Serve the routes on `listener` until the process ends, through the
    /// accept loop of `toolcall-serve` (as `toolcall::ui::serve` and the
    /// MCP server), not `axum::serve`, which holds every connection a client
    /// leaves idle or half-sent: it closes a connection that takes more than
    /// 30 s to send a request's head (or sits that long idle between
    /// requests) or its body, and serves at most 512 connections, closing
    /// the one idle the longest to make room for a new client. A response
    /// being written, such as a `SendStreamingMessage` stream, is never cut.
    /// For other bounds or a graceful shutdown, serve [`A2aServer::router`]
    /// with [`toolcall_serve::serve`].
    ///
    /// # Errors
    ///
    /// None in this version: a failed accept is logged and retried rather
    /// than returned.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        toolcall_serve::serve(listener, self.router()).await
    }

    /// The task `id` of `owner` as it is now, with at most `history` of
    /// its latest messages, as the store has it (whichever server sharing
    /// it runs the task); `None` when `owner` has no task of this id
    /// (another owner's included).
    ///
    /// # Errors
    ///
    /// The store's.
    pub async fn task(
        &self,
        owner: &str,
        id: &str,
        history: Option<i32>,
    ) -> Result<Option<Task>, StoreError> {
        let stored = tasks::load(self.store().as_ref(), owner, id).await?;
        Ok(stored.map(|stored| limit_history(tasks::task(id, &stored), history)))
    }

    /// The task `id` as `owner` may read it: another owner's is not found.
    async fn task_of(&self, owner: &str, id: &str, history: Option<i32>) -> Result<Task, RpcError> {
        self.task(owner, id, history).await.map_err(unavailable)?.ok_or_else(|| not_found(id))
    }

    /// The request's user: the auth hook's, or [`ANONYMOUS`] without one;
    /// or the hook's refusal.
    async fn user(&self, parts: &Parts) -> Result<String, Response> {
        match &self.inner.auth {
            Some(auth) => auth(parts).await,
            None => Ok(ANONYMOUS.to_owned()),
        }
    }

    fn store(&self) -> &Arc<dyn SessionStore> {
        &self.inner.store
    }

    fn live(&self) -> MutexGuard<'_, HashMap<ConversationKey, CancellationToken>> {
        self.inner.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Answer one JSON-RPC request (the body of `POST /`, sent with
    /// `parts`), for a handler of your own: the auth hook runs first on
    /// `parts`, and its refusal is the answer.
    pub async fn respond(&self, parts: &Parts, body: &[u8]) -> Response {
        match self.user(parts).await {
            Ok(user) => self.answer(&user, &parts.headers, body).await,
            Err(refused) => refused,
        }
    }

    /// Answer one JSON-RPC request from `user`, the hook passed.
    async fn answer(&self, user: &str, headers: &HeaderMap, body: &[u8]) -> Response {
        let request: Value = match serde_json::from_slice(body) {
            Ok(value) => value,
            Err(e) => {
                return rpc_error(Value::Null, RpcError::new(code::PARSE_ERROR, format!("Parse error: {e}")));
            }
        };
        let id = match request.get("id") {
            Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id.clone(),
            _ => Value::Null,
        };
        let Some(object) = request.as_object() else {
            return rpc_error(id, RpcError::new(code::INVALID_REQUEST, "Invalid Request: not an object"));
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return rpc_error(
                id,
                RpcError::new(code::INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be \"2.0\""),
            );
        }
        if matches!(object.get("id"), Some(Value::Bool(_) | Value::Array(_) | Value::Object(_))) {
            return rpc_error(id, RpcError::new(code::INVALID_REQUEST, "Invalid Request: bad id"));
        }
        let Some(name) = object.get("method").and_then(Value::as_str) else {
            return rpc_error(id, RpcError::new(code::INVALID_REQUEST, "Invalid Request: no method"));
        };
        if !matches!(
            name,
            method::SEND_MESSAGE | method::SEND_STREAMING_MESSAGE | method::GET_TASK | method::CANCEL_TASK
        ) {
            return rpc_error(id, RpcError::new(code::METHOD_NOT_FOUND, format!("Method not found: {name}")));
        }
        if let Some(version) = headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok()) {
            let major = version.trim().split('.').next().unwrap_or_default();
            if !version.trim().is_empty() && major != "1" {
                let message = format!(
                    "A2A version '{version}' is not supported; this server speaks {PROTOCOL_VERSION}"
                );
                return rpc_error(id, RpcError::new(code::VERSION_NOT_SUPPORTED, message));
            }
        }
        let params = object.get("params").cloned().unwrap_or_else(|| json!({}));
        let result = match name {
            method::SEND_MESSAGE => match parse_params::<SendMessageRequest>(params) {
                Ok(params) => self.send(user, params).await.map(|r| json!(r)),
                Err(e) => Err(e),
            },
            method::SEND_STREAMING_MESSAGE => {
                return match parse_params::<SendMessageRequest>(params) {
                    Ok(params) => match self.send_streaming(user, id.clone(), params).await {
                        Ok(response) => response,
                        Err(e) => rpc_error(id, e),
                    },
                    Err(e) => rpc_error(id, e),
                };
            }
            method::GET_TASK => match parse_params::<GetTaskRequest>(params) {
                Ok(params) => self.task_of(user, &params.id, params.history_length).await.map(|t| json!(t)),
                Err(e) => Err(e),
            },
            _ => match parse_params::<CancelTaskRequest>(params) {
                Ok(params) => self.cancel(user, &params.id).await.map(|t| json!(t)),
                Err(e) => Err(e),
            },
        };
        match result {
            Ok(result) => rpc_result(id, result),
            Err(e) => rpc_error(id, e),
        }
    }

    /// `SendMessage`: start or resume the task, and answer when it stops
    /// (at once with `returnImmediately`).
    async fn send(&self, user: &str, params: SendMessageRequest) -> Result<SendMessageResponse, RpcError> {
        let config = params.configuration.clone().unwrap_or_default();
        let started = self.start(user, params, None).await?;
        if !config.return_immediately {
            let mut done = started.done;
            // A closed sender means the run's task is gone: it ended too.
            let _ = done.wait_for(|done| *done).await;
        }
        let task = self.task_of(user, &started.task_id, config.history_length).await?;
        Ok(SendMessageResponse::Task(task))
    }

    /// `SendStreamingMessage`: start or resume the task, and stream its
    /// events: the task first, then its updates, to its next stop.
    async fn send_streaming(
        &self,
        user: &str,
        id: Value,
        params: SendMessageRequest,
    ) -> Result<Response, RpcError> {
        let history = params.configuration.as_ref().and_then(|c| c.history_length);
        let (sender, receiver) = mpsc::unbounded_channel();
        let started = self.start(user, params, Some(sender)).await?;
        let first = started.first;
        let first = StreamResponse::Task(limit_history(first, history));
        let events = futures::stream::once(async move { first })
            .chain(futures::stream::unfold(receiver, |mut receiver| async move {
                receiver.recv().await.map(|event| (event, receiver))
            }))
            .map(move |event| {
                let body = json!({"jsonrpc": "2.0", "id": id, "result": event});
                Ok::<_, Infallible>(Event::default().data(body.to_string()))
            });
        Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(self.inner.keep_alive)).into_response())
    }

    /// `CancelTask`: stop the run (here at once; on another server sharing
    /// the store at its next lease renewal), or drop the wait for a
    /// decision. The log's cancel makes the task canceled for good,
    /// whatever its run does after.
    async fn cancel(&self, user: &str, id: &str) -> Result<Task, RpcError> {
        let store = self.store().as_ref();
        let stored = tasks::load(store, user, id).await.map_err(unavailable)?.ok_or_else(|| not_found(id))?;
        let state = tasks::task(id, &stored).status.state;
        if state.is_terminal() {
            return Err(RpcError::new(
                code::TASK_NOT_CANCELABLE,
                format!("Task cannot be canceled: task {id} is {}", state_name(state)),
            ));
        }
        tasks::record(store, user, id, &[Record::Canceled]).await.map_err(unavailable)?;
        let key = run_key(user, id);
        if let Some(token) = self.live().get(&key) {
            token.cancel();
        }
        if stored.conversation.running().is_some() {
            store.stop(&key).await.map_err(unavailable)?;
        }
        self.task_of(user, id, None).await
    }

    /// Start a new task of `user`'s for a message, or resume the paused
    /// one of theirs it answers.
    async fn start(
        &self,
        user: &str,
        params: SendMessageRequest,
        events: Option<mpsc::UnboundedSender<StreamResponse>>,
    ) -> Result<Started, RpcError> {
        let mut message = params.message;
        let store = self.store();
        let agent = &self.inner.agent;
        let Some(task_id) = message.task_id.clone().filter(|id| !id.is_empty()) else {
            let parts = prompt_parts(&message.parts).map_err(|e| RpcError::new(code::INVALID_PARAMS, e))?;
            let task_id = new_id();
            let key = run_key(user, &task_id);
            key.check().map_err(|invalid| {
                RpcError::new(
                    code::INVALID_REQUEST,
                    format!("No task can belong to this request's user: {invalid}"),
                )
            })?;
            // A context named by the client is taken as the sender's own,
            // whoever else used the id: contexts are per user (the runs
            // carry nothing from one task to the next of a context, so no
            // other user's conversation can leak through it).
            let context_id = message.context_id.clone().filter(|c| !c.is_empty()).unwrap_or_else(new_id);
            message.task_id = Some(task_id.clone());
            message.context_id = Some(context_id.clone());
            // The log first: a task whose run is stored has its context.
            let began = [
                Record::Task { context_id: context_id.clone() },
                Record::Message { message: message.clone() },
            ];
            tasks::record(store.as_ref(), user, &task_id, &began).await.map_err(unavailable)?;
            let session = Session::new(store.clone(), key.clone());
            let run =
                session.begin(agent, RunInput::Prompt(parts)).await.map_err(|e| refused(&task_id, e))?;
            let first = Task {
                id: task_id.clone(),
                context_id: context_id.clone(),
                status: TaskStatus::new(TaskState::Submitted),
                artifacts: Vec::new(),
                history: vec![message],
                metadata: None,
            };
            let done = self.spawn(key, context_id, run, events);
            return Ok(Started { task_id, first, done });
        };
        // Whose first: another user's task is not found before its context
        // or state could tell anything about it.
        let stored = tasks::load(store.as_ref(), user, &task_id)
            .await
            .map_err(unavailable)?
            .ok_or_else(|| not_found(&task_id))?;
        let mut task = tasks::task(&task_id, &stored);
        if let Some(context) = message.context_id.as_deref().filter(|c| !c.is_empty())
            && context != task.context_id
        {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                format!("Context {context} does not match context {} of task {task_id}", task.context_id),
            ));
        }
        if task.status.state != TaskState::InputRequired {
            return Err(not_waiting(&task_id, task.status.state));
        }
        let key = run_key(user, &task_id);
        let session = Session::new(store.clone(), key.clone());
        // The paused run as the store holds it now: none when another
        // request's run took its decisions since the task was read.
        let Some(mut paused) = session.paused().await.map_err(unavailable)? else {
            return Err(taken(&task_id));
        };
        decide(&mut paused, &message).map_err(|e| RpcError::new(code::INVALID_PARAMS, e))?;
        // The claim: one append that keeps the decisions and takes the
        // conversation, checked against any other run's. Of two requests
        // deciding at once, on this server or another sharing the store,
        // one takes it and the other is refused here, before anything runs.
        let run = session.begin(agent, RunInput::Paused(paused)).await.map_err(|e| refused(&task_id, e))?;
        message.context_id = Some(task.context_id.clone());
        match tasks::record(store.as_ref(), user, &task_id, &[Record::Message { message: message.clone() }])
            .await
        {
            // Canceled between the read and the claim: the run stops as it starts.
            Ok(before) if tasks::canceled(&before) => run.cancellation().cancel(),
            Ok(_) => {}
            // The decision is taken and kept with the run: it goes on,
            // the history without this message.
            Err(error) => {
                tracing::warn!(target: "toolcall_a2a", task = %task_id, %error, "a decision's message could not be logged");
            }
        }
        task.status = TaskStatus::new(TaskState::Working);
        task.history.push(message);
        let context_id = task.context_id.clone();
        let done = self.spawn(key, context_id, run, events);
        Ok(Started { task_id, first: task, done })
    }

    /// Run `run` for the task `key` in the background, its cancel token
    /// kept here; the receiver is set when its end is logged.
    fn spawn(
        &self,
        key: ConversationKey,
        context_id: String,
        run: SessionRun,
        events: Option<mpsc::UnboundedSender<StreamResponse>>,
    ) -> watch::Receiver<bool> {
        let (done, ended) = watch::channel(false);
        self.live().insert(key.clone(), run.cancellation().clone());
        let going = Run { server: self.clone(), key, context_id, events, done };
        tokio::spawn(going.go(run));
        ended
    }
}

/// What [`A2aServer::start`] gives: the task, as it was when it started.
struct Started {
    task_id: String,
    first: Task,
    done: watch::Receiver<bool>,
}

/// One run of the agent for a task, from start (or resumption) to its stop.
struct Run {
    server: A2aServer,
    /// The task's conversation: its owner and its id.
    key: ConversationKey,
    context_id: String,
    events: Option<mpsc::UnboundedSender<StreamResponse>>,
    done: watch::Sender<bool>,
}

impl Run {
    async fn go(self, run: SessionRun) {
        self.emit_status(TaskStatus::new(TaskState::Working));
        let mut stream = std::pin::pin!(run.stream());
        let mut pieces = Pieces::default();
        let mut result = None;
        while let Some(event) = stream.next().await {
            match event {
                AgentEvent::TextDelta(text) if !text.is_empty() => {
                    if let Some(previous) = pieces.held.replace(text) {
                        self.emit_piece(previous, &mut pieces, false);
                    }
                }
                // Text before a call was the model thinking aloud: the
                // answer starts again after the calls.
                AgentEvent::ToolCall(_) => {
                    if let Some(previous) = pieces.held.take() {
                        self.emit_piece(previous, &mut pieces, true);
                    }
                    pieces.sent = false;
                }
                AgentEvent::ToolResult(result) => self.tool_artifact(&result),
                AgentEvent::Finished(finished) => result = Some(finished),
                _ => {}
            }
        }
        if let Some(last) = pieces.held.take() {
            self.emit_piece(last, &mut pieces, true);
        }
        self.finish(result).await;
    }

    /// Send a piece of the answer artifact: the first replaces, the next add.
    fn emit_piece(&self, text: String, pieces: &mut Pieces, last: bool) {
        let append = pieces.sent;
        pieces.sent = true;
        let artifact = answer_artifact(text);
        self.emit(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.key.id.clone(),
            context_id: self.context_id.clone(),
            artifact,
            append,
            last_chunk: last,
            metadata: None,
        }));
    }

    /// A tool result's parts beyond its text (JSON, images, files) and its
    /// artifact, as an artifact of the task (the store keeps the result,
    /// which the task's artifacts are rebuilt from).
    fn tool_artifact(&self, result: &ToolResult) {
        let Some(artifact) = tasks::tool_artifact(result) else { return };
        self.emit(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.key.id.clone(),
            context_id: self.context_id.clone(),
            artifact,
            append: false,
            last_chunk: true,
            metadata: None,
        }));
    }

    /// The run stopped (its end kept in the conversation): the task's new
    /// status, logged and sent.
    async fn finish(self, result: Option<Result<RunResult, toolcall_agent::AgentError>>) {
        let task_id = self.key.id.as_str();
        // Each status message's id is the one a server rebuilding the
        // status from the conversation gives it (`tasks::task`).
        let said = |stored: usize, parts: Vec<Part>| {
            let mut message = Message::agent(parts);
            message.message_id = status_message_id(task_id, stored);
            message
        };
        let mut status = match result {
            Some(Ok(run)) => match run.stop {
                StopReason::Paused(state) => {
                    let mut message = approval_message(&state);
                    message.message_id = status_message_id(task_id, state.transcript().messages.len());
                    TaskStatus { state: TaskState::InputRequired, message: Some(message), timestamp: None }
                }
                StopReason::Cancelled => TaskStatus::new(TaskState::Canceled),
                _ => {
                    let message = said(run.transcript.messages.len(), vec![Part::text(run.answer)]);
                    TaskStatus { state: TaskState::Completed, message: Some(message), timestamp: None }
                }
            },
            Some(Err(e)) => {
                let message =
                    said(e.transcript.messages.len(), vec![Part::text(format!("The agent failed: {e}"))]);
                TaskStatus { state: TaskState::Failed, message: Some(message), timestamp: None }
            }
            None => {
                let message = Message::agent(vec![Part::text("The agent's run ended without a result")]);
                TaskStatus { state: TaskState::Failed, message: Some(message), timestamp: None }
            }
        };
        if let Some(message) = status.message.as_mut() {
            message.task_id = Some(task_id.to_owned());
            message.context_id = Some(self.context_id.clone());
        }
        let store = self.server.store().as_ref();
        let logged = [Record::Status { status: status.clone() }];
        let status = match tasks::record(store, &self.key.owner, task_id, &logged).await {
            // Canceled meanwhile: it stays canceled, whatever the run did.
            Ok(before) if tasks::canceled(&before) => TaskStatus::new(TaskState::Canceled),
            Ok(_) => status,
            Err(error) => {
                tracing::warn!(target: "toolcall_a2a", task = %task_id, %error, "a run's end could not be logged: the task's status is rebuilt from its conversation");
                status
            }
        };
        self.server.live().remove(&self.key);
        self.emit_status(status);
        let _ = self.done.send(true);
    }

    fn emit_status(&self, status: TaskStatus) {
        self.emit(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.key.id.clone(),
            context_id: self.context_id.clone(),
            status,
            metadata: None,
        }));
    }

    fn emit(&self, event: StreamResponse) {
        if let Some(events) = &self.events {
            // A client that left no longer reads; the run goes on, and the
            // task keeps its result for GetTask.
            let _ = events.send(event);
        }
    }
}

/// The answer's text deltas as artifact pieces: the last delta is held
/// back, so that the piece that ends the answer says so.
#[derive(Default)]
struct Pieces {
    held: Option<String>,
    sent: bool,
}

/// The artifact that holds the answer.
pub(crate) fn answer_artifact(text: String) -> Artifact {
    Artifact {
        artifact_id: ANSWER_ARTIFACT.to_owned(),
        name: Some("answer".to_owned()),
        description: None,
        parts: vec![Part::text(text)],
        metadata: None,
    }
}

/// The input-required message: which calls wait, and how to answer.
pub(crate) fn approval_message(state: &RunState) -> Message {
    let calls: Vec<String> = state
        .pending()
        .iter()
        .filter(|p| p.decision.is_none())
        .map(|p| format!("`{}` with {} (call {})", p.call.name, p.call.arguments, p.id()))
        .collect();
    let pending: Vec<Value> = state
        .pending()
        .iter()
        .filter(|p| p.decision.is_none())
        .map(|p| json!({"id": p.id(), "name": p.call.name, "arguments": p.call.arguments}))
        .collect();
    let text = format!(
        "Approval needed for {}. Answer on this task with \"approve\" or \"deny\", or with a data part {{\"decisions\": {{\"<call id>\": \"approve\" | \"deny\"}}}}.",
        calls.join(", ")
    );
    Message::agent(vec![Part::text(text), Part::data(json!({"pending": pending}))])
}

/// Apply the client's answer to the held calls: a data part's
/// `decisions`, or the text `approve` / `deny` (`deny: reason`) for all.
fn decide(state: &mut RunState, message: &Message) -> Result<(), String> {
    let decisions = message.parts.iter().find_map(|part| part.data.as_ref()?.get("decisions")?.as_object());
    if let Some(decisions) = decisions {
        for (id, value) in decisions {
            let decision = match value {
                Value::String(word) => word_decision(word).ok_or_else(|| {
                    format!("the decision for call {id} is {word:?}: say \"approve\" or \"deny\"")
                })?,
                other => serde_json::from_value::<Decision>(other.clone())
                    .map_err(|e| format!("the decision for call {id} does not read: {e}"))?,
            };
            state.decide(id, decision).map_err(|e| e.to_string())?;
        }
        return Ok(());
    }
    let text = message.text();
    let decision = word_decision(&text).ok_or_else(|| {
        format!(
            "the task waits for a decision about calls held for approval: answer \"approve\" or \"deny\" (got {:?}), or a data part {{\"decisions\": {{...}}}}",
            text.chars().take(80).collect::<String>()
        )
    })?;
    let ids: Vec<String> = state.pending().iter().filter(|p| p.decision.is_none()).map(|p| p.id()).collect();
    for id in ids {
        state.decide(&id, decision.clone()).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `approve`, `deny`, `deny: reason`, in any case.
fn word_decision(text: &str) -> Option<Decision> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    if lower == "approve" || lower == "approved" {
        return Some(Decision::Approve);
    }
    if lower == "deny" || lower == "denied" {
        return Some(Decision::Deny { reason: "The A2A client denied the call.".to_owned() });
    }
    let reason = lower.strip_prefix("deny:").map(|_| text["deny:".len()..].trim())?;
    Some(Decision::Deny { reason: reason.to_owned() })
}

/// A message's parts as the prompt's: text, data as JSON, files as images
/// or files by their media type.
fn prompt_parts(parts: &[Part]) -> Result<Vec<toolcall_core::Part>, String> {
    let mut prompt = Vec::new();
    for part in parts {
        if let Some(text) = &part.text {
            prompt.push(toolcall_core::Part::text(text.clone()));
        } else if let Some(data) = &part.data {
            prompt.push(toolcall_core::Part::json(data.clone()));
        } else if part.raw.is_some() || part.url.is_some() {
            let media_type = part.media_type.clone().unwrap_or_else(|| "application/octet-stream".to_owned());
            let mut media = match (&part.raw, &part.url) {
                (Some(raw), _) => {
                    let bytes = STANDARD
                        .decode(raw)
                        .map_err(|e| format!("a part's raw bytes are not base64: {e}"))?;
                    Media::bytes(bytes, media_type.clone())
                }
                (None, Some(url)) => Media::url(url.clone(), media_type.clone()),
                (None, None) => continue,
            };
            if let Some(name) = &part.filename {
                media = media.with_name(name.clone());
            }
            prompt.push(if media_type.starts_with("image/") {
                toolcall_core::Part::image(media)
            } else {
                toolcall_core::Part::file(media)
            });
        }
    }
    if prompt.is_empty() {
        return Err("the message has no text, data or file part to run the agent on".to_owned());
    }
    Ok(prompt)
}

/// A tool result's part as an A2A part.
pub(crate) fn a2a_part(part: &toolcall_core::Part) -> Option<Part> {
    match part {
        toolcall_core::Part::Text { text } => Some(Part::text(text.clone())),
        toolcall_core::Part::Json { value } => Some(Part::data(value.clone())),
        toolcall_core::Part::Image(media) | toolcall_core::Part::File(media) => {
            let (raw, url) = match &media.source {
                Source::Data(bytes) => (Some(STANDARD.encode(bytes)), None),
                Source::Url(url) => (None, Some(url.clone())),
            };
            Some(Part {
                raw,
                url,
                filename: media.name.clone(),
                media_type: Some(media.media_type.clone()),
                ..Part::default()
            })
        }
        _ => None,
    }
}

fn limit_history(mut task: Task, history: Option<i32>) -> Task {
    if let Some(keep) = history.and_then(|n| usize::try_from(n).ok()) {
        let drop = task.history.len().saturating_sub(keep);
        task.history.drain(..drop);
    }
    task
}

fn state_name(state: TaskState) -> String {
    serde_json::to_value(state).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn not_found(id: &str) -> RpcError {
    RpcError::new(code::TASK_NOT_FOUND, format!("Task not found: {id}"))
}

/// A message to a task that does not wait for one.
fn not_waiting(id: &str, state: TaskState) -> RpcError {
    let why = if state.is_terminal() { "is over" } else { "is not waiting for input" };
    RpcError::new(
        code::UNSUPPORTED_OPERATION,
        format!("Task {id} {why} (it is {}): it takes no message", state_name(state)),
    )
}

/// A decision that came second: another request's run took the held
/// calls (on this server or another sharing the store).
fn taken(id: &str) -> RpcError {
    RpcError::new(
        code::UNSUPPORTED_OPERATION,
        format!(
            "Task {id} is not waiting for input any more: another message decided its held calls first, and \
             the run went on with those decisions (it takes no message)"
        ),
    )
}

/// Why a run could not take its task's conversation, as the client reads it.
fn refused(id: &str, error: SessionError) -> RpcError {
    match error {
        SessionError::Store(StoreError::Busy { .. } | StoreError::Conflict { .. })
        | SessionError::NotPaused { .. } => taken(id),
        SessionError::Store(error) => unavailable(error),
        other => RpcError::new(code::INTERNAL_ERROR, format!("Task {id} could not run: {other}")),
    }
}

/// The store failed: the client may try again.
fn unavailable(error: StoreError) -> RpcError {
    RpcError::new(code::INTERNAL_ERROR, format!("The task store failed: {error}"))
}

fn parse_params<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params)
        .map_err(|e| RpcError::new(code::INVALID_PARAMS, format!("Invalid params: {e}")))
}

fn rpc_result(id: Value, result: Value) -> Response {
    json_response(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn rpc_error(id: Value, error: RpcError) -> Response {
    json_response(json!({"jsonrpc": "2.0", "id": id, "error": error}))
}

/// JSON-RPC answers errors with 200, as the SDKs' servers do.
fn json_response(body: Value) -> Response {
    (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

async fn card_route(State(server): State<A2aServer>, headers: HeaderMap) -> Response {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    json_response(json!(server.card(host)))
}

async fn rpc_route(State(server): State<A2aServer>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    // The hook first: a client it refuses gets its response, and the body
    // of a request nobody is allowed to make is never read.
    let user = match server.user(&parts).await {
        Ok(user) => user,
        Err(refused) => return refused,
    };
    let max = server.inner.max_body;
    let body = match axum::body::to_bytes(body, max).await {
        Ok(body) => body,
        Err(_) => {
            let reason = format!("the request body is over {max} bytes");
            return (StatusCode::PAYLOAD_TOO_LARGE, reason).into_response();
        }
    };
    server.answer(&user, &parts.headers, &body).await
}
