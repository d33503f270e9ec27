//! The contract every store keeps: conversations owned by a user, each an
//! append-only list of messages and at most one paused run, changed only by
//! whole appends that name the revision they follow.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use toolcall_agent::{Message, PausedTurn};

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
    /// the last message.
    pub paused: Option<PausedTurn>,
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
///   that says so ([`Append::keep`]) drops the last ones first.
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
