//! JSON-RPC batches on stdio, for a session at MCP 2025-03-26: the one
//! version whose clients may send a batch, which a server must take
//! (<https://modelcontextprotocol.io/specification/2025-03-26/basic#batching>);
//! 2025-06-18 removed them
//! (<https://modelcontextprotocol.io/specification/2025-06-18/changelog>), so
//! any other session has a batch refused (`wire::unreadable` says why).
//!
//! rmcp reads one message at a time: a batch's messages are handed to it
//! one by one, and the answers to its requests are held here until the
//! last one is in, then written as one array (JSON-RPC 2.0, §6: in any
//! order, and nothing at all when no request needs one).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ProtocolVersion, RequestId};

/// The version whose sessions take batches.
pub(crate) const VERSION: ProtocolVersion = ProtocolVersion::V_2025_03_26;

/// The batches being answered, shared by the side reading requests and
/// the side writing answers.
#[derive(Clone, Debug, Default)]
pub(crate) struct Batches(Arc<Mutex<State>>);

#[derive(Debug, Default)]
struct State {
    /// The version the server answered `initialize` with.
    version: Option<ProtocolVersion>,
    /// Each request of a batch still unanswered, and its batch.
    waiting: HashMap<RequestId, u64>,
    batches: HashMap<u64, Batch>,
    next: u64,
}

#[derive(Debug, Default)]
struct Batch {
    /// Its requests still unanswered.
    left: usize,
    /// The answers in, as JSON text.
    answers: Vec<Vec<u8>>,
}

/// A batch being read: its requests are counted in before any reaches
/// rmcp, so that no answer can come back before its batch knows it.
pub(crate) struct Reading<'a> {
    batches: &'a Batches,
    key: u64,
}

impl Batches {
    /// The client asked for `version` in its `initialize`: the session's
    /// version until the server answers (rmcp takes each version it asks
    /// with, 2025-03-26 among them), for a client that sends a batch
    /// before it has read the answer.
    pub(crate) fn asked(&self, version: ProtocolVersion) {
        self.lock().version.get_or_insert(version);
    }

    /// The server answered `initialize` with `version`.
    pub(crate) fn negotiated(&self, version: ProtocolVersion) {
        self.lock().version = Some(version);
    }

    /// Whether the session takes batches.
    pub(crate) fn taken(&self) -> bool {
        self.lock().version.as_ref() == Some(&VERSION)
    }

    /// A new batch, complete (written or dropped) once [`Reading::done`]
    /// is called and each request counted in is answered.
    pub(crate) fn start(&self) -> Reading<'_> {
        let mut state = self.lock();
        let key = state.next;
        state.next += 1;
        // One more than its requests until it is read whole.
        state.batches.insert(key, Batch { left: 1, answers: Vec::new() });
        Reading { batches: self, key }
    }

    /// `answer` to the request `id`: `Err(answer)` when it is not a
    /// batch's, to write as it is; `Ok(Some(line))` when it completes its
    /// batch; `Ok(None)` when it is held for its batch.
    pub(crate) fn answered(&self, id: &RequestId, answer: Vec<u8>) -> Result<Option<Vec<u8>>, Vec<u8>> {
        let mut state = self.lock();
        let Some(key) = state.waiting.remove(id) else {
            return Err(answer);
        };
        Ok(state.settle(key, Some(answer)))
    }

    /// The request `id` was cancelled: it will not be answered (rmcp sends
    /// nothing for it). Its batch's line, if that completes it.
    pub(crate) fn cancelled(&self, id: &RequestId) -> Option<Vec<u8>> {
        let mut state = self.lock();
        let key = state.waiting.remove(id)?;
        state.settle(key, None)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is whole after every step: a panic elsewhere leaves it usable.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// One of batch `key`'s requests settled, with `answer` or none: the
    /// batch's line once none is left.
    fn settle(&mut self, key: u64, answer: Option<Vec<u8>>) -> Option<Vec<u8>> {
        let batch = self.batches.get_mut(&key)?;
        batch.answers.extend(answer);
        batch.left -= 1;
        if batch.left > 0 {
            return None;
        }
        let batch = self.batches.remove(&key)?;
        (!batch.answers.is_empty()).then(|| array(batch.answers))
    }
}

impl Reading<'_> {
    /// Count in the request `id`, to be answered by rmcp.
    pub(crate) fn request(&self, id: RequestId) {
        let mut state = self.batches.lock();
        if let Some(batch) = state.batches.get_mut(&self.key) {
            batch.left += 1;
        }
        state.waiting.insert(id, self.key);
    }

    /// An answer of the server's own (an error for a message it cannot read).
    pub(crate) fn answer(&self, answer: Vec<u8>) {
        if let Some(batch) = self.batches.lock().batches.get_mut(&self.key) {
            batch.answers.push(answer);
        }
    }

    /// The batch is read whole: its line, if its requests are all answered.
    pub(crate) fn done(self) -> Option<Vec<u8>> {
        self.batches.lock().settle(self.key, None)
    }
}

/// Answers as one JSON array.
fn array(answers: Vec<Vec<u8>>) -> Vec<u8> {
    let mut line = vec![b'['];
    for (n, answer) in answers.into_iter().enumerate() {
        if n > 0 {
            line.push(b',');
        }
        line.extend(answer);
    }
    line.push(b']');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_written_once_its_last_request_is_answered() {
        let batches = Batches::default();
        let reading = batches.start();
        reading.request(RequestId::Number(1));
        reading.request(RequestId::Number(2));
        reading.answer(b"{\"e\":0}".to_vec());
        assert_eq!(reading.done(), None);
        assert_eq!(batches.answered(&RequestId::Number(2), b"{\"r\":2}".to_vec()), Ok(None));
        assert_eq!(batches.answered(&RequestId::Number(3), b"x".to_vec()), Err(b"x".to_vec()));
        let line = batches.answered(&RequestId::Number(1), b"{\"r\":1}".to_vec());
        assert_eq!(line, Ok(Some(br#"[{"e":0},{"r":2},{"r":1}]"#.to_vec())));
    }

    #[test]
    fn a_batch_without_answers_writes_nothing() {
        let batches = Batches::default();
        assert_eq!(batches.start().done(), None);
        let reading = batches.start();
        reading.request(RequestId::Number(1));
        assert_eq!(reading.done(), None);
        assert_eq!(batches.cancelled(&RequestId::Number(1)), None);
        assert!(batches.lock().batches.is_empty());
    }
}
