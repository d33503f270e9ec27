//! The connections being served, and which of them is doing nothing: when
//! every slot is taken and another client is waiting, the connection idle
//! the longest is closed to make room, instead of every client waiting for
//! some connection's read timeout.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Instant;

use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The connections served, by a number of their own.
#[derive(Debug, Default)]
pub(crate) struct Connections {
    table: Mutex<Table>,
    /// Told each time a connection has nothing left to do.
    went_idle: Notify,
}

#[derive(Debug, Default)]
struct Table {
    next: u64,
    entries: HashMap<u64, Entry>,
}

#[derive(Debug)]
struct Entry {
    /// Requests being answered: from the request's head until its response
    /// body is written or dropped. An open event stream stays busy.
    busy: usize,
    /// Whether it has had a request: the end of its last answer may still
    /// be in hyper's write buffer when it goes idle.
    used: bool,
    /// When it last had nothing to do (accepted, or its last answer sent).
    idle_since: Instant,
    /// Cancelled to close it: at once if it never had a request, else once
    /// its request in progress, if any, is answered.
    close: CancellationToken,
    /// Closed to make room: it is going, and frees a slot soon.
    evicted: bool,
}

/// How a connection asked to close goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Closing {
    /// It never had a request: nothing is written on it, drop it at once
    /// (hyper's graceful shutdown would wait, for the read timeout, for
    /// the head a client has begun to send a byte at a time).
    AtOnce,
    /// It has had one: let hyper answer the request in progress, if any,
    /// and write the end of its last answer, then close.
    Gracefully,
}

/// One connection, counted from its accepting until it is dropped.
#[derive(Debug)]
pub(crate) struct Connection {
    id: u64,
    connections: Arc<Connections>,
}

/// One request being answered on a connection, until it is dropped.
#[derive(Debug)]
pub(crate) struct Busy {
    id: u64,
    connections: Arc<Connections>,
}

impl Connections {
    fn table(&self) -> MutexGuard<'_, Table> {
        // The table holds counts and tokens only: a panic elsewhere while it
        // was held leaves nothing half-done in it.
        self.table.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Count a new connection, which `close` asks to close.
    pub(crate) fn add(self: &Arc<Self>, close: CancellationToken) -> Connection {
        let mut table = self.table();
        let id = table.next;
        table.next += 1;
        let entry = Entry { busy: 0, used: false, idle_since: Instant::now(), close, evicted: false };
        table.entries.insert(id, entry);
        Connection { id, connections: Arc::clone(self) }
    }

    /// Close the connection idle the longest, unless one closed for room is
    /// still going. Nothing happens while every connection is busy: the
    /// caller waits for [`Self::went_idle`] and asks again.
    pub(crate) fn make_room(&self) {
        let mut table = self.table();
        if table.entries.values().any(|entry| entry.evicted) {
            return;
        }
        let idlest =
            table.entries.values_mut().filter(|entry| entry.busy == 0).min_by_key(|entry| entry.idle_since);
        if let Some(entry) = idlest {
            entry.evicted = true;
            entry.close.cancel();
        }
    }

    /// Resolves when some connection has gone idle since the last call (or
    /// at once, if one has and nobody was waiting).
    pub(crate) async fn went_idle(&self) {
        self.went_idle.notified().await;
    }
}

impl Connection {
    /// Count a request on this connection until the returned guard is dropped.
    pub(crate) fn busy(&self) -> Busy {
        if let Some(entry) = self.connections.table().entries.get_mut(&self.id) {
            entry.busy += 1;
            entry.used = true;
        }
        Busy { id: self.id, connections: Arc::clone(&self.connections) }
    }

    /// How it goes now that it is asked to close.
    pub(crate) fn closing(&self) -> Closing {
        match self.connections.table().entries.get(&self.id) {
            Some(entry) if entry.used => Closing::Gracefully,
            _ => Closing::AtOnce,
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.connections.table().entries.remove(&self.id);
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let idle = match self.connections.table().entries.get_mut(&self.id) {
            Some(entry) => {
                entry.busy = entry.busy.saturating_sub(1);
                if entry.busy == 0 {
                    entry.idle_since = Instant::now();
                }
                entry.busy == 0
            }
            None => false,
        };
        if idle {
            self.connections.went_idle.notify_one();
        }
    }
}

/// A response body that keeps its request counted as busy until it is
/// written or dropped.
pub(crate) struct Tracked<B> {
    pub(crate) body: B,
    pub(crate) _busy: Busy,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
