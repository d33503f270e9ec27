//! A store in this process's memory, bounded: for tests, and for a server
//! that may forget.

use futures::future::BoxFuture;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use crate::store::now_ms;
use crate::{
    Append, Conversation, ConversationInfo, ConversationKey, Frame, Lease, Renewal, SessionStore, StoreError,
};

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
/// assert_eq!(store.append(&key, Append::new(0, vec![Message::user("Hi")])).await.unwrap(), 1);
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
    /// The frames of the run that wrote last, and its id.
    frames: (String, Vec<Frame>),
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
            let stored = inner.conversations.get(key).map(|entry| &entry.conversation);
            if let Some(holder) = stored.and_then(Conversation::running)
                && append.hold.run() != Some(holder.run.as_str())
            {
                return Err(StoreError::Busy { key: key.clone() });
            }
            if stored.map_or(0, |conversation| conversation.revision) != append.after {
                return Err(StoreError::Conflict { key: key.clone(), after: append.after });
            }
            let now = now_ms();
            let entry = inner.conversations.entry(key.clone()).or_insert_with(|| Entry {
                conversation: Conversation {
                    revision: 0,
                    messages: Vec::new(),
                    paused: None,
                    lease: None,
                    stop_asked: false,
                },
                frames: (String::new(), Vec::new()),
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
            let lease = append.hold.lease().cloned();
            // A stop asked of a run is that run's alone.
            let held = entry.conversation.lease.as_ref();
            entry.conversation.stop_asked &=
                lease.as_ref().zip(held).is_some_and(|(new, old)| new.run == old.run);
            entry.conversation.lease = lease;
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
                    running: entry.conversation.running().is_some(),
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

    fn renew<'a>(
        &'a self,
        key: &'a ConversationKey,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<Renewal, StoreError>> {
        Box::pin(async move {
            let mut inner = self.inner();
            let Some(entry) = inner.conversations.get_mut(key) else { return Ok(Renewal::Lost) };
            let conversation = &mut entry.conversation;
            match &mut conversation.lease {
                Some(held) if held.run == lease.run => {
                    held.until = lease.until;
                    Ok(Renewal::Held { stop: conversation.stop_asked })
                }
                _ => Ok(Renewal::Lost),
            }
        })
    }

    fn stop<'a>(&'a self, key: &'a ConversationKey) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut inner = self.inner();
            let Some(entry) = inner.conversations.get_mut(key) else { return Ok(false) };
            let going = entry.conversation.running().is_some();
            entry.conversation.stop_asked |= going;
            Ok(going)
        })
    }

    fn write_frames<'a>(
        &'a self,
        key: &'a ConversationKey,
        run: &'a str,
        first: u64,
        frames: Vec<Frame>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut inner = self.inner();
            let Some(entry) = inner.conversations.get_mut(key) else { return Ok(()) };
            let (of, kept) = &mut entry.frames;
            if of != run {
                run.clone_into(of);
                kept.clear();
            }
            // A batch written again (a retry) is kept once.
            let skip = (kept.len() as u64).saturating_sub(first);
            kept.extend(frames.into_iter().skip(usize::try_from(skip).unwrap_or(usize::MAX)));
            Ok(())
        })
    }

    fn read_frames<'a>(
        &'a self,
        key: &'a ConversationKey,
        run: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<Vec<Frame>, StoreError>> {
        Box::pin(async move {
            let inner = self.inner();
            let Some((of, kept)) = inner.conversations.get(key).map(|entry| &entry.frames) else {
                return Ok(Vec::new());
            };
            let from = usize::try_from(from).unwrap_or(usize::MAX);
            Ok(if of == run {
                kept.get(from..).map(<[Frame]>::to_vec).unwrap_or_default()
            } else {
                Vec::new()
            })
        })
    }
}
