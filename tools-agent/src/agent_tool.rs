//! An agent as a tool: [`Agent::as_tool`] gives a [`Tool`] that runs the
//! agent on what the calling model asks and answers with the agent's
//! answer, usable in any toolset (and so served over MCP like any tool).
//!
//! Inside a run, the run tells the calls it serves where they are: each
//! call's context holds a [`Nesting`] (how deep the run is, where its
//! events go, what it has spent and may still spend), which an agent tool
//! reads to run its agent one level below: its events reach the outermost
//! stream marked with their path ([`AgentEvent::Nested`]), its requests'
//! tokens join the runs above it, its tool calls count against their
//! limits, its cancellation comes down from the call's. Without one (the
//! tool called outside a run) the agent simply runs.

use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use toolcall_core::{
    Arguments, IdempotencyScope, Output, OutputFuture, Tool, ToolCall, ToolContext, ToolError, ToolResult,
    ToolSpec, Toolset,
};

use crate::model::{ModelName, Usage};
use crate::stream::Sink;
use crate::{
    Agent, AgentError, AgentEvent, Approval, Effects, InProcess, LimitExceeded, Model, ModelError,
    ModelEvent, ModelRequest, ModelResponse, PausedCall, RunInput, RunResult, RunState, StopReason,
};

/// How deep agent tools nest by default: a run inside a run inside a run
/// inside a run below the first. Deep enough for a planner, its workers
/// and theirs; shallow enough that an agent that calls itself stops
/// before it has spent much.
pub const DEFAULT_MAX_DEPTH: usize = 4;

/// An [`Agent`] as a [`Tool`] ([`Agent::as_tool`], [`Agent::as_tool_with`]):
/// a call runs the agent on the call's arguments and answers with the
/// run's answer (a typed answer's JSON when the agent has an
/// [`AnswerType`](crate::AnswerType)).
///
/// Called by a run (the agent loop), it is that run's sub-agent: the
/// sub-agent's requests are in the run's [`RunResult::usage`] and
/// [`RunResult::models`] (so in [`RunResult::usage_by_model`]), its tool
/// calls count against the run's [`RunLimits::max_tool_calls`](crate::RunLimits::max_tool_calls)
/// (and every run's above it), its events are on the run's stream as
/// [`AgentEvent::Nested`](crate::AgentEvent::Nested), its `invoke_agent`
/// span is inside the call's `execute_tool` span, and cancelling the call
/// cancels it. A sub-agent that does not answer (a model error, a limit)
/// is a failed call naming the sub-agent and the cause, which the calling
/// model reads and the run goes on from.
///
/// A sub-agent's call that needs a person's approval pauses the calling
/// run with it (the tool hands its sub-agent's paused run up as a
/// [`PausedCall`], as any tool may): the run ends [`StopReason::Paused`],
/// its [`RunState`] holding the sub-agent's paused run and listing the
/// call among its pending ones with its [`path`](crate::Pending::path)
/// (decided by its [`id`](crate::Pending::id), `{agent-tool call id}/{call id}`). Resumed,
/// the call goes on with the sub-agent's run where it paused (its model is
/// not asked again for the paused turn), and the calling model reads its
/// answer as the call's result.
///
/// Called outside a run (over MCP, by hand), the agent just runs; a call
/// of its that needs approval then fails the tool call, since no run
/// above it can hold it.
///
/// ```
/// use futures::StreamExt;
/// use toolcall_agent::{Agent, AgentEvent};
/// use toolcall_agent::testing::ScriptedModel;
/// use toolcall_core::{ToolCall, Toolset};
///
/// # futures::executor::block_on(async {
/// let researcher = Agent::new(ScriptedModel::new().then_text("Oslo has 709,000 people."), Toolset::new()).unwrap();
/// let tools = Toolset::builder()
///     .add(researcher.as_tool("researcher", "Looks facts up; give it one question."))
///     .build()
///     .unwrap();
/// let lead = ScriptedModel::new()
///     .then_calls([ToolCall::new("c1", "researcher", r#"{"prompt":"Population of Oslo?"}"#)])
///     .then_text("About 709,000.");
/// let agent = Agent::new(lead, tools).unwrap();
/// let events: Vec<AgentEvent> = agent.stream("How many people live in Oslo?").collect().await;
/// // The researcher's answer, as the lead saw it, came from inside its call.
/// assert!(events.iter().any(|event| matches!(event,
///     AgentEvent::Nested { path, call_id, event }
///         if path == &["researcher"] && call_id == "c1"
///             && matches!(&**event, AgentEvent::TextDelta(text) if text.contains("709,000")))));
/// let Some(AgentEvent::Finished(Ok(result))) = events.last() else { panic!("{events:?}") };
/// assert_eq!(result.answer, "About 709,000.");
/// assert_eq!(result.usage.len(), 3); // the lead's two requests and the researcher's one
/// # });
/// ```
#[derive(Clone)]
pub struct AgentTool {
    agent: Agent,
    spec: ToolSpec,
    /// The call's arguments, read through the spec's pipeline, as the run's input.
    input: Arc<ReadInput>,
    max_depth: usize,
}

type ReadInput = dyn Fn(&ToolSpec, &str) -> Result<RunInput, ToolError> + Send + Sync;

/// The default input of an agent tool: one question or task.
#[derive(Deserialize, JsonSchema)]
struct Ask {
    /// The task or question for the agent, with everything it needs to
    /// know: it sees nothing else of this conversation.
    prompt: String,
}

impl Agent {
    /// This agent as a tool named `name`, described to the calling model
    /// by `description`, that takes one string, `prompt`: the user message
    /// the agent runs from. Its answer is the run's answer, or the typed
    /// answer's JSON when the agent has one ([`Self::with_answer_type`]).
    /// The tool holds a copy of the agent, settings, toolset and context
    /// included.
    pub fn as_tool(&self, name: impl Into<String>, description: impl Into<String>) -> AgentTool {
        self.as_tool_with(name, description, |ask: Ask| RunInput::from(ask.prompt))
    }

    /// This agent as a tool whose arguments are `I`, turned into the
    /// run's input by `input`: the model sees `I`'s JSON Schema, and its
    /// arguments go through the pipeline of a `#[tool]`'s (cleaning,
    /// limits, a type error naming the field), as
    /// [`Arguments`] reads them.
    ///
    /// ```
    /// use toolcall_agent::{Agent, RunInput};
    /// use toolcall_agent::testing::ScriptedModel;
    /// use toolcall_core::{Tool, ToolContext, Toolset};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Translate {
    ///     /// The text to translate.
    ///     text: String,
    ///     /// The language to translate into.
    ///     to: String,
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let model = ScriptedModel::new().then_text("Bonjour");
    /// let tool = Agent::new(model, Toolset::new()).unwrap().as_tool_with(
    ///     "translator",
    ///     "Translates a text.",
    ///     |ask: Translate| RunInput::from(format!("Translate into {}: {}", ask.to, ask.text)),
    /// );
    /// assert_eq!(tool.spec().parameters()["required"], serde_json::json!(["text", "to"]));
    /// let answer = tool.call_text(&ToolContext::new(), r#"{"text":"Hello","to":"French"}"#).await.unwrap();
    /// assert_eq!(answer, "Bonjour");
    /// # });
    /// ```
    pub fn as_tool_with<I: Arguments + 'static>(
        &self,
        name: impl Into<String>,
        description: impl Into<String>,
        input: impl Fn(I) -> RunInput + Send + Sync + 'static,
    ) -> AgentTool {
        // Its sub-agent's requests and calls are the calling run's steps.
        let spec =
            ToolSpec::from_parameters(name.into(), description.into(), I::parameters()).with_nested_steps();
        AgentTool {
            agent: self.clone(),
            spec,
            input: Arc::new(move |spec: &ToolSpec, arguments: &str| I::parse(spec, arguments).map(&input)),
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

impl AgentTool {
    /// How many agents deep this one may run, counting it
    /// ([`DEFAULT_MAX_DEPTH`] by default): called by a run that is already
    /// that deep, it does not run and the call fails, saying so. This is
    /// what stops an agent that calls itself, directly or through others.
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// The agent the tool runs.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// One call: the agent run one level below the calling run, if any.
    async fn serve(&self, ctx: &ToolContext, arguments: &str) -> Result<Output, ToolError> {
        let name = self.spec.name();
        let above = ctx.get::<Nesting>();
        // A call whose sub-agent paused goes on with its run, decisions
        // taken, rather than from its arguments again.
        let input = match PausedCall::resumed(ctx) {
            Some(resumed) => RunInput::Paused(resumed_run(name, resumed)?),
            None => (self.input)(&self.spec, arguments)?,
        };
        let depth = above.map_or(0, |nesting| nesting.depth) + 1;
        if depth > self.max_depth {
            return Err(ToolError::failed(format!(
                "sub-agent `{name}` was not run: it would run {depth} agents deep, and it may run at most {} deep",
                self.max_depth
            )));
        }
        // Cancelling the call cancels the run; so does cancelling the
        // agent's own context, as it does any run of the agent.
        let token = ctx.cancellation().child_token();
        let mut context = self.agent.context.clone().with_cancellation(token.clone());
        if let Some(deadline) = ctx.deadline() {
            context = context.with_deadline(deadline);
        }
        // The sub-agent's calls have keys under this call's.
        if let Some(key) = ctx.idempotency_key() {
            context = context.with_extension(IdempotencyScope::new(key));
        }
        let events =
            above.and_then(|nesting| nesting.events.as_ref()).map(|sink| sink.below(name, ctx.call_id()));
        let scope = Scope {
            depth,
            above: above.map(|nesting| nesting.tallies.to_vec()).unwrap_or_default(),
            context: Some(context),
        };
        // Through the engine's effects, if it journals a sub-agent's steps;
        // in this process otherwise, the call itself a step of the run.
        let below = above.and_then(|nesting| nesting.effects.clone());
        let effects: &dyn Effects = match &below {
            Some(below) => below,
            None => &InProcess,
        };
        let mut run = pin!(self.agent.drive(input, events, effects, scope));
        let own = self.agent.context.cancellation();
        let ended = tokio::select! {
            biased;
            ended = &mut run => ended,
            () = own.cancelled() => {
                token.cancel();
                run.await
            }
        };
        match (above, ended) {
            // The run above holds the paused run, and pauses with it: this
            // call's result is the sub-agent's answer once it is resumed.
            (Some(_), Ok(RunResult { stop: StopReason::Paused(state), .. })) => {
                let calls = call_names(&state);
                let pending = state.pending().to_vec();
                let state = serde_json::to_value(&*state).map_err(|e| {
                    ToolError::failed(format!(
                        "sub-agent `{name}` paused, and its run could not be kept: {e}"
                    ))
                })?;
                // Its run announced its held calls as it held them.
                match PausedCall::new(state, pending).hand_up_as(ctx, false) {
                    Ok(()) => Err(ToolError::failed(format!(
                        "sub-agent `{name}` paused: its call {calls} waits for a person's approval"
                    ))),
                    Err(_) => Err(ToolError::failed(format!(
                        "sub-agent `{name}` stopped: its call {calls} needs a person's approval, which \
                         nothing above it can wait for"
                    ))),
                }
            }
            (_, ended) => answer(name, ended),
        }
    }
}

/// The sub-agent's paused run a resumed call goes on with: the run it
/// handed up, with the decisions taken about its calls since.
fn resumed_run(name: &str, resumed: PausedCall) -> Result<RunState, ToolError> {
    let mut state = serde_json::from_value::<RunState>(resumed.state).map_err(|e| {
        ToolError::failed(format!(
            "sub-agent `{name}` could not be resumed: its paused run does not read: {e}"
        ))
    })?;
    for pending in resumed.pending {
        let id = pending.id();
        if let Some(decision) = pending.decision {
            state
                .decide(&id, decision)
                .map_err(|e| ToolError::failed(format!("sub-agent `{name}` could not be resumed: {e}")))?;
        }
    }
    Ok(state)
}

/// The names of the calls a paused run holds, for a message.
fn call_names(state: &RunState) -> String {
    let calls: Vec<String> =
        state.pending().iter().map(|pending| format!("`{}`", pending.call.name)).collect();
    calls.join(", ")
}

/// The tool's answer for how the sub-agent's run ended.
fn answer(name: &str, ended: Result<RunResult, AgentError>) -> Result<Output, ToolError> {
    let result = match ended {
        Ok(result) => result,
        Err(AgentError { error, .. }) => {
            let message = format!("sub-agent `{name}` failed: {error}");
            // A rate limit or an outage may pass: a rerun layer may try again.
            return Err(if error.is_transient() {
                ToolError::transient(message)
            } else {
                ToolError::failed(message)
            });
        }
    };
    let cause = match result.stop {
        // An answer, also the best one without tools when the turns ran out.
        StopReason::Answered | StopReason::EndTool { .. } | StopReason::MaxTurns { .. } => {
            return Ok(Output::text(result.answer));
        }
        StopReason::Budget(limit) => format!("stopped before answering: {limit}"),
        StopReason::Truncated { reason } => format!("was cut off before it finished its answer ({reason})"),
        StopReason::Refused { reason } if result.answer.is_empty() => format!("refused ({reason})"),
        StopReason::Refused { reason } => format!("refused ({reason}): {}", result.answer),
        StopReason::Cancelled => "was cancelled".to_owned(),
        // Called outside a run: nothing above can hold the paused run.
        StopReason::Paused(state) => format!(
            "stopped: its call {} needs a person's approval, which a sub-agent called outside an agent \
             run cannot wait for",
            call_names(&state)
        ),
    };
    Err(ToolError::failed(format!("sub-agent `{name}` {cause}")))
}

impl Tool for AgentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(self.serve(ctx, arguments))
    }
}

impl std::fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool")
            .field("name", &self.spec.name())
            .field("agent", &self.agent)
            .field("max_depth", &self.max_depth)
            .finish_non_exhaustive()
    }
}

/// What a run tells the calls it serves about itself, in each call's
/// context: what an agent tool needs to run its agent one level below.
#[derive(Clone, Debug)]
pub(crate) struct Nesting {
    /// The agent tools above the run: 0 for a run no agent tool started.
    pub(crate) depth: usize,
    /// Where the run's events go, if it is streamed (or nested in a
    /// streamed run).
    pub(crate) events: Option<Sink>,
    /// The tallies of the runs above it, outermost first, and its own last.
    pub(crate) tallies: Arc<[Arc<Tally>]>,
    /// The run's calls that paused ([`PausedCall`]), going up and coming back.
    pub(crate) relay: Arc<Relay>,
    /// What the sub-agents of the run's calls take their steps through
    /// ([`Effects::below`]); `None`: in process.
    pub(crate) effects: Option<SubEffects>,
}

/// The effects a sub-agent's run takes its steps through when the engine
/// gives them ([`Effects::below`]): the engine's, but for the wait on a
/// person, which a sub-agent never does: its held calls pause it, and the
/// run above holds them.
#[derive(Clone)]
pub(crate) struct SubEffects(Arc<dyn Effects>);

impl SubEffects {
    /// What `effects` gives its runs' sub-agents, if anything.
    pub(crate) fn of(effects: &dyn Effects) -> Option<Self> {
        effects.below().map(Self)
    }
}

impl std::fmt::Debug for SubEffects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SubEffects")
    }
}

impl Effects for SubEffects {
    fn request<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.0.request(model, request)
    }

    fn request_streamed<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelEvent) + Send + Sync),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.0.request_streamed(model, request, deltas)
    }

    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approval: Approval,
    ) -> BoxFuture<'a, Vec<ToolResult>> {
        self.0.run_calls(toolset, context, calls, approval)
    }

    fn record(&self, event: &AgentEvent) {
        self.0.record(event);
    }

    fn below(&self) -> Option<Arc<dyn Effects>> {
        self.0.below()
    }
}

/// How paused calls pass between a run and the calls it makes: a call
/// that paused ([`PausedCall::hand_up`]: an agent tool whose sub-agent
/// paused, a remote agent waiting for input) leaves what it holds here for
/// the run to hold (its result is no answer), and the run, resuming the
/// call with decisions, leaves it here for the call to go on with
/// ([`PausedCall::resumed`]). Keyed by the call's id, which is unique in a
/// turn; a tool result could not carry the state through a toolset's
/// layers untouched.
#[derive(Debug, Default)]
pub(crate) struct Relay {
    /// The calls paused in this turn, not yet read.
    paused: Mutex<Vec<Relayed>>,
    /// The paused calls the calls being resumed go on with.
    resumed: Mutex<Vec<(String, PausedCall)>>,
}

/// A call that paused, as the run reads it from the [`Relay`].
#[derive(Debug)]
pub(crate) struct Relayed {
    /// The call's id.
    pub(crate) id: String,
    /// What it handed up.
    pub(crate) paused: PausedCall,
    /// Whether the run announces its pending calls (a sub-agent's run
    /// announced its own as it held them).
    pub(crate) announce: bool,
}

impl Relay {
    /// Call `id` paused, handing up `paused`.
    pub(crate) fn paused(&self, id: &str, paused: PausedCall, announce: bool) {
        let relayed = Relayed { id: id.to_owned(), paused, announce };
        self.paused.lock().unwrap_or_else(PoisonError::into_inner).push(relayed);
    }

    /// What call `id` handed up, if it paused.
    pub(crate) fn take_paused_of(&self, id: &str) -> Option<Relayed> {
        let mut paused = self.paused.lock().unwrap_or_else(PoisonError::into_inner);
        let at = paused.iter().position(|relayed| relayed.id == id)?;
        Some(paused.swap_remove(at))
    }

    /// The calls paused since the last read.
    pub(crate) fn take_paused(&self) -> Vec<Relayed> {
        std::mem::take(&mut *self.paused.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Call `id`, run again, goes on from `paused`.
    pub(crate) fn resume(&self, id: &str, paused: PausedCall) {
        self.resumed.lock().unwrap_or_else(PoisonError::into_inner).push((id.to_owned(), paused));
    }

    /// The paused call call `id` goes on from, if it is being resumed.
    pub(crate) fn take_resumed(&self, id: &str) -> Option<PausedCall> {
        let mut resumed = self.resumed.lock().unwrap_or_else(PoisonError::into_inner);
        let at = resumed.iter().position(|(call, _)| call == id)?;
        Some(resumed.swap_remove(at).1)
    }

    /// Forget the paused calls no call took.
    pub(crate) fn clear_resumed(&self) {
        self.resumed.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }
}

/// Where a run sits: what a nested run takes from the run that started it
/// (through its agent tool); the default for a run no agent tool started.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    /// The agent tools above the run.
    pub(crate) depth: usize,
    /// The tallies of the runs above it, outermost first.
    pub(crate) above: Vec<Arc<Tally>>,
    /// The context the run's calls are made from, in place of the agent's:
    /// the agent's, with the call's cancellation.
    pub(crate) context: Option<ToolContext>,
}

/// What the runs below one run have spent, and may still spend, shared
/// with them: each nested run records each of its requests in the tally
/// of every run above it as it is made (so a run that fails still counts),
/// and takes each turn's calls from their allowance before it runs them.
/// The run reads its tally after each turn's calls, into its own progress.
#[derive(Debug)]
pub(crate) struct Tally {
    /// The requests made below, not yet read.
    spent: Mutex<Vec<(ModelName, Usage)>>,
    /// The run's [`RunLimits::max_tool_calls`](crate::RunLimits::max_tool_calls).
    limit: usize,
    /// The calls still allowed below, set by the run before each turn.
    calls_left: AtomicUsize,
}

impl Tally {
    /// The tally of a run that may make `limit` calls.
    pub(crate) fn new(limit: usize) -> Self {
        Self { spent: Mutex::new(Vec::new()), limit, calls_left: AtomicUsize::new(limit) }
    }

    /// A request made below.
    pub(crate) fn spend(&self, model: &ModelName, usage: Usage) {
        self.spent.lock().unwrap_or_else(PoisonError::into_inner).push((model.clone(), usage));
    }

    /// The requests made below since the last read.
    pub(crate) fn take_spent(&self) -> Vec<(ModelName, Usage)> {
        std::mem::take(&mut *self.spent.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Allow `left` calls below, until the run reads how many were made.
    pub(crate) fn allow(&self, left: usize) {
        self.calls_left.store(left, Ordering::SeqCst);
    }

    /// The calls made below since `allow(left)`.
    pub(crate) fn used_since(&self, left: usize) -> usize {
        left.saturating_sub(self.calls_left.load(Ordering::SeqCst))
    }
}

/// Take `calls` from the allowance of every run above, or from none: the
/// first run whose limit it would pass is the error, as its own turn's
/// would be.
pub(crate) fn take_calls(above: &[Arc<Tally>], calls: usize) -> Result<(), LimitExceeded> {
    for (at, tally) in above.iter().enumerate() {
        let taken =
            tally.calls_left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(calls));
        if let Err(left) = taken {
            give_back_calls(&above[..at], calls);
            let requested = tally.limit.saturating_sub(left).saturating_add(calls);
            return Err(LimitExceeded::ToolCalls { limit: tally.limit, requested });
        }
    }
    Ok(())
}

/// Give back calls taken from the runs above for a turn that did not run.
pub(crate) fn give_back_calls(above: &[Arc<Tally>], calls: usize) {
    for tally in above {
        tally.calls_left.fetch_add(calls, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ScriptedModel;
    use serde_json::{Value, json};
    use toolcall_core::{ToolCall, Toolset};

    /// Needs approval; records what it removed.
    #[derive(Clone)]
    struct Remove(Arc<Mutex<Vec<String>>>, ToolSpec);

    impl Tool for Remove {
        fn spec(&self) -> &ToolSpec {
            &self.1
        }
        fn call<'a>(&'a self, _ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
            self.0.lock().unwrap_or_else(PoisonError::into_inner).push(arguments.to_owned());
            Box::pin(async move { Ok(Output::text("removed")) })
        }
    }

    fn team(remove: &Remove, inner: ScriptedModel, outer: ScriptedModel) -> Agent {
        let janitor = Agent::new(inner, Toolset::builder().add(remove.clone()).build().unwrap())
            .unwrap()
            .as_tool("janitor", "Cleans.");
        Agent::new(outer, Toolset::builder().add(janitor).build().unwrap()).unwrap()
    }

    #[tokio::test]
    async fn a_state_saved_when_the_sub_agents_run_held_its_decisions_loads_and_resumes() {
        /// A directory.
        #[derive(Deserialize, JsonSchema)]
        #[expect(dead_code, reason = "only its schema is used")]
        struct Dir {
            /// Its path.
            path: String,
        }
        let spec =
            ToolSpec::from_parameters("remove_dir", "Removes.", toolcall_core::Parameters::of::<Dir>())
                .with_approval_required();
        let remove = Remove(Arc::default(), spec);
        let paused = team(
            &remove,
            ScriptedModel::new().then_calls([ToolCall::new("i1", "remove_dir", r#"{"path":"tmp"}"#)]),
            ScriptedModel::new().then_calls([ToolCall::new("c1", "janitor", r#"{"prompt":"clean"}"#)]),
        )
        .run("go")
        .await
        .unwrap();
        let StopReason::Paused(state) = paused.stop else { panic!("{:?}", paused.stop) };
        let mut saved = serde_json::to_value(&state).unwrap();
        // As the state was saved before any tool could pause: the nested
        // entry is the call and the sub-agent's run, no `pending` beside
        // it, a decision recorded inside the sub-agent's run.
        let below = &mut saved["nested"][0];
        assert_eq!(below["pending"], below["state"]["pending"]);
        below.as_object_mut().unwrap().remove("pending");
        below["state"]["pending"][0]["decision"] = json!({"decision": "approve"});
        saved["pending"][0]["decision"] = json!({"decision": "approve"});
        let old: Value = saved;
        let state: RunState = serde_json::from_value(old).unwrap();
        assert_eq!(state.pending()[0].id(), "c1/i1");
        assert_eq!(state.pending()[0].decision, Some(crate::Decision::Approve));
        let result = team(
            &remove,
            ScriptedModel::new().then_text("Removed tmp."),
            ScriptedModel::new().then_text("The janitor removed tmp."),
        )
        .run(state)
        .await
        .unwrap();
        assert_eq!(result.answer, "The janitor removed tmp.");
        assert_eq!(*remove.0.lock().unwrap_or_else(PoisonError::into_inner), [r#"{"path":"tmp"}"#]);
    }

    #[test]
    fn calls_are_taken_from_every_run_above_or_from_none() {
        let (outer, middle) = (Arc::new(Tally::new(10)), Arc::new(Tally::new(3)));
        outer.allow(5);
        middle.allow(3);
        let above = [Arc::clone(&outer), Arc::clone(&middle)];
        take_calls(&above, 2).unwrap();
        // The middle run has 1 left: the outer's 3 are not touched.
        let refused = take_calls(&above, 2).unwrap_err();
        assert_eq!(refused, LimitExceeded::ToolCalls { limit: 3, requested: 4 });
        assert_eq!((outer.used_since(5), middle.used_since(3)), (2, 2));
    }
}
