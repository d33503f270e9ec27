//! The one state machine both protocols share: [`Track`] follows a
//! response's [`AgentEvent`]s (which text or reasoning block is open,
//! whether a step is under way and its model request is over, which calls
//! were shown, whether a resumed response still goes on with calls shown
//! before) and says what to show next, protocol-neutral ([`Show`]), which
//! each adapter only renders: [`UiAdapter`](crate::UiAdapter) as UI message chunks,
//! [`AguiAdapter`](crate::AguiAdapter) as AG-UI events. What one protocol
//! has no place for, its renderer leaves out (AG-UI has no step chunks,
//! the UI stream no end of a call's arguments).

use std::collections::HashSet;

use serde_json::Value;
use toolcall_agent::{AgentError, AgentEvent, Pending, RunResult};
use toolcall_core::{ToolCall, ToolResult};

use crate::calls::Calls;

/// What a response shows next, in order, whatever the protocol.
#[derive(Debug)]
pub(crate) enum Show<'e> {
    /// A step starts: a model request, and the calls it made with their
    /// results.
    StepStart,
    /// The step is over (the model writes again, or the run ends).
    StepEnd,
    /// A text block opens; its pieces and end follow.
    TextStart,
    /// More of the open text block.
    Text(&'e str),
    /// The open text block is complete.
    TextEnd,
    /// A reasoning block opens.
    ReasoningStart,
    /// More of the open reasoning block.
    Reasoning(&'e str),
    /// The open reasoning block is complete.
    ReasoningEnd,
    /// A call shows for the first time: streamed, once its id and name
    /// are known; or whole.
    CallStart {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a streamed call's argument text.
    CallArgs {
        /// The call's id.
        id: String,
        /// The argument text that follows.
        delta: String,
    },
    /// A streamed call's arguments are complete: the model's turn is over.
    CallArgsEnd {
        /// The call's id.
        id: String,
    },
    /// A call whole, once: its arguments are known. `streamed`: its start
    /// and argument text were shown as the model streamed it.
    Call {
        /// The call.
        call: &'e ToolCall,
        /// Shown already as it streamed.
        streamed: bool,
    },
    /// A call waits for a person's approval: `id` is what the decision
    /// names ([`Pending::id`](toolcall_agent::Pending::id)), `call_id` the
    /// page's call it is asked on: the call itself, or for a sub-agent's
    /// call the run's own agent-tool call it is inside (the page never
    /// saw the sub-agent's calls, whose ids may be the run's own).
    Approval {
        /// The approval's id.
        id: String,
        /// The id of the page's call that asks.
        call_id: &'e str,
        /// For a sub-agent's call, the call itself, which the page never
        /// saw: what the person is asked about.
        inner: Option<&'e Pending>,
    },
    /// A call's result.
    Result(&'e ToolResult),
    /// The run's typed answer, before the end of its last step.
    Answer(&'e Value),
    /// The conversation went to the agent of this name (a handoff): who
    /// answers from here.
    Agent(&'e str),
    /// The run is over: its result, or why it failed. Always last.
    End(&'e Result<RunResult, AgentError>),
}

/// The open block of the model's output.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Text,
    Reasoning,
}

/// The state of one response, for what it shows: one per response (a run,
/// or a resumed run).
#[derive(Default)]
pub(crate) struct Track {
    /// The open text or reasoning block.
    open: Option<Block>,
    /// A step is under way.
    in_step: bool,
    /// Its model request is over: what the model writes next is a new step.
    answered: bool,
    /// Calls streamed this turn, and every call shown with its start.
    calls: Calls,
    /// Calls shown whole.
    whole: HashSet<String>,
    /// The response goes on with a message whose calls were shown by the
    /// response that paused: until the model writes again, no call is
    /// shown again and results start no step.
    resumed: bool,
}

impl Track {
    /// The state of a response that goes on with calls shown before.
    pub(crate) fn resuming() -> Self {
        Self { resumed: true, ..Self::default() }
    }

    /// What to show of one event, in order, each given to `emit`.
    pub(crate) fn push<'e>(&mut self, event: &'e AgentEvent, mut emit: impl FnMut(Show<'e>)) {
        match event {
            AgentEvent::TextDelta(delta) => {
                self.model_output(&mut emit);
                self.open(Block::Text, &mut emit);
                emit(Show::Text(delta));
            }
            AgentEvent::ReasoningDelta(delta) => {
                self.model_output(&mut emit);
                self.open(Block::Reasoning, &mut emit);
                emit(Show::Reasoning(delta));
            }
            AgentEvent::CallDelta { index, id, name, arguments } => {
                self.model_output(&mut emit);
                self.close(&mut emit);
                if let Some(piece) = self.calls.delta(*index, id.as_deref(), name.as_deref(), arguments) {
                    if piece.first {
                        emit(Show::CallStart { id: piece.id.clone(), name: piece.name });
                    }
                    if !piece.delta.is_empty() {
                        emit(Show::CallArgs { id: piece.id, delta: piece.delta });
                    }
                }
            }
            AgentEvent::Usage(_) => {
                // The model's response is over, its calls' arguments complete.
                self.turn_over(&mut emit);
                self.answered = true;
            }
            AgentEvent::ToolCall(call) => self.show(call, &mut emit),
            AgentEvent::ApprovalRequested(pending) => match pending.call_path.first() {
                None => {
                    self.show(&pending.call, &mut emit);
                    emit(Show::Approval { id: pending.id(), call_id: &pending.call.id, inner: None });
                }
                // A sub-agent's call: asked on the agent-tool call the page shows.
                Some(outer) => {
                    emit(Show::Approval { id: pending.id(), call_id: outer, inner: Some(pending) })
                }
            },
            AgentEvent::ToolResult(result) => {
                if !self.resumed {
                    self.step(&mut emit);
                }
                emit(Show::Result(result));
                // What the model writes next is the next step.
                self.answered = true;
            }
            AgentEvent::Finished(ended) => {
                self.turn_over(&mut emit);
                if let Ok(result) = ended
                    && let Some(answer) = &result.typed_answer
                {
                    emit(Show::Answer(answer));
                }
                if self.in_step {
                    self.in_step = false;
                    emit(Show::StepEnd);
                }
                emit(Show::End(ended));
            }
            AgentEvent::Handoff { to, .. } => emit(Show::Agent(to)),
            // An event no protocol shows.
            _ => {}
        }
    }

    /// A step is under way (a resumed run's first results start one).
    fn step<'e>(&mut self, emit: &mut impl FnMut(Show<'e>)) {
        if !self.in_step {
            self.in_step = true;
            self.answered = false;
            emit(Show::StepStart);
        }
    }

    /// The model writes: after a finished request, that is the next step.
    fn model_output<'e>(&mut self, emit: &mut impl FnMut(Show<'e>)) {
        self.resumed = false;
        if self.in_step && self.answered {
            self.in_step = false;
            emit(Show::StepEnd);
        }
        self.step(emit);
    }

    /// `block` is the open one: another one closes, and it opens if it was not.
    fn open<'e>(&mut self, block: Block, emit: &mut impl FnMut(Show<'e>)) {
        if self.open == Some(block) {
            return;
        }
        self.close(emit);
        self.open = Some(block);
        emit(match block {
            Block::Text => Show::TextStart,
            Block::Reasoning => Show::ReasoningStart,
        });
    }

    fn close<'e>(&mut self, emit: &mut impl FnMut(Show<'e>)) {
        match self.open.take() {
            Some(Block::Text) => emit(Show::TextEnd),
            Some(Block::Reasoning) => emit(Show::ReasoningEnd),
            None => {}
        }
    }

    /// Close what the model's turn left open: its block, its streamed calls.
    fn turn_over<'e>(&mut self, emit: &mut impl FnMut(Show<'e>)) {
        self.close(emit);
        for id in self.calls.turn_over() {
            emit(Show::CallArgsEnd { id });
        }
    }

    /// A whole call: its start if it did not stream, then the call, once
    /// (a resumed response showed it already).
    fn show<'e>(&mut self, call: &'e ToolCall, emit: &mut impl FnMut(Show<'e>)) {
        if self.resumed {
            return;
        }
        self.step(emit);
        let id = call.id.as_str();
        let started = self.calls.start(id);
        if started {
            emit(Show::CallStart { id: id.to_owned(), name: call.name.to_string() });
        }
        if !self.whole.contains(id) && self.whole.insert(id.to_owned()) {
            emit(Show::Call { call, streamed: !started });
        }
    }
}
