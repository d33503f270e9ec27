//! A store in this process's memory, bounded: for tests, and for a server
//! that may forget.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;

use crate::{Append, Conversation, ConversationInfo, ConversationKey, SessionStore, StoreError};

/// Conversations in memory, at most a set number: past it, the least
/// recently used is forgotten (its paused run with it). Nothing outlives
/// the process.
///
/// ```
/// use toolcall_agent::Message;
/// use toolcall_session::{Append, ConversationKey, MemoryStore, SessionStore};
///
/// # futures::executor::block_on(async {
/// let store = MemoryStore::new(100);
/// let key = ConversationKey::new("alice", "trip");
/// let append = Append { after: 0, keep: None, messages: vec![Message::user("Hi")], paused: None };
/// assert_eq!(store.append(&key, append).await.unwrap(), 1);
/// assert_eq!(store.load(&key).await.unwrap().unwrap().messages, [Message::user("Hi")]);
/// // Another owner's conversation of the same id is not there.
/// assert!(store.load(&ConversationKey::new("bob", "trip")).await.unwrap().is_none());
/// # });
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Each conversation, with its last use and its times.
    conversations: HashMap<ConversationKey, Entry>,
    /// Last use to key: the first is the least recently used.
    by_use: BTreeMap<u64, ConversationKey>,
    /// A counter of uses.
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    conversation: Conversation,
    used: u64,
    created_at: i64,
    updated_at: i64,
}

impl MemoryStore {
    /// A store that keeps at most `capacity` conversations (at least one).
    pub fn new(capacity: usize) -> Self {
        Self { capacity: capacity.max(1), inner: Mutex::new(Inner::default()) }
    }

    /// How many conversations it holds now.
    pub fn len(&self) -> usize {
        self.inner().conversations.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        // No method panics while holding the lock; a poisoned one is whole.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryStore {
    /// A store of at most 1,000 conversations.
    fn default() -> Self {
        Self::new(1_000)
    }
}

impl Inner {
    /// Mark `key` as used now.
    fn touch(&mut self, key: &ConversationKey) {
        self.clock += 1;
        let now = self.clock;
        if let Some(entry) = self.conversations.get_mut(key) {
            self.by_use.remove(&entry.used);
            entry.used = now;
            self.by_use.insert(now, key.clone());
        }
    }

    fn remove(&mut self, key: &ConversationKey) -> bool {
        match self.conversations.remove(key) {
            Some(entry) => {
                self.by_use.remove(&entry.used);
                true
            }
            None => false,
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_millis() as i64)
}

impl SessionStore for MemoryStore {
    fn load<'a>(
        &'a self,
        key: &'a ConversationKey,
    ) -> BoxFuture<'a, Result<Option<Conversation>, StoreError>> {
        Box::pin(async move {
            let mut inner = self.inner();
            inner.touch(key);
            Ok(inner.conversations.get(key).map(|entry| entry.conversation.clone()))
        })
    }

    fn append<'a>(
        &'a self,
        key: &'a ConversationKey,
        append: Append,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            key.check()?;
            let mut inner = self.inner();
            let revision = inner.conversations.get(key).map_or(0, |entry| entry.conversation.revision);
            if revision != append.after {
                return Err(StoreError::Conflict { key: key.clone(), after: append.after });
            }
            let now = now_ms();
            let entry = inner.conversations.entry(key.clone()).or_insert_with(|| Entry {
                conversation: Conversation { revision: 0, messages: Vec::new(), paused: None },
                used: 0,
                created_at: now,
                updated_at: now,
            });
            entry.conversation.revision += 1;
            if let Some(keep) = append.keep {
                entry.conversation.messages.truncate(usize::try_from(keep).unwrap_or(usize::MAX));
            }
            entry.conversation.messages.extend(append.messages);
            entry.conversation.paused = append.paused;
            entry.updated_at = now;
            let revision = entry.conversation.revision;
            inner.touch(key);
            while inner.conversations.len() > self.capacity {
                let Some((_, oldest)) = inner.by_use.pop_first() else { break };
                inner.conversations.remove(&oldest);
            }
            Ok(revision)
        })
    }

    fn list<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, Result<Vec<ConversationInfo>, StoreError>> {
        Box::pin(async move {
            let inner = self.inner();
            let mut listed: Vec<ConversationInfo> = inner
                .conversations
                .iter()
                .filter(|(key, _)| key.owner == owner)
                .map(|(key, entry)| ConversationInfo {
                    id: key.id.clone(),
                    revision: entry.conversation.revision,
                    messages: entry.conversation.messages.len() as u64,
                    paused: entry.conversation.paused.is_some(),
                    created_at: entry.created_at,
                    updated_at: entry.updated_at,
                })
                .collect();
            listed.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
            Ok(listed)
        })
    }

    fn delete<'a>(&'a self, key: &'a ConversationKey) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move { Ok(self.inner().remove(key)) })
    }
}
