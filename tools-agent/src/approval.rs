//! A run paused for a person: the calls that wait for approval, what was
//! decided about each, and everything the run needs to go on later, as
//! data that can be saved and loaded in another process.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolcall_core::{ToolCall, ToolContext, ToolError, ToolResult};

use crate::agent_tool::Nesting;
use crate::model::{ModelName, Usage};
use crate::run::Progress;
use crate::{RunBudget, Transcript};

/// What a person decided about one held call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Run the call as the model made it.
    Approve,
    /// Run the call with these arguments instead; they go through the
    /// tool's argument checks like any call's, and the transcript records
    /// the call with them.
    ApproveWith {
        /// The arguments to run with, as JSON text.
        arguments: String,
    },
    /// Do not run the call; the model reads the reason as its result.
    Deny {
        /// Why, for the model.
        reason: String,
    },
}

/// A call that waits for approval: one of the run's own, or one of a
/// sub-agent's ([`AgentTool`](crate::AgentTool)), whose run paused inside
/// the call that started it and pauses the run above with it, or another
/// that a tool call waits on ([`PausedCall`]: a remote agent's).
///
/// A decision names it by its [`id`](Self::id): the call's own id for the
/// run's own calls; for a sub-agent's, the ids of the agent-tool calls on
/// its way down and its own, joined by `/` (`c1/call_7`), since a
/// sub-agent's model picks its ids without knowing the caller's and two
/// runs may use the same one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The call as the model made it (the sub-agent's model, for a
    /// sub-agent's call).
    pub call: ToolCall,
    /// What was decided so far; `None` until someone decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The agent tools from the run down to the one whose run holds the
    /// call, as the models called them (`["researcher"]`, then
    /// `["researcher", "fact_checker"]` a level deeper); empty for the
    /// run's own calls (and in a state saved before sub-agents could pause).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
    /// The ids of the agent-tool calls along [`path`](Self::path), one per
    /// name, the run's own call first: which call of an agent tool the
    /// sub-agent works for when a turn calls it twice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_path: Vec<String>,
    /// The call's place in its turn (its own run's turn).
    position: usize,
}

/// A result of the paused turn, at its place in the turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Placed {
    pub(crate) position: usize,
    pub(crate) result: ToolResult,
}

/// Which pending call a decision named, when none has that id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no call waiting for approval has the id `{id}`; the pending calls are: {}", pending.join(", "))]
pub struct UnknownCall {
    /// The id given.
    pub id: String,
    /// The ids of the calls that wait.
    pub pending: Vec<String>,
}

/// A run stopped because calls wait for a person's approval
/// ([`StopReason::Paused`](crate::StopReason::Paused)). The turn's other
/// calls ran; these did not, and nothing runs them but
/// [`Agent::run`](crate::Agent::run) after a decision: a state that is
/// dropped, saved for days or loaded in another process runs nothing.
///
/// It is the run's [`Transcript`] and its [`PausedTurn`]: a store that
/// keeps the conversation's messages already keeps the first, and needs
/// only the second beside them ([`RunState::split`], [`RunState::join`]).
///
/// ```
/// # use toolcall_agent::RunState;
/// fn review(state: &mut RunState) {
///     let ids: Vec<_> = state.pending().iter().map(|p| p.call.id.clone()).collect();
///     for id in ids {
///         state.deny(&id, "not today").unwrap();
///     }
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunState {
    /// The run so far; its last message is the turn whose calls wait.
    transcript: Transcript,
    /// Everything else; flattened, so a state saved before the split loads.
    #[serde(flatten)]
    turn: PausedTurn,
}

/// A paused run without its transcript: the held turn (the calls that ran,
/// the calls that wait and what was decided) and what the run spent. It
/// belongs after the transcript's last message, which holds the turn's
/// calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PausedTurn {
    /// The turn's calls that ran, each at its place.
    done: Vec<Placed>,
    /// The turn's calls that wait.
    pending: Vec<Pending>,
    /// What the run spent of its limits.
    budget: RunBudget,
    /// The tokens of each request so far.
    usage: Vec<Usage>,
    /// The model that answered each request so far (none in a state saved
    /// before they were recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    models: Vec<ModelName>,
    /// The turns with tools so far.
    turns: usize,
    /// The names of the agents the run was handed to, in order: it
    /// resumes with the last (none: the agent it started with).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    handoffs: Vec<String>,
    /// The turn's calls that paused themselves ([`PausedCall`]: an agent
    /// tool's whose sub-agent paused, a remote agent's), each with what it
    /// handed up (whose pending calls are among `pending` too, with their
    /// path, for show and decisions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    nested: Vec<Below>,
    /// The W3C trace context (`traceparent`) of the span of the run that
    /// paused, which the run that resumes it links to; none without the
    /// feature `otel`, without a trace, or in a state saved before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    traceparent: Option<String>,
}

/// A call of the paused turn that paused itself ([`PausedCall`]): an
/// agent-tool call whose sub-agent paused, a remote agent's call whose
/// task waits for input. The call, its place in the turn, and what it
/// handed up, which the resumed call goes on with.
///
/// Saved as `{"position", "call", "state", "pending"}`; a state saved
/// before any tool but an agent tool could pause has no `pending` (its
/// `state` was the sub-agent's [`RunState`], decisions inside it), and
/// loads with the sub-agent's pending calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SavedBelow")]
pub(crate) struct Below {
    pub(crate) position: usize,
    pub(crate) call: ToolCall,
    #[serde(flatten)]
    pub(crate) held: PausedCall,
}

/// [`Below`] as saved, now or before its `pending` was kept beside its state.
#[derive(Deserialize)]
struct SavedBelow {
    position: usize,
    call: ToolCall,
    state: Value,
    #[serde(default)]
    pending: Option<Vec<Pending>>,
}

impl TryFrom<SavedBelow> for Below {
    type Error = String;

    fn try_from(saved: SavedBelow) -> Result<Self, String> {
        let SavedBelow { position, call, state, pending } = saved;
        let pending = match pending {
            Some(pending) => pending,
            // Saved when only a sub-agent could pause: its paused run's
            // pending calls, with the decisions taken so far.
            None => match state.get("pending") {
                Some(pending) => serde_json::from_value(pending.clone()).map_err(|e| {
                    format!("the paused run of call `{}` does not read: its pending calls: {e}", call.id)
                })?,
                None => return Err(format!("the paused call `{}` has no pending calls", call.id)),
            },
        };
        Ok(Self { position, call, held: PausedCall { state, pending } })
    }
}

impl Below {
    /// Whether anything the call waits on was decided, at any depth: then
    /// resuming it gets somewhere; otherwise it would only pause again.
    pub(crate) fn decided(&self) -> bool {
        self.held.pending.iter().any(|pending| pending.decision.is_some())
    }

    /// The call's pending calls as the run above sees them: under the
    /// call's tool name and id.
    pub(crate) fn pending(&self) -> impl Iterator<Item = Pending> + '_ {
        self.held.pending_under(&self.call)
    }
}

/// A tool call that paused for a person, holding what it needs to go on:
/// the mechanism behind a sub-agent's held call pausing the calling run
/// ([`AgentTool`](crate::AgentTool)), open to any tool (a remote A2A
/// agent's task waiting for input, in `toolcall-a2a`).
///
/// A tool that cannot finish before someone decides builds one, its
/// `state` (JSON: the run holding it is saved, and resumed in another
/// process) and the calls it waits on (`pending`, [`Pending::of`], ids as
/// the tool knows them), and hands it up ([`PausedCall::hand_up`]) to the
/// run that made the call. The run then ends
/// [`StopReason::Paused`](crate::StopReason::Paused), its [`RunState`]
/// holding it and listing its calls among its [`pending`](RunState::pending)
/// ones with the tool's name as their [`path`](Pending::path) and the
/// call's id before theirs (`c1/call_7`); a streamed run sends each as
/// [`AgentEvent::ApprovalRequested`](crate::AgentEvent::ApprovalRequested).
/// Once one of them is decided, the resumed run calls the tool again, with
/// the same call; the tool takes back its paused call
/// ([`PausedCall::resumed`]), the decisions in its `pending`, and goes on
/// from it. Its answer is the call's result, which the calling model reads;
/// it may also pause again.
///
/// ```
/// use serde_json::json;
/// use toolcall_agent::{Decision, PausedCall, Pending};
/// use toolcall_core::{Output, OutputFuture, Tool, ToolCall, ToolContext, ToolError, ToolSpec};
///
/// /// Asks the operator before every launch.
/// struct Launch(ToolSpec);
///
/// impl Tool for Launch {
///     fn spec(&self) -> &ToolSpec {
///         &self.0
///     }
///     fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
///         Box::pin(async move {
///             if let Some(resumed) = PausedCall::resumed(ctx) {
///                 let target = resumed.state["target"].as_str().unwrap_or("?").to_owned();
///                 return match &resumed.pending[0].decision {
///                     Some(Decision::Deny { reason }) => Ok(Output::text(format!("not launched: {reason}"))),
///                     _ => Ok(Output::text(format!("launched at {target}"))),
///                 };
///             }
///             let ask = ToolCall::new("go", "launch", arguments);
///             let paused = PausedCall::new(json!({"target": "moon"}), vec![Pending::of(ask)]);
///             match paused.hand_up(ctx) {
///                 Ok(()) => Err(ToolError::failed("waits for the operator")),
///                 // Called outside a run: nothing can hold it.
///                 Err(_) => Err(ToolError::failed("needs the operator, who cannot be asked here")),
///             }
///         })
///     }
/// }
///
/// # use toolcall_agent::{Agent, RunState, StopReason, testing::ScriptedModel};
/// # use toolcall_core::{Parameters, Toolset};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)]
/// # #[allow(dead_code)]
/// # struct Args { target: String }
/// # futures::executor::block_on(async {
/// let agent = |model: ScriptedModel| {
///     let launch = Launch(ToolSpec::from_parameters("launch", "Launches.", Parameters::of::<Args>()));
///     Agent::new(model, Toolset::builder().add(launch).build().unwrap()).unwrap()
/// };
/// let model = ScriptedModel::new().then_calls([ToolCall::new("c1", "launch", r#"{"target":"moon"}"#)]);
/// let result = agent(model).run("Launch").await.unwrap();
/// let StopReason::Paused(state) = result.stop else { panic!("{:?}", result.stop) };
/// let mut state: RunState = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
/// assert_eq!((state.pending()[0].id(), state.pending()[0].path.clone()), ("c1/go".to_owned(), vec!["launch".to_owned()]));
/// state.approve("c1/go").unwrap();
/// let result = agent(ScriptedModel::new().then_text("Launched.")).run(state).await.unwrap();
/// assert_eq!(result.answer, "Launched.");
/// # });
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PausedCall {
    /// What the tool needs to go on, as it handed it up (an agent tool's
    /// is its sub-agent's [`RunState`]).
    pub state: Value,
    /// The calls the tool waits on, named by their [`id`](Pending::id) as
    /// the tool knows them; a decision about one is recorded here.
    pub pending: Vec<Pending>,
}

impl PausedCall {
    /// A paused call: the tool's `state`, and the calls it waits on.
    pub fn new(state: Value, pending: Vec<Pending>) -> Self {
        Self { state, pending }
    }

    /// Hand this paused call up to the run that made the call `ctx` is
    /// the context of: the run holds it, pauses, and on resumption runs
    /// the call again, to which [`PausedCall::resumed`] gives it back with
    /// the decisions. The call's own result is then ignored (return an
    /// error saying it waits). The run announces the pending calls on its
    /// stream.
    ///
    /// # Errors
    ///
    /// The paused call itself, when no agent run made the call (the tool
    /// called by hand, over MCP...) or it waits on nothing: nothing would
    /// resume it, and the tool should fail the call instead.
    pub fn hand_up(self, ctx: &ToolContext) -> Result<(), Self> {
        self.hand_up_as(ctx, true)
    }

    /// [`Self::hand_up`], its pending calls announced by the run that
    /// holds it, or not (a sub-agent's run announced them as it held them).
    pub(crate) fn hand_up_as(self, ctx: &ToolContext, announce: bool) -> Result<(), Self> {
        match ctx.get::<Nesting>() {
            Some(nesting) if !self.pending.is_empty() && !ctx.call_id().is_empty() => {
                nesting.relay.paused(ctx.call_id(), self, announce);
                Ok(())
            }
            _ => Err(self),
        }
    }

    /// The paused call this call goes on from, with the decisions taken,
    /// when the run is resuming it; `None` for a call that starts afresh.
    /// It is given once: a second read is `None`.
    pub fn resumed(ctx: &ToolContext) -> Option<Self> {
        ctx.get::<Nesting>()?.relay.take_resumed(ctx.call_id())
    }

    /// What call `call_id` of the run whose context is `run` handed up,
    /// taken back from the run: for a durable engine that journals a
    /// call's outcome whole, its result and its pause, and hands the pause
    /// up again after the step, whether the step ran or was given back
    /// ([`HandedUp::hand_up_again`]).
    pub fn take_handed_up(run: &ToolContext, call_id: &str) -> Option<HandedUp> {
        let relayed = run.get::<Nesting>()?.relay.take_paused_of(call_id)?;
        Some(HandedUp { paused: relayed.paused, announce: relayed.announce })
    }

    /// Whether a run made this call, which could hold it if it paused.
    pub fn can_hand_up(ctx: &ToolContext) -> bool {
        ctx.get::<Nesting>().is_some() && !ctx.call_id().is_empty()
    }

    /// Its pending calls as the run that made `call` sees them.
    pub(crate) fn pending_under<'a>(&'a self, call: &ToolCall) -> impl Iterator<Item = Pending> + 'a {
        let (name, id) = ([call.name.to_string()], [call.id.to_string()]);
        self.pending.iter().map(move |pending| pending.clone().under(&name, &id))
    }
}

/// A call's pause as a durable engine keeps it ([`PausedCall::take_handed_up`]),
/// with how the run shows it: journaled with the call's result, and handed
/// up again after the step on every replay, the run holds the same paused
/// call whether the step ran or was given back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandedUp {
    paused: PausedCall,
    /// Whether the run announces its calls (an agent tool's sub-run did).
    announce: bool,
}

impl HandedUp {
    /// Hand the pause up again to the run whose context is `run`, as call
    /// `call_id`'s.
    pub fn hand_up_again(self, run: &ToolContext, call_id: &str) {
        if let Some(nesting) = run.get::<Nesting>() {
            nesting.relay.paused(call_id, self.paused, self.announce);
        }
    }
}

/// A turn held for decisions: its calls that ran, each at its place, those
/// that wait (the run's own), and its agent-tool calls whose sub-agent
/// paused.
pub(crate) struct Held {
    pub(crate) done: Vec<Placed>,
    pub(crate) pending: Vec<Pending>,
    pub(crate) nested: Vec<Below>,
}

/// A paused run's parts, as the loop takes them apart to resume it: what
/// the run has done, and the turn it holds.
pub(crate) struct Parts {
    pub(crate) progress: Progress,
    pub(crate) held: Held,
}

impl RunState {
    pub(crate) fn new(parts: Parts) -> Self {
        let Parts {
            progress: Progress { transcript, usage, models, budget, turns, handoffs },
            held: Held { done, mut pending, nested },
        } = parts;
        // The sub-agents' calls are listed with the run's own: one list to
        // show and decide, whatever the depth.
        pending.extend(nested.iter().flat_map(Below::pending));
        Self {
            transcript,
            turn: PausedTurn {
                done,
                pending,
                budget,
                usage,
                models,
                turns,
                handoffs,
                nested,
                traceparent: None,
            },
        }
    }

    /// The state's parts, where the run resumes: the sub-agents' calls are
    /// in their own paused runs, with their decisions.
    pub(crate) fn into_parts(self) -> Parts {
        let PausedTurn { done, mut pending, budget, usage, models, turns, handoffs, nested, traceparent: _ } =
            self.turn;
        pending.retain(|pending| pending.path.is_empty());
        Parts {
            progress: Progress { transcript: self.transcript, usage, models, budget, turns, handoffs },
            held: Held { done, pending, nested },
        }
    }

    /// The transcript and the paused turn, to keep apart (a store keeps
    /// the transcript as the conversation's messages).
    ///
    /// ```
    /// # use toolcall_agent::RunState;
    /// fn store(state: RunState) -> RunState {
    ///     let (transcript, turn) = state.split();
    ///     // ... the messages in one place, the turn as JSON in another ...
    ///     RunState::join(transcript, turn)
    /// }
    /// ```
    pub fn split(self) -> (Transcript, PausedTurn) {
        (self.transcript, self.turn)
    }

    /// A paused run from its transcript and its turn ([`Self::split`]).
    /// The transcript must be the one the turn was paused in (its last
    /// message holds the turn's calls); with another, the resumed run
    /// answers the calls the transcript's last message holds, a call
    /// without a decision denied.
    pub fn join(transcript: Transcript, turn: PausedTurn) -> Self {
        Self { transcript, turn }
    }

    /// The run's transcript once the run that took these decisions was
    /// cut off before its turn's results were kept: the turn's results
    /// after its calls, each approved call (and each call whose sub-agent
    /// went on) [`cut_off`](crate::cut_off) rather than run again, each
    /// denied one its reason, each undecided one denied (no one decided
    /// before the cut). A new run goes on from it; nothing runs twice.
    pub fn cut_off(self) -> Transcript {
        let calls = self.transcript.pending_calls();
        let PausedTurn { done: mut placed, pending, nested, .. } = self.turn;
        for pending in pending.into_iter().filter(|pending| pending.path.is_empty()) {
            let result = match &pending.decision {
                Some(Decision::Deny { reason }) => denied(&pending.call, reason),
                Some(_) => crate::cut_off(&pending.call),
                None => denied(&pending.call, "no one decided about it before its run was cut off"),
            };
            placed.push(Placed { position: pending.position, result });
        }
        for below in nested {
            placed.push(Placed { position: below.position, result: crate::cut_off(&below.call) });
        }
        let mut transcript = self.transcript;
        transcript.push(crate::Message::Tool { results: in_turn_order(&calls, placed) });
        transcript
    }

    /// The calls that wait, with what was decided so far: the run's own in
    /// turn order, then its sub-agents' (those with a
    /// [`path`](Pending::path)), each named by its [`id`](Pending::id).
    pub fn pending(&self) -> &[Pending] {
        self.turn.pending()
    }

    /// The run so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The W3C trace context of the run that paused, as a `traceparent`
    /// (`00-{trace id}-{span id}-{flags}`): its `invoke_agent` span, which
    /// the run that resumes this state links to (an OpenTelemetry span
    /// link), in this process or another. Recorded with the feature `otel`
    /// when the run was traced through tracing-opentelemetry; `None`
    /// otherwise.
    pub fn traceparent(&self) -> Option<&str> {
        self.turn.traceparent()
    }

    /// Keep the trace context of the run that paused.
    pub(crate) fn set_traceparent(&mut self, traceparent: Option<String>) {
        self.turn.traceparent = traceparent;
    }

    /// Decide about the pending call with this id ([`Pending::id`]: a
    /// sub-agent's call's is prefixed with the agent-tool calls above it,
    /// `c1/call_7`); a later decision replaces an earlier one.
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`.
    pub fn decide(&mut self, id: &str, decision: Decision) -> Result<&mut Self, UnknownCall> {
        self.turn.decide(id, decision)?;
        Ok(self)
    }

    /// Run this call as the model made it.
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`.
    pub fn approve(&mut self, id: &str) -> Result<&mut Self, UnknownCall> {
        self.decide(id, Decision::Approve)
    }

    /// Run this call with other arguments (JSON text).
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`. The arguments
    /// are not checked here: the tool reads them when the run resumes.
    pub fn approve_with(&mut self, id: &str, arguments: impl Into<String>) -> Result<&mut Self, UnknownCall> {
        self.decide(id, Decision::ApproveWith { arguments: arguments.into() })
    }

    /// Do not run this call; the model reads `reason`.
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`.
    pub fn deny(&mut self, id: &str, reason: impl Into<String>) -> Result<&mut Self, UnknownCall> {
        self.decide(id, Decision::Deny { reason: reason.into() })
    }
}

impl PausedTurn {
    /// The calls that wait, in turn order, with what was decided so far.
    pub fn pending(&self) -> &[Pending] {
        &self.pending
    }

    /// The results of the turn's calls that ran before it paused (those
    /// that needed no approval), in turn order.
    pub fn done(&self) -> impl Iterator<Item = &ToolResult> {
        self.done.iter().map(|placed| &placed.result)
    }

    /// The W3C trace context of the run that paused
    /// ([`RunState::traceparent`]).
    pub fn traceparent(&self) -> Option<&str> {
        self.traceparent.as_deref()
    }

    /// Decide about the pending call with this id ([`Pending::id`]; a
    /// sub-agent's call's paused run takes the decision too); a later
    /// decision replaces an earlier one.
    ///
    /// # Errors
    ///
    /// [`UnknownCall`], listing the pending ids, when no pending call has `id`.
    pub fn decide(&mut self, id: &str, decision: Decision) -> Result<&mut Self, UnknownCall> {
        let unknown = |pending: &[Pending]| UnknownCall {
            id: id.to_owned(),
            pending: pending.iter().map(Pending::id).collect(),
        };
        let Some(at) = self.pending.iter().position(|pending| pending.is(id)) else {
            return Err(unknown(&self.pending));
        };
        let pending = &self.pending[at];
        if let Some((outer, rest)) = pending.call_path.split_first() {
            // A sub-agent's call: its paused run, which the resumed call
            // goes on with, takes the decision, under the id it knows there.
            let inner = Pending { call_path: rest.to_vec(), ..pending.clone() }.id();
            let Some(below) = self.nested.iter_mut().find(|below| below.call.id == outer.as_str()) else {
                return Err(unknown(&self.pending));
            };
            let Some(held) = below.held.pending.iter_mut().find(|pending| pending.is(&inner)) else {
                return Err(unknown(&self.pending));
            };
            held.decision = Some(decision.clone());
        }
        self.pending[at].decision = Some(decision);
        Ok(self)
    }
}

impl Pending {
    pub(crate) fn new(position: usize, call: ToolCall) -> Self {
        Self { call, decision: None, path: Vec::new(), call_path: Vec::new(), position }
    }

    /// A call a tool waits on, undecided, for a [`PausedCall`]: its id is
    /// what the tool knows it by (the run above puts the tool's call id
    /// before it), its name and arguments what a person reads.
    pub fn of(call: ToolCall) -> Self {
        Self::new(0, call)
    }

    /// What a decision names this call by: its id for the run's own call;
    /// for a sub-agent's, the ids of the agent-tool calls above it and its
    /// own, joined by `/` (`c1/call_7`), so that ids the sub-agent's model
    /// shares with the caller's are not confused.
    ///
    /// ```
    /// use toolcall_agent::Pending;
    /// use toolcall_core::ToolCall;
    ///
    /// let pending: Pending = serde_json::from_value(serde_json::json!({
    ///     "call": ToolCall::new("c1", "remove_dir", r#"{"path":"tmp"}"#),
    ///     "path": ["janitor"],
    ///     "call_path": ["c1"],
    ///     "position": 0,
    /// }))
    /// .unwrap();
    /// assert_eq!(pending.id(), "c1/c1");
    /// ```
    pub fn id(&self) -> String {
        let mut id = String::new();
        for outer in &self.call_path {
            id.push_str(outer);
            id.push('/');
        }
        id.push_str(&self.call.id);
        id
    }

    /// The call as a run above sees it: under the agent tools `path`,
    /// called as `call_path`.
    pub(crate) fn under(self, path: &[String], call_path: &[String]) -> Self {
        Self {
            path: path.iter().cloned().chain(self.path).collect(),
            call_path: call_path.iter().cloned().chain(self.call_path).collect(),
            ..self
        }
    }

    /// Whether [`Self::id`] is `id`, without building it.
    fn is(&self, id: &str) -> bool {
        let mut rest = id;
        for outer in &self.call_path {
            match rest.strip_prefix(outer.as_str()).and_then(|rest| rest.strip_prefix('/')) {
                Some(after) => rest = after,
                None => return false,
            }
        }
        rest == self.call.id
    }

    pub(crate) fn position(&self) -> usize {
        self.position
    }
}

/// The result a denied call gives the model.
pub(crate) fn denied(call: &ToolCall, reason: &str) -> ToolResult {
    let error = ToolError::Denied(format!(
        "a person denied this call of `{}`, so it did not run: {reason}",
        call.name
    ));
    ToolResult::error(call, &error)
}

/// The turn's results in call order: each placed result at its place, and
/// a denial where a saved state has none (it cannot run unapproved).
pub(crate) fn in_turn_order(calls: &[ToolCall], placed: Vec<Placed>) -> Vec<ToolResult> {
    let mut slots: Vec<Option<ToolResult>> = vec![None; calls.len()];
    for Placed { position, result } in placed {
        if let Some(slot) = slots.get_mut(position) {
            *slot = Some(result);
        }
    }
    slots
        .into_iter()
        .zip(calls)
        .map(|(slot, call)| slot.unwrap_or_else(|| denied(call, "the saved run has no decision for it")))
        .collect()
}
