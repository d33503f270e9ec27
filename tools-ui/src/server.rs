//! The `useChat` endpoint: [`ChatServer`], an agent and the chats it
//! keeps, served as an axum handler that starts a run from the last user
//! message or resumes a paused one from the approval responses.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use tools_agent::{Agent, AgentEvent, Message, RunInput, RunState, StopReason, Transcript};

use crate::HEADERS;
use crate::UiAdapter;
use crate::request::ChatRequest;

/// What the server keeps of one chat between requests.
enum Chat {
    /// The run ended: the next user message continues its transcript.
    Done(Transcript),
    /// The run waits for approval of these calls.
    Paused(RunState),
}

/// The reason a denied call's result gives the model when the person gave none.
const DECLINED: &str = "the user declined";

/// An agent behind `POST /api/chat`, speaking the AI SDK UI message stream
/// (v1) to `useChat`.
///
/// A request whose last message is the user's starts a run from its text
/// (continuing the chat's earlier runs, which the server keeps). A request
/// whose last message is the assistant's, with tool parts in state
/// `approval-responded` (what `addToolApprovalResponse` and
/// `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`
/// send), resumes the chat's paused run with those decisions: approved calls
/// run, denied ones answer the model with the person's reason.
///
/// A paused run is found again on the server, never rebuilt from the
/// client's messages: the [`RunState`] is kept in memory under the chat's
/// id, and an approval names a call by its id (the approval id the stream
/// sent). So a page can approve only the calls the agent actually holds,
/// with the arguments the model gave. The chats live as long as the
/// server (one process; a run that failed is forgotten, and the chat
/// starts afresh).
///
/// Refused before any stream, with a plain-text reason: a body that is not
/// a chat request (400), an approval whose id no held call has (400; the
/// run stays paused, to be answered again), approvals for a chat with no
/// paused run (409), and a new user message while calls wait (409).
///
/// ```no_run
/// # async fn serve() -> std::io::Result<()> {
/// use tools_agent::{Agent, OpenAiChat};
/// use tools_core::toolset::Toolset;
/// use tools_ui::ChatServer;
///
/// let agent = Agent::new(OpenAiChat::new("gpt-4o-mini"), Toolset::builder().build().unwrap()).unwrap();
/// let app = ChatServer::new(agent).router();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
#[derive(Clone)]
pub struct ChatServer {
    inner: Arc<Inner>,
}

struct Inner {
    agent: Agent,
    chats: Mutex<HashMap<String, Chat>>,
}

impl std::fmt::Debug for ChatServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatServer").finish_non_exhaustive()
    }
}

/// A refusal before the stream: status and a plain-text reason.
type Refusal = (StatusCode, String);

fn refuse(status: StatusCode, reason: impl Into<String>) -> Refusal {
    (status, reason.into())
}

impl ChatServer {
    /// A server for this agent, with no chats yet.
    pub fn new(agent: Agent) -> Self {
        Self { inner: Arc::new(Inner { agent, chats: Mutex::new(HashMap::new()) }) }
    }

    /// A router with `POST /api/chat` (useChat's default) on this server;
    /// merge or nest it into an app. To mount the handler elsewhere, call
    /// [`ChatServer::respond`] from a handler of your own.
    pub fn router(&self) -> Router {
        Router::new().route("/api/chat", post(chat)).with_state(self.clone())
    }

    /// The ids of the calls the chat's paused run holds (empty: none).
    pub fn pending(&self, chat_id: &str) -> Vec<String> {
        match self.chats().get(chat_id) {
            Some(Chat::Paused(state)) => {
                state.pending().iter().map(|pending| pending.call.id.to_string()).collect()
            }
            _ => Vec::new(),
        }
    }

    fn chats(&self) -> std::sync::MutexGuard<'_, HashMap<String, Chat>> {
        // A panic elsewhere while holding the lock leaves the map whole.
        self.inner.chats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answer one `useChat` request body: the UI message stream of the run
    /// it starts or resumes, or a refusal.
    pub fn respond(&self, body: &[u8]) -> Response {
        let request: ChatRequest = match serde_json::from_slice(body) {
            Ok(request) => request,
            Err(error) => {
                let reason = format!("not a useChat request body: {error}");
                return refuse(StatusCode::BAD_REQUEST, reason).into_response();
            }
        };
        let input = match self.input(&request) {
            Ok(input) => input,
            Err(refused) => return refused.into_response(),
        };
        self.stream(request.id, input)
    }

    /// Where the request's run starts.
    fn input(&self, request: &ChatRequest) -> Result<RunInput, Refusal> {
        let Some(last) = request.messages.last() else {
            return Err(refuse(StatusCode::BAD_REQUEST, "the request has no messages"));
        };
        let mut chats = self.chats();
        let chat = chats.remove(&request.id);
        if last.role == "assistant" {
            let responses = last.approval_responses();
            if responses.is_empty() {
                restore(&mut chats, &request.id, chat);
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    "the last message is the assistant's and answers no approval",
                ));
            }
            let Some(Chat::Paused(held)) = chat else {
                restore(&mut chats, &request.id, chat);
                return Err(refuse(
                    StatusCode::CONFLICT,
                    format!("chat `{}` has no run waiting for approval", request.id),
                ));
            };
            let mut state = held.clone();
            for response in responses {
                let decided = if response.approved {
                    state.approve(&response.approval_id)
                } else {
                    state.deny(&response.approval_id, response.reason.as_deref().unwrap_or(DECLINED))
                };
                if let Err(unknown) = decided {
                    // Nothing was decided: the run waits as it was.
                    chats.insert(request.id.clone(), Chat::Paused(held));
                    return Err(refuse(StatusCode::BAD_REQUEST, unknown.to_string()));
                }
            }
            return Ok(RunInput::Paused(state));
        }
        if last.role != "user" {
            restore(&mut chats, &request.id, chat);
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                format!("the last message's role is `{}`", last.role),
            ));
        }
        let text = last.text();
        if text.is_empty() {
            restore(&mut chats, &request.id, chat);
            return Err(refuse(StatusCode::BAD_REQUEST, "the last user message has no text"));
        }
        match chat {
            Some(Chat::Paused(state)) => {
                let ids: Vec<String> =
                    state.pending().iter().map(|pending| pending.call.id.to_string()).collect();
                chats.insert(request.id.clone(), Chat::Paused(state));
                Err(refuse(
                    StatusCode::CONFLICT,
                    format!(
                        "chat `{}` waits for approval of calls {}: answer them first",
                        request.id,
                        ids.join(", ")
                    ),
                ))
            }
            Some(Chat::Done(mut transcript)) => {
                transcript.push(Message::user(text));
                Ok(RunInput::Transcript(transcript))
            }
            None => Ok(RunInput::from(text)),
        }
    }

    /// The run as a UI message stream. The run goes on in a task of its
    /// own, to its end even if the page leaves, and its end is kept before
    /// the `finish` chunk is sent, so an approval sent at once finds it.
    fn stream(&self, chat_id: String, input: RunInput) -> Response {
        let adapter =
            if matches!(input, RunInput::Paused(_)) { UiAdapter::resuming() } else { UiAdapter::new() };
        let (frames, body) = futures::channel::mpsc::unbounded::<String>();
        let server = self.clone();
        tokio::spawn(async move {
            let events = server.inner.agent.stream(input).inspect(|event| {
                if let AgentEvent::Finished(ended) = event {
                    server.keep(&chat_id, ended);
                }
            });
            let mut body = std::pin::pin!(adapter.stream(events));
            while let Some(frame) = body.next().await {
                // A page that left only stops reading; the run goes on.
                let _ = frames.unbounded_send(frame);
            }
        });
        let body = Body::from_stream(body.map(Ok::<_, std::convert::Infallible>));
        let mut response = Response::new(body);
        for (name, value) in HEADERS {
            response.headers_mut().insert(name, axum::http::HeaderValue::from_static(value));
        }
        response
    }

    /// Keep what the chat needs for its next request.
    fn keep(&self, chat_id: &str, ended: &Result<tools_agent::RunResult, tools_agent::AgentError>) {
        let mut chats = self.chats();
        match ended {
            Ok(result) => {
                let chat = match &result.stop {
                    StopReason::Paused(state) => Chat::Paused((**state).clone()),
                    _ => Chat::Done(result.transcript.clone()),
                };
                chats.insert(chat_id.to_owned(), chat);
            }
            Err(_) => {
                chats.remove(chat_id);
            }
        }
    }
}

/// Put back what a refused request took out.
fn restore(chats: &mut HashMap<String, Chat>, id: &str, chat: Option<Chat>) {
    if let Some(chat) = chat {
        chats.insert(id.to_owned(), chat);
    }
}

/// The `POST /api/chat` handler of [`ChatServer::router`].
async fn chat(State(server): State<ChatServer>, body: Bytes) -> Response {
    server.respond(&body)
}
