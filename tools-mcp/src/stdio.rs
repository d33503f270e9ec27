//! Newline-delimited JSON-RPC on stdio, as the server's rmcp transport.
//! Unlike rmcp's own, every line that cannot be read gets an answer (see
//! `wire`) and the server reads on, a request with the id of one in flight
//! is refused (see `in_flight`), a batch is read in a 2025-03-26 session
//! (see `batch`), a line is parsed once, and the end of the input (how a
//! client stops its server) lets the calls in flight finish and answer.
//!
//! What the server writes waits in a queue of at most [`QUEUED`] bytes
//! while the client is not reading it, and the server reads no request
//! while the queue is full: a client that sends and never reads fills its
//! own pipe, not the server's memory. rmcp answers each request in a task
//! of its own, so the requests must stop, not only the answers: capped
//! answers alone would wait in those tasks, as many as there are requests.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::channel::mpsc;
use futures::{SinkExt, StreamExt};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::batch::Batches;
use crate::in_flight::InFlight;
use crate::wire;

/// The longest line read, as rmcp's own stdio transport allows.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// Messages read ahead of the server: past it, reading waits.
const READ_AHEAD: usize = 64;
/// The bytes of lines (answers, notifications, errors) waiting for the
/// client to read them; a longer line waits for the queue to empty and is
/// then queued alone.
const QUEUED: usize = 1024 * 1024;

/// How long, once the input has ended, the calls in flight have to answer
/// (as [`HttpOptions::with_shutdown_grace`](crate::HttpOptions::with_shutdown_grace)'s
/// default); rmcp then waits 5 s more for their answers and cancels them.
const GRACE: Duration = Duration::from_secs(10);

/// How long, once the server is done, the client may take no line before
/// the lines left are given up.
const STALL: Duration = Duration::from_secs(1);

/// What the server's writer is sent: a line without its newline.
type Line = Vec<u8>;

/// The lines on their way to the writer, each holding its bytes' room in
/// the queue until it is written.
#[derive(Clone)]
struct Queue {
    lines: mpsc::UnboundedSender<(Line, OwnedSemaphorePermit)>,
    room: Arc<Semaphore>,
}

impl Queue {
    fn new() -> (Self, mpsc::UnboundedReceiver<(Line, OwnedSemaphorePermit)>) {
        let (lines, to_write) = mpsc::unbounded();
        (Self { lines, room: Arc::new(Semaphore::new(QUEUED)) }, to_write)
    }

    /// Queue `line` once there is room for it. Room is given in turn (the
    /// semaphore is fair), so lines are written in the order they came.
    async fn push(&self, line: Line) -> std::io::Result<()> {
        // At most QUEUED (a u32): a longer line takes the whole queue.
        let bytes = (line.len() + 1).min(QUEUED) as u32;
        let room = Arc::clone(&self.room).acquire_many_owned(bytes).await.map_err(|_| closed())?;
        self.lines.unbounded_send((line, room)).map_err(|_| closed())
    }

    /// Resolves once the queue is not full and no line waits for room.
    async fn room(&self) {
        let _ = self.room.acquire().await;
    }
}

/// The writer has stopped: the client closed its end of the output.
fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the server's output is closed")
}

/// The transport rmcp serves on, reading `input` and writing `output`, and
/// the task writing `output`: it ends once rmcp has dropped its side and
/// every line is out.
pub(crate) fn transport(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> (
    (
        impl futures::Sink<ServerJsonRpcMessage, Error = std::io::Error> + Send + Unpin + 'static,
        mpsc::Receiver<ClientJsonRpcMessage>,
    ),
    Writer,
) {
    let (queue, to_write) = Queue::new();
    let (messages, received) = mpsc::channel(READ_AHEAD);
    let in_flight = InFlight::default();
    let batches = Batches::default();
    tokio::spawn(read(input, messages, queue.clone(), in_flight.clone(), batches.clone()));
    let (progress, written) = watch::channel(0);
    let writer = Writer { task: tokio::spawn(write(output, to_write, progress)), written };
    let replies = futures::sink::unfold(queue, move |queue, message: ServerJsonRpcMessage| {
        let answered = match &message {
            JsonRpcMessage::Response(response) => {
                if let ServerResult::InitializeResult(result) = &response.result {
                    batches.negotiated(result.protocol_version.clone());
                }
                Some(response.id.clone())
            }
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let line = serialize(&message);
        // A batch's answers wait for its last, and go as one array.
        let line = match &answered {
            Some(id) => batches.answered(id, line).unwrap_or_else(Some),
            None => Some(line),
        };
        let in_flight = in_flight.clone();
        async move {
            let queued = match line {
                Some(line) => queue.push(line).await,
                None => Ok(()),
            };
            // Counted out once queued, before it is written: a client may
            // reuse the id once it has read the answer. Not before: the end
            // of the input waits for it, and rmcp gives up on answers that
            // wait past its end.
            if let Some(id) = answered {
                in_flight.leave(&id);
            }
            queued?;
            Ok(queue)
        }
    });
    ((Box::pin(replies), received), writer)
}

/// The task writing the server's output, and how many lines it has written.
pub(crate) struct Writer {
    task: tokio::task::JoinHandle<()>,
    written: watch::Receiver<u64>,
}

impl Writer {
    /// Resolves once every line is out, or once the client has taken none
    /// for [`STALL`]: a client reading its last answers slowly gets them
    /// all, and one that stopped reading does not keep the server alive.
    pub(crate) async fn finish(mut self) {
        loop {
            tokio::select! {
                _ = &mut self.task => return,
                progress = tokio::time::timeout(STALL, self.written.changed()) => {
                    if !matches!(progress, Ok(Ok(()))) {
                        return;
                    }
                }
            }
        }
    }
}

/// The process's stdin and stdout. Each that is a pipe (as an MCP client's
/// spawned server's are) is read or written by the runtime's own reactor:
/// tokio's `stdin()` and `stdout()` hand every read and every write to a
/// blocking thread and back, which was a third of a sequential call's time
/// (`benches/mcp_servers.rs`). Anything else (a terminal, a file, a socket)
/// keeps tokio's handles.
pub(crate) fn std_streams() -> (Box<dyn AsyncRead + Unpin + Send>, Box<dyn AsyncWrite + Unpin + Send>) {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use tokio::net::unix::pipe;
        // `from_owned_fd` refuses what is not a pipe before it changes
        // anything, so a refused stream is left as it was for tokio's handle.
        let input: Box<dyn AsyncRead + Unpin + Send> =
            match std::io::stdin().as_fd().try_clone_to_owned().and_then(pipe::Receiver::from_owned_fd) {
                Ok(pipe) => Box::new(pipe),
                Err(_) => Box::new(tokio::io::stdin()),
            };
        let output: Box<dyn AsyncWrite + Unpin + Send> =
            match std::io::stdout().as_fd().try_clone_to_owned().and_then(pipe::Sender::from_owned_fd) {
                Ok(pipe) => Box::new(pipe),
                Err(_) => Box::new(tokio::io::stdout()),
            };
        (input, output)
    }
    #[cfg(not(unix))]
    (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
}

/// Read lines into messages until the server has gone, or the input has
/// ended and the requests read are answered (or [`GRACE`] has passed).
///
/// Once its input has ended, rmcp still writes the answers of the calls in
/// flight, but no longer relays anything a call sends before its answer
/// (progress): a call reporting progress would never answer. So the input,
/// as rmcp sees it, ends only once those in flight are answered.
async fn read(
    input: impl AsyncRead + Unpin,
    mut messages: mpsc::Sender<ClientJsonRpcMessage>,
    queue: Queue,
    in_flight: InFlight<RequestId>,
    batches: Batches,
) {
    // `messages` stays open while the answers are awaited: its closing is
    // the end of the input for rmcp.
    if read_until_the_end(input, &mut messages, &queue, &in_flight, &batches).await {
        let _ = tokio::time::timeout(GRACE, in_flight.emptied()).await;
    }
}

/// Read lines into messages: true at the end of the input, false once the
/// server has gone. Nothing is read while the queue is full: the client's
/// pipe fills instead. An error line waits for room as an answer does;
/// neither waits for the other, only for the client to read. A request with the id of one still in flight is
/// answered with an error here, and rmcp never sees it (see `in_flight`).
async fn read_until_the_end(
    input: impl AsyncRead + Unpin,
    messages: &mut mpsc::Sender<ClientJsonRpcMessage>,
    queue: &Queue,
    in_flight: &InFlight<RequestId>,
    batches: &Batches,
) -> bool {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        queue.room().await;
        // One byte past the limit tells a line at the limit from a longer one.
        match (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return true,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            if skip_line(&mut input).await.is_err() {
                return true;
            }
            let _ = queue.push(wire::too_long(MAX_LINE).into_bytes()).await;
            continue;
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        if text.starts_with(b"[") && batches.taken() {
            if !read_batch(text, messages, queue, in_flight, batches).await {
                return false;
            }
            continue;
        }
        match screen(text, queue, in_flight, batches).await {
            Ok(message) => {
                if messages.send(message).await.is_err() {
                    return false;
                }
            }
            Err(answer) => {
                let _ = queue.push(answer).await;
            }
        }
    }
}

/// A message for rmcp, or the server's own answer to it: a request with
/// the id of one in flight is answered with an error here, and rmcp never
/// sees it (see `in_flight`).
async fn screen(
    text: &[u8],
    queue: &Queue,
    in_flight: &InFlight<RequestId>,
    batches: &Batches,
) -> Result<ClientJsonRpcMessage, Line> {
    let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(text) else {
        return Err(wire::unreadable(text).into_bytes());
    };
    match &message {
        JsonRpcMessage::Request(request) if !in_flight.enter(request.id.clone()) => {
            return Err(wire::duplicate(&request.id).into_bytes());
        }
        JsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::InitializeRequest(initialize),
            ..
        }) => {
            batches.asked(initialize.params.protocol_version.clone());
        }
        // rmcp sends no answer to a cancelled request.
        JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ClientNotification::CancelledNotification(cancelled),
            ..
        }) => {
            if let Some(id) = &cancelled.params.request_id {
                in_flight.leave(id);
                if let Some(line) = batches.cancelled(id) {
                    let _ = queue.push(line).await;
                }
            }
        }
        _ => {}
    }
    Ok(message)
}

/// A batch, in a session that takes them (see `batch`): each message
/// handed to rmcp, the answers written as one array. False once the
/// server has gone.
async fn read_batch(
    text: &[u8],
    messages: &mut mpsc::Sender<ClientJsonRpcMessage>,
    queue: &Queue,
    in_flight: &InFlight<RequestId>,
    batches: &Batches,
) -> bool {
    let items = match serde_json::from_slice::<Vec<&RawValue>>(text) {
        Ok(items) if items.is_empty() => {
            let _ = queue.push(wire::empty_batch().into_bytes()).await;
            return true;
        }
        Ok(items) => items,
        Err(_) => {
            let _ = queue.push(wire::unreadable(text).into_bytes()).await;
            return true;
        }
    };
    let reading = batches.start();
    // Its answers are told apart by their ids: an id twice in one batch is
    // refused even when the first is already answered.
    let mut ids = HashSet::new();
    for item in items {
        match screen(item.get().as_bytes(), queue, in_flight, batches).await {
            Ok(message) => {
                if let JsonRpcMessage::Request(request) = &message {
                    if !ids.insert(request.id.clone()) {
                        // Counted in by `screen`: the first was answered.
                        in_flight.leave(&request.id);
                        reading.answer(wire::duplicate(&request.id).into_bytes());
                        continue;
                    }
                    reading.request(request.id.clone());
                }
                if messages.send(message).await.is_err() {
                    return false;
                }
            }
            Err(answer) => reading.answer(answer),
        }
    }
    if let Some(line) = reading.done() {
        let _ = queue.push(line).await;
    }
    true
}

/// Read past the rest of an over-long line, keeping none of it.
async fn skip_line(input: &mut (impl AsyncBufReadExt + Unpin)) -> std::io::Result<()> {
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|&byte| byte == b'\n') {
            Some(end) => {
                input.consume(end + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                input.consume(all);
            }
        }
    }
}

/// One writer, whole lines: answers and error lines never interleave, and
/// a burst of answers is flushed once. A line's room in the queue is freed
/// once it is written (into the buffer, at most its size more), and each
/// line written counts in `progress`.
async fn write(
    output: impl AsyncWrite + Unpin,
    mut lines: mpsc::UnboundedReceiver<(Line, OwnedSemaphorePermit)>,
    progress: watch::Sender<u64>,
) {
    let mut output = BufWriter::new(output);
    while let Some(line) = lines.next().await {
        let mut next = Some(line);
        while let Some((line, _room)) = next.take() {
            if output.write_all(&line).await.is_err() || output.write_all(b"\n").await.is_err() {
                return;
            }
            progress.send_modify(|written| *written += 1);
            next = lines.try_recv().ok();
        }
        if output.flush().await.is_err() {
            return;
        }
    }
}

fn serialize(message: &impl serde::Serialize) -> Line {
    // rmcp's messages are JSON values with string keys: nothing fails here.
    serde_json::to_vec(message).unwrap_or_else(|error| {
        let message = format!("the server could not write its answer: {error}");
        wire::answer(-32603, None, message).into_bytes()
    })
}
