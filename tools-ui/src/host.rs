//! What the useChat and AG-UI servers share: the agent, the store its
//! conversations live in, the auth hook, the body limit, the inline size
//! of images and files, and the runs going now, each with the frames it
//! sent so far (and the files they link to, until the run is stored); one way to read a
//! request's user and body, and one way to run a conversation's run in a
//! task of its own and forward its frames.
//!
//! **A slow reader.** A run's frames are kept once, in its [`Live`] (for a
//! page that reattaches), and each listener (a response being sent) reads
//! them from there at its own pace, with nothing queued for it: a page that
//! stops reading costs the server no more than the run's own frames, which
//! it keeps anyway, and holds up nothing (the run goes on to its end, which
//! is kept in the store). The frames are freed when the run has ended and
//! its last reader is done.
//!
//! **Any replica.** Each run's frames also go to the store, a few at a
//! time ([`SessionStore::write_frames`]), so that a page that reloads on
//! another server sharing the store reads the same stream there
//! ([`Host::follow`]), chunk for chunk; a run whose server died is noticed
//! when its lease lapses, and such a stream ends with the protocol's
//! error.
//!
//! **Keep-alive.** The responses go through axum's [`Sse`] with a
//! [`KeepAlive`]: a comment frame (`:`) every [`KEEP_ALIVE`] while no frame
//! comes (a tool call that runs long), so proxies and browsers do not take
//! the connection for dead.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::body::{Bytes, to_bytes};
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use toolcall_agent::{Agent, AgentEvent, Runner};
use toolcall_core::{CancellationToken, Media, ToolResult};
use toolcall_session::{ConversationKey, Frame, MemoryStore, Session, SessionRun, SessionStore, StoreError};

use crate::{ANONYMOUS, Auth};

/// The largest request body taken by default: 4 MiB.
const MAX_BODY: usize = 4 << 20;

/// The default interval between keep-alive comments while no frame comes.
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long frames wait to be written to the store with those that follow.
const BATCH: Duration = Duration::from_millis(20);

/// How often a reader in another process looks for new frames.
const POLL: Duration = Duration::from_millis(50);

/// How often such a reader checks that the run still holds its
/// conversation, and how long it waits for the last frames after it let
/// go (they are written after its end is kept).
const CHECK: Duration = Duration::from_secs(1);
const GRACE: Duration = Duration::from_secs(2);

/// A refusal before the stream: status and a plain-text reason.
pub(crate) type Refusal = (StatusCode, String);

pub(crate) fn refuse(status: StatusCode, reason: impl Into<String>) -> Refusal {
    (status, reason.into())
}

/// An agent, where its conversations live, and who asks.
#[derive(Clone)]
pub(crate) struct Host {
    pub(crate) agent: Agent,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) auth: Option<Auth>,
    pub(crate) max_body: usize,
    /// The most bytes of an image or file sent in the stream itself.
    pub(crate) max_inline: usize,
    /// The interval between keep-alive comments while no frame comes.
    pub(crate) keep_alive: Duration,
    /// Where the runs are made, if not here.
    pub(crate) runner: Option<Arc<dyn Runner>>,
    /// The conversations with a run going now.
    live: Arc<Mutex<HashMap<ConversationKey, Arc<Live>>>>,
}

impl Host {
    /// The agent's conversations in a [`MemoryStore`] of 1,000, every
    /// request the same user.
    pub(crate) fn new(agent: Agent) -> Self {
        Self {
            agent,
            store: Arc::new(MemoryStore::default()),
            auth: None,
            max_body: MAX_BODY,
            max_inline: crate::UiAdapter::MAX_INLINE_BYTES,
            keep_alive: KEEP_ALIVE,
            runner: None,
            live: Arc::default(),
        }
    }

    fn runs(&self) -> MutexGuard<'_, HashMap<ConversationKey, Arc<Live>>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many runs are going now.
    pub(crate) fn running(&self) -> usize {
        self.runs().len()
    }

    /// The run going in the conversation, if one is.
    pub(crate) fn live(&self, key: &ConversationKey) -> Option<Arc<Live>> {
        self.runs().get(key).cloned()
    }

    /// Take the conversation for a run, before anything is read, so two
    /// requests at once cannot both start one; `None` when one is going.
    pub(crate) fn take(&self, key: &ConversationKey) -> Option<Arc<Live>> {
        let mut runs = self.runs();
        if runs.contains_key(key) {
            return None;
        }
        let live = Arc::new(Live::default());
        runs.insert(key.clone(), live.clone());
        Some(live)
    }

    /// Give the conversation back: its run did not start, or ended.
    pub(crate) fn release(&self, key: &ConversationKey) {
        self.runs().remove(key);
    }

    /// The conversation's session; with the runner, if runs are made
    /// elsewhere, so that the end of a run this server lost (it died while
    /// the run went there) is learned from it.
    pub(crate) fn session(&self, key: ConversationKey) -> Session {
        let session = Session::new(self.store.clone(), key);
        match &self.runner {
            Some(runner) => session.with_runner(runner.clone()),
            None => session,
        }
    }

    /// The ids of the calls the conversation holds for approval.
    pub(crate) async fn pending(&self, key: ConversationKey) -> Result<Vec<String>, StoreError> {
        let state = self.session(key).paused().await?;
        Ok(state
            .map(|state| state.pending().iter().map(toolcall_agent::Pending::id).collect())
            .unwrap_or_default())
    }

    /// The request's user, from the auth hook (or [`ANONYMOUS`]), or the
    /// hook's refusal.
    pub(crate) async fn user(&self, parts: &Parts) -> Result<String, Response> {
        match &self.auth {
            Some(auth) => auth(parts).await,
            None => Ok(ANONYMOUS.to_owned()),
        }
    }

    /// A request's user and its body (refused with 413 past the limit).
    pub(crate) async fn read(&self, request: Request) -> Result<(String, Bytes), Response> {
        let (parts, body) = request.into_parts();
        let user = self.user(&parts).await?;
        let max = self.max_body;
        let body = to_bytes(body, max).await.map_err(|_| {
            refuse(StatusCode::PAYLOAD_TOO_LARGE, format!("the request body is over {max} bytes"))
                .into_response()
        })?;
        Ok((user, body))
    }

    /// The SSE response of a listener's frames, with these headers too,
    /// and a keep-alive comment every [`Host::keep_alive`] while no frame
    /// comes; it ends when the run ends, or when the listener is dropped.
    pub(crate) fn sse(
        &self,
        frames: BoxStream<'static, Bytes>,
        headers: &[(&'static str, &'static str)],
    ) -> Response {
        let events = frames.map(|frame| Ok::<_, Infallible>(event(&frame)));
        let mut response =
            Sse::new(events).keep_alive(KeepAlive::new().interval(self.keep_alive)).into_response();
        for (name, value) in headers {
            response.headers_mut().insert(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        response
    }

    /// Run `run` in a task of its own, to its end even if the client
    /// leaves, its events rendered into frames by `render`; the frames go
    /// to `live` (and whoever listens there), and the conversation is free
    /// again once the run's end is kept, before that end is rendered.
    pub(crate) fn spawn<F, S>(&self, key: ConversationKey, live: Arc<Live>, run: SessionRun, render: F)
    where
        F: FnOnce(BoxStream<'static, AgentEvent>) -> S + Send + 'static,
        S: Stream<Item = String> + Send + 'static,
    {
        live.state().stop = Some(run.cancellation().clone());
        let kept = write_frames(self.store.clone(), key.clone(), run.id().to_owned());
        let run = match &self.runner {
            Some(runner) => run.with_runner(runner.clone()),
            None => run,
        };
        let host = self.clone();
        tokio::spawn(async move {
            let events = run.stream().inspect(move |event| {
                if matches!(event, AgentEvent::Finished(_)) {
                    host.release(&key);
                }
            });
            let mut frames = std::pin::pin!(render(events.boxed()));
            while let Some(frame) = frames.next().await {
                let _ = kept.unbounded_send(Frame::Data(frame.clone()));
                live.push(Bytes::from(frame));
            }
            let _ = kept.unbounded_send(Frame::End);
            live.end();
        });
    }

    /// The frames of the run `run` of the conversation, made in another
    /// process, read from the store from the first as they are written,
    /// until the last; `cut` ends them if the run stops without its end
    /// (its server died, and its lease lapsed).
    pub(crate) fn follow(
        &self,
        key: ConversationKey,
        run: String,
        cut: Vec<Bytes>,
    ) -> BoxStream<'static, Bytes> {
        let now = Instant::now();
        let state = Follow {
            store: self.store.clone(),
            key,
            run,
            next: 0,
            ready: VecDeque::new(),
            checked: now,
            gone: None,
            done: false,
            cut,
        };
        futures::stream::unfold(state, |mut follow| async move {
            let frame = follow.next().await?;
            Some((frame, follow))
        })
        .boxed()
    }
}

/// The frames a run sends, written to the store a few at a time in a task
/// of their own (the run never waits on the store for them), until the end.
fn write_frames(
    store: Arc<dyn SessionStore>,
    key: ConversationKey,
    run: String,
) -> futures::channel::mpsc::UnboundedSender<Frame> {
    let (frames, mut received) = futures::channel::mpsc::unbounded::<Frame>();
    tokio::spawn(async move {
        let mut next = 0u64;
        while let Some(first) = received.next().await {
            // One write for the frames that come meanwhile.
            tokio::time::sleep(BATCH).await;
            let mut batch = vec![first];
            while let Ok(frame) = received.try_recv() {
                batch.push(frame);
            }
            let (count, ended) = (batch.len() as u64, batch.last() == Some(&Frame::End));
            if let Err(error) = store.write_frames(&key, &run, next, batch).await {
                tracing::warn!(target: "toolcall_ui", key = %key, %error, "a run's frames could not be kept for other servers");
            }
            next += count;
            if ended {
                return;
            }
        }
    });
    frames
}

/// A reader of a run's frames in the store ([`Host::follow`]).
struct Follow {
    store: Arc<dyn SessionStore>,
    key: ConversationKey,
    run: String,
    /// The number of the next frame to read.
    next: u64,
    /// Frames read and not yet given.
    ready: VecDeque<Bytes>,
    /// When the run's hold on the conversation was last checked.
    checked: Instant,
    /// Since when the run no longer holds it, if it does not.
    gone: Option<Instant>,
    /// No frame comes after those ready.
    done: bool,
    /// The frames that end a stream cut off.
    cut: Vec<Bytes>,
}

impl Follow {
    /// The next frame, or `None` after the last.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(frame) = self.ready.pop_front() {
                return Some(frame);
            }
            if self.done {
                return None;
            }
            match self.store.read_frames(&self.key, &self.run, self.next).await {
                Ok(frames) if !frames.is_empty() => {
                    for frame in frames {
                        self.next += 1;
                        match frame {
                            Frame::Data(text) => self.ready.push_back(Bytes::from(text)),
                            Frame::End => {
                                self.done = true;
                                break;
                            }
                        }
                    }
                    continue;
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(target: "toolcall_ui", key = %self.key, %error, "a run's frames could not be read")
                }
            }
            if self.gone.is_none() && self.checked.elapsed() >= CHECK {
                self.checked = Instant::now();
                if let Ok(conversation) = self.store.load(&self.key).await {
                    let holds = conversation
                        .as_ref()
                        .and_then(|c| c.running())
                        .is_some_and(|lease| lease.run == self.run);
                    if !holds {
                        self.gone = Some(Instant::now());
                    }
                }
            }
            if self.gone.is_some_and(|since| since.elapsed() >= GRACE) {
                self.ready.extend(std::mem::take(&mut self.cut));
                self.done = true;
                continue;
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// One run going: the frames it sent so far, and a wake-up for those
/// who read them.
#[derive(Default)]
pub(crate) struct Live {
    state: Mutex<LiveState>,
    arrived: tokio::sync::Notify,
}

#[derive(Default)]
pub(crate) struct LiveState {
    frames: Vec<Bytes>,
    ended: bool,
    /// Cancels the run alone (the agent's other runs go on).
    pub(crate) stop: Option<CancellationToken>,
    /// The files of the run's results that its stream links to, by file
    /// id, until the run's messages are stored (see `files`).
    files: HashMap<String, Media>,
}

impl Live {
    pub(crate) fn state(&self) -> MutexGuard<'_, LiveState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every frame from the first, then each as it comes, until the run
    /// ends; read at the reader's pace from the frames kept.
    pub(crate) fn listen(self: &Arc<Self>) -> BoxStream<'static, Bytes> {
        futures::stream::unfold((self.clone(), 0), |(live, next)| async move {
            loop {
                // `Some(frame)` to send, `None` at the end; waits meanwhile.
                let read = {
                    // Registered before the look, so a frame pushed between
                    // the look and the wait still wakes it.
                    let arrived = live.arrived.notified();
                    let mut arrived = std::pin::pin!(arrived);
                    arrived.as_mut().enable();
                    let (frame, ended) = {
                        let state = live.state();
                        (state.frames.get(next).cloned(), state.ended)
                    };
                    match frame {
                        Some(frame) => Some(Some(frame)),
                        None if ended => Some(None),
                        None => {
                            arrived.await;
                            None
                        }
                    }
                };
                match read {
                    Some(Some(frame)) => return Some((frame, (live, next + 1))),
                    Some(None) => return None,
                    None => {}
                }
            }
        })
        .boxed()
    }

    /// Keep the images and files of `result` that its stream links to
    /// rather than sends (over `max_inline` bytes), until the run ends.
    pub(crate) fn keep_files(&self, result: &ToolResult, max_inline: usize) {
        let served: Vec<(String, Media)> =
            crate::files::served(result, max_inline).map(|(id, media)| (id, media.clone())).collect();
        if !served.is_empty() {
            self.state().files.extend(served);
        }
    }

    /// A file the run's stream linked to, by its id.
    pub(crate) fn file(&self, id: &str) -> Option<Media> {
        self.state().files.get(id).cloned()
    }

    fn push(&self, frame: Bytes) {
        self.state().frames.push(frame);
        self.arrived.notify_waiters();
    }

    fn end(&self) {
        self.state().ended = true;
        self.arrived.notify_waiters();
    }
}

/// A pre-formatted SSE frame (`data: ...` lines, a blank line) as an
/// [`Event`] that writes the same bytes: each `data:` line's value (one
/// leading space dropped, as SSE readers do) joined by newlines, which
/// [`Event::data`] writes back as `data: ` lines; `:` lines as comments,
/// `event:` and `id:` as those fields.
fn event(frame: &[u8]) -> Event {
    let text = String::from_utf8_lossy(frame);
    let mut event = Event::default();
    let mut data: Option<String> = None;
    for line in text.lines().filter(|line| !line.is_empty()) {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match name {
            "" => event = event.comment(value),
            "data" => match &mut data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => data = Some(value.to_owned()),
            },
            "event" => event = event.event(value),
            "id" => event = event.id(value),
            _ => tracing::debug!(line, "an SSE line that is not data, comment, event or id: left out"),
        }
    }
    match data {
        Some(data) => event.data(data),
        None => event,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(frame: &str) -> String {
        let body = Sse::new(futures::stream::iter([Ok::<_, Infallible>(event(frame.as_bytes()))]));
        let response = body.into_response();
        let bytes = futures::executor::block_on(to_bytes(response.into_body(), usize::MAX)).unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn a_frame_is_written_as_it_came() {
        for frame in [
            "data: {\"type\":\"start\"}\n\n",
            "data: [DONE]\n\n",
            "data: one\ndata: two\n\n",
            "data:  two spaces\n\n",
            ": a comment\ndata: x\n\n",
        ] {
            assert_eq!(written(frame), frame);
        }
    }

    #[test]
    fn each_reader_reads_every_frame_at_its_own_pace() {
        let live = Arc::new(Live::default());
        let slow = live.listen();
        let mut fast = live.listen();
        for n in 0..1_000 {
            live.push(Bytes::from(format!("data: {n}\n\n")));
            // The fast one reads as frames come.
            let frame = futures::executor::block_on(fast.next()).unwrap();
            assert_eq!(frame, Bytes::from(format!("data: {n}\n\n")));
        }
        // One that comes later starts from the first frame too.
        let late = live.listen();
        live.end();
        assert_eq!(futures::executor::block_on(fast.next()), None);
        for reader in [slow, late] {
            let read = futures::executor::block_on(reader.collect::<Vec<_>>());
            assert_eq!(read.len(), 1_000);
            assert_eq!(read[999], Bytes::from("data: 999\n\n"));
        }
    }
}
