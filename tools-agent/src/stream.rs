//! The run as it happens: the events [`Agent::stream`](crate::Agent::stream)
//! yields, and how a model's stream and the run's end reach them in order.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender};
use futures::{Stream, StreamExt};
use toolcall_core::ToolResult;

use crate::model::{ModelEvent, ModelResponse, ModelStream, Usage};
use crate::{AgentError, ModelError, RunResult};

/// What [`Agent::stream`](crate::Agent::stream) yields as the run goes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum AgentEvent {
    /// More of the model's text.
    TextDelta(String),
    /// More of the model's visible reasoning (thinking, a summary), as it
    /// comes; the transcript keeps it whole.
    ReasoningDelta(String),
    /// More of a tool call as the model writes it.
    CallDelta {
        /// The call's position in its turn.
        index: usize,
        /// The call's id, once known.
        id: Option<String>,
        /// The tool's name, once known.
        name: Option<String>,
        /// The next piece of its argument text.
        arguments: String,
    },
    /// A call, complete, about to run.
    ToolCall(toolcall_core::ToolCall),
    /// A call held for a person's approval, sent the moment the loop holds
    /// it (before the turn's other calls run), so a UI can ask at once; the
    /// run then ends [`Paused`](crate::StopReason::Paused) with it among
    /// the state's pending calls. A resumed run that pauses again sends it
    /// again for each call still undecided.
    ApprovalRequested(crate::Pending),
    /// A call's result, as soon as the turn's calls have run.
    ToolResult(ToolResult),
    /// The tokens of one model request.
    Usage(Usage),
    /// The run is over: always the last event.
    Finished(Result<RunResult, AgentError>),
}

/// Read a model's stream to its end, passing every piece on to `deltas`:
/// the default of [`Effects::request_streamed`](crate::Effects::request_streamed).
pub(crate) async fn assembled(
    provider: &str,
    mut stream: ModelStream<'_>,
    deltas: &(dyn Fn(ModelEvent) + Send + Sync),
) -> Result<ModelResponse, ModelError> {
    while let Some(event) = stream.next().await {
        match event? {
            ModelEvent::Done(response) => return Ok(response),
            piece => deltas(piece),
        }
    }
    Err(ModelError::StreamEnded { provider: provider.to_owned(), message: "no final response".into() })
}

/// A piece of a model's response as the run's event, sent on `events`;
/// the whole response is no event (the loop goes on from it).
pub(crate) fn forward(events: &UnboundedSender<AgentEvent>, piece: ModelEvent) {
    let event = match piece {
        ModelEvent::TextDelta(text) => AgentEvent::TextDelta(text),
        ModelEvent::ReasoningDelta(text) => AgentEvent::ReasoningDelta(text),
        ModelEvent::CallDelta { index, id, name, arguments } => {
            AgentEvent::CallDelta { index, id, name, arguments }
        }
        ModelEvent::Done(_) => return,
    };
    // A dropped receiver only means no one listens any more.
    let _ = events.unbounded_send(event);
}

/// The events a run sends, then the run's end.
pub(crate) struct Interleave<R> {
    pub(crate) run: Pin<Box<R>>,
    pub(crate) events: UnboundedReceiver<AgentEvent>,
    pub(crate) run_done: Option<AgentEvent>,
}

impl<R: Stream<Item = AgentEvent>> Stream for Interleave<R> {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        let this = &mut *self;
        if this.run_done.is_none()
            && let Poll::Ready(Some(end)) = this.run.as_mut().poll_next(cx)
        {
            this.run_done = Some(end);
        }
        match this.events.poll_next_unpin(cx) {
            Poll::Ready(Some(event)) => Poll::Ready(Some(event)),
            // The channel closes once the run is over: its end comes last.
            Poll::Ready(None) => Poll::Ready(this.run_done.take()),
            Poll::Pending => Poll::Pending,
        }
    }
}
