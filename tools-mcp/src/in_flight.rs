//! The ids of a client's requests being answered. rmcp keeps one answer
//! per id (on stdio and in an HTTP session alike): a second request with
//! the id of one still in flight would take the first one's place, and
//! one of the two answers would be lost, its call run for nothing. The
//! second is refused with an error of its own instead (`wire::duplicate`),
//! before rmcp sees it.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;

use tokio::sync::watch;

/// The keys in flight, shared by the side that reads requests and the
/// side that sends their answers (and, on stdio, the end of the input,
/// which waits for them to be answered).
#[derive(Debug)]
pub(crate) struct InFlight<K>(Arc<watch::Sender<HashSet<K>>>);

impl<K> Clone for InFlight<K> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<K> Default for InFlight<K> {
    fn default() -> Self {
        Self(Arc::default())
    }
}

impl<K: Eq + Hash + Clone> InFlight<K> {
    /// Count `key` in; false if it already was.
    pub(crate) fn enter(&self, key: K) -> bool {
        self.0.send_if_modified(|keys| keys.insert(key))
    }

    /// Count `key` out: its answer is on its way, or it was cancelled.
    pub(crate) fn leave(&self, key: &K) {
        self.0.send_if_modified(|keys| keys.remove(key));
    }

    /// Resolves once no key is in flight.
    pub(crate) async fn emptied(&self) {
        // The sender is `self.0`: waiting on it cannot fail.
        let _ = self.0.subscribe().wait_for(HashSet::is_empty).await;
    }

    /// `key`, counted in until the guard drops; `None` if it already was.
    pub(crate) fn guard(&self, key: K) -> Option<Guard<K>> {
        self.enter(key.clone()).then(|| Guard { in_flight: self.clone(), key })
    }
}

/// A key counted in while it lives.
pub(crate) struct Guard<K: Eq + Hash + Clone> {
    in_flight: InFlight<K>,
    key: K,
}

impl<K: Eq + Hash + Clone> Drop for Guard<K> {
    fn drop(&mut self) {
        self.in_flight.leave(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::InFlight;

    #[test]
    fn a_key_is_in_once_until_it_leaves() {
        let in_flight = InFlight::default();
        assert!(in_flight.enter(1));
        assert!(!in_flight.enter(1));
        in_flight.leave(&1);
        let guard = in_flight.guard(1).expect("free again");
        assert!(in_flight.guard(1).is_none());
        drop(guard);
        assert!(in_flight.enter(1));
    }
}
