//! Handoffs: an agent hands the conversation to another, which answers
//! from there with its own instructions, tools and model.
//!
//! A handoff is a tool the model calls (`transfer_to_{name}`), so the
//! model decides when, as it decides any call, and every provider can
//! express it. Its result is recorded like any call's; then the run goes
//! on with the receiving agent. What that agent sees of the conversation
//! so far is the handoff's [`HandoffHistory`]. The transcript itself only
//! grows (a session appends to it): a history that leaves messages out
//! adds a summary that stands for them, as a context policy's does.

use toolcall_core::toolset::ToolsetError;
use toolcall_core::{Output, OutputFuture, Part, Tool, ToolContext, ToolSpec};
use toolcall_provider::{DialectError, Message, Transcript};

use crate::Agent;

/// An agent to hand the conversation to ([`Agent::with_handoff`]): the
/// model of the agent that has it calls `transfer_to_{name}` and the run
/// goes on with this one.
///
/// ```
/// use toolcall_agent::{Agent, Handoff, HandoffHistory, StopReason};
/// use toolcall_agent::testing::ScriptedModel;
/// use toolcall_core::{ToolCall, Toolset};
///
/// # futures::executor::block_on(async {
/// let billing = Agent::new(ScriptedModel::new().then_text("Your refund is on its way."), Toolset::new())
///     .unwrap()
///     .with_name("billing")
///     .with_instructions("You handle refunds.");
/// let triage = ScriptedModel::new().then_calls([ToolCall::new("c1", "transfer_to_billing", "{}")]);
/// let triage = Agent::new(triage, Toolset::new())
///     .unwrap()
///     .with_name("triage")
///     .with_handoff(Handoff::to(&billing).with_description("Refunds and invoices."))
///     .unwrap();
/// let result = triage.run("I want my money back.").await.unwrap();
/// assert_eq!(result.answer, "Your refund is on its way.");
/// assert_eq!(result.agent.as_deref(), Some("billing"));
/// // The run goes on under billing's instructions.
/// assert_eq!(result.transcript.instructions.as_deref(), Some("You handle refunds."));
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct Handoff {
    agent: Agent,
    description: Option<String>,
    history: HandoffHistory,
}

/// What the receiving agent of a [`Handoff`] sees of the conversation
/// before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandoffHistory {
    /// Every message, the calls and results of the agent that handed off
    /// included (another provider's reasoning is left out by the
    /// receiving model's format, as for any transcript).
    #[default]
    All,
    /// The user's messages and the last answer of the agents before, as
    /// one summary of the conversation so far (its text: the user's text
    /// parts and the answer; images and files are left out), followed by
    /// nothing else: the calls, results and reasoning before the handoff
    /// are not sent. The transcript keeps them: the summary is added to
    /// it, standing for them, as a context policy's summary does.
    UserAndLastAnswer,
}

impl Handoff {
    /// A handoff to `agent`, which must have a name ([`Agent::with_name`]):
    /// the tool is `transfer_to_{name}`, and the run's result names it
    /// when it answers ([`RunResult::agent`](crate::RunResult::agent)).
    pub fn to(agent: &Agent) -> Self {
        Self { agent: agent.clone(), description: None, history: HandoffHistory::default() }
    }

    /// When to hand off, for the model (the tool's description): what the
    /// receiving agent is for.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// What the receiving agent sees of the conversation before it
    /// ([`HandoffHistory::All`] by default).
    pub fn with_history(mut self, history: HandoffHistory) -> Self {
        self.history = history;
        self
    }

    /// The agent the conversation goes to.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The receiving agent's name.
    pub(crate) fn name(&self) -> &str {
        self.agent.name.as_deref().unwrap_or_default()
    }

    /// The tool the model calls to hand off.
    pub(crate) fn tool_name(&self) -> String {
        format!("transfer_to_{}", self.name())
    }

    /// The tool the model calls.
    fn tool(&self) -> HandoffTool {
        let name = self.name();
        let description = match &self.description {
            Some(description) => format!("Hand the conversation to the agent `{name}`: {description}"),
            None => format!("Hand the conversation to the agent `{name}`, which answers the user from here."),
        };
        HandoffTool { spec: ToolSpec::new::<NoArguments>(self.tool_name(), description), to: name.to_owned() }
    }

    /// The transcript the receiving agent goes on with: its instructions,
    /// and the conversation as [`HandoffHistory`] says.
    pub(crate) fn carry(&self, transcript: &mut Transcript) {
        transcript.instructions.clone_from(&self.agent.instructions);
        if self.history == HandoffHistory::UserAndLastAnswer {
            let covers = transcript.messages.len();
            transcript.push(Message::Summary { text: user_and_last_answer(&transcript.messages), covers });
        }
    }
}

/// The user's text and the last answer of a conversation, as one text.
fn user_and_last_answer(messages: &[Message]) -> String {
    let mut lines = Vec::new();
    // An earlier summary stands for what it covers, its text kept.
    for message in crate::context::sent(messages).iter() {
        match message {
            Message::User { parts } => {
                let text: Vec<&str> = parts.iter().filter_map(Part::as_text).collect();
                lines.push(format!("User: {}", text.join("\n")));
            }
            Message::Summary { .. } => lines.push(message.text()),
            _ => {}
        }
    }
    let answer = messages
        .iter()
        .rev()
        .filter(|message| matches!(message, Message::Assistant { .. }))
        .map(Message::text)
        .find(|text| !text.trim().is_empty());
    if let Some(answer) = answer {
        lines.push(format!("Assistant: {answer}"));
    }
    lines.join("\n\n")
}

/// Why [`Agent::with_handoff`] refused a handoff.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandoffError {
    /// The receiving agent has no name to call it by.
    #[error("the agent to hand off to has no name: give it one with `Agent::with_name`")]
    Unnamed,
    /// The tool could not join the toolset: a tool has its name already,
    /// or the name is not a valid tool name.
    #[error("the handoff tool could not be added: {0}")]
    Toolset(#[from] ToolsetError),
    /// The model's dialect cannot express the toolset with the tool.
    #[error(transparent)]
    Dialect(#[from] DialectError),
}

/// A handoff tool's arguments: none.
#[derive(schemars::JsonSchema)]
struct NoArguments {}

/// The tool a handoff is called through: its call only records the
/// handoff; the run goes on with the receiving agent once the turn's
/// calls are done.
#[derive(Debug)]
struct HandoffTool {
    spec: ToolSpec,
    to: String,
}

impl Tool for HandoffTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, _ctx: &'a ToolContext, _arguments: &'a str) -> OutputFuture<'a> {
        let text = format!("The conversation was handed to the agent `{}`.", self.to);
        Box::pin(async move { Ok(Output::text(text)) })
    }
}

impl Agent {
    /// Let this agent hand the conversation to another: its model is
    /// offered a tool `transfer_to_{name}`, and once a turn that calls it
    /// is done (its other calls run, as in any turn), the run goes on with
    /// the receiving agent: its instructions, tools, model and settings,
    /// the conversation as the handoff's [`HandoffHistory`] says; from
    /// then on its limits, with what the run spent so far counted, and its
    /// context (with the run's cancellation and deadline). Its result names the agent that answered
    /// ([`RunResult::agent`](crate::RunResult::agent)). The first handoff
    /// called in a turn is taken; the others' results say so. A paused run
    /// resumes with the agent it paused in (given to the agent it started
    /// with).
    ///
    /// An agent is built before the agents that hand off to it, and holds
    /// a copy of each: a graph of handoffs has no cycles.
    ///
    /// # Errors
    ///
    /// [`HandoffError`]: the receiving agent has no name, a tool of this
    /// agent has the handoff tool's name, or the model cannot express it.
    pub fn with_handoff(mut self, handoff: Handoff) -> Result<Self, HandoffError> {
        if handoff.agent.name.is_none() {
            return Err(HandoffError::Unnamed);
        }
        let mut toolset = self.toolset.clone();
        toolset.add(handoff.tool())?;
        for dialect in self.model.dialects() {
            crate::agent::check(dialect, &toolset)?;
        }
        self.toolset = toolset;
        self.handoffs.push(std::sync::Arc::new(handoff));
        Ok(self)
    }

    /// The agent a run of this one that went through `path`'s handoffs
    /// (their names, in order) is with: this one for none.
    pub(crate) fn handed_to(&self, path: &[String]) -> Option<&Agent> {
        let mut agent = self;
        for name in path {
            agent = &agent.handoffs.iter().find(|handoff| handoff.name() == name)?.agent;
        }
        Some(agent)
    }

    /// The handoff of this agent called `tool`, if it is one.
    pub(crate) fn handoff_called(&self, tool: &str) -> Option<&Handoff> {
        self.handoffs.iter().map(AsRef::as_ref).find(|handoff| handoff.tool_name().eq_ignore_ascii_case(tool))
    }
}
