//! The `useChat` endpoints: [`ChatServer`], an agent and the store its
//! chats live in, served as axum routes that start a run from the last
//! user message, resume a paused one from the approval responses, give a
//! reloaded page its messages and its running stream back, and stop a run.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use toolcall_agent::{Agent, AgentEvent, Message, RunInput, Runner};
use toolcall_core::{Media, Source};
use toolcall_session::{ConversationKey, SessionError, SessionRun, SessionStore, StoreError};

use crate::files::{self, FileLinks};
use crate::history::page;
use crate::host::{Host, Live, Refusal, refuse};
use crate::request::ChatRequest;
use crate::{HEADERS, UiAdapter};

/// The reason a denied call's result gives the model when the person gave none.
const DECLINED: &str = "the user declined";

/// Who every request is when the server has no auth hook.
pub const ANONYMOUS: &str = "anonymous";

/// The auth hook: the request's parts in, the user's id out, or the
/// response that refuses the request ([`ChatServer::with_auth`]).
pub type Auth = Arc<dyn Fn(&Parts) -> BoxFuture<'static, Result<String, Response>> + Send + Sync>;

/// An agent behind the routes `useChat` calls, speaking the AI SDK UI
/// message stream (v1), its chats in a [`SessionStore`].
///
/// | route | what it does |
/// |---|---|
/// | `POST /api/chat` | the last message is the user's: a run from it, continuing the chat (`regenerate-message`: replacing the last answer); the assistant's with tool parts in `approval-responded`: the chat's paused run resumed with those decisions |
/// | `GET /api/chat/{id}` | the chat's messages as `UIMessage`s, for `useChat({ messages })` on a page that reloads (with what started the run going, if one is) |
/// | `GET /api/chat/{id}/stream` | the running stream again, from its start (`useChat({ resume: true })`); 204 when no run is going (or no such chat) |
/// | `POST /api/chat/{id}/stop` | end the running run on purpose (204); with `resume` on, a page that leaves does not |
/// | `DELETE /api/chat/{id}` | forget the chat (204) |
/// | `GET /api/chat/{id}/files/{file}` | the bytes of an image or file a tool of the chat gave, too big to send in the stream ([`ChatServer::with_max_inline_bytes`]), with its media type; 404 for a file the chat does not have |
///
/// **Whose chat.** The auth hook ([`ChatServer::with_auth`]) runs first on
/// every route and names the user; a chat belongs to the user who started
/// it, and another user's chat id is answered as if it did not exist
/// (404; a new question under it starts that user's own chat). Without a
/// hook every request is the same user ([`ANONYMOUS`](crate::ANONYMOUS)): a demo's setting.
///
/// **Files.** An image or file a tool gives is sent in the stream as a
/// data URL up to [`ChatServer::with_max_inline_bytes`]; a bigger one is a
/// `file` chunk whose URL is the chat's file route,
/// `/api/chat/{id}/files/{call id}-{part index}`, as the router mounts the
/// routes. The route answers only the chat's owner, as every route does
/// (the page's `<img>` sends the session cookie; a hook that reads
/// another header needs the page to fetch the file with it). The bytes
/// are the ones in the chat's stored messages: nothing is stored twice,
/// and a file lives as long as its chat.
///
/// **What is kept where.** A chat's messages and its paused run live in
/// the store (by default a bounded [`MemoryStore`](toolcall_session::MemoryStore); [`ChatServer::with_store`]
/// for SQLite or PostgreSQL). A run takes its chat in the store before
/// anything runs (its question, or the page's decisions, kept with a
/// lease: see `toolcall_session::Session`), keeps each turn as it goes,
/// and lets go before its `finish` chunk is sent, so an approval sent at
/// once finds it, and a restarted server loses nothing: a call held before
/// a restart is approved after it, and a call that ran before a crash is
/// shown done (or, cut mid-flight, as cut off) and never runs again. A
/// paused run is found again on the server, never rebuilt from the page's
/// messages: an approval names a call by its id, so a page can approve
/// only the calls the agent holds, with the model's arguments. A run goes
/// on when its page leaves.
///
/// **Many servers.** Several servers on one store (replicas on one
/// PostgreSQL behind a balancer, or the useChat and AG-UI routes of one
/// server) share the chats: of two decisions about one held call sent to
/// two of them at once, one runs and the other is refused with 409 before
/// anything runs. A run's chunks are written to the store as they are sent
/// (a few at a time), so a page that reloads onto another server gets the
/// running stream there from its first chunk, and a stop sent to any
/// server stops it (within a second: the run reads it when it renews its
/// lease). A server that dies lets its runs' leases lapse (10 s): a page
/// following one of its streams from another server gets an `error` chunk,
/// and the chat shows the run ended, its question kept.
///
/// **Refused** before any stream, with a plain-text reason: a body that is
/// not a chat request (400) or too large (413), an approval whose id no
/// held call has (400; the run stays paused), approvals for a chat with
/// no paused run (409) or no chat at all (404), a new question while
/// calls wait (409), any request while the chat's run is going, on this
/// server or another (409), a store that fails (500; the chat stays as it
/// was, and nothing ran). A store that fails to keep a run's end ends its
/// stream with an `error` chunk.
///
/// ```no_run
/// # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use axum::response::IntoResponse;
/// use toolcall_agent::{Agent, OpenAiChat};
/// use toolcall_core::toolset::Toolset;
/// use toolcall_session::SqlStore;
/// use toolcall_ui::ChatServer;
///
/// let agent = Agent::new(OpenAiChat::new("gpt-4o-mini"), Toolset::new())?;
/// let store = SqlStore::sqlite("chats.db").await?;
/// let app = ChatServer::new(agent)
///     .with_store(Arc::new(store))
///     .with_auth(|parts| {
///         let user = parts.headers.get("x-user").and_then(|value| value.to_str().ok()).map(str::to_owned);
///         Box::pin(async move { user.ok_or_else(|| axum::http::StatusCode::UNAUTHORIZED.into_response()) })
///     })
///     .router();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// axum::serve(listener, app).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ChatServer {
    host: Arc<Host>,
}

impl std::fmt::Debug for ChatServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatServer").field("running", &self.host.running()).finish_non_exhaustive()
    }
}

impl ChatServer {
    /// A server for this agent, its chats in a [`MemoryStore`](toolcall_session::MemoryStore) of 1,000
    /// (the least recently used forgotten), every request the same user.
    pub fn new(agent: Agent) -> Self {
        Self { host: Arc::new(Host::new(agent)) }
    }

    /// Keep the chats in `store` (`toolcall_session::SqlStore` for SQLite or
    /// PostgreSQL): they outlive the process.
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

    /// Who a request is from: `auth` reads the request's parts (a
    /// session cookie, a bearer token) and gives the user's id, or the
    /// response that refuses the request (401, a redirect). Every route
    /// calls it first.
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

    /// Send a tool's images and files of up to `bytes` bytes in the
    /// stream, as data URLs (256 KiB by default); bigger ones are linked
    /// to the chat's file route.
    pub fn with_max_inline_bytes(mut self, bytes: usize) -> Self {
        Arc::make_mut(&mut self.host).max_inline = bytes;
        self
    }

    /// How the chat `key`'s images and files are linked: data URLs up to
    /// the inline size, bigger ones to its file route.
    fn links(&self, key: &ConversationKey) -> FileLinks {
        FileLinks { max_inline: self.host.max_inline, base: Some(files::chat_base(&key.id)) }
    }

    /// A router with the routes above (`/api/chat` is useChat's default);
    /// merge or nest it into an app. To mount the handler elsewhere, call
    /// [`ChatServer::respond`] from a handler of your own.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/api/chat", post(chat))
            .route("/api/chat/{id}", get(messages).delete(delete))
            .route("/api/chat/{id}/stream", get(reattach))
            .route("/api/chat/{id}/stop", post(stop))
            .route("/api/chat/{id}/files/{file}", get(file))
            .with_state(self.clone())
    }

    /// The ids of the calls the user's chat holds for approval (empty:
    /// none, or no such chat).
    ///
    /// # Errors
    ///
    /// The store's.
    pub async fn pending(&self, user: &str, chat_id: &str) -> Result<Vec<String>, StoreError> {
        self.host.pending(ConversationKey::new(user, chat_id)).await
    }

    /// How many runs are going now (each holds its stream's chunks).
    pub fn running(&self) -> usize {
        self.host.running()
    }

    /// Answer one `useChat` request body from `user`: the UI message
    /// stream of the run it starts or resumes, or a refusal.
    pub async fn respond(&self, user: &str, body: &[u8]) -> Response {
        let request: ChatRequest = match serde_json::from_slice(body) {
            Ok(request) => request,
            Err(error) => {
                let reason = format!("not a useChat request body: {error}");
                return refuse(StatusCode::BAD_REQUEST, reason).into_response();
            }
        };
        let key = ConversationKey::new(user, request.id.clone());
        if let Err(invalid) = key.check() {
            return refuse(StatusCode::BAD_REQUEST, invalid.to_string()).into_response();
        }
        let Some(live) = self.host.take(&key) else {
            let reason = format!("chat `{}` has a run going: wait for its end, or stop it", request.id);
            return refuse(StatusCode::CONFLICT, reason).into_response();
        };
        match self.begin(&key, &request).await {
            Ok((run, resumed)) => self.stream(key, live, run, resumed),
            Err(refused) => {
                self.host.release(&key);
                refused.into_response()
            }
        }
    }

    /// The run the request asks for, made ready in the chat's session;
    /// whether it resumes a paused one.
    async fn begin(
        &self,
        key: &ConversationKey,
        request: &ChatRequest,
    ) -> Result<(SessionRun, bool), Refusal> {
        let agent = &self.host.agent;
        let session = self.host.session(key.clone());
        let Some(last) = request.messages.last() else {
            return Err(refuse(StatusCode::BAD_REQUEST, "the request has no messages"));
        };
        if last.role == "assistant" {
            let responses = last.approval_responses();
            if responses.is_empty() {
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    "the last message is the assistant's and answers no approval",
                ));
            }
            let Some(mut state) = session.paused().await.map_err(unavailable)? else {
                return Err(match session.store().load(key).await.map_err(unavailable)? {
                    Some(stored) => refuse(
                        StatusCode::CONFLICT,
                        format!(
                            "chat `{}` has no run waiting for approval{}",
                            key.id,
                            ended(&stored.messages)
                        ),
                    ),
                    None => no_chat(key),
                });
            };
            for response in responses {
                let decided = if response.approved {
                    state.approve(&response.approval_id)
                } else {
                    state.deny(&response.approval_id, response.reason.as_deref().unwrap_or(DECLINED))
                };
                if let Err(unknown) = decided {
                    // Nothing was decided: the run waits as it was.
                    return Err(refuse(StatusCode::BAD_REQUEST, unknown.to_string()));
                }
            }
            let run = session.begin(agent, RunInput::Paused(state)).await.map_err(refusal)?;
            return Ok((run, true));
        }
        if last.role != "user" {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                format!("the last message's role is `{}`", last.role),
            ));
        }
        let text = last.text();
        if text.is_empty() {
            return Err(refuse(StatusCode::BAD_REQUEST, "the last user message has no text"));
        }
        let run = if request.trigger.as_deref() == Some("regenerate-message") {
            session.regenerate(agent, text).await
        } else {
            session.begin(agent, text).await
        };
        Ok((run.map_err(refusal)?, false))
    }

    /// The run as a UI message stream, going on to its end even if the
    /// page leaves; its end is kept, and the chat is free again, before
    /// the `finish` chunk is sent.
    fn stream(&self, key: ConversationKey, live: Arc<Live>, run: SessionRun, resumed: bool) -> Response {
        let adapter = if resumed { UiAdapter::resuming() } else { UiAdapter::new() };
        let adapter = adapter.with_links(self.links(&key));
        let listener = live.listen();
        // The files the stream links to, kept until the run's messages are.
        let (keeper, max_inline) = (live.clone(), self.host.max_inline);
        let keep = move |event: &AgentEvent| {
            if let AgentEvent::ToolResult(result) = event {
                keeper.keep_files(result, max_inline);
            }
        };
        self.host
            .spawn(key, live, run, move |events| adapter.stream(futures::StreamExt::inspect(events, keep)));
        sse(&self.host, listener)
    }

    /// Send a keep-alive comment every `interval` while no chunk comes
    /// (15 s by default).
    #[doc(hidden)]
    pub fn with_keep_alive(mut self, interval: std::time::Duration) -> Self {
        Arc::make_mut(&mut self.host).keep_alive = interval;
        self
    }
}

/// The SSE response of a stream's frames, with the headers the AI SDK
/// reads ([`HEADERS`]) and a keep-alive comment while no chunk comes; a
/// reader that falls behind is dropped (see `host`).
fn sse(host: &Host, frames: BoxStream<'static, Bytes>) -> Response {
    host.sse(frames, &HEADERS)
}

/// How the chat's last run ended, for a decision that came after: what
/// it answered (nothing for a run that answered no text).
fn ended(messages: &[Message]) -> String {
    match messages.last().filter(|last| matches!(last, Message::Assistant { .. })).map(Message::text) {
        Some(answer) if !answer.is_empty() => format!(": its run ended, answering `{answer}`"),
        _ => String::new(),
    }
}

fn no_chat(key: &ConversationKey) -> Refusal {
    refuse(StatusCode::NOT_FOUND, format!("there is no chat `{}`", key.id))
}

fn unavailable(error: StoreError) -> Refusal {
    refuse(StatusCode::INTERNAL_SERVER_ERROR, format!("the chat could not be read: {error}"))
}

/// A session's refusal as the page reads it.
fn refusal(error: SessionError) -> Refusal {
    match error {
        SessionError::Waiting { key, pending } => refuse(
            StatusCode::CONFLICT,
            format!(
                "chat `{}` waits for approval of calls {}: answer them first",
                key.id,
                pending.join(", ")
            ),
        ),
        SessionError::NotPaused { key } => {
            refuse(StatusCode::CONFLICT, format!("chat `{}` has no run waiting for these calls", key.id))
        }
        SessionError::Store(error @ (StoreError::Conflict { .. } | StoreError::Busy { .. })) => {
            refuse(StatusCode::CONFLICT, error.to_string())
        }
        SessionError::Store(error) => unavailable(error),
        other => refuse(StatusCode::INTERNAL_SERVER_ERROR, other.to_string()),
    }
}

/// The `POST /api/chat` handler.
async fn chat(State(server): State<ChatServer>, request: Request) -> Response {
    match server.host.read(request).await {
        Ok((user, body)) => server.respond(&user, &body).await,
        Err(refused) => refused,
    }
}

/// The user's chat named in the path, after the auth hook.
async fn chat_of(server: &ChatServer, parts: &Parts, id: String) -> Result<ConversationKey, Response> {
    let user = server.host.user(parts).await?;
    let key = ConversationKey::new(user, id);
    key.check().map_err(|invalid| refuse(StatusCode::BAD_REQUEST, invalid.to_string()).into_response())?;
    Ok(key)
}

/// `GET /api/chat/{id}`: the chat's messages as UI messages.
async fn messages(State(server): State<ChatServer>, Path(id): Path<String>, parts: Parts) -> Response {
    let key = match chat_of(&server, &parts, id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    // A run going kept its question (or its decisions) as it started, and
    // each of its turns as it came; one cut off shows its calls ended.
    // A run made elsewhere that this server lost has its end learned there.
    let stored = match server.host.session(key.clone()).load().await {
        Ok(Some(stored)) => stored.settled(),
        Ok(None) => return no_chat(&key).into_response(),
        Err(error) => return unavailable(error).into_response(),
    };
    let page = page(&stored.messages, stored.paused.as_ref(), &server.links(&key));
    let mut response = Response::new(Body::from(serde_json::Value::from(page).to_string()));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `GET /api/chat/{id}/stream`: the run going, from its first chunk; 204
/// when none is (no chat at all included: what useChat takes as nothing
/// to resume, and it tells nothing of another user's chats).
async fn reattach(State(server): State<ChatServer>, Path(id): Path<String>, parts: Parts) -> Response {
    let key = match chat_of(&server, &parts, id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    if let Some(live) = server.host.live(&key) {
        return sse(&server.host, live.listen());
    }
    // A run going on another server sharing the store: its frames from there.
    match server.host.store.load(&key).await {
        Ok(Some(stored)) => match stored.running() {
            Some(lease) => sse(&server.host, server.host.follow(key, lease.run.clone(), cut_off())),
            None => StatusCode::NO_CONTENT.into_response(),
        },
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        Err(error) => unavailable(error).into_response(),
    }
}

/// How a stream followed from the store ends when its run was cut off
/// without its end: an `error` chunk, then the stream's end.
fn cut_off() -> Vec<Bytes> {
    let error = crate::UiChunk::Error {
        error_text: "the run was cut off: the server running it stopped; what it did so far is kept"
            .to_owned(),
    };
    vec![Bytes::from(error.to_sse()), Bytes::from_static(crate::DONE.as_bytes())]
}

/// `POST /api/chat/{id}/stop`: end the run going.
async fn stop(State(server): State<ChatServer>, Path(id): Path<String>, parts: Parts) -> Response {
    let key = match chat_of(&server, &parts, id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    let live = server.host.live(&key);
    if let Some(stop) = live.and_then(|live| live.state().stop.clone()) {
        stop.cancel();
        return StatusCode::NO_CONTENT.into_response();
    }
    // A run on another server: it reads the stop when it renews its lease.
    match server.host.store.stop(&key).await {
        Ok(true) => return StatusCode::NO_CONTENT.into_response(),
        Ok(false) => {}
        Err(error) => return unavailable(error).into_response(),
    }
    match server.host.store.load(&key).await {
        Ok(Some(_)) => {
            refuse(StatusCode::CONFLICT, format!("chat `{}` has no run going", key.id)).into_response()
        }
        Ok(None) => no_chat(&key).into_response(),
        Err(error) => unavailable(error).into_response(),
    }
}

/// `DELETE /api/chat/{id}`: forget the chat.
async fn delete(State(server): State<ChatServer>, Path(id): Path<String>, parts: Parts) -> Response {
    let key = match chat_of(&server, &parts, id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    let going = match server.host.store.load(&key).await {
        Ok(stored) => stored.is_some_and(|stored| stored.running().is_some()),
        Err(error) => return unavailable(error).into_response(),
    };
    if going || server.host.live(&key).is_some() {
        return refuse(StatusCode::CONFLICT, format!("chat `{}` has a run going: stop it first", key.id))
            .into_response();
    }
    match server.host.store.delete(&key).await {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => no_chat(&key).into_response(),
        Err(error) => unavailable(error).into_response(),
    }
}

/// `GET /api/chat/{id}/files/{file}`: an image or file of the chat's tool
/// results, found where the stream's link says (`files`): in the run going
/// now, else in the stored chat.
async fn file(
    State(server): State<ChatServer>,
    Path((id, file)): Path<(String, String)>,
    parts: Parts,
) -> Response {
    let key = match chat_of(&server, &parts, id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    let no_file = || refuse(StatusCode::NOT_FOUND, format!("chat `{}` has no file `{file}`", key.id));
    let Some((call_id, index)) = files::parse(&file) else { return no_file().into_response() };
    // The run going keeps its files until its messages are stored, and is
    // dropped only after: a file it does not have is in the store.
    if let Some(media) = server.host.live(&key).and_then(|live| live.file(&file)) {
        return bytes(media);
    }
    match server.host.store.load(&key).await {
        Ok(Some(stored)) => match files::find(&stored.messages, stored.paused.as_ref(), call_id, index) {
            Some(media) => bytes(media),
            None => no_file().into_response(),
        },
        Ok(None) => no_chat(&key).into_response(),
        Err(error) => unavailable(error).into_response(),
    }
}

/// A file's bytes as the response, with its media type. The bytes are a
/// tool's, served from the application's own origin: the browser is told
/// not to guess another type, and a document opened from the URL (HTML,
/// SVG) runs no script there; only the chat's owner reads it, so no shared
/// cache keeps it.
fn bytes(media: Media) -> Response {
    let content_type = HeaderValue::from_str(&media.media_type)
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    let Source::Data(bytes) = media.source else {
        // `files` finds parts given as bytes only.
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, content_type);
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-cache"));
    response
}
