//! Where a run runs, for a server that streams runs to a reader: in this
//! process, or on a durable engine's workers (`toolcall_restate::Remote`).

use futures::future::BoxFuture;
use futures::stream::BoxStream;

use crate::{Agent, AgentError, AgentEvent, RunInput, RunResult};

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
///
/// Each run is made under an id its caller gives (a session's run id), so
/// that a caller whose process died while the run went elsewhere learns
/// its end there afterwards ([`Runner::ended`]) rather than taking it for
/// cut off.
pub trait Runner: Send + Sync + std::fmt::Debug {
    /// The run of `agent` from `input`, made under the id `run`, as its
    /// events. The agent is the caller's (the conversation's id on it); an
    /// engine whose workers hold their own agent runs theirs. The id is
    /// new for each run: an engine that keys its runs by it finds the run
    /// again by it ([`Runner::ended`]).
    fn stream(&self, agent: &Agent, run: &str, input: RunInput) -> BoxStream<'static, AgentEvent>;

    /// The end of the run made under the id `run` ([`Runner::stream`]),
    /// for a caller that stopped following it (its process died): the
    /// result it gave, or its failure, once it has ended (a run still
    /// going is waited for, to its end); `None` for a run this runner does
    /// not know (never started, or forgotten).
    ///
    /// By default, `None`: a runner that cannot find a run again, whose
    /// runs end with the process that follows them, as the agent's own do.
    fn ended(&self, run: &str) -> BoxFuture<'static, Option<Result<RunResult, AgentError>>> {
        let _ = run;
        Box::pin(async { None })
    }
}
