//! What the useChat and AG-UI servers share: the agent, the store its
//! conversations live in, the auth hook, the body limit, and the runs
//! going now, each with the frames it sent so far; one way to read a
//! request's user and body, and one way to run a conversation's run in a
//! task of its own and forward its frames.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::{Bytes, to_bytes};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use tools_agent::{Agent, AgentEvent};
use tools_core::CancellationToken;
use tools_session::{ConversationKey, MemoryStore, Session, SessionRun, SessionStore, StoreError};

use crate::{ANONYMOUS, Auth};

/// The largest request body taken by default: 4 MiB.
const MAX_BODY: usize = 4 << 20;

/// A refusal before the stream: status and a plain-text reason.
pub(crate) type Refusal = (StatusCode, String);

pub(crate) fn refuse(status: StatusCode, reason: impl Into<String>) -> Refusal {
    (status, reason.into())
}

/// An agent, where its conversations live, and who asks.
#[derive(Clone)]
pub(crate) struct Host {
    pub(crate) agent: Agent,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) auth: Option<Auth>,
    pub(crate) max_body: usize,
    /// The conversations with a run going now.
    live: Arc<Mutex<HashMap<ConversationKey, Arc<Live>>>>,
}

impl Host {
    /// The agent's conversations in a [`MemoryStore`] of 1,000, every
    /// request the same user.
    pub(crate) fn new(agent: Agent) -> Self {
        Self {
            agent,
            store: Arc::new(MemoryStore::default()),
            auth: None,
            max_body: MAX_BODY,
            live: Arc::default(),
        }
    }

    fn runs(&self) -> MutexGuard<'_, HashMap<ConversationKey, Arc<Live>>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many runs are going now.
    pub(crate) fn running(&self) -> usize {
        self.runs().len()
    }

    /// The run going in the conversation, if one is.
    pub(crate) fn live(&self, key: &ConversationKey) -> Option<Arc<Live>> {
        self.runs().get(key).cloned()
    }

    /// Take the conversation for a run, before anything is read, so two
    /// requests at once cannot both start one; `None` when one is going.
    pub(crate) fn take(&self, key: &ConversationKey) -> Option<Arc<Live>> {
        let mut runs = self.runs();
        if runs.contains_key(key) {
            return None;
        }
        let live = Arc::new(Live::default());
        runs.insert(key.clone(), live.clone());
        Some(live)
    }

    /// Give the conversation back: its run did not start, or ended.
    pub(crate) fn release(&self, key: &ConversationKey) {
        self.runs().remove(key);
    }

    pub(crate) fn session(&self, key: ConversationKey) -> Session {
        Session::new(self.store.clone(), key)
    }

    /// The ids of the calls the conversation holds for approval.
    pub(crate) async fn pending(&self, key: ConversationKey) -> Result<Vec<String>, StoreError> {
        let state = self.session(key).paused().await?;
        Ok(state
            .map(|state| state.pending().iter().map(|p| p.call.id.to_string()).collect())
            .unwrap_or_default())
    }

    /// The request's user, from the auth hook (or [`ANONYMOUS`]), or the
    /// hook's refusal.
    pub(crate) async fn user(&self, parts: &Parts) -> Result<String, Response> {
        match &self.auth {
            Some(auth) => auth(parts).await,
            None => Ok(ANONYMOUS.to_owned()),
        }
    }

    /// A request's user and its body (refused with 413 past the limit).
    pub(crate) async fn read(&self, request: Request) -> Result<(String, Bytes), Response> {
        let (parts, body) = request.into_parts();
        let user = self.user(&parts).await?;
        let max = self.max_body;
        let body = to_bytes(body, max).await.map_err(|_| {
            refuse(StatusCode::PAYLOAD_TOO_LARGE, format!("the request body is over {max} bytes"))
                .into_response()
        })?;
        Ok((user, body))
    }

    /// Run `run` in a task of its own, to its end even if the client
    /// leaves, its events rendered into frames by `render`; the frames go
    /// to `live` (and whoever listens there), and the conversation is free
    /// again once the run's end is kept, before that end is rendered.
    pub(crate) fn spawn<F, S>(&self, key: ConversationKey, live: Arc<Live>, run: SessionRun, render: F)
    where
        F: FnOnce(BoxStream<'static, AgentEvent>) -> S + Send + 'static,
        S: Stream<Item = String> + Send + 'static,
    {
        live.state().stop = Some(run.cancellation().clone());
        let host = self.clone();
        tokio::spawn(async move {
            let events = run.stream().inspect(move |event| {
                if matches!(event, AgentEvent::Finished(_)) {
                    host.release(&key);
                }
            });
            let mut frames = std::pin::pin!(render(events.boxed()));
            while let Some(frame) = frames.next().await {
                live.push(Bytes::from(frame));
            }
            live.end();
        });
    }
}

/// One run going: the frames it sent so far and who listens.
#[derive(Default)]
pub(crate) struct Live {
    state: Mutex<LiveState>,
}

#[derive(Default)]
pub(crate) struct LiveState {
    /// What started the run, as the chat server needs it for a page that
    /// reloads (the store holds it only once the run ends).
    pub(crate) asked: crate::server::Asked,
    frames: Vec<Bytes>,
    listeners: Vec<UnboundedSender<Bytes>>,
    ended: bool,
    /// Cancels the run alone (the agent's other runs go on).
    pub(crate) stop: Option<CancellationToken>,
}

impl Live {
    pub(crate) fn state(&self) -> MutexGuard<'_, LiveState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every frame from the first, then each as it comes.
    pub(crate) fn listen(&self) -> UnboundedReceiver<Bytes> {
        let (sender, receiver) = unbounded();
        let mut state = self.state();
        for frame in &state.frames {
            let _ = sender.unbounded_send(frame.clone());
        }
        if !state.ended {
            state.listeners.push(sender);
        }
        receiver
    }

    fn push(&self, frame: Bytes) {
        let mut state = self.state();
        // A listener that left only stops reading; the run goes on.
        state.listeners.retain(|listener| listener.unbounded_send(frame.clone()).is_ok());
        state.frames.push(frame);
    }

    fn end(&self) {
        let mut state = self.state();
        state.ended = true;
        state.listeners.clear();
        state.frames = Vec::new();
    }
}
