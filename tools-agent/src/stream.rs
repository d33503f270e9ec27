//! The run as it happens: the events [`Agent::stream`](crate::Agent::stream)
//! yields, and how a model's stream and the run's end reach them in order.

use std::pin::Pin;
use std::sync::Arc;
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
    ///
    /// A sub-agent's call ([`AgentTool`](crate::AgentTool)), or one
    /// another tool call waits on ([`PausedCall`](crate::PausedCall): a
    /// remote A2A agent's), is sent as this event too, never inside
    /// [`Nested`](Self::Nested): it pauses this run, and a UI that knows
    /// only this event must ask about it.
    /// Its [`Pending::path`](crate::Pending::path) says where it is, and
    /// its [`Pending::id`](crate::Pending::id) is what a decision names.
    ApprovalRequested(crate::Pending),
    /// A call's result, as soon as the turn's calls have run.
    ToolResult(ToolResult),
    /// The tokens of one model request.
    Usage(Usage),
    /// The run goes on with another agent ([`Agent::with_handoff`](crate::Agent::with_handoff)),
    /// after the turn whose call handed off: its requests, calls and
    /// answer come next.
    Handoff {
        /// The name of the agent that handed off, if it has one.
        from: Option<String>,
        /// The name of the agent the conversation went to.
        to: String,
    },
    /// The run is over: always the last event.
    Finished(Result<RunResult, AgentError>),
    /// An event of a run nested in this one: an agent called as a tool
    /// ([`AgentTool`](crate::AgentTool)), at any depth, sent as it
    /// happens so a UI can show the sub-agent's work inside the call
    /// that started it. Flat, whatever the depth: the path says where.
    /// A nested run's end is not sent (its call's
    /// [`ToolResult`](Self::ToolResult) in the run above ends it).
    Nested {
        /// The agent tools from this run down to the one whose run sent
        /// the event, as the models called them: `["researcher"]`, then
        /// `["researcher", "fact_checker"]` one level deeper.
        path: Vec<String>,
        /// The id of this run's call the nested run works for (the call
        /// of `path[0]`): what tells apart two calls of one agent tool in
        /// a turn. Deeper calls are told apart by their path alone.
        call_id: String,
        /// The event as the nested run sent it: never `Finished`, never
        /// `Nested`.
        event: Box<AgentEvent>,
    },
}

/// Where a run's events go: the stream's channel, and for a nested run
/// the path its events are marked with ([`AgentEvent::Nested`]), so that a
/// sub-agent's events reach the outermost stream directly, at any depth.
#[derive(Clone, Debug)]
pub(crate) struct Sink {
    sender: UnboundedSender<AgentEvent>,
    /// Empty for the streamed run itself.
    path: Arc<[String]>,
    /// The streamed run's call the nested run works for; empty at the top.
    call_id: Arc<str>,
    /// The ids of the agent-tool calls along `path`, the streamed run's
    /// first: where a nested run's held call is, as the streamed run's
    /// state names it.
    call_path: Arc<[String]>,
}

impl Sink {
    /// The sink of the run that is streamed.
    pub(crate) fn top(sender: UnboundedSender<AgentEvent>) -> Self {
        Self { sender, path: Arc::from([]), call_id: Arc::from(""), call_path: Arc::from([]) }
    }

    /// The sink of a run nested one level below this one's, through the
    /// agent tool `tool` called as `call_id`.
    pub(crate) fn below(&self, tool: &str, call_id: &str) -> Self {
        let path: Vec<String> = self.path.iter().cloned().chain([tool.to_owned()]).collect();
        // The outermost call is the one the streamed run knows.
        let call_id_of_top =
            if self.path.is_empty() { Arc::from(call_id) } else { Arc::clone(&self.call_id) };
        let call_path: Vec<String> = self.call_path.iter().cloned().chain([call_id.to_owned()]).collect();
        Self {
            sender: self.sender.clone(),
            path: path.into(),
            call_id: call_id_of_top,
            call_path: call_path.into(),
        }
    }

    /// Send `event`, marked with the path when the run is nested; a nested
    /// run's held call as the streamed run's own event, its pending marked
    /// with the path instead, since it pauses the streamed run.
    pub(crate) fn send(&self, event: AgentEvent) {
        let event = if self.path.is_empty() {
            event
        } else if let AgentEvent::ApprovalRequested(pending) = event {
            AgentEvent::ApprovalRequested(pending.under(&self.path, &self.call_path))
        } else {
            AgentEvent::Nested {
                path: self.path.to_vec(),
                call_id: self.call_id.to_string(),
                event: Box::new(event),
            }
        };
        // A dropped receiver only means no one listens any more.
        let _ = self.sender.unbounded_send(event);
    }
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
pub(crate) fn forward(events: &Sink, piece: ModelEvent) {
    let event = match piece {
        ModelEvent::TextDelta(text) => AgentEvent::TextDelta(text),
        ModelEvent::ReasoningDelta(text) => AgentEvent::ReasoningDelta(text),
        ModelEvent::CallDelta { index, id, name, arguments } => {
            AgentEvent::CallDelta { index, id, name, arguments }
        }
        ModelEvent::Done(_) => return,
    };
    events.send(event);
}

/// The events a run sends, then the run's end.
pub(crate) struct Interleave<R> {
    pub(crate) run: Pin<Box<R>>,
    pub(crate) events: UnboundedReceiver<AgentEvent>,
    pub(crate) run_done: Option<AgentEvent>,
    /// The end was given: nothing follows it.
    pub(crate) ended: bool,
}

impl<R: Stream<Item = AgentEvent>> Stream for Interleave<R> {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        let this = &mut *self;
        if this.ended {
            return Poll::Ready(None);
        }
        if this.run_done.is_none()
            && let Poll::Ready(Some(end)) = this.run.as_mut().poll_next(cx)
        {
            this.run_done = Some(end);
        }
        let end = match this.events.poll_next_unpin(cx) {
            Poll::Ready(Some(event)) => return Poll::Ready(Some(event)),
            // The channel closes once the run is over: its end comes last.
            Poll::Ready(None) => this.run_done.take(),
            // Every event of a run is sent before it ends, so once it has
            // ended none is left to wait for: the channel may stay open, a
            // clone of its sender kept in a call's context (where agent
            // tools find it) that a tool holds on to.
            Poll::Pending => match this.run_done.take() {
                Some(end) => Some(end),
                None => return Poll::Pending,
            },
        };
        this.ended = true;
        Poll::Ready(end)
    }
}
