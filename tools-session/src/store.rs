//! The contract every store keeps: conversations owned by a user, each an
//! append-only list of messages and at most one paused run, changed only by
//! whole appends that name the revision they follow; the run going in each,
//! held by a lease, and the frames it streamed, for every process that
//! shares the store.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use toolcall_agent::{Message, PausedTurn, RunState, Transcript};

/// Which conversation: its owner (a user or tenant id, from the
/// application's own authentication) and its id. Two owners may use the
/// same id: they are two conversations, and neither sees the other's.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ConversationKey {
    /// Whose conversation it is.
    pub owner: String,
    /// The conversation's id, unique per owner.
    pub id: String,
}

/// The longest owner or id a store takes, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

impl ConversationKey {
    /// The conversation `id` of `owner`.
    pub fn new(owner: impl Into<String>, id: impl Into<String>) -> Self {
        Self { owner: owner.into(), id: id.into() }
    }

    /// Whether a store takes the key: owner and id each 1 to
    /// [`MAX_KEY_BYTES`] bytes, without control characters.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidKey`], saying which part and why.
    pub fn check(&self) -> Result<(), StoreError> {
        for (part, value) in [("owner", &self.owner), ("id", &self.id)] {
            let problem = if value.is_empty() {
                "is empty"
            } else if value.len() > MAX_KEY_BYTES {
                "is longer than 256 bytes"
            } else if value.chars().any(char::is_control) {
                "has a control character"
            } else {
                continue;
            };
            return Err(StoreError::InvalidKey { reason: format!("the conversation's {part} {problem}") });
        }
        Ok(())
    }
}

impl std::fmt::Display for ConversationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` of `{}`", self.id, self.owner)
    }
}

/// A conversation as stored: every message, and the run that waits for a
/// person's approval, if one does.
#[derive(Clone, Debug, PartialEq)]
pub struct Conversation {
    /// How many appends made it: what the next append names
    /// ([`Append::after`]).
    pub revision: u64,
    /// Every message, oldest first: the transcript of all its runs.
    pub messages: Vec<Message>,
    /// The turn a run paused in, waiting for approval; it belongs after
    /// the last message. Its calls carry decisions while the run that took
    /// them goes (or once it was cut off).
    pub paused: Option<PausedTurn>,
    /// The run that holds the conversation, if one does (or did, and
    /// stopped without letting go: its lease [lapsed](Lease::lapsed)).
    pub lease: Option<Lease>,
    /// Whether someone asked the run that holds it to stop
    /// ([`SessionStore::stop`]).
    pub stop_asked: bool,
}

impl Conversation {
    /// The run going in it: one holds it, and its lease has not lapsed.
    pub fn running(&self) -> Option<&Lease> {
        self.lease.as_ref().filter(|lease| !lease.lapsed())
    }

    /// The conversation as the next run goes on from it: a run cut off
    /// (its process killed, or failed) while its calls were in flight
    /// leaves them answered, each [`cut_off`](toolcall_agent::cut_off)
    /// rather than run again (each denied one with its reason), after a
    /// paused turn whose decisions it had taken, or after the response
    /// that made them. Otherwise the conversation as it is. The store is
    /// not changed: the next run appends the answers before its question.
    pub fn settled(mut self) -> Self {
        if self.running().is_some() {
            return self;
        }
        match self.paused.take() {
            Some(turn) if turn.pending().iter().any(|pending| pending.decision.is_some()) => {
                let transcript =
                    Transcript { instructions: None, messages: std::mem::take(&mut self.messages) };
                self.messages = RunState::join(transcript, turn).cut_off().messages;
            }
            Some(turn) => self.paused = Some(turn),
            None => {
                let results: Vec<_> = self
                    .messages
                    .last()
                    .map(|last| last.calls().map(toolcall_agent::cut_off).collect())
                    .unwrap_or_default();
                if !results.is_empty() {
                    self.messages.push(Message::Tool { results });
                }
            }
        }
        self
    }
}

/// A run's hold on a conversation: while it lasts, no other run appends
/// to it (in this process or another sharing the store), so a decision
/// taken twice runs its calls once. The run renews it as it goes
/// ([`SessionStore::renew`]); a run whose process died lets it lapse, and
/// the next run may take the conversation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Lease {
    /// The run's id, new for each run.
    pub run: String,
    /// Until when, in milliseconds since the Unix epoch.
    pub until: i64,
}

impl Lease {
    /// A lease of `run` for `ttl` from now.
    pub fn new(run: impl Into<String>, ttl: std::time::Duration) -> Self {
        let ttl = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        Self { run: run.into(), until: now_ms().saturating_add(ttl) }
    }

    /// Whether it ran out: its run is taken for stopped.
    pub fn lapsed(&self) -> bool {
        self.until <= now_ms()
    }
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as i64)
}

/// Who appends, and what becomes of the conversation's lease.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Hold {
    /// No run's append: refused while a run holds the conversation; it
    /// leaves no lease.
    #[default]
    Free,
    /// A run's: taken (its first append) or kept (each one after), the
    /// lease renewed to this one's end. Refused while another run holds
    /// the conversation.
    Take(Lease),
    /// The last of the run `run`: it lets go of the conversation.
    Release {
        /// The run's id.
        run: String,
    },
}

impl Hold {
    /// The run that appends, if one does.
    pub fn run(&self) -> Option<&str> {
        match self {
            Self::Free => None,
            Self::Take(lease) => Some(&lease.run),
            Self::Release { run } => Some(run),
        }
    }

    /// The lease the conversation holds after the append.
    pub fn lease(&self) -> Option<&Lease> {
        match self {
            Self::Take(lease) => Some(lease),
            _ => None,
        }
    }
}

/// What [`SessionStore::renew`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// The run still holds the conversation; `stop` says whether someone
    /// asked it to stop.
    Held {
        /// Someone asked the run to stop ([`SessionStore::stop`]).
        stop: bool,
    },
    /// Another run holds the conversation now (this one's lease lapsed
    /// and was taken), or none does: the run must stop.
    Lost,
}

/// One frame a run streamed, as kept for readers in other processes: the
/// text of its SSE event, or the end of the run's frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// An SSE event's text, as sent.
    Data(String),
    /// No frame comes after this one.
    End,
}

/// A conversation in a list: what a page shows to pick one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationInfo {
    /// The conversation's id.
    pub id: String,
    /// How many appends made it.
    pub revision: u64,
    /// How many messages it holds.
    pub messages: u64,
    /// Whether a run waits for approval in it.
    pub paused: bool,
    /// Whether a run is going in it now (it holds a lease that has not
    /// lapsed).
    #[serde(default)]
    pub running: bool,
    /// When it was made, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When it last changed, in milliseconds since the Unix epoch.
    pub updated_at: i64,
}

/// What one run adds to a conversation, in one transaction: its new
/// messages and the paused run it leaves (or none, which clears one).
#[derive(Clone, Debug, PartialEq)]
pub struct Append {
    /// The revision the run started from (0: the conversation is new). An
    /// append that follows another is refused ([`StoreError::Conflict`]),
    /// so two runs on one conversation never interleave.
    pub after: u64,
    /// Keep only this many of the stored messages before appending: a
    /// regenerated answer replaces the run that gave the last one. `None`
    /// (what a run does) keeps every message.
    pub keep: Option<u64>,
    /// The messages the run added, in order.
    pub messages: Vec<Message>,
    /// The turn the run paused in, if it did.
    pub paused: Option<PausedTurn>,
    /// Who appends: refused while another run holds the conversation.
    pub hold: Hold,
}

impl Append {
    /// An append after revision `after` of `messages`, by no run, keeping
    /// every stored message and leaving no paused run.
    pub fn new(after: u64, messages: Vec<Message>) -> Self {
        Self { after, keep: None, messages, paused: None, hold: Hold::Free }
    }
}

/// Where conversations are kept: in memory ([`MemoryStore`](crate::MemoryStore)),
/// in SQLite or in PostgreSQL ([`SqlStore`](crate::SqlStore)), or anything
/// that keeps the same promises:
///
/// - a conversation is seen only under its [`ConversationKey`]: another
///   owner's is not there;
/// - an [`Append`] lands whole (its messages and its paused turn) or not
///   at all, and only after the revision it names;
/// - messages are never changed or reordered once stored; only an append
///   that says so ([`Append::keep`]) drops the last ones first;
/// - while a run holds a conversation ([`Lease`], not lapsed), only that
///   run appends to it; the check and the append are one atomic step, so
///   of two processes that decide about the same held call, one takes it
///   and the other is refused before anything runs;
/// - a run's frames are readable from every process that shares the
///   store, until the next run of the conversation writes its first.
pub trait SessionStore: Send + Sync {
    /// The conversation, or `None` if this owner has none with this id.
    fn load<'a>(
        &'a self,
        key: &'a ConversationKey,
    ) -> BoxFuture<'a, Result<Option<Conversation>, StoreError>>;

    /// Add a run's messages and paused turn; the new revision.
    fn append<'a>(
        &'a self,
        key: &'a ConversationKey,
        append: Append,
    ) -> BoxFuture<'a, Result<u64, StoreError>>;

    /// The owner's conversations, the most recently changed first.
    fn list<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, Result<Vec<ConversationInfo>, StoreError>>;

    /// Forget the conversation; whether there was one.
    fn delete<'a>(&'a self, key: &'a ConversationKey) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Move the run's lease on to `lease.until`, if the run still holds
    /// the conversation; and say whether someone asked it to stop.
    fn renew<'a>(
        &'a self,
        key: &'a ConversationKey,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<Renewal, StoreError>>;

    /// Ask the run going in the conversation to stop (it learns it when
    /// it next renews its lease); whether one is going.
    fn stop<'a>(&'a self, key: &'a ConversationKey) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Keep frames `first..` of the run `run` for readers elsewhere; the
    /// first ones of a run (`first` 0) drop the frames of the
    /// conversation's earlier runs.
    fn write_frames<'a>(
        &'a self,
        key: &'a ConversationKey,
        run: &'a str,
        first: u64,
        frames: Vec<Frame>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The frames of the run `run` from number `from` on, in order (as
    /// many as are kept now, or a batch of them).
    fn read_frames<'a>(
        &'a self,
        key: &'a ConversationKey,
        run: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<Vec<Frame>, StoreError>>;
}

/// What a store could not do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The conversation changed since the revision an append named:
    /// another run appended first. Nothing of this append was kept.
    #[error(
        "conversation {key} is at another revision than {after}: another run changed it first, and nothing of \
         this run was kept"
    )]
    Conflict {
        /// The conversation.
        key: ConversationKey,
        /// The revision the append named.
        after: u64,
    },
    /// Another run holds the conversation: it is going now (its lease has
    /// not lapsed). Nothing of this append was kept.
    #[error("conversation {key} has a run going: wait for its end, or stop it")]
    Busy {
        /// The conversation.
        key: ConversationKey,
    },
    /// An owner or id the store does not take.
    #[error("{reason}")]
    InvalidKey {
        /// Which part, and what is wrong with it.
        reason: String,
    },
    /// The store could not be opened or its schema migrated.
    #[error("the session store at {at} could not be opened: {source}")]
    Open {
        /// The path or URL (without its password).
        at: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A stored record was written by a newer version, in a format this
    /// one does not know.
    #[error(
        "conversation {key} holds a record of format {found}, written by toolcall-session {written_by}; this is \
         toolcall-session {this}, which reads formats up to {known}: upgrade it to read this conversation"
    )]
    NewerFormat {
        /// The conversation.
        key: ConversationKey,
        /// The record's format.
        found: i64,
        /// The newest format this version reads.
        known: i64,
        /// The version that wrote it.
        written_by: String,
        /// This version.
        this: &'static str,
    },
    /// A stored record does not read.
    #[error(
        "conversation {key}: {record}, written by toolcall-session {written_by}, does not read: {source}"
    )]
    Unreadable {
        /// The conversation.
        key: ConversationKey,
        /// Which record (`message 3`, `the paused run`).
        record: String,
        /// The version that wrote it.
        written_by: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The database failed a query.
    #[error("the session store failed: {0}")]
    Database(#[source] Box<dyn std::error::Error + Send + Sync>),
}
