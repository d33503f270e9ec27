//! Conversations that last: an agent's runs kept in a store, so the second
//! question remembers the first, a run paused for approval resumes in
//! another process, and each conversation belongs to one user.
//!
//! - [`SessionStore`]: the contract (load a conversation, append a run's
//!   messages with its paused turn in one transaction, list, delete), every
//!   conversation under a [`ConversationKey`] (owner and id); the run that
//!   holds a conversation ([`Lease`], [`Hold`]: one run at a time, whatever
//!   the process), a stop asked of it, and the frames it streamed
//!   ([`Frame`]), for every server that shares the store;
//! - [`MemoryStore`]: in this process, bounded (tests, a server that may
//!   forget); [`SqlStore`]: SQLite (feature `sqlite`, on by default: one
//!   file, created with its schema on first use) or PostgreSQL (feature
//!   `postgres`: many servers, the schema migrated by the store);
//! - [`Session`]: one conversation an agent runs in ([`Session::run`]), or
//!   a run made ready to stream ([`SessionRun`]): it takes the conversation
//!   before anything runs, keeps each turn as it goes, and a run cut off
//!   never runs a call again ([`Conversation::settled`]).
//!
//! The facade's feature `session` brings it in (`toolcall::session`), with
//! SQLite; `postgres` adds PostgreSQL.
#![deny(missing_docs)]

mod memory;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod record;
mod session;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
mod store;

pub use memory::MemoryStore;
pub use session::{NotKept, Session, SessionError, SessionRun};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::SqlStore;
pub use store::{
    Append, Conversation, ConversationInfo, ConversationKey, Frame, Hold, Lease, MAX_KEY_BYTES, Renewal,
    SessionStore, StoreError,
};
