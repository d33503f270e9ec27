//! Where a run runs, for a server that streams runs to a reader: in this
//! process, or on a durable engine's workers (`toolcall_restate::Remote`).

use futures::stream::BoxStream;

use crate::{Agent, AgentEvent, RunInput};

/// A run made elsewhere and reported here: what a chat server streams
/// (`toolcall-session`'s `SessionRun`, the servers of `toolcall-ui`) when
/// its runs are not made in its own process. Without one, a run is the
/// agent's own in this process ([`Agent::stream`]).
///
/// The events are an in-process run's, in its order, ending in
/// [`AgentEvent::Finished`]; an engine that reports its run step by step
/// sends each step's events as the step is done (the model's text of a
/// response as one piece, say), and the end with the result the run gave
/// there.
pub trait Runner: Send + Sync + std::fmt::Debug {
    /// The run of `agent` from `input`, as its events. The agent is the
    /// caller's (the conversation's id on it); an engine whose workers
    /// hold their own agent runs theirs.
    fn stream(&self, agent: &Agent, input: RunInput) -> BoxStream<'static, AgentEvent>;
}
