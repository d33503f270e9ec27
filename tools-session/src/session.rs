//! An agent's runs in one conversation: the stored messages loaded before
//! a run, the conversation held by the run while it goes (its question
//! kept as it starts, each turn's calls and results as they come), what
//! is left appended as it ends, a paused run kept between.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use toolcall_agent::{
    Agent, AgentError, AgentEvent, Approval, Effects, InProcess, Message, ModelError, RunInput, RunResult,
    RunState, Runner, StopReason, Transcript,
};
use toolcall_core::{CancellationToken, IdempotencyScope, ToolCall, ToolContext, ToolResult, Toolset};

use crate::{Append, Conversation, ConversationKey, Hold, Lease, Renewal, SessionStore, StoreError};

/// How long a run's lease lasts unless renewed, by default.
const LEASE: Duration = Duration::from_secs(10);

/// One conversation of a store, in which an agent runs.
///
/// [`Session::run`] loads the conversation, runs the agent from its
/// messages and the new prompt, and appends what the run added (the
/// prompt, the model's answers with their reasoning, the tools' results),
/// so the second question remembers the first. A run that pauses for
/// approval keeps its paused turn in the store: [`Session::paused`] gives
/// it back, in this process or another, to decide and resume with
/// [`Session::run`].
///
/// **One run at a time, whatever the process.** A run takes the
/// conversation before anything runs: one append, checked against the
/// revision it loaded and against any other run's [`Lease`], keeps its
/// question (or the decisions it resumes with) and takes the lease. A
/// second run, here or in another process sharing the store, is refused
/// then ([`StoreError::Busy`] or [`StoreError::Conflict`], in
/// [`SessionError::Store`]), before any of its tools run: a held call
/// approved twice at once runs once. The run renews its lease as it goes
/// ([`Session::with_lease`]); a stop asked through the store
/// ([`SessionStore::stop`]) reaches it there.
///
/// **What is kept as it goes.** Each model response whose calls are about
/// to run is appended before they run, and their results as soon as they
/// return, before the model is asked again ([`Effects::checkpoint`]). A
/// run cut off (its process killed, its model failing) leaves its question
/// and everything its tools did; the next run of the conversation answers
/// each call that was in flight with [`cut_off`](toolcall_agent::cut_off)
/// (its effect unknown) and never runs it again, and never asks for an
/// approval given before. Each call's context has an idempotency key,
/// `{owner}/{id}:{message}:{call id}`
/// ([`ToolContext::idempotency_key`]), the same for the same call
/// whatever the process, for a tool that hands its effect to a backend
/// applying one per key.
///
/// **Runs made elsewhere.** With a [`Runner`] ([`Session::with_runner`]:
/// a durable engine's workers), each run is made there under its own id
/// ([`SessionRun::id`]) and the session holds the conversation, renews
/// the lease and appends the run's end. A run whose process died while
/// the runner made it is not cut off: the next look at the conversation
/// ([`Session::load`], [`Session::paused`], [`Session::begin`]) asks the
/// runner for the run's end ([`Runner::ended`], waiting for a run still
/// going) and appends it, as the run would have.
///
/// ```
/// use std::sync::Arc;
/// use toolcall_agent::{Agent};
/// use toolcall_agent::testing::{ScriptedModel};
/// use toolcall_core::Toolset;
/// use toolcall_session::{ConversationKey, MemoryStore, Session};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new().then_text("Hello, Ada.").then_text("You are Ada.");
/// let agent = Agent::new(model, Toolset::new()).unwrap();
/// let session = Session::new(Arc::new(MemoryStore::default()), ConversationKey::new("ada", "intro"));
/// session.run(&agent, "I am Ada.").await.unwrap();
/// let second = session.run(&agent, "Who am I?").await.unwrap();
/// assert_eq!(second.answer, "You are Ada.");
/// // The second run was sent the first question and its answer.
/// assert_eq!(session.messages().await.unwrap().len(), 4);
/// # });
/// ```
#[derive(Clone)]
pub struct Session {
    store: Arc<dyn SessionStore>,
    key: ConversationKey,
    /// How long a run's lease lasts unless renewed.
    lease: Duration,
    /// Where the runs are made: the agent, here, without one.
    runner: Option<Arc<dyn Runner>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("key", &self.key)
            .field("lease", &self.lease)
            .field("runner", &self.runner)
            .finish()
    }
}

/// The end of a streamed run ([`SessionRun::stream`]) that the store could
/// not keep: the source of the `ModelError::Engine` (engine `session`)
/// its last event carries, the store's error inside for a caller that
/// tells a conflict from a failure.
#[derive(Debug, thiserror::Error)]
#[error("the run was not kept: {0}")]
pub struct NotKept(#[source] pub StoreError);

/// Why a run in a session did not happen or was not kept.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The store failed (it could not load or append), or refused the
    /// run because another run holds the conversation or appended first.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The run failed; what it kept as it went stays (its question, the
    /// results of its calls).
    #[error(transparent)]
    Run(#[from] AgentError),
    /// A new prompt while calls wait for approval: decide about them first
    /// ([`Session::paused`]).
    #[error("conversation {key} waits for approval of calls {}: decide about them first", pending.join(", "))]
    Waiting {
        /// The conversation.
        key: ConversationKey,
        /// The ids of the calls that wait.
        pending: Vec<String>,
    },
    /// A paused run to resume that the conversation does not hold (it
    /// was resumed already, or never paused here).
    #[error("conversation {key} has no run waiting for these calls")]
    NotPaused {
        /// The conversation.
        key: ConversationKey,
    },
    /// An input a session does not start from: a saved transcript (the
    /// session holds the transcript).
    #[error("a run in a session starts from a prompt or the session's paused run, not from a transcript")]
    Transcript,
}

impl Session {
    /// The conversation `key` of `store`.
    pub fn new(store: Arc<dyn SessionStore>, key: ConversationKey) -> Self {
        Self { store, key, lease: LEASE, runner: None }
    }

    /// Make the runs with `runner` (a durable engine's workers, say), as
    /// [`SessionRun::with_runner`] does, and learn from it the end of a run
    /// whose process died while it went there ([`Session::load`]).
    pub fn with_runner(mut self, runner: Arc<dyn Runner>) -> Self {
        self.runner = Some(runner);
        self
    }

    /// Let a run's lease last `ttl` unless renewed (10 s by default; the
    /// run renews it every quarter of that, at most every second): how
    /// long a conversation whose process died stays taken.
    pub fn with_lease(mut self, ttl: Duration) -> Self {
        self.lease = ttl.max(Duration::from_millis(100));
        self
    }

    /// Which conversation.
    pub fn key(&self) -> &ConversationKey {
        &self.key
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn SessionStore> {
        &self.store
    }

    /// Every stored message, oldest first (none for a new conversation).
    ///
    /// # Errors
    ///
    /// The store's.
    pub async fn messages(&self) -> Result<Vec<Message>, StoreError> {
        Ok(self.load().await?.map(|conversation| conversation.messages).unwrap_or_default())
    }

    /// The conversation as stored (`None` for none). With a runner
    /// ([`Session::with_runner`]), a run it made whose process died before
    /// keeping its end (its lease lapsed) is not left cut off: the runner
    /// is asked for the run's end ([`Runner::ended`]; for a run still
    /// going, once it ends), and it is appended as the run would have
    /// (its messages, its paused turn), then the conversation loaded again.
    /// [`Conversation::settled`] gives what a next run goes on from.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use futures::future::BoxFuture;
    /// use futures::stream::{self, BoxStream, StreamExt};
    /// use toolcall_agent::testing::ScriptedModel;
    /// use toolcall_agent::{Agent, AgentError, AgentEvent, Message, RunInput, RunResult, Runner, Transcript};
    /// use toolcall_core::Toolset;
    /// use toolcall_session::{Append, ConversationKey, Hold, Lease, MemoryStore, Session, SessionStore};
    ///
    /// /// Runs made elsewhere, which go on without their caller.
    /// #[derive(Debug)]
    /// struct Elsewhere(Agent);
    ///
    /// impl Runner for Elsewhere {
    ///     fn stream(&self, _: &Agent, _run: &str, input: RunInput) -> BoxStream<'static, AgentEvent> {
    ///         let agent = self.0.clone();
    ///         stream::once(async move { AgentEvent::Finished(agent.run(input).await) }).boxed()
    ///     }
    ///
    ///     fn ended(&self, _run: &str) -> BoxFuture<'static, Option<Result<RunResult, AgentError>>> {
    ///         let agent = self.0.clone();
    ///         let asked = Transcript { instructions: None, messages: vec![Message::user("Refund order 7.")] };
    ///         Box::pin(async move { Some(agent.run(RunInput::Transcript(asked)).await) })
    ///     }
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let store = Arc::new(MemoryStore::default());
    /// let key = ConversationKey::new("ada", "refunds");
    /// // A run took the conversation with its question; its process died
    /// // (its lease lapsed) while the runner made it.
    /// let lapsed = Hold::Take(Lease::new("run-1", Duration::ZERO));
    /// let question = Append { hold: lapsed, ..Append::new(0, vec![Message::user("Refund order 7.")]) };
    /// store.append(&key, question).await.unwrap();
    ///
    /// let agent = Agent::new(ScriptedModel::new().then_text("Refunded."), Toolset::new()).unwrap();
    /// let session = Session::new(store, key).with_runner(Arc::new(Elsewhere(agent)));
    /// let conversation = session.load().await.unwrap().unwrap();
    /// // The run's end, kept as the run would have; the conversation free.
    /// assert_eq!(conversation.messages.last().map(Message::text).as_deref(), Some("Refunded."));
    /// assert_eq!(conversation.lease, None);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// The store's.
    pub async fn load(&self) -> Result<Option<Conversation>, StoreError> {
        let conversation = self.store.load(&self.key).await?;
        let (Some(runner), Some(stored)) = (&self.runner, &conversation) else { return Ok(conversation) };
        let Some(lease) = stored.lease.as_ref().filter(|_| stored.running().is_none()) else {
            return Ok(conversation);
        };
        let result = match runner.ended(&lease.run).await {
            Some(Ok(result)) => result,
            Some(Err(error)) => {
                tracing::warn!(target: "toolcall_session", key = %self.key, run = %lease.run, %error, "the end of a run cut off here could not be learned from its runner: it is taken for cut off");
                return Ok(conversation);
            }
            None => return Ok(conversation),
        };
        let (messages, paused) = left_by(&result);
        let added = messages.get(stored.messages.len()..).map(<[Message]>::to_vec).unwrap_or_default();
        // No lease: the run is over, and the conversation free.
        let end = Append { after: stored.revision, keep: None, messages: added, paused, hold: Hold::Free };
        match self.store.append(&self.key, end).await {
            // Another process kept the end first, or a run took the
            // conversation since: what the store holds now stands.
            Ok(_) | Err(StoreError::Conflict { .. } | StoreError::Busy { .. }) => {}
            Err(error) => return Err(error),
        }
        self.store.load(&self.key).await
    }

    /// The run that waits for approval, if one does: decide about its
    /// calls and give it to [`Session::run`]. A turn whose decisions were
    /// taken by a run going now, or cut off, waits no more.
    ///
    /// # Errors
    ///
    /// The store's.
    pub async fn paused(&self) -> Result<Option<RunState>, StoreError> {
        let Some(conversation) = self.load().await? else { return Ok(None) };
        if conversation.running().is_some() {
            return Ok(None);
        }
        let conversation = conversation.settled();
        Ok(conversation.paused.map(|turn| {
            RunState::join(Transcript { instructions: None, messages: conversation.messages }, turn)
        }))
    }

    /// Run `agent` in the conversation from `input` (a prompt, or the
    /// session's paused run with decisions) and append what it added.
    ///
    /// # Errors
    ///
    /// See [`SessionError`].
    pub async fn run(&self, agent: &Agent, input: impl Into<RunInput>) -> Result<RunResult, SessionError> {
        self.begin(agent, input).await?.run().await
    }

    /// Take the conversation for a run and get it ready, without running
    /// it: to refuse before a stream starts (a page's request), then
    /// [`SessionRun::run`] or [`SessionRun::stream`]. The conversation is
    /// the run's from here: its question (or its decisions) is kept, and
    /// no other run starts until it ends (or, dropped without running,
    /// until its lease lapses).
    ///
    /// # Errors
    ///
    /// [`SessionError::Store`] (loading; the conversation taken by another
    /// run, [`StoreError::Busy`], or changed since it was loaded,
    /// [`StoreError::Conflict`]), [`SessionError::Waiting`],
    /// [`SessionError::NotPaused`], [`SessionError::Transcript`].
    pub async fn begin(&self, agent: &Agent, input: impl Into<RunInput>) -> Result<SessionRun, SessionError> {
        self.begin_at(agent, input.into(), false).await
    }

    /// Get a run ready that answers the last question again, from the
    /// conversation as it was before it, with `prompt` in its place: the
    /// last question and everything after it (calls that wait included,
    /// which never ran) are replaced.
    ///
    /// # Errors
    ///
    /// As [`Session::begin`].
    pub async fn regenerate(
        &self,
        agent: &Agent,
        prompt: impl Into<RunInput>,
    ) -> Result<SessionRun, SessionError> {
        self.begin_at(agent, prompt.into(), true).await
    }

    async fn begin_at(
        &self,
        agent: &Agent,
        input: RunInput,
        again: bool,
    ) -> Result<SessionRun, SessionError> {
        let (revision, stored, messages, paused) = match self.load().await? {
            Some(conversation) => {
                if conversation.running().is_some() {
                    return Err(StoreError::Busy { key: self.key.clone() }.into());
                }
                let (revision, stored) = (conversation.revision, conversation.messages.len());
                let conversation = conversation.settled();
                (revision, stored, conversation.messages, conversation.paused)
            }
            None => (0, 0, Vec::new(), None),
        };
        let (messages, paused, keep) = match messages.iter().rposition(|m| matches!(m, Message::User { .. }))
        {
            Some(asked_at) if again => (messages[..asked_at].to_vec(), None, Some(asked_at as u64)),
            _ => (messages, paused, None),
        };
        let instructions = agent.instructions().map(str::to_owned);
        let (input, claimed) = match input {
            RunInput::Prompt(parts) => {
                if let Some(turn) = paused {
                    let pending = turn.pending().iter().map(|pending| pending.call.id.to_string()).collect();
                    return Err(SessionError::Waiting { key: self.key.clone(), pending });
                }
                let mut messages = messages;
                messages.push(Message::User { parts });
                // What the store lacks: a cut run's settled results, the question.
                let kept = kept_before(stored, keep);
                let claimed = (messages.get(kept..).map(<[Message]>::to_vec).unwrap_or_default(), None);
                (RunInput::Transcript(Transcript { instructions: None, messages }), claimed)
            }
            RunInput::Paused(state) => {
                let held = |pending: &[toolcall_agent::Pending]| {
                    pending.iter().map(|pending| pending.call.id.to_string()).collect::<Vec<_>>()
                };
                let (mut transcript, turn) = state.split();
                let same = paused.as_ref().is_some_and(|stored_turn| {
                    held(stored_turn.pending()) == held(turn.pending())
                        && transcript.messages.len() == stored
                        && messages.len() == stored
                });
                if !same {
                    return Err(SessionError::NotPaused { key: self.key.clone() });
                }
                // A paused run resumes with the agent's instructions, as a
                // continued one does (the store keeps messages only).
                if transcript.instructions.is_none() {
                    transcript.instructions = instructions;
                }
                // The decisions are kept with the turn: a run cut off after
                // they were taken is not asked about again.
                let claimed = (Vec::new(), Some(turn.clone()));
                (RunInput::Paused(RunState::join(transcript, turn)), claimed)
            }
            RunInput::Transcript(_) => return Err(SessionError::Transcript),
        };
        let lease = Lease::new(uuid::Uuid::new_v4().to_string(), self.lease);
        let (messages, paused) = claimed;
        let now_stored = kept_before(stored, keep) + messages.len();
        let take = Append { after: revision, keep, messages, paused, hold: Hold::Take(lease.clone()) };
        let revision = self.store.append(&self.key, take).await?;
        // The run stops alone: its token is a child of the agent's.
        let cancellation = agent.context().cancellation().child_token();
        let context = agent.context().clone().with_cancellation(cancellation.clone());
        let agent = agent.clone().with_conversation_id(self.key.id.clone()).with_context(context);
        Ok(SessionRun {
            kept: Arc::new(Kept::new(self.clone(), lease.run, (revision, now_stored), &input)),
            agent,
            input,
            cancellation,
            runner: self.runner.clone(),
        })
    }
}

/// How many of the `stored` messages an append that keeps `keep` leaves.
fn kept_before(stored: usize, keep: Option<u64>) -> usize {
    keep.map_or(stored, |keep| usize::try_from(keep).unwrap_or(usize::MAX).min(stored))
}

/// A run that holds its conversation ([`Session::begin`]): run it, or
/// stream it, and what it adds is kept as it goes and appended when it
/// ends.
#[derive(Debug)]
pub struct SessionRun {
    /// Where it is kept, and how far.
    kept: Arc<Kept>,
    /// The agent, its runs marked with the conversation's id.
    agent: Agent,
    input: RunInput,
    cancellation: CancellationToken,
    /// Where the run is made: the agent, here, without one.
    runner: Option<Arc<dyn Runner>>,
}

impl SessionRun {
    /// Where the run starts: the stored messages and the prompt, or the
    /// paused run.
    pub fn input(&self) -> &RunInput {
        &self.input
    }

    /// The run's id: its lease's ([`Lease::run`]), under which its frames
    /// are kept ([`SessionStore::write_frames`]).
    pub fn id(&self) -> &str {
        &self.kept.run
    }

    /// Cancel this to stop the run (and no other run of the agent): it
    /// ends [`Cancelled`](StopReason::Cancelled), and what it did so far
    /// is kept.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Run it to its end and append what it added.
    ///
    /// # Errors
    ///
    /// The run's ([`SessionError::Run`]; what it kept as it went stays,
    /// and the conversation is free again) or the last append's
    /// ([`SessionError::Store`]).
    pub async fn run(self) -> Result<RunResult, SessionError> {
        let _renewing = self.kept.renew_while_running(self.cancellation.clone());
        let ended = match &self.runner {
            None => self.agent.run_with(self.input.clone(), self.kept.as_ref()).await,
            Some(runner) => {
                let events = runner.stream(&self.agent, &self.kept.run, self.input.clone());
                let finished = events.filter_map(|event| async move {
                    match event {
                        AgentEvent::Finished(ended) => Some(ended),
                        _ => None,
                    }
                });
                let ended = std::pin::pin!(finished).next().await;
                ended.unwrap_or_else(|| Err(ended_without_result(&self.input)))
            }
        };
        match ended {
            Ok(result) => {
                self.kept.end(Some(&result)).await?;
                Ok(result)
            }
            Err(error) => {
                self.kept.end(None).await?;
                Err(error.into())
            }
        }
    }

    /// Make the run with `runner` (a durable engine's workers, say)
    /// rather than with the agent in this process, under the run's id
    /// ([`SessionRun::id`]); the conversation is held and what the run
    /// adds is kept the same way, but for the turns, which the engine
    /// keeps as it goes.
    pub fn with_runner(mut self, runner: Arc<dyn Runner>) -> Self {
        self.runner = Some(runner);
        self
    }

    /// Run it as a stream of events; what it added is appended before the
    /// last event ([`AgentEvent::Finished`]), which carries the append's
    /// failure as the run's error (`ModelError::Engine` of the engine
    /// `session`, a [`NotKept`] its source; the transcript as the run left
    /// it), so a page never sees an end that was not kept.
    pub fn stream(self) -> impl Stream<Item = AgentEvent> + Send + 'static {
        let SessionRun { kept, agent, input, runner, cancellation } = self;
        let (events, received) = futures::channel::mpsc::unbounded();
        tokio::spawn(async move {
            let _renewing = kept.renew_while_running(cancellation);
            // A runner's stream that stops short still ends, so a reader
            // is freed (the agent's own always ends).
            let unfinished = runner.is_some().then(|| ended_without_result(&input));
            let mut run = match &runner {
                None => agent.stream_with(input, kept.as_ref()).boxed(),
                Some(runner) => runner.stream(&agent, &kept.run, input),
            };
            let mut ended = false;
            while let Some(event) = run.next().await {
                let event = match event {
                    AgentEvent::Finished(ended_as) => {
                        ended = true;
                        AgentEvent::Finished(kept_end(&kept, ended_as).await)
                    }
                    other => other,
                };
                // A listener that left only stops listening: the run goes on.
                let _ = events.unbounded_send(event);
            }
            if let Some(error) = unfinished.filter(|_| !ended) {
                let _ = kept.end(None).await;
                let _ = events.unbounded_send(AgentEvent::Finished(Err(error)));
            }
        });
        received
    }
}

/// The run's end as a stream's last event shows it: kept, or why not.
async fn kept_end(kept: &Kept, ended: Result<RunResult, AgentError>) -> Result<RunResult, AgentError> {
    match ended {
        Ok(result) => match kept.end(Some(&result)).await {
            Ok(()) => Ok(result),
            Err(error) => Err(AgentError {
                error: ModelError::engine("session", NotKept(error)),
                transcript: Box::new(result.transcript),
            }),
        },
        Err(failed) => {
            if let Err(error) = kept.end(None).await {
                tracing::warn!(target: "toolcall_session", %error, "a failed run could not let go of its conversation: it will once its lease lapses");
            }
            Err(failed)
        }
    }
}

/// A runner's stream that ended without the run's end.
fn ended_without_result(input: &RunInput) -> AgentError {
    AgentError {
        error: ModelError::engine("session", "the runner's stream ended without the run's end"),
        transcript: Box::new(input.transcript()),
    }
}

/// A run's hold on its conversation and how far it is kept: the run's
/// [`Effects`], which append each turn as it comes under the run's lease
/// and give each call its idempotency key.
#[derive(Debug)]
struct Kept {
    session: Session,
    /// The run's id: its lease's.
    run: String,
    /// The revision the run's last append made, and how many messages the
    /// store holds: the run's own come after them.
    at: Mutex<(u64, usize)>,
    /// Where the calls that run next are in the transcript: the index of
    /// the message that holds them.
    turn: Mutex<usize>,
}

impl Kept {
    fn new(session: Session, run: String, at: (u64, usize), input: &RunInput) -> Self {
        let messages = match input {
            RunInput::Transcript(transcript) => &transcript.messages,
            RunInput::Paused(state) => &state.transcript().messages,
            RunInput::Prompt(_) => &Vec::new(),
        };
        let turn = messages.len().saturating_sub(1);
        Self { session, run, at: Mutex::new(at), turn: Mutex::new(turn) }
    }

    fn at(&self) -> (u64, usize) {
        *self.at.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lease(&self) -> Lease {
        Lease::new(self.run.clone(), self.session.lease)
    }

    /// Renew the lease until the guard is dropped; a stop asked through
    /// the store, or the lease lost, cancels the run. Nothing without a
    /// Tokio runtime (the lease then lasts its first term).
    fn renew_while_running(
        self: &Arc<Self>,
        run: CancellationToken,
    ) -> Option<tokio::sync::oneshot::Sender<()>> {
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let (done, mut ended) = tokio::sync::oneshot::channel::<()>();
        let kept = Arc::clone(self);
        let every = (kept.session.lease / 4).min(Duration::from_secs(1));
        runtime.spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut ended => return,
                    () = tokio::time::sleep(every) => {}
                }
                let session = &kept.session;
                match session.store.renew(&session.key, &kept.lease()).await {
                    Ok(Renewal::Held { stop }) => {
                        if stop {
                            run.cancel();
                        }
                    }
                    Ok(Renewal::Lost) => {
                        tracing::warn!(target: "toolcall_session", key = %session.key, "the run lost its conversation to another run: stopped");
                        run.cancel();
                        return;
                    }
                    Err(error) => {
                        tracing::warn!(target: "toolcall_session", key = %session.key, %error, "the run's lease could not be renewed");
                    }
                }
            }
        });
        Some(done)
    }

    /// Append `messages` (after the stored ones) and `paused` with `hold`.
    async fn append(
        &self,
        messages: &[Message],
        paused: Option<toolcall_agent::PausedTurn>,
        hold: Hold,
    ) -> Result<(), StoreError> {
        let (after, stored) = self.at();
        let added = messages.get(stored..).map(<[Message]>::to_vec).unwrap_or_default();
        let session = &self.session;
        let append = Append { after, keep: None, messages: added, paused, hold };
        let revision = session.store.append(&session.key, append).await?;
        *self.at.lock().unwrap_or_else(PoisonError::into_inner) = (revision, stored.max(messages.len()));
        Ok(())
    }

    /// The run ended: append what it added (its result's transcript and
    /// paused turn; nothing more for a run that failed) and let go.
    async fn end(&self, result: Option<&RunResult>) -> Result<(), StoreError> {
        let release = Hold::Release { run: self.run.clone() };
        let Some(result) = result else { return self.append(&[], None, release).await };
        let (messages, paused) = left_by(result);
        self.append(&messages, paused, release).await
    }
}

/// What a run's end leaves in its conversation: its transcript's messages
/// (those before the run's included) and the turn it paused in, if it did.
fn left_by(result: &RunResult) -> (Vec<Message>, Option<toolcall_agent::PausedTurn>) {
    match &result.stop {
        StopReason::Paused(state) => {
            let (transcript, turn) = (**state).clone().split();
            (transcript.messages, Some(turn))
        }
        _ => (result.transcript.messages.clone(), None),
    }
}

impl Effects for Kept {
    fn checkpoint<'a>(&'a self, transcript: &'a Transcript) -> BoxFuture<'a, Result<(), ModelError>> {
        Box::pin(async move {
            let messages = &transcript.messages;
            if messages.last().is_some_and(|last| last.calls().next().is_some()) {
                *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = messages.len() - 1;
            }
            self.append(messages, None, Hold::Take(self.lease()))
                .await
                .map_err(|error| ModelError::engine("session", NotKept(error)))
        })
    }

    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approval: Approval,
    ) -> BoxFuture<'a, Vec<ToolResult>> {
        Box::pin(async move {
            if context.get::<IdempotencyScope>().is_some() {
                return InProcess.run_calls(toolset, context, calls, approval).await;
            }
            let turn = *self.turn.lock().unwrap_or_else(PoisonError::into_inner);
            let key = &self.session.key;
            let scope = IdempotencyScope::new(format!("{}/{}:{turn}", key.owner, key.id));
            let context = context.clone().with_extension(scope);
            InProcess.run_calls(toolset, &context, calls, approval).await
        })
    }
}
