//! Resuming a call's event stream (a GET with `Last-Event-ID`, protocol
//! versions 2025-03-26 to 2025-11-25: "Resumability and Redelivery",
//! <https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#resumability-and-redelivery>;
//! 2026-07-28 has no resumption, and rmcp answers its GET with 405).
//!
//! rmcp's session keeps the last 16 events of a call's stream, replays
//! them from the named event on (sending that one again), and forgets the
//! whole stream the moment the answer is sent: a client that lost its
//! connection then gets an empty stream, which the Python SDK reads as
//! "reconnect" for ever. So each call's stream is read here, by a task of
//! its own whatever its client does, into a log kept for [`KEPT_FOR`]
//! after the answer; a resumption gets the events strictly after the one
//! it names, then those still to come. One that cannot be served (the
//! events are gone, or never were) is refused with 400 and a JSON-RPC
//! error before rmcp sees it, since rmcp would turn the refusal into an
//! empty 200.
//!
//! (rmcp's own event store would do the keeping, but it also stops
//! cancelling a 2026-07-28 call whose client closed its stream, which that
//! version requires.)
//!
//! The session's own stream (a GET without `Last-Event-ID`, event ids
//! without a `/`) is still resumed by rmcp, from its last 16 events; its
//! first event there is `0`, the same id as the priming event before it,
//! so its ids are shifted by one here: `0` is "before any event", `n` the
//! event rmcp numbers `n - 1`, and resuming after `n` asks rmcp for its
//! events from `n` on, strictly after.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use tokio::sync::{mpsc, watch};

use super::unreadable::json_rpc_error;

/// The events of a stream kept (its newest): enough for a call's progress
/// between a lost connection and the client's return.
const KEPT_EVENTS: usize = 256;
/// How long a call's events are kept after its answer (rmcp's own default
/// for the streams it does keep, `SessionConfig::DEFAULT_COMPLETED_CACHE_TTL`).
pub(super) const KEPT_FOR: Duration = Duration::from_secs(60);
/// The ended streams kept, at most (the oldest go first).
const KEPT_ENDED: usize = 256;

/// rmcp's session manager, with each call's stream kept to be resumed.
pub(super) struct Resumable {
    inner: Arc<LocalSessionManager>,
    calls: Arc<Mutex<Calls>>,
}

impl Resumable {
    pub(super) fn new(inner: Arc<LocalSessionManager>) -> Self {
        Self { inner, calls: Arc::default() }
    }

    /// What keeps the calls' streams, for [`refuse_lost`].
    pub(super) fn kept(&self) -> Kept {
        Kept { calls: Arc::clone(&self.calls), manager: Arc::clone(&self.inner) }
    }
}

/// A call's stream: its session, and rmcp's number for its POST.
type Key = (SessionId, u64);

#[derive(Default)]
struct Calls {
    streams: HashMap<Key, watch::Sender<Log>>,
}

impl Calls {
    /// Forget the streams ended more than [`KEPT_FOR`] ago, and the oldest
    /// ended ones past [`KEPT_ENDED`].
    fn evict(&mut self) {
        self.streams.retain(|_, log| log.borrow().ended.is_none_or(|at| at.elapsed() < KEPT_FOR));
        let mut ended: Vec<(Instant, Key)> = self
            .streams
            .iter()
            .filter_map(|(key, log)| log.borrow().ended.map(|at| (at, key.clone())))
            .collect();
        if ended.len() > KEPT_ENDED {
            ended.sort_unstable_by_key(|(at, _)| *at);
            for (_, key) in &ended[..ended.len() - KEPT_ENDED] {
                self.streams.remove(key);
            }
        }
    }
}

fn lock(calls: &Mutex<Calls>) -> MutexGuard<'_, Calls> {
    // A map of channels: nothing is left half-done by a panic.
    calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One stream's newest events, by rmcp's index (`<index>/<POST number>`).
#[derive(Default)]
struct Log {
    events: VecDeque<(usize, ServerSseMessage)>,
    /// The index the next event takes.
    next: usize,
    /// When the stream ended (its answer sent, or the call cancelled).
    ended: Option<Instant>,
}

impl Log {
    fn push(&mut self, index: usize, event: ServerSseMessage) {
        if self.events.len() == KEPT_EVENTS {
            self.events.pop_front();
        }
        self.events.push_back((index, event));
        self.next = index + 1;
    }

    /// Whether every event from `from` on is still here (or yet to come).
    fn holds_from(&self, from: usize) -> bool {
        from <= self.next && self.events.front().is_none_or(|(first, _)| *first <= from)
    }
}

/// An event id of a call's stream: `<index>/<POST number>`.
fn parse(event_id: &str) -> Option<(usize, u64)> {
    let (index, post) = event_id.split_once('/')?;
    Some((index.parse().ok()?, post.parse().ok()?))
}

/// An event of the session's own stream, its id one past rmcp's (see the
/// module's doc).
fn shifted(mut event: ServerSseMessage) -> ServerSseMessage {
    if let Some(index) = event.event_id.as_deref().and_then(|id| id.parse::<usize>().ok()) {
        event.event_id = Some((index + 1).to_string());
    }
    event
}

/// The events of `log` from index `from` on, as they come, until the
/// stream ends, its reader leaves, or it falls so far behind that events
/// it has not had are no longer kept (it ends then, and resuming after
/// its last event is refused: nothing is skipped without a word).
fn follow(
    mut log: watch::Receiver<Log>,
    mut from: usize,
) -> impl Stream<Item = ServerSseMessage> + Send + Sync {
    let (events, mut read) = mpsc::channel(16);
    tokio::spawn(async move {
        loop {
            let (batch, ended) = {
                let log = log.borrow_and_update();
                if !log.holds_from(from) {
                    return;
                }
                let batch: Vec<_> = log.events.iter().filter(|(index, _)| *index >= from).cloned().collect();
                (batch, log.ended.is_some())
            };
            for (index, event) in batch {
                if events.send(event).await.is_err() {
                    return;
                }
                from = index + 1;
            }
            if ended {
                return;
            }
            tokio::select! {
                changed = log.changed() => if changed.is_err() { return },
                () = events.closed() => return,
            }
        }
    });
    futures::stream::poll_fn(move |cx| read.poll_recv(cx))
}

impl SessionManager for Resumable {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.calls).streams.retain(|(session, _), _| session != id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let events = self.inner.create_stream(id, message).await?;
        let log = watch::Sender::new(Log::default());
        let answer = follow(log.subscribe(), 0);
        let (calls, session) = (Arc::clone(&self.calls), id.clone());
        // Read to its end whether or not its client still listens: rmcp
        // drops what it cannot send.
        tokio::spawn(async move {
            let mut events = std::pin::pin!(events);
            let mut kept = false;
            while let Some(event) = events.next().await {
                let Some((index, post)) = event.event_id.as_deref().and_then(parse) else {
                    // rmcp numbers every event of a call's stream.
                    let next = log.borrow().next;
                    log.send_modify(|log| log.push(next, event));
                    continue;
                };
                if !kept {
                    kept = true;
                    let mut calls = lock(&calls);
                    calls.evict();
                    calls.streams.insert((session.clone(), post), log.clone());
                }
                log.send_modify(|log| log.push(index, event));
            }
            log.send_modify(|log| log.ended = Some(Instant::now()));
        });
        Ok(answer)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?.map(shifted))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let Some((index, post)) = parse(&last_event_id) else {
            return Ok(self.inner.resume(id, last_event_id).await?.map(shifted).right_stream());
        };
        match self.kept().log(id, index, post) {
            Some(log) => Ok(follow(log, index + 1).left_stream()),
            // `refuse_lost` has answered this already, unless the events
            // went in between: rmcp turns this into an empty stream.
            None => Err(SessionError::InvalidEventId.into()),
        }
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }
}

/// The calls' streams, as the middleware sees them.
#[derive(Clone)]
pub(super) struct Kept {
    calls: Arc<Mutex<Calls>>,
    manager: Arc<LocalSessionManager>,
}

impl Kept {
    /// The log of `session`'s call numbered `post`, if it holds every event
    /// after `index`, which it sent.
    fn log(&self, session: &SessionId, index: usize, post: u64) -> Option<watch::Receiver<Log>> {
        let mut calls = lock(&self.calls);
        calls.evict();
        let log = calls.streams.get(&(session.clone(), post))?;
        let holds = index < log.borrow().next && log.borrow().holds_from(index + 1);
        holds.then(|| log.subscribe())
    }
}

/// A GET resuming a call's stream that cannot be resumed, or after an id
/// no event has: 400 and a JSON-RPC error saying why, rather than rmcp's
/// empty 200, which a client reads as "reconnect".
pub(super) async fn refuse_lost(State(kept): State<Kept>, request: Request, next: Next) -> Response {
    let asked = {
        let header = |name: &str| request.headers().get(name).and_then(|value| value.to_str().ok());
        let modern = header("mcp-protocol-version").is_some_and(|version| version >= "2026-07-28");
        match (header("mcp-session-id"), header("last-event-id")) {
            (Some(session), Some(last)) if request.method() == Method::GET && !modern => {
                Some((SessionId::from(session), last.to_owned()))
            }
            _ => None,
        }
    };
    // A session that is not there is rmcp's to answer (404).
    if let Some((session, last)) = asked
        && kept.manager.sessions.read().await.contains_key(&session)
    {
        let why = match parse(&last) {
            Some((index, post)) if kept.log(&session, index, post).is_none() => format!(
                "this session sent no such event, or its call ended more than {} s ago and its \
                 events are no longer kept",
                KEPT_FOR.as_secs()
            ),
            // The session's own stream: rmcp's to resume.
            None if last.parse::<usize>().is_err() => {
                "no event of this server has such an id (`<n>` or `<n>/<m>`)".to_owned()
            }
            _ => return next.run(request).await,
        };
        let message = format!("cannot resume after event `{last}`: {why}");
        return json_rpc_error(StatusCode::BAD_REQUEST, -32000, &message);
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(index: usize) -> ServerSseMessage {
        ServerSseMessage::priming(format!("{index}/0"), Duration::from_secs(3))
    }

    #[test]
    fn a_log_keeps_its_newest_events_and_says_when_older_ones_are_gone() {
        let mut log = Log::default();
        for index in 0..KEPT_EVENTS + 10 {
            log.push(index, event(index));
        }
        assert_eq!(log.events.len(), KEPT_EVENTS);
        // Resuming after event 9 needs 10 on: kept. After 8 needs 9: gone.
        assert!(log.holds_from(10));
        assert!(!log.holds_from(9));
        // After the last event: nothing yet, and that is fine; past it: never sent.
        assert!(log.holds_from(KEPT_EVENTS + 10));
        assert!(!log.holds_from(KEPT_EVENTS + 11));
    }

    #[test]
    fn ended_streams_are_kept_up_to_their_number_the_oldest_going_first() {
        let mut calls = Calls::default();
        let start = Instant::now();
        for post in 0..(KEPT_ENDED + 5) as u64 {
            let log = watch::Sender::new(Log::default());
            // Ended in the order of their numbers, a moment apart.
            let ended = start + Duration::from_millis(post);
            log.send_modify(|log| log.ended = Some(ended));
            calls.streams.insert((SessionId::from("s"), post), log);
        }
        let running = watch::Sender::new(Log::default());
        calls.streams.insert((SessionId::from("s"), 1_000), running);
        calls.evict();
        assert_eq!(calls.streams.len(), KEPT_ENDED + 1);
        for post in 0..5 {
            assert!(!calls.streams.contains_key(&(SessionId::from("s"), post)), "{post} kept");
        }
        assert!(calls.streams.contains_key(&(SessionId::from("s"), 1_000)), "a running stream is kept");
    }

    #[test]
    fn only_a_calls_event_ids_are_read_as_one() {
        assert_eq!(parse("3/7"), Some((3, 7)));
        assert_eq!(parse("3"), None);
        assert_eq!(parse("a/7"), None);
        assert_eq!(parse("3/-1"), None);
    }
}
