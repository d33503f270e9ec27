//! One run's loop: ask the model, run the turn's calls, record, stop.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use tracing::Instrument;

use serde_json::Value;
use toolcall_core::layers::RepairBudget;
use toolcall_core::{Outcome, ToolCall, ToolContext, ToolError, ToolResult, Toolset};

use crate::agent_tool::{Nesting, Relay, Scope, SubEffects, Tally, give_back_calls, take_calls};
use crate::approval::{Below, Decision, Held, Parts, Pending, Placed, denied, in_turn_order};
use crate::effects::Approval;
use crate::model::{ModelName, ModelRequest, ModelResponse, Usage};
use crate::stream::{Sink, forward};
use crate::{
    Agent, AgentEvent, AnswerMode, Content, ContextPolicy, Effects, Finish, Handoff, Message, ModelError,
    RunBudget, RunState, StopReason, Transcript,
};

/// How a run ends: the answer and why.
pub(crate) type Ended = (String, StopReason);

/// What a run has done so far, and goes on from: its transcript, the
/// tokens and the model of each request, what it spent of its limits and
/// its turns with tools. A new run starts from an empty one, a continued
/// one from a transcript; a paused run keeps one beside its held turn
/// ([`Parts`]). The loop adds to it as it goes, and the run's result, or
/// its pause, is made of it: one value rather than five passed along.
#[derive(Clone, Debug, Default)]
pub(crate) struct Progress {
    pub(crate) transcript: Transcript,
    pub(crate) usage: Vec<Usage>,
    /// The model that answered each request, in the order of `usage`.
    pub(crate) models: Vec<ModelName>,
    pub(crate) budget: RunBudget,
    /// The turns with tools so far.
    pub(crate) turns: usize,
    /// The names of the agents the run was handed to, in order
    /// ([`Agent::with_handoff`]): the last one has it now.
    pub(crate) handoffs: Vec<String>,
}

impl Progress {
    /// A run that has done nothing yet but `transcript`.
    pub(crate) fn of(transcript: Transcript) -> Self {
        Self { transcript, ..Self::default() }
    }
}

/// One run's state as the loop goes.
pub(crate) struct Run<'a> {
    pub(crate) agent: &'a Agent,
    /// What the run has done; what its result is made of.
    pub(crate) progress: Progress,
    events: Option<Sink>,
    /// How the model requests, the calls and the wait for decisions happen.
    effects: &'a dyn Effects,
    /// The agent's context (or the one an agent tool runs it with) with
    /// this run's repair budget and its [`Nesting`]: what the calls see,
    /// and whose token cancels the run.
    context: ToolContext,
    /// The tallies of the runs above this one (if an agent tool started
    /// it), outermost first: each request is recorded in them, each turn's
    /// calls taken from them.
    above: Vec<Arc<Tally>>,
    /// What the runs below this one (its agent tools') spend.
    tally: Arc<Tally>,
    /// Its calls that paused ([`crate::PausedCall`]), going up and coming back.
    relay: Arc<Relay>,
    /// The requests in `progress` made by runs below this one.
    pub(crate) nested: usize,
    /// The repairs this run may still make, and how many it was given.
    repairs: (RepairBudget, usize),
    /// The tools of this turn: what the agent's toolset shows with the
    /// run's context ([`Toolset::prepared`]); offered to the model, and
    /// what the turn's calls run against. The toolset itself, borrowed,
    /// when it has no prepare step.
    tools: Cow<'a, Toolset>,
    /// The typed answer, once one was read.
    pub(crate) typed_answer: Option<Value>,
    /// How many messages the transcript had when it was last kept
    /// ([`Effects::checkpoint`]).
    kept: usize,
    /// The input tokens the provider reported for the run's last request
    /// under a context policy, and the tokens estimated for what it sent:
    /// the policy's calibration.
    calibration: Option<(u64, u64)>,
}

impl<'a> Run<'a> {
    /// A run that goes on from `progress` (its budget under the agent's
    /// limits), its events sent on `events` if it is streamed, where
    /// `scope` puts it (below the run whose agent tool started it, if any).
    pub(crate) fn new(
        agent: &'a Agent,
        mut progress: Progress,
        events: Option<Sink>,
        effects: &'a dyn Effects,
        scope: Scope,
    ) -> Self {
        progress.budget = progress.budget.under(agent.limits);
        let given = agent.limits.max_repairs.saturating_sub(progress.budget.repairs());
        let repairs = RepairBudget::new(u32::try_from(given).unwrap_or(u32::MAX));
        let Scope { depth, above, context } = scope;
        let tally = Arc::new(Tally::new(agent.limits.max_tool_calls));
        let relay = Arc::new(Relay::default());
        let nesting = Nesting {
            depth,
            events: events.clone(),
            tallies: above.iter().cloned().chain([Arc::clone(&tally)]).collect(),
            relay: Arc::clone(&relay),
            effects: SubEffects::of(effects),
        };
        let context = context
            .unwrap_or_else(|| agent.context.clone())
            .with_extension(repairs.clone())
            .with_extension(nesting);
        // Each request prepares its turn's tools; calls left pending by a
        // saved or paused run answer to the tools shown now.
        let progress_len = progress.transcript.messages.len();
        let tools = if progress.transcript.pending_calls().is_empty() {
            Cow::Borrowed(&agent.toolset)
        } else {
            agent.toolset.prepared(&context)
        };
        Self {
            agent,
            progress,
            events,
            effects,
            context,
            above,
            tally,
            relay,
            nested: 0,
            repairs: (repairs, given),
            tools,
            typed_answer: None,
            kept: progress_len,
            calibration: None,
        }
    }

    pub(crate) async fn go(&mut self) -> Result<Ended, ModelError> {
        loop {
            self.keep().await?;
            // The agent the run is with: a handoff changes it.
            let agent = self.agent;
            let pending = self.progress.transcript.pending_calls();
            if !pending.is_empty() {
                if let Some(stop) = self.run_calls(&pending).await? {
                    return Ok(stop);
                }
                continue;
            }
            if self.context.is_cancelled() {
                return Ok((String::new(), StopReason::Cancelled));
            }
            let last = self.progress.turns >= agent.limits.max_turns;
            let Some(response) = self.ask(!last).await? else {
                return Ok((String::new(), StopReason::Cancelled));
            };
            self.progress.turns += 1;
            let text = response.text();
            let answered = response.calls().next().is_none();
            let ModelResponse { mut content, finish, .. } = response;
            let paused = matches!(finish, Finish::Paused { .. });
            let (stop, malformed) = match finish {
                Finish::Truncated { reason } => (Some(StopReason::Truncated { reason }), None),
                Finish::Refused { reason } => (Some(StopReason::Refused { reason }), None),
                _ if last => (Some(StopReason::MaxTurns { turns: agent.limits.max_turns }), None),
                Finish::Malformed { reason } => (None, Some(reason)),
                _ => (None, None),
            };
            // A turn that ends the run keeps no calls: none will be
            // answered (a model that calls tools anyway on the tool-less
            // last request), and those of a cut turn may be cut themselves,
            // so the transcript stays one a provider accepts. Nor does a
            // malformed one, which the model is asked to make again.
            if stop.is_some() || malformed.is_some() {
                content.retain(|piece| !matches!(piece, Content::Call(_)));
            }
            self.progress.transcript.push(Message::Assistant { content });
            if let Some(stop) = stop {
                if let (StopReason::MaxTurns { .. }, Some(answer)) = (&stop, &agent.answer) {
                    self.typed_answer = answer.read(&text).ok();
                }
                return Ok((text, stop));
            }
            if let Some(reason) = malformed {
                if let Err(limit) = self.progress.budget.record_malformed(&reason) {
                    return Ok((String::new(), StopReason::Budget(limit)));
                }
                self.progress.transcript.push(Message::user(format!(
                    "Your last tool call could not be read ({reason}). Call the tool again, with arguments \
                     that are one JSON object matching its parameters."
                )));
                continue;
            }
            // The provider paused its own turn: asking again, with nothing
            // new, continues it (each continuation is a turn).
            if answered
                && !paused
                && let Some(ended) = self.answered(text)
            {
                return Ok(ended);
            }
        }
    }

    /// Keep the transcript if it changed since it was last kept: a
    /// response whose calls are about to run, or a turn's results.
    async fn keep(&mut self) -> Result<(), ModelError> {
        let messages = self.progress.transcript.messages.len();
        if messages != self.kept {
            self.effects.checkpoint(&self.progress.transcript).await?;
            self.kept = messages;
        }
        Ok(())
    }

    /// The model answered `text`: the run ends, but with an answer type
    /// only once the text reads as the answer (in tool mode, text that
    /// reads as the tool's arguments is taken too). Otherwise the model is
    /// told why and asked again (`None`), which counts as a retry of the
    /// answer.
    fn answered(&mut self, text: String) -> Option<Ended> {
        let Some(answer) = &self.agent.answer else { return Some((text, StopReason::Answered)) };
        let reason = match answer.read(&text) {
            Ok(value) => {
                self.typed_answer = Some(value);
                return Some((text, StopReason::Answered));
            }
            Err(ToolError::InvalidArguments(reason)) => reason,
            Err(other) => other.to_string(),
        };
        let retry = ToolResult::new("", answer.name(), "", Outcome::InvalidArguments);
        if let Err(limit) = self.progress.budget.record(&[retry]) {
            return Some((String::new(), StopReason::Budget(limit)));
        }
        let ask = match answer.mode() {
            AnswerMode::Tool => format!(
                "Give your final answer by calling `{}`: your text does not read as its arguments ({reason}).",
                answer.name()
            ),
            _ => format!(
                "Your answer does not match its JSON schema: {reason}. Answer again with JSON that does."
            ),
        };
        self.progress.transcript.push(Message::user(ask));
        None
    }

    /// One model request, traced; `None` if the context was cancelled first.
    async fn ask(&mut self, with_tools: bool) -> Result<Option<ModelResponse>, ModelError> {
        let agent = self.agent;
        if with_tools {
            self.tools = agent.toolset.prepared(&self.context);
            if self.tools.tool_search().is_some() {
                // What the run's searches found is offered from now on.
                let found = crate::search::found_in(&self.progress.transcript);
                self.tools = Cow::Owned(self.tools.as_ref().clone().with_loaded(found));
            }
        }
        // What is sent: the transcript with its latest summary standing for
        // what it covers, kept under the context policy's budget; or, where
        // the policy leaves it to the provider, the transcript as it is,
        // with the provider's own context management asked for.
        let policy = agent.context_policy.as_ref();
        let native = policy.and_then(|policy| policy.native_for(agent.model.as_ref()));
        let (settings, policy) = match native {
            Some(native) => (Cow::Owned(agent.settings.clone().with_native_context(native)), None),
            None => (Cow::Borrowed(&agent.settings), policy),
        };
        let room = match policy {
            Some(policy) => match self.make_room(policy, with_tools).await {
                Some(room) => Some((policy, room)),
                None => return Ok(None),
            },
            None => None,
        };
        let (sent, sent_bytes) = match room {
            Some((policy, (limit, fixed))) => {
                let fitted = policy.fit(&self.progress.transcript.messages, limit);
                crate::context::trace_fitted(&fitted, policy, limit, fixed);
                (fitted.messages, Some(fixed + fitted.bytes))
            }
            None => (crate::context::sent(&self.progress.transcript.messages), None),
        };
        let request = ModelRequest {
            instructions: self.progress.transcript.instructions.as_deref(),
            messages: &sent,
            tools: with_tools.then_some(&*self.tools),
            settings: &settings,
            answer: agent.answer.as_ref().filter(|answer| answer.mode() == AnswerMode::Native),
        };
        let span = crate::trace::chat_span(agent);
        if agent.trace_content && !span.is_disabled() {
            crate::trace::record_input(&span, request.instructions, request.messages);
        }
        let started = Instant::now();
        let events = self.events.clone();
        let exchange = async {
            match &events {
                None => self.effects.request(agent.model.as_ref(), request).await,
                Some(events) => {
                    let deltas = |piece| forward(events, piece);
                    self.effects.request_streamed(agent.model.as_ref(), request, &deltas).await
                }
            }
        };
        let cancelled = self.context.cancellation().cancelled();
        let response = tokio::select! {
            biased;
            () = cancelled => return Ok(None),
            response = exchange.instrument(span.clone()) => response,
        };
        span.record("duration_ms", started.elapsed().as_millis() as u64);
        let response = response.inspect_err(|error| {
            crate::trace::record_provider(&span, agent.model.provider());
            crate::trace::record_error(&span, error);
        })?;
        // Which model answered: the agent's, unless it stands for several
        // and names the one that did (the conventions' request and
        // response model).
        let answered = response.model.clone().unwrap_or_else(|| ModelName::of(agent.model.as_ref()));
        let who = (answered.provider.as_str(), answered.model.as_str());
        crate::trace::record_response(&span, who, &response, agent.trace_content);
        self.spent(answered, response.usage);
        if let (Some(reported), Some(bytes)) = (response.usage.input_tokens, sent_bytes) {
            self.calibration = Some((reported, bytes.div_ceil(4)));
        }
        self.record_whole(&response);
        self.emit(AgentEvent::Usage(response.usage));
        Ok(Some(response))
    }

    /// Before a request under a context policy: the summary the policy
    /// asks for, if it does, added to the transcript; then the bytes the
    /// messages may take, and those of the instructions and tools. `None`
    /// if the context was cancelled.
    async fn make_room(&mut self, policy: &ContextPolicy, with_tools: bool) -> Option<(u64, u64)> {
        let agent = self.agent;
        let tools = with_tools.then_some(&*self.tools);
        let instructions = self.progress.transcript.instructions.as_deref();
        let fixed = crate::context::fixed_bytes(agent.model.as_ref(), instructions, tools);
        let limit = policy.limit(fixed, self.calibration);
        let Some(ask) = policy.summary_needed(&self.progress.transcript.messages, limit) else {
            return Some((limit, fixed));
        };
        let model = ask.model(agent.model.as_ref());
        let cancelled = self.context.cancellation().cancelled();
        let response = tokio::select! {
            biased;
            () = cancelled => return None,
            response = ask.request(model, &agent.settings, self.effects) => response,
        };
        // A summary that cannot be had leaves the other strategies to keep
        // the budget: the run goes on.
        match response {
            Ok(response) => {
                self.spent(response.model.clone().unwrap_or_else(|| ModelName::of(model)), response.usage);
                self.emit(AgentEvent::Usage(response.usage));
                let text = response.text();
                if text.trim().is_empty() {
                    tracing::warn!(target: "toolcall_agent::context", "the summary request gave no text: no summary made");
                } else {
                    tracing::debug!(target: "toolcall_agent::context", covers = ask.covers, "summary made");
                    self.progress.transcript.push(Message::summary(text, ask.covers));
                }
            }
            Err(error) => {
                tracing::warn!(target: "toolcall_agent::context", %error, "the summary request failed: no summary made");
            }
        }
        Some((limit, fixed))
    }

    /// Run one turn's calls and record their results; `Some` when the run
    /// stops here. Calls that need approval do not run: the run waits for
    /// the engine's decision, or pauses.
    async fn run_calls(&mut self, calls: &[ToolCall]) -> Result<Option<Ended>, ModelError> {
        // The calls count against the limits of the runs above this one
        // (if an agent tool started it) as against its own. The calls stay
        // pending in the transcript: continuing the run (with a larger
        // budget) runs them.
        if let Err(limit) = take_calls(&self.above, calls.len()) {
            return Ok(Some((String::new(), StopReason::Budget(limit))));
        }
        if let Err(limit) = self.progress.budget.admit(calls) {
            give_back_calls(&self.above, calls.len());
            return Ok(Some((String::new(), StopReason::Budget(limit))));
        }
        let (held, ready): (Vec<_>, Vec<_>) = calls
            .iter()
            .cloned()
            .enumerate()
            .partition(|(_, call)| self.tools.needs_approval(&self.context, call));
        let (positions, ready): (Vec<usize>, Vec<ToolCall>) = ready.into_iter().unzip();
        let pending: Vec<Pending> =
            held.into_iter().map(|(position, call)| Pending::new(position, call)).collect();
        // A UI asks while the turn's other calls run.
        self.announce(&pending);
        let ran = self.execute(&ready, Approval::Required).await;
        let (done, nested) = place(positions, ready, ran);
        if pending.is_empty() && nested.is_empty() {
            return Ok(self.finish_turn(done.into_iter().map(|placed| placed.result).collect()));
        }
        // Calls of its own wait, or sub-agents paused on calls of theirs.
        match self.hold(Held { done, pending, nested }).await? {
            Ok(held) => self.resume_turn(held).await,
            Err(paused) => Ok(Some(paused)),
        }
    }

    /// Calls wait for a decision: the engine's, with which the turn goes on
    /// (`Ok`), or none, and the run pauses (`Err`, how it ends).
    async fn hold(&mut self, held: Held) -> Result<Result<Held, Ended>, ModelError> {
        let paused = self.pause(held);
        let StopReason::Paused(state) = &paused.1 else { return Ok(Err(paused)) };
        Ok(match self.effects.decide(state).await? {
            Some(decided) => Ok(decided.into_parts().held),
            None => Err(paused),
        })
    }

    /// Go on with a paused turn: the approved calls run, the denied ones
    /// answer their reason, the agent-tool calls whose sub-agent has
    /// decisions go on with its run; `Some` when the run stops here, paused
    /// again if calls are still undecided (and the engine does not decide
    /// them).
    pub(crate) async fn resume_turn(&mut self, held: Held) -> Result<Option<Ended>, ModelError> {
        let Held { mut done, mut pending, mut nested } = held;
        loop {
            let (undecided, waiting) = self.run_decided(&mut done, pending, nested).await;
            if undecided.is_empty() && waiting.is_empty() {
                let results = in_turn_order(&self.progress.transcript.pending_calls(), done);
                return Ok(self.finish_turn(results));
            }
            match self.hold(Held { done, pending: undecided, nested: waiting }).await? {
                Ok(decided) => Held { done, pending, nested } = decided,
                Err(paused) => return Ok(Some(paused)),
            }
        }
    }

    /// Run the calls decided about (approved ones run, denied ones answer
    /// their reason) into `done`, with the agent-tool calls whose
    /// sub-agent has decisions, which go on with its paused run; the
    /// undecided calls, and the calls whose sub-agent is still paused, are
    /// given back.
    async fn run_decided(
        &mut self,
        done: &mut Vec<Placed>,
        pending: Vec<Pending>,
        nested: Vec<Below>,
    ) -> (Vec<Pending>, Vec<Below>) {
        let (decided, undecided): (Vec<_>, Vec<_>) =
            pending.into_iter().partition(|pending| pending.decision.is_some());
        // A sub-agent's run with nothing decided would only pause again.
        let (resumed, mut waiting): (Vec<_>, Vec<_>) = nested.into_iter().partition(Below::decided);
        // Each stream that ends paused has asked about every call it leaves
        // waiting: a resumed sub-agent asks again about its own.
        self.announce(&undecided);
        for below in &waiting {
            self.announce(&below.pending().collect::<Vec<_>>());
        }
        let mut approved = Vec::new();
        for pending in decided {
            let position = pending.position();
            match pending.decision {
                Some(Decision::Deny { reason }) => {
                    let result = denied(&pending.call, &reason);
                    self.emit(AgentEvent::ToolResult(result.clone()));
                    done.push(Placed { position, result });
                }
                Some(Decision::ApproveWith { arguments }) => {
                    self.rewrite_call(position, &arguments);
                    approved.push((position, ToolCall { arguments, ..pending.call }));
                }
                Some(Decision::Approve) | None => approved.push((position, pending.call)),
            }
        }
        // The call runs again, and its tool goes on from what it handed
        // up, found in the relay. It ran once, approved if need be.
        for Below { position, call, held } in resumed {
            self.relay.resume(&call.id, held);
            approved.push((position, call));
        }
        let (positions, calls): (Vec<usize>, Vec<ToolCall>) = approved.into_iter().unzip();
        let ran = self.execute(&calls, Approval::Approved).await;
        let (placed, paused) = place(positions, calls, ran);
        done.extend(placed);
        waiting.extend(paused);
        (undecided, waiting)
    }

    /// Run calls (as approved, or checked for approval), with their events;
    /// what the runs of agent tools among them spent is counted as this
    /// run's. An agent-tool call whose sub-agent paused gives its paused
    /// run, and no result: the run holds it.
    async fn execute(&mut self, calls: &[ToolCall], approval: Approval) -> Vec<Ran> {
        // Every call held: no turn for the effects to run (or journal).
        if calls.is_empty() {
            return Vec::new();
        }
        for call in calls {
            self.emit(AgentEvent::ToolCall(call.clone()));
        }
        let budget = &self.progress.budget;
        let left = budget.limits().max_tool_calls.saturating_sub(budget.calls());
        self.tally.allow(left);
        let results = self.run_tools(calls, approval).await;
        self.progress.budget.add_calls(self.tally.used_since(left));
        for (model, usage) in self.tally.take_spent() {
            // Already in the tallies above: the run that made it recorded
            // it in every one.
            self.progress.models.push(model);
            self.progress.usage.push(usage);
            self.nested += 1;
        }
        let mut paused = self.relay.take_paused();
        // A resumed call whose tool did not take its paused call (a tool
        // that failed before it ran) leaves nothing behind for the next.
        self.relay.clear_resumed();
        let ran: Vec<Ran> = calls
            .iter()
            .zip(results)
            .map(|(call, result)| match paused.iter().position(|relayed| relayed.id == call.id) {
                Some(at) => Ran::Paused(paused.swap_remove(at)),
                None => Ran::Done(result),
            })
            .collect();
        for (call, ran) in calls.iter().zip(&ran) {
            match ran {
                Ran::Done(result) => self.emit(AgentEvent::ToolResult(result.clone())),
                Ran::Paused(relayed) if relayed.announce => {
                    self.announce(&relayed.paused.pending_under(call).collect::<Vec<_>>());
                }
                // Its run streamed them as it held them, but recorded them
                // in its own effects, which are not this run's.
                Ran::Paused(relayed) => {
                    for pending in relayed.paused.pending_under(call) {
                        self.effects.record(&AgentEvent::ApprovalRequested(pending));
                    }
                }
            }
        }
        ran
    }

    /// Run calls through the turn's toolset. With tool search on, the
    /// calls' context holds the turn's setting: the search function leaves
    /// out what this turn already offers.
    async fn run_tools(&self, calls: &[ToolCall], approval: Approval) -> Vec<ToolResult> {
        let context = match self.tools.tool_search() {
            Some(search) => Cow::Owned(self.context.clone().with_extension(search.clone())),
            None => Cow::Borrowed(&self.context),
        };
        self.effects.run_calls(&self.tools, &context, calls, approval).await
    }

    /// Record a whole turn's results; `Some` when the run stops here.
    fn finish_turn(&mut self, mut results: Vec<ToolResult>) -> Option<Ended> {
        let agent = self.agent;
        self.count_repairs();
        let recorded = self.progress.budget.record(&results);
        let ended = results.iter().find(|result| {
            result.outcome.is_success()
                && agent.end_tools.iter().any(|end| end.eq_ignore_ascii_case(&result.name))
        });
        let ended = ended.map(|result| match self.answer_call(result) {
            Some(value) => {
                self.typed_answer = Some(value);
                (result.content.clone(), StopReason::Answered)
            }
            None => (result.content.clone(), StopReason::EndTool { tool: result.name.to_string() }),
        });
        let handoff = if ended.is_none() { handoff_in(agent, &mut results) } else { None };
        self.progress.transcript.push(Message::Tool { results });
        if let Some(ended) = ended {
            return Some(ended);
        }
        if self.context.is_cancelled() {
            return Some((String::new(), StopReason::Cancelled));
        }
        if let Err(limit) = recorded {
            return Some((String::new(), StopReason::Budget(limit)));
        }
        if let Some(handoff) = handoff {
            self.hand_over(handoff);
        }
        None
    }

    /// The run goes on with the agent `handoff` names: its instructions,
    /// tools, model, settings, limits and context (with the run's
    /// cancellation, deadline, repairs and nesting), the conversation as
    /// its history says.
    fn hand_over(&mut self, handoff: &'a Handoff) {
        let to = handoff.agent();
        let from = self.agent.name.clone();
        handoff.carry(&mut self.progress.transcript);
        self.progress.handoffs.push(handoff.name().to_owned());
        self.progress.budget = self.progress.budget.clone().under(to.limits);
        let mut context = to.context.clone().with_cancellation(self.context.cancellation().clone());
        if let Some(deadline) = self.context.deadline() {
            context = context.with_deadline(deadline);
        }
        context = context.with_extension(self.repairs.0.clone());
        if let Some(nesting) = self.context.get::<Nesting>() {
            context = context.with_extension(nesting.clone());
        }
        self.context = context;
        self.agent = to;
        self.tools = Cow::Borrowed(&to.toolset);
        tracing::info!(target: "toolcall_agent", from = from.as_deref(), to = handoff.name(), "handoff");
        self.emit(AgentEvent::Handoff { from, to: handoff.name().to_owned() });
    }

    /// The typed answer a successful result gives, if it is the answer
    /// tool's: its call's arguments, read (as the call read them).
    fn answer_call(&self, result: &ToolResult) -> Option<Value> {
        let answer = self.agent.answer.as_ref().filter(|answer| answer.mode() == AnswerMode::Tool)?;
        if !answer.name().eq_ignore_ascii_case(&result.name) {
            return None;
        }
        let calls = self.progress.transcript.pending_calls();
        let call = calls.iter().find(|call| call.id == result.id)?;
        answer.read(&call.arguments).ok()
    }

    /// The run pauses on `held`: its state, as the caller resumes it.
    fn pause(&mut self, held: Held) -> Ended {
        self.count_repairs();
        let state = RunState::new(Parts { progress: self.progress.clone(), held });
        (String::new(), StopReason::Paused(Box::new(state)))
    }

    /// The budget records the repairs the calls made so far.
    fn count_repairs(&mut self) {
        let (left, given) = &mut self.repairs;
        let made = given.saturating_sub(left.remaining() as usize);
        self.progress.budget.add_repairs(made);
        *given -= made;
    }

    /// The transcript records an approved call with the arguments it ran with.
    fn rewrite_call(&mut self, position: usize, arguments: &str) {
        let Some(Message::Assistant { content }) = self.progress.transcript.messages.last_mut() else {
            return;
        };
        let calls = content.iter_mut().filter_map(|piece| match piece {
            Content::Call(call) => Some(call),
            _ => None,
        });
        if let Some(call) = calls.into_iter().nth(position) {
            arguments.clone_into(&mut call.arguments);
        }
    }

    /// Tell the stream about calls held for approval (a sub-agent's with
    /// their path).
    fn announce(&self, held: &[Pending]) {
        for pending in held {
            self.emit(AgentEvent::ApprovalRequested(pending.clone()));
        }
    }

    /// The response's reasoning and text, whole, for the effects' record
    /// ([`Effects::record`]), which never sees the pieces a stream sends.
    fn record_whole(&self, response: &ModelResponse) {
        let reasoning: String = response
            .content
            .iter()
            .filter_map(|piece| match piece {
                Content::Reasoning(reasoning) => reasoning.visible(),
                _ => None,
            })
            .collect();
        if !reasoning.is_empty() {
            self.effects.record(&AgentEvent::ReasoningDelta(reasoning));
        }
        let text = response.text();
        if !text.is_empty() {
            self.effects.record(&AgentEvent::TextDelta(text));
        }
    }

    fn emit(&self, event: AgentEvent) {
        self.effects.record(&event);
        if let Some(events) = &self.events {
            events.send(event);
        }
    }

    /// A request of this run's was answered by `model`, for `usage`: the
    /// run's, and every run's above it, so that a sub-agent that fails
    /// later is still counted.
    fn spent(&mut self, model: ModelName, usage: Usage) {
        for tally in &self.above {
            tally.spend(&model, usage);
        }
        self.progress.models.push(model);
        self.progress.usage.push(usage);
    }
}

/// How one call of a turn went: its result, or, for a call that paused
/// (an agent-tool call whose sub-agent paused...), what it handed up.
pub(crate) enum Ran {
    Done(ToolResult),
    Paused(crate::agent_tool::Relayed),
}

/// The first handoff of `agent` that a turn's results show succeeded: the
/// run goes on with its agent. Any later one's result says that it was
/// not taken.
fn handoff_in<'a>(agent: &'a Agent, results: &mut [ToolResult]) -> Option<&'a Handoff> {
    let mut taken: Option<&'a Handoff> = None;
    for result in results.iter_mut().filter(|result| result.outcome.is_success()) {
        let Some(handoff) = agent.handoff_called(&result.name) else { continue };
        match taken {
            None => taken = Some(handoff),
            Some(first) => {
                result.content = format!(
                    "Not handed to `{}`: the conversation went to `{}`, called first in this turn.",
                    handoff.name(),
                    first.name()
                );
            }
        }
    }
    taken
}

/// The calls that ran, at their places in the turn (`positions`, in the
/// order of `calls`), and the agent-tool calls whose sub-agent paused.
fn place(positions: Vec<usize>, calls: Vec<ToolCall>, ran: Vec<Ran>) -> (Vec<Placed>, Vec<Below>) {
    let mut done = Vec::new();
    let mut nested = Vec::new();
    for ((position, call), ran) in positions.into_iter().zip(calls).zip(ran) {
        match ran {
            Ran::Done(result) => done.push(Placed { position, result }),
            Ran::Paused(relayed) => nested.push(Below { position, call, held: relayed.paused }),
        }
    }
    (done, nested)
}
