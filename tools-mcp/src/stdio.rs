//! Newline-delimited JSON-RPC on stdio, as the server's rmcp transport.
//! Unlike rmcp's own, every line that cannot be read gets an answer (see
//! `wire`) and the server reads on, a request with the id of one in flight
//! is refused (see `in_flight`), a batch is read in a 2025-03-26 session
//! (see `batch`), a line is parsed once, and the end of the
//! input (how a client stops its server) lets the calls in flight finish
//! and answer.

use std::collections::HashSet;
use std::time::Duration;

use futures::channel::mpsc;
use futures::{SinkExt, StreamExt};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

use crate::batch::Batches;
use crate::in_flight::InFlight;
use crate::wire;

/// The longest line read, as rmcp's own stdio transport allows.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// Messages read ahead of the server: past it, reading waits.
const READ_AHEAD: usize = 64;

/// How long, once the input has ended, the calls in flight have to answer
/// (as [`HttpOptions::with_shutdown_grace`](crate::HttpOptions::with_shutdown_grace)'s
/// default); rmcp then waits 5 s more for their answers and cancels them.
const GRACE: Duration = Duration::from_secs(10);

/// What the server's writer is sent: a line without its newline.
type Line = Vec<u8>;

/// The transport rmcp serves on, reading `input` and writing `output`, and
/// the task writing `output`: it ends once rmcp has dropped its side and
/// every line is out.
pub(crate) fn transport(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> (
    (
        impl futures::Sink<ServerJsonRpcMessage, Error = mpsc::SendError> + Send + Unpin + 'static,
        mpsc::Receiver<ClientJsonRpcMessage>,
    ),
    tokio::task::JoinHandle<()>,
) {
    let (lines, to_write) = mpsc::unbounded::<Line>();
    let (messages, received) = mpsc::channel(READ_AHEAD);
    let in_flight = InFlight::default();
    let batches = Batches::default();
    tokio::spawn(read(input, messages, lines.clone(), in_flight.clone(), batches.clone()));
    let writer = tokio::spawn(write(output, to_write));
    let replies = lines.with_flat_map(move |message: ServerJsonRpcMessage| {
        let answered = match &message {
            JsonRpcMessage::Response(response) => {
                if let ServerResult::InitializeResult(result) = &response.result {
                    batches.negotiated(result.protocol_version.clone());
                }
                Some(&response.id)
            }
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        let line = serialize(&message);
        let line = match answered {
            Some(id) => {
                // Counted out before its answer is written: a client may
                // reuse the id once it has read the answer.
                in_flight.leave(id);
                batches.answered(id, line).unwrap_or_else(Some)
            }
            None => Some(line),
        };
        futures::stream::iter(line.map(Ok::<_, mpsc::SendError>))
    });
    ((replies, received), writer)
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
    errors: mpsc::UnboundedSender<Line>,
    in_flight: InFlight<RequestId>,
    batches: Batches,
) {
    // `messages` stays open while the answers are awaited: its closing is
    // the end of the input for rmcp.
    if read_until_the_end(input, &mut messages, errors, &in_flight, &batches).await {
        let _ = tokio::time::timeout(GRACE, in_flight.emptied()).await;
    }
}

/// Read lines into messages: true at the end of the input, false once the
/// server has gone. A request with the id of one still in flight is
/// answered with an error here, and rmcp never sees it (see `in_flight`).
async fn read_until_the_end(
    input: impl AsyncRead + Unpin,
    messages: &mut mpsc::Sender<ClientJsonRpcMessage>,
    errors: mpsc::UnboundedSender<Line>,
    in_flight: &InFlight<RequestId>,
    batches: &Batches,
) -> bool {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        // One byte past the limit tells a line at the limit from a longer one.
        match (&mut input).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return true,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            if skip_line(&mut input).await.is_err() {
                return true;
            }
            let _ = errors.unbounded_send(wire::too_long(MAX_LINE).into_bytes());
            continue;
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        if text.starts_with(b"[") && batches.taken() {
            if !read_batch(text, messages, &errors, in_flight, batches).await {
                return false;
            }
            continue;
        }
        match screen(text, &errors, in_flight, batches) {
            Ok(message) => {
                if messages.send(message).await.is_err() {
                    return false;
                }
            }
            Err(answer) => {
                let _ = errors.unbounded_send(answer);
            }
        }
    }
}

/// A message for rmcp, or the server's own answer to it: a request with
/// the id of one in flight is answered with an error here, and rmcp never
/// sees it (see `in_flight`).
fn screen(
    text: &[u8],
    errors: &mpsc::UnboundedSender<Line>,
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
                    let _ = errors.unbounded_send(line);
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
    errors: &mpsc::UnboundedSender<Line>,
    in_flight: &InFlight<RequestId>,
    batches: &Batches,
) -> bool {
    let items = match serde_json::from_slice::<Vec<&RawValue>>(text) {
        Ok(items) if items.is_empty() => {
            let _ = errors.unbounded_send(wire::empty_batch().into_bytes());
            return true;
        }
        Ok(items) => items,
        Err(_) => {
            let _ = errors.unbounded_send(wire::unreadable(text).into_bytes());
            return true;
        }
    };
    let reading = batches.start();
    // Its answers are told apart by their ids: an id twice in one batch is
    // refused even when the first is already answered.
    let mut ids = HashSet::new();
    for item in items {
        match screen(item.get().as_bytes(), errors, in_flight, batches) {
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
        let _ = errors.unbounded_send(line);
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
/// a burst of answers is flushed once.
async fn write(output: impl AsyncWrite + Unpin, mut lines: mpsc::UnboundedReceiver<Line>) {
    let mut output = BufWriter::new(output);
    while let Some(line) = lines.next().await {
        let mut next = Some(line);
        while let Some(line) = next.take() {
            if output.write_all(&line).await.is_err() || output.write_all(b"\n").await.is_err() {
                return;
            }
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
