//! An agent's runs in one conversation: the stored messages loaded before
//! a run, what the run added appended after it, a paused run kept between.

use std::sync::Arc;

use futures::{Stream, StreamExt};
use toolcall_agent::{
    Agent, AgentError, AgentEvent, Message, ModelError, RunInput, RunResult, RunState, Runner, StopReason,
    Transcript,
};

use toolcall_core::CancellationToken;

use crate::{Append, ConversationKey, SessionStore, StoreError};

/// One conversation of a store, in which an agent runs.
///
/// [`Session::run`] loads the conversation, runs the agent from its
/// messages and the new prompt, and appends what the run added (the
/// prompt, the model's answers with their reasoning, the tools' results),
/// so the second question remembers the first. A run that pauses for
/// approval keeps its paused turn in the store: [`Session::paused`] gives
/// it back, in this process or another, to decide and resume with
/// [`Session::run`]. A run that fails appends nothing: the conversation
/// stays as it was.
///
/// Two runs at once on one conversation: the one that ends second is
/// refused ([`StoreError::Conflict`], in [`SessionError::Store`]) and
/// nothing of it is kept. A server that wants to refuse the second before
/// it runs keeps a note of the runs it has going (as `ChatServer` does).
///
/// ```
/// use std::sync::Arc;
/// use toolcall_agent::{Agent};
/// use toolcall_agent::testing::{ScriptedModel};
/// use toolcall_core::Toolset;
/// use toolcall_session::{ConversationKey, MemoryStore, Session};
///
/// # futures::executor::block_on(async {
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
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("key", &self.key).finish_non_exhaustive()
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
    /// append because another run appended first.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The run failed; nothing of it was appended.
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
        Self { store, key }
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
        Ok(self.store.load(&self.key).await?.map(|conversation| conversation.messages).unwrap_or_default())
    }

    /// The run that waits for approval, if one does: decide about its
    /// calls and give it to [`Session::run`].
    ///
    /// # Errors
    ///
    /// The store's.
    pub async fn paused(&self) -> Result<Option<RunState>, StoreError> {
        let Some(conversation) = self.store.load(&self.key).await? else { return Ok(None) };
        Ok(conversation.paused.map(|turn| {
            RunState::join(Transcript { instructions: None, messages: conversation.messages }, turn)
        }))
    }

    /// Run `agent` in the conversation from `input` (a prompt, or the
    /// session's paused run with decisions) and append what it added.
    ///
    /// # Errors
    ///
    /// See [`SessionError`]: on any error nothing of the run was kept.
    pub async fn run(&self, agent: &Agent, input: impl Into<RunInput>) -> Result<RunResult, SessionError> {
        self.begin(agent, input).await?.run().await
    }

    /// Load the conversation and get a run ready, without running it: to
    /// refuse before a stream starts (a page's request), then
    /// [`SessionRun::run`] or [`SessionRun::stream`].
    ///
    /// # Errors
    ///
    /// [`SessionError::Store`] (loading), [`SessionError::Waiting`],
    /// [`SessionError::NotPaused`], [`SessionError::Transcript`].
    pub async fn begin(&self, agent: &Agent, input: impl Into<RunInput>) -> Result<SessionRun, SessionError> {
        self.begin_at(agent, input.into(), false).await
    }

    /// Get a run ready that answers the last question again, from the
    /// conversation as it was before it, with `prompt` in its place: the
    /// last question and everything after it (calls that wait included,
    /// which never ran) are replaced when the run ends.
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
        let conversation = self.store.load(&self.key).await?;
        let (revision, messages, paused) = match conversation {
            Some(conversation) => (conversation.revision, conversation.messages, conversation.paused),
            None => (0, Vec::new(), None),
        };
        let (messages, paused, keep) = match messages.iter().rposition(|m| matches!(m, Message::User { .. }))
        {
            Some(asked_at) if again => (messages[..asked_at].to_vec(), None, Some(asked_at as u64)),
            _ => (messages, paused, None),
        };
        let stored = messages.len();
        let instructions = agent.instructions().map(str::to_owned);
        let input = match input {
            RunInput::Prompt(parts) => {
                if let Some(turn) = paused {
                    let pending = turn.pending().iter().map(|pending| pending.call.id.to_string()).collect();
                    return Err(SessionError::Waiting { key: self.key.clone(), pending });
                }
                let mut messages = messages;
                messages.push(Message::User { parts });
                RunInput::Transcript(Transcript { instructions: None, messages })
            }
            RunInput::Paused(state) => {
                let held = |pending: &[toolcall_agent::Pending]| {
                    pending.iter().map(|pending| pending.call.id.to_string()).collect::<Vec<_>>()
                };
                let (mut transcript, turn) = state.split();
                let same = paused.as_ref().is_some_and(|stored_turn| {
                    held(stored_turn.pending()) == held(turn.pending()) && transcript.messages.len() == stored
                });
                if !same {
                    return Err(SessionError::NotPaused { key: self.key.clone() });
                }
                // A paused run resumes with the agent's instructions, as a
                // continued one does (the store keeps messages only).
                if transcript.instructions.is_none() {
                    transcript.instructions = instructions;
                }
                RunInput::Paused(RunState::join(transcript, turn))
            }
            RunInput::Transcript(_) => return Err(SessionError::Transcript),
        };
        // The run stops alone: its token is a child of the agent's.
        let cancellation = agent.context().cancellation().child_token();
        let context = agent.context().clone().with_cancellation(cancellation.clone());
        let agent = agent.clone().with_conversation_id(self.key.id.clone()).with_context(context);
        Ok(SessionRun {
            session: self.clone(),
            agent,
            revision,
            stored,
            keep,
            input,
            cancellation,
            runner: None,
        })
    }
}

/// A run ready to go in a session ([`Session::begin`]): run it, or stream
/// it, and what it adds is appended when it ends.
#[derive(Debug)]
pub struct SessionRun {
    session: Session,
    /// The agent, its runs marked with the conversation's id.
    agent: Agent,
    /// The revision the run starts from.
    revision: u64,
    /// How many messages were stored: the run's own come after them.
    stored: usize,
    /// How many stored messages the append keeps (a regenerated answer).
    keep: Option<u64>,
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
    /// The run's ([`SessionError::Run`]) or the append's
    /// ([`SessionError::Store`]); either way nothing of the run was kept.
    pub async fn run(self) -> Result<RunResult, SessionError> {
        let result = match &self.runner {
            None => self.agent.run(self.input.clone()).await?,
            Some(runner) => {
                let events = runner.stream(&self.agent, self.input.clone());
                let finished = events.filter_map(|event| async move {
                    match event {
                        AgentEvent::Finished(ended) => Some(ended),
                        _ => None,
                    }
                });
                let ended = std::pin::pin!(finished).next().await;
                ended.unwrap_or_else(|| Err(ended_without_result(&self.input)))?
            }
        };
        save(&self.session, (self.revision, self.stored, self.keep), &result).await?;
        Ok(result)
    }

    /// Make the run with `runner` (a durable engine's workers, say)
    /// rather than with the agent in this process; what it adds is kept
    /// the same way.
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
        let SessionRun { session, agent, revision, stored, keep, input, runner, .. } = self;
        let (events, received) = futures::channel::mpsc::unbounded();
        tokio::spawn(async move {
            // A runner's stream that stops short still ends, so a reader
            // is freed (the agent's own always ends).
            let unfinished = runner.is_some().then(|| ended_without_result(&input));
            let mut run = match &runner {
                None => agent.stream(input).boxed(),
                Some(runner) => runner.stream(&agent, input),
            };
            let mut ended = false;
            while let Some(event) = run.next().await {
                ended |= matches!(event, AgentEvent::Finished(_));
                let event = match event {
                    AgentEvent::Finished(Ok(result)) => {
                        match save(&session, (revision, stored, keep), &result).await {
                            Ok(_) => AgentEvent::Finished(Ok(result)),
                            Err(error) => AgentEvent::Finished(Err(AgentError {
                                error: ModelError::engine("session", NotKept(error)),
                                transcript: Box::new(result.transcript),
                            })),
                        }
                    }
                    other => other,
                };
                // A listener that left only stops listening: the run goes on.
                let _ = events.unbounded_send(event);
            }
            if let Some(error) = unfinished.filter(|_| !ended) {
                let _ = events.unbounded_send(AgentEvent::Finished(Err(error)));
            }
        });
        received
    }
}

/// A runner's stream that ended without the run's end.
fn ended_without_result(input: &RunInput) -> AgentError {
    AgentError {
        error: ModelError::engine("session", "the runner's stream ended without the run's end"),
        transcript: Box::new(input.transcript()),
    }
}

/// Append what the run added after the `stored` messages it started from,
/// after the revision it started from, keeping as many stored messages as
/// it says.
async fn save(
    session: &Session,
    (after, stored, keep): (u64, usize, Option<u64>),
    result: &RunResult,
) -> Result<u64, StoreError> {
    let (messages, paused) = match &result.stop {
        StopReason::Paused(state) => {
            let (transcript, turn) = (**state).clone().split();
            (transcript.messages, Some(turn))
        }
        _ => (result.transcript.messages.clone(), None),
    };
    let messages = messages.into_iter().skip(stored).collect();
    session.store.append(&session.key, Append { after, keep, messages, paused }).await
}
