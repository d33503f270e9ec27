//! The agent: a model, a toolset and the settings of its runs; what a run
//! gives back and why it stopped. The loop itself is in `run`.

use std::sync::Arc;

use futures::StreamExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use toolcall_core::toolset::Toolset;
use toolcall_core::{Part, ToolContext};
use toolcall_provider::{Dialect, DialectError};
use tracing::Instrument;

use crate::agent_tool::Scope;
use crate::approval::Parts;
use crate::model::{ModelName, ModelSettings, Usage};
use crate::run::{Ended, Progress, Run};
use crate::stream::{Interleave, Sink};
use crate::{
    AgentError, AgentEvent, AnswerMode, AnswerType, Effects, InProcess, LimitExceeded, Message, Model,
    ModelError, RunLimits, RunState, Transcript, Typed,
};

/// Where a run starts, for [`Agent::run`] and [`Agent::stream`]: a user
/// message, a saved transcript to continue (calls left without results run
/// first; add a user message to ask more), or a paused run to resume with
/// its decisions ([`RunState`]). Each converts into it: text (`&str`,
/// `String`) and parts (a `Vec` or an array of [`Part`]s: text, images,
/// files) into a prompt.
///
/// ```
/// use toolcall_agent::RunInput;
/// use toolcall_core::{Media, Part};
///
/// let text = RunInput::from("What is on this chart?");
/// let with_an_image = RunInput::from([
///     Part::text("What is on this chart?"),
///     Part::image(Media::bytes(vec![0x89, b'P', b'N', b'G'], "image/png")),
/// ]);
/// assert!(matches!(&text, RunInput::Prompt(parts) if parts.len() == 1));
/// assert!(matches!(&with_an_image, RunInput::Prompt(parts) if parts.len() == 2));
/// ```
///
/// Each client writes a prompt's parts as its provider documents them and
/// refuses, before anything is sent, a part the provider cannot take
/// (`ModelError::Message`, naming the provider and the part:
/// [`RefusedPart`](toolcall_provider::RefusedPart)).
///
/// It serializes, for a run started in another process (a durable
/// engine's worker): `{"prompt": [parts]}`, `{"transcript": {...}}`,
/// `{"paused": {...}}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[expect(
    clippy::large_enum_variant,
    reason = "made once per run and moved into it; boxing `Paused` would change every match on it"
)]
pub enum RunInput {
    /// A new run from one user message: text, images and files, in order.
    Prompt(Vec<Part>),
    /// A saved run, continued.
    Transcript(Transcript),
    /// A paused run ([`StopReason::Paused`]), resumed: the approved calls
    /// run (through [`Toolset::run_turn_approved`]), the denied ones answer their
    /// reason, then the loop goes on as if it had never paused. Calls still
    /// undecided pause the run again; none runs without a decision.
    Paused(RunState),
}

impl RunInput {
    /// The conversation a run from this input goes on from (a prompt's,
    /// its one message): what a run that failed before it began leaves.
    pub fn transcript(&self) -> Transcript {
        match self {
            Self::Prompt(parts) => {
                Transcript { instructions: None, messages: vec![Message::User { parts: parts.clone() }] }
            }
            Self::Transcript(transcript) => transcript.clone(),
            Self::Paused(state) => state.transcript().clone(),
        }
    }
}

impl From<String> for RunInput {
    fn from(prompt: String) -> Self {
        Self::Prompt(vec![Part::text(prompt)])
    }
}

impl From<&str> for RunInput {
    fn from(prompt: &str) -> Self {
        Self::from(prompt.to_owned())
    }
}

impl From<Vec<Part>> for RunInput {
    fn from(parts: Vec<Part>) -> Self {
        Self::Prompt(parts)
    }
}

impl<const N: usize> From<[Part; N]> for RunInput {
    fn from(parts: [Part; N]) -> Self {
        Self::Prompt(parts.into())
    }
}

impl From<Transcript> for RunInput {
    fn from(transcript: Transcript) -> Self {
        Self::Transcript(transcript)
    }
}

impl From<RunState> for RunInput {
    fn from(state: RunState) -> Self {
        Self::Paused(state)
    }
}

/// The state a pause gives ([`StopReason::Paused`] holds it boxed),
/// resumed as it is.
///
/// ```
/// use toolcall_agent::{Agent, StopReason};
/// use toolcall_agent::testing::{ScriptedModel};
/// use toolcall_core::{ToolCall, ToolContext, ToolError, Toolset};
///
/// /// Remove a directory.
/// #[toolcall_macros::tool(args, needs_approval, crate = "toolcall_core")]
/// async fn remove_dir(_ctx: &ToolContext, path: String) -> Result<String, ToolError> {
///     Ok(format!("removed {path}"))
/// }
///
/// # futures::executor::block_on(async {
/// let model = ScriptedModel::new()
///     .then_calls([ToolCall::new("1", "remove_dir", r#"{"path":"tmp"}"#)])
///     .then_text("Removed tmp.");
/// let tools = Toolset::builder().add(RemoveDir).build().unwrap();
/// let agent = Agent::new(model, tools).unwrap();
/// let paused = agent.run("Clean up").await.unwrap();
/// let StopReason::Paused(mut state) = paused.stop else { panic!("{:?}", paused.stop) };
/// state.approve("1").unwrap();
/// let done = agent.run(state).await.unwrap(); // the `Box<RunState>`, no `*state`
/// assert_eq!(done.answer, "Removed tmp.");
/// # });
/// ```
impl From<Box<RunState>> for RunInput {
    fn from(state: Box<RunState>) -> Self {
        Self::Paused(*state)
    }
}

/// Why a run ended.
///
/// It serializes (as [`RunResult`] does), so that a run that ended in
/// another process (a durable engine's worker) gives back the value an
/// in-process run gives; as JSON, a name for a reason without fields
/// (`"answered"`), an object under the name otherwise
/// (`{"max_turns": {"turns": 10}}`, `{"paused": {...}}` with the
/// [`RunState`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without calling a tool.
    Answered,
    /// The run used its turns; the last request went without tools, so the
    /// answer is the model's best without them.
    MaxTurns {
        /// The turns with tools that were allowed.
        turns: usize,
    },
    /// The run went past one of its [`RunLimits`].
    Budget(LimitExceeded),
    /// A tool marked to end the run succeeded; its output is the answer.
    EndTool {
        /// The tool's name.
        tool: String,
    },
    /// The model was cut off (its output limit, the context window): the
    /// answer is what came before the cut, and calls it was making were
    /// not run (they are left out of the transcript).
    Truncated {
        /// The provider's reason (`length`, `max_tokens`, `MAX_TOKENS`...).
        reason: String,
    },
    /// The model refused, or a safety filter stopped it: the answer is the
    /// refusal's text, if it gave one.
    Refused {
        /// The provider's reason (`refusal`, `content_filter`, `SAFETY`...).
        reason: String,
    },
    /// The context was cancelled.
    Cancelled,
    /// Calls wait for a person's approval: decide about each in the state,
    /// save it if the answer takes time, and resume it with [`Agent::run`].
    Paused(Box<RunState>),
}

impl StopReason {
    /// The reason's name, for traces.
    fn label(&self) -> String {
        match self {
            Self::Paused(state) => format!("Paused({} calls)", state.pending().len()),
            other => format!("{other:?}"),
        }
    }
}

/// What a run gives back.
///
/// It serializes, so that a run that ended elsewhere (a durable engine's
/// worker, `toolcall-restate`) gives back this same value, its
/// [`StopReason`] as data: compared, matched, resumed when paused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The final answer: the model's last text, or an ending tool's output;
    /// with an answer type, the typed answer's JSON.
    pub answer: String,
    /// The typed answer, as its type serializes it, when the agent has an
    /// [`AnswerType`] and the run ended with an answer that reads as one
    /// ([`Agent::run_as`] reads it into the type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed_answer: Option<serde_json::Value>,
    /// Every message of the run, ready to be saved or continued.
    pub transcript: Transcript,
    /// The tokens of each model request, in order: the run's own, and
    /// those of the agents it called as tools ([`AgentTool`](crate::AgentTool)),
    /// each sub-agent's after the request whose call started it.
    pub usage: Vec<Usage>,
    /// The model that answered each request, in the order of
    /// [`Self::usage`]: the agent's model, or the one of its models that
    /// answered when it stands for several ([`FallbackModel`](crate::FallbackModel)),
    /// or a sub-agent's.
    #[serde(default)]
    pub models: Vec<ModelName>,
    /// Why the run ended.
    pub stop: StopReason,
    /// The name of the agent the run ended with: the one it was handed
    /// to last ([`Agent::with_handoff`]), or the agent it started with
    /// ([`Agent::with_name`]; `None` for an agent without a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

impl RunResult {
    /// The tokens of the whole run.
    pub fn total_usage(&self) -> Usage {
        self.usage.iter().copied().sum()
    }

    /// The tokens of the run per model that answered, in the order each
    /// first answered.
    ///
    /// ```
    /// use toolcall_agent::{ModelName, RunResult, StopReason, Transcript, Usage};
    ///
    /// let spent = |tokens| Usage { input_tokens: Some(tokens), ..Usage::default() };
    /// let (gpt, claude) = (ModelName::new("openai", "gpt-4.1"), ModelName::new("anthropic", "claude-sonnet-4-5"));
    /// let result = RunResult {
    ///     answer: "12°C.".into(),
    ///     typed_answer: None,
    ///     transcript: Transcript::default(),
    ///     usage: vec![spent(10), spent(20), spent(40)],
    ///     models: vec![gpt.clone(), claude.clone(), gpt.clone()],
    ///     stop: StopReason::Answered,
    ///     agent: None,
    /// };
    /// assert_eq!(result.usage_by_model(), [(gpt, spent(50)), (claude, spent(20))]);
    /// ```
    pub fn usage_by_model(&self) -> Vec<(ModelName, Usage)> {
        let mut by_model: Vec<(ModelName, Usage)> = Vec::new();
        for (model, usage) in self.models.iter().zip(&self.usage) {
            match by_model.iter_mut().find(|(seen, _)| seen == model) {
                Some((_, sum)) => *sum = *sum + *usage,
                None => by_model.push((model.clone(), *usage)),
            }
        }
        by_model
    }
}

/// A model, a toolset, instructions and settings: `run` is the whole loop.
///
/// ```
/// use toolcall_agent::{Agent, StopReason};
/// use toolcall_agent::testing::{ScriptedModel};
/// use toolcall_core::{ToolCall, Toolset};
///
/// # futures::executor::block_on(async {
/// let model = ScriptedModel::new().then_text("Nothing to look up.");
/// let agent = Agent::new(model, Toolset::new()).unwrap().with_instructions("Be brief.");
/// let result = agent.run("Hello").await.unwrap();
/// assert_eq!((result.answer.as_str(), &result.stop), ("Nothing to look up.", &StopReason::Answered));
/// assert_eq!(result.transcript.messages.len(), 2);
/// # });
/// ```
#[derive(Clone)]
pub struct Agent {
    pub(crate) model: Arc<dyn Model>,
    pub(crate) toolset: Toolset,
    pub(crate) instructions: Option<String>,
    pub(crate) limits: RunLimits,
    pub(crate) settings: ModelSettings,
    pub(crate) end_tools: Vec<String>,
    pub(crate) context: ToolContext,
    /// The typed answer, its mode resolved (native or a tool).
    pub(crate) answer: Option<AnswerType>,
    /// The name its run spans carry (`gen_ai.agent.name`).
    pub(crate) name: Option<String>,
    /// Whether request spans record what was sent and answered.
    pub(crate) trace_content: bool,
    /// The conversation its runs belong to (`gen_ai.conversation.id`).
    pub(crate) conversation: Option<String>,
    /// What keeps each request under a token budget, if anything does.
    pub(crate) context_policy: Option<crate::ContextPolicy>,
    /// The agents it may hand the conversation to.
    pub(crate) handoffs: Vec<Arc<crate::Handoff>>,
}

impl Agent {
    /// An agent with 10 turns, the default [`RunLimits`] and no instructions.
    ///
    /// Fails if the model's [dialect](Model::dialect) cannot express the
    /// toolset (a schema keyword it lacks, a name or a count past its
    /// limits), with the error naming the tool, the dialect and the keyword:
    /// here, before any request.
    ///
    /// ```
    /// use toolcall_agent::{Agent, ApiKey, OpenAiChat};
    /// use toolcall_core::{ToolContext, ToolError, Toolset};
    ///
    /// /// Keeps any JSON value.
    /// #[toolcall_macros::tool(args, crate = "toolcall_core")]
    /// async fn store(_ctx: &ToolContext, value: serde_json::Value) -> Result<String, ToolError> {
    ///     Ok(value.to_string())
    /// }
    ///
    /// let tools = Toolset::builder().add(Store).build().unwrap();
    /// let model = OpenAiChat::from_values("gpt-4.1-mini", Some(ApiKey::new("sk-...")), None).with_strict(true);
    /// // Strict mode cannot express a field that takes any value.
    /// let refused = Agent::new(model, tools).unwrap_err();
    /// assert_eq!(refused.tool.as_deref(), Some("store"));
    /// assert!(refused.to_string().starts_with("tool `store` cannot be sent as openai-strict"), "{refused}");
    /// ```
    ///
    /// # Errors
    ///
    /// [`DialectError`] when a dialect of the model cannot express the toolset, naming the tool
    /// and the keyword: change that tool, or drop strict mode.
    pub fn new(model: impl Model + 'static, toolset: Toolset) -> Result<Self, DialectError> {
        Self::from_shared(Arc::new(model), toolset)
    }

    /// An agent over a model that is shared (between agents, with a test);
    /// the toolset is checked as in [`Self::new`].
    ///
    /// # Errors
    ///
    /// [`DialectError`] when a dialect of the model cannot express the toolset, as for
    /// [`Self::new`].
    pub fn from_shared(model: Arc<dyn Model>, toolset: Toolset) -> Result<Self, DialectError> {
        for dialect in model.dialects() {
            check(dialect, &toolset)?;
        }
        Ok(Self {
            model,
            toolset: crate::search::SearchFunction::register(toolset),
            instructions: None,
            limits: RunLimits::default(),
            settings: ModelSettings::default(),
            end_tools: Vec::new(),
            context: ToolContext::new(),
            answer: None,
            name: None,
            trace_content: false,
            conversation: None,
            context_policy: None,
            handoffs: Vec::new(),
        })
    }

    /// The agent's name, for its traces: the run span's
    /// `gen_ai.agent.name`, and its OpenTelemetry name
    /// `invoke_agent {name}`.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The conversation the agent's runs belong to, on their spans as
    /// OpenTelemetry's `gen_ai.conversation.id`, so that a run paused on
    /// Monday and resumed on Tuesday is found as one conversation. A
    /// session sets it on each run (`toolcall-session`'s `Session::run`).
    pub fn with_conversation_id(mut self, id: impl Into<String>) -> Self {
        self.conversation = Some(id.into());
        self
    }

    /// The system prompt of every request, if it has one.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// Whether the spans record content, off by default: each request span
    /// the instructions, the messages sent and the answer
    /// (`gen_ai.system_instructions`, `gen_ai.input.messages`,
    /// `gen_ai.output.messages`), each call span its arguments and result
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, through
    /// the toolset's [`TurnOptions::trace_content`](toolcall_core::toolset::TurnOptions::trace_content)).
    /// They hold what the user, the model and the tools said: turn it on
    /// where a trace may keep that.
    ///
    /// The spans follow OpenTelemetry's GenAI semantic conventions
    /// (v1.41.0) through `tracing`: add `tracing-opentelemetry` to see them
    /// as `invoke_agent`, `chat {model}` and `execute_tool {tool}` spans
    /// (`examples/otel.rs` exports them over OTLP).
    pub fn with_trace_content(mut self, yes: bool) -> Self {
        self.trace_content = yes;
        let options = self.toolset.options().with_trace_content(yes);
        self.toolset = self.toolset.with_options(options);
        self
    }

    /// The system prompt of every request.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// What a run may spend ([`RunLimits`]): turns with tools, tool calls
    /// in all, unknown tools, retries in a row, argument repairs.
    pub fn with_limits(mut self, limits: RunLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How every request of its runs is made, and the one way to say it:
    /// the tool choice, parallel calls, sampling, the answer's token limit,
    /// reasoning, the request timeout, the prompt cache and extra fields
    /// ([`ModelSettings`], whose table says what each provider takes). A
    /// second call replaces the first. A setting the model's provider cannot
    /// take fails the run's first request before anything is sent
    /// ([`ModelError::Setting`](crate::ModelError::Setting)).
    ///
    /// ```
    /// use toolcall_agent::{Agent, ModelSettings, ReasoningSettings, ToolChoice};
    /// use toolcall_agent::testing::{ScriptedModel};
    /// use toolcall_core::Toolset;
    ///
    /// let settings = ModelSettings::default()
    ///     .with_tool_choice(ToolChoice::Auto)
    ///     .with_max_tokens(16_000)
    ///     .with_reasoning(ReasoningSettings::new().with_budget_tokens(8_000))
    ///     .with_stop_sequences(["END"]);
    /// let agent = Agent::new(ScriptedModel::new(), Toolset::new()).unwrap().with_settings(settings);
    /// assert_eq!(agent.settings().max_tokens, Some(16_000));
    /// ```
    pub fn with_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The settings of every request.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// End runs with a typed answer rather than free text: the model gives
    /// it natively where its provider constrains text to a schema, or as a
    /// call of the answer's tool ([`AnswerMode`]; `Auto` picks native where
    /// [`Model::native_answers`]). Either way the answer is read through
    /// the argument pipeline of a tool's arguments, and one that does not
    /// read goes back to the model with the reason, counting against
    /// [`RunLimits::max_retries_per_tool`] under the answer's name. The
    /// run's [`RunResult::typed_answer`] holds it; tools work as before.
    ///
    /// Fails, naming the keyword, if the model's dialect cannot express
    /// the answer's schema: natively, the rules of the provider's
    /// structured outputs ([`Dialect::answer_schema`]); as a tool, a tool's.
    ///
    /// ```
    /// use toolcall_agent::{Agent, AnswerType, StopReason};
    /// use toolcall_agent::testing::{ScriptedModel};
    /// use toolcall_core::{ToolCall, Toolset};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    /// struct Verdict { approved: bool, reason: String }
    ///
    /// # futures::executor::block_on(async {
    /// // A scripted model takes the answer as a tool (it has no structured outputs).
    /// let model = ScriptedModel::new()
    ///     .then_calls([ToolCall::new("c1", "final_answer", r#"{"approved": "yes", "reason": "ok"}"#)])
    ///     .then_calls([ToolCall::new("c2", "final_answer", r#"{"approved": true, "reason": "ok"}"#)]);
    /// let agent = Agent::new(model, Toolset::new()).unwrap().with_answer_type(AnswerType::of::<Verdict>()).unwrap();
    /// let result = agent.run("Approve?").await.unwrap();
    /// assert_eq!(result.stop, StopReason::Answered);
    /// assert_eq!(result.typed_answer, Some(serde_json::json!({"approved": true, "reason": "ok"})));
    /// assert_eq!(result.answer, r#"{"approved":true,"reason":"ok"}"#);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`DialectError`], naming the keyword, when a dialect of the model cannot express the
    /// answer's schema, or (as a tool) when the answer's tool cannot join the toolset, e.g. a
    /// tool of the same name is there ([`AnswerType::with_name`] gives it another).
    pub fn with_answer_type(mut self, answer: AnswerType) -> Result<Self, DialectError> {
        if let Some(old) = self.answer.take()
            && old.mode() == AnswerMode::Tool
        {
            self.toolset.remove(old.name());
            self.end_tools.retain(|name| name != old.name());
        }
        let native = match answer.mode() {
            AnswerMode::Native => true,
            AnswerMode::Tool => false,
            AnswerMode::Auto => self.model.native_answers(),
        };
        if native {
            for dialect in self.model.dialects() {
                answer.schema(dialect)?;
            }
            self.answer = Some(answer.with_mode(AnswerMode::Native));
            return Ok(self);
        }
        let mut toolset = self.toolset.clone();
        if let Err(error) = toolset.add(answer.tool()) {
            let problem = format!("the answer's tool cannot be added: {error}");
            return Err(DialectError::tool(
                answer.name(),
                self.model.dialects().first().copied().unwrap_or(Dialect::Mcp),
                "name",
                problem,
            ));
        }
        for dialect in self.model.dialects() {
            check(dialect, &toolset)?;
        }
        self.toolset = toolset;
        self.end_tools.push(answer.name().to_owned());
        self.answer = Some(answer.with_mode(AnswerMode::Tool));
        Ok(self)
    }

    /// Run the loop from `input` for an answer of type `T`: the agent with
    /// [`AnswerType::of::<T>()`](AnswerType::of) ([`Self::with_answer_type`]),
    /// the answer read into `T`. A schema the model's dialect cannot express
    /// is the error (`ModelError::Tools`), before any request.
    ///
    /// ```
    /// use toolcall_agent::{Agent, AnswerMode, StopReason};
    /// use toolcall_agent::testing::{ScriptedModel};
    /// use toolcall_core::Toolset;
    ///
    /// #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    /// struct City { name: String, population: u32 }
    ///
    /// # futures::executor::block_on(async {
    /// // The model answers in prose around the JSON: the lenient reading finds it.
    /// let model = ScriptedModel::new().then_text("Here it is: {\"name\": \"Oslo\", \"population\": 709000}");
    /// let agent = Agent::new(model, Toolset::new()).unwrap();
    /// let typed = agent.run_as::<City>("Biggest city of Norway?").await.unwrap();
    /// assert_eq!(typed.answer, Some(City { name: "Oslo".into(), population: 709_000 }));
    /// assert_eq!(typed.run.stop, StopReason::Answered);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`AgentError`] with [`ModelError::Tools`] when the dialect cannot express `T`'s schema
    /// (before any request, with an empty transcript), and as [`Self::run`] otherwise.
    pub async fn run_as<T: DeserializeOwned + Serialize + JsonSchema>(
        &self,
        input: impl Into<RunInput>,
    ) -> Result<Typed<T>, AgentError> {
        let agent = self
            .clone()
            .with_answer_type(AnswerType::of::<T>())
            .map_err(|error| AgentError { error: ModelError::Tools(error), transcript: Box::default() })?;
        let run = agent.run(input).await?;
        // The value is `T`'s own serialization, which reads back as `T`.
        let answer = run.typed_answer.clone().and_then(|value| serde_json::from_value(value).ok());
        Ok(Typed { answer, run })
    }

    /// Keep each request of its runs under a token budget
    /// ([`ContextPolicy`](crate::ContextPolicy): old tool results cleared,
    /// the oldest turns dropped, older turns summarized). Only what is sent
    /// shrinks: the run's transcript keeps every message, and a summary is
    /// added to it as a [`Message::Summary`].
    ///
    /// ```
    /// use toolcall_agent::{Agent, ContextPolicy};
    /// use toolcall_agent::testing::{ScriptedModel};
    /// use toolcall_core::Toolset;
    ///
    /// let agent = Agent::new(ScriptedModel::new(), Toolset::new()).unwrap()
    ///     .with_context_policy(ContextPolicy::new(100_000));
    /// # let _ = agent;
    /// ```
    pub fn with_context_policy(mut self, policy: crate::ContextPolicy) -> Self {
        self.context_policy = Some(policy);
        self
    }

    /// End the run when this tool succeeds; its output is the answer.
    pub fn with_end_tool(mut self, tool: impl Into<String>) -> Self {
        self.end_tools.push(tool.into());
        self
    }

    /// The context every tool call is served with (shared state, a
    /// cancellation token: cancelling it stops the run).
    pub fn with_context(mut self, context: ToolContext) -> Self {
        self.context = context;
        self
    }

    /// The context every tool call is served with ([`Self::with_context`]).
    pub fn context(&self) -> &ToolContext {
        &self.context
    }

    /// The toolset the model is offered: in each turn, the tools its
    /// prepare steps show with the run's context
    /// ([`Toolset::prepared`](toolcall_core::Toolset::prepared)); the turn's
    /// calls run against those, and a call of a hidden tool is answered as
    /// an unknown one.
    pub fn toolset(&self) -> &Toolset {
        &self.toolset
    }

    /// Run the loop from `input` ([`RunInput`]: a user message, a saved
    /// transcript, or a paused run with its decisions), in this process or
    /// another, until the model answers or a limit stops it.
    ///
    /// # Errors
    ///
    /// [`AgentError`] when a model request fails: its [`error`](AgentError::error) says why (see
    /// [`ModelError::is_transient`]), its [`transcript`](AgentError::transcript) holds the run so
    /// far, which [`RunInput::Transcript`] continues. Limits and refusals are no error: see [`StopReason`].
    pub async fn run(&self, input: impl Into<RunInput>) -> Result<RunResult, AgentError> {
        self.drive(input.into(), None, &InProcess, Scope::default()).await
    }

    /// [`Agent::run`] with its side effects going through `effects`: each
    /// model request, each turn's calls, and the wait for a person's
    /// decision ([`Effects`]), as a durable engine journals them.
    ///
    /// # Errors
    ///
    /// As [`Self::run`]: [`AgentError`] when a model request fails, or when `effects` fails a
    /// step ([`ModelError::Engine`]); its transcript holds the run so far.
    pub async fn run_with(
        &self,
        input: impl Into<RunInput>,
        effects: &dyn Effects,
    ) -> Result<RunResult, AgentError> {
        self.drive(input.into(), None, effects, Scope::default()).await
    }

    /// [`Agent::run`] as a stream of events ending in
    /// [`AgentEvent::Finished`].
    pub fn stream(&self, input: impl Into<RunInput>) -> impl futures::Stream<Item = AgentEvent> + Send + '_ {
        self.stream_with(input, &InProcess)
    }

    /// [`Agent::stream`] with its side effects going through `effects`, as
    /// [`Self::run_with`] runs them: each model request goes through
    /// [`Effects::request_streamed`], whose pieces are the stream's
    /// deltas, then each turn's calls and the wait for a decision. An
    /// engine that journals the requests gives a replayed one back whole,
    /// without its pieces (or as one), so the deltas of a replayed stream
    /// are the engine's to say; the other events, and the end, are those
    /// of the same run in-process.
    ///
    /// ```
    /// use futures::StreamExt;
    /// use futures::future::BoxFuture;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use toolcall_agent::{Agent, AgentEvent, Effects, Model, ModelError, ModelEvent, ModelRequest, ModelResponse};
    /// use toolcall_agent::testing::ScriptedModel;
    /// use toolcall_core::Toolset;
    ///
    /// /// Counts the streamed requests, and makes them as usual.
    /// #[derive(Default)]
    /// struct Counted(AtomicUsize);
    ///
    /// impl Effects for Counted {
    ///     fn request_streamed<'a>(&'a self, model: &'a dyn Model, request: ModelRequest<'a>,
    ///         deltas: &'a (dyn Fn(ModelEvent) + Send + Sync)) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
    ///         self.0.fetch_add(1, Ordering::Relaxed);
    ///         toolcall_agent::InProcess.request_streamed(model, request, deltas)
    ///     }
    /// }
    ///
    /// # futures::executor::block_on(async {
    /// let agent = Agent::new(ScriptedModel::new().then_text("Hi."), Toolset::new()).unwrap();
    /// let counted = Counted::default();
    /// let events: Vec<_> = agent.stream_with("Hello", &counted).collect().await;
    /// assert!(matches!(&events[0], AgentEvent::TextDelta(text) if text == "Hi."));
    /// assert!(matches!(events.last(), Some(AgentEvent::Finished(Ok(_)))));
    /// assert_eq!(counted.0.load(Ordering::Relaxed), 1);
    /// # });
    /// ```
    pub fn stream_with<'a>(
        &'a self,
        input: impl Into<RunInput>,
        effects: &'a dyn Effects,
    ) -> impl futures::Stream<Item = AgentEvent> + Send + 'a {
        let (events, received) = futures::channel::mpsc::unbounded();
        let run = self.drive(input.into(), Some(Sink::top(events)), effects, Scope::default());
        // The run's own events first, then its end: the channel closes when
        // the run future is done and has dropped its sender.
        let ended = futures::stream::once(run).map(AgentEvent::Finished);
        Interleave { run: Box::pin(ended), events: received, run_done: None, ended: false }
    }

    /// The run from `start`, its events sent to `events` if it is
    /// streamed, where `scope` puts it: below the run whose agent tool
    /// started it ([`AgentTool`](crate::AgentTool)), or at the top.
    pub(crate) async fn drive(
        &self,
        start: RunInput,
        events: Option<Sink>,
        effects: &dyn Effects,
        scope: Scope,
    ) -> Result<RunResult, AgentError> {
        let span = crate::trace::agent_span(self);
        // A new or continued run starts with the agent's instructions where
        // its transcript has none; a paused one, as it was saved.
        let fresh = |mut transcript: Transcript| {
            if transcript.instructions.is_none() {
                transcript.instructions.clone_from(&self.instructions);
            }
            Progress::of(transcript)
        };
        let (progress, held) = match start {
            RunInput::Prompt(parts) => {
                (fresh(Transcript { instructions: None, messages: vec![Message::User { parts }] }), None)
            }
            RunInput::Transcript(transcript) => (fresh(transcript), None),
            RunInput::Paused(state) => {
                // The run it paused in, in its own trace: linked, not a parent.
                if let Some(traceparent) = state.traceparent() {
                    crate::trace::link(&span, traceparent);
                }
                // What was spent counts; the limits are this agent's.
                let Parts { progress, held } = state.into_parts();
                (progress, Some(held))
            }
        };
        // A run handed to another agent goes on with that one.
        let Some(agent) = self.handed_to(&progress.handoffs) else {
            let error = ModelError::UnknownAgent { path: progress.handoffs };
            return Err(AgentError { error, transcript: Box::new(progress.transcript) });
        };
        let mut run = Run::new(agent, progress, events, effects, scope);
        let ended = async {
            if let Some(held) = held
                && let Some(ended) = run.resume_turn(held).await?
            {
                return Ok::<Ended, _>(ended);
            }
            run.go().await
        }
        .instrument(span.clone())
        .await;
        // Its own requests; the tokens are all it spent, its sub-agents' too.
        span.record("turns", run.progress.usage.len().saturating_sub(run.nested));
        let spent = run.progress.usage.iter().fold(Usage::default(), |total, usage| total + *usage);
        crate::trace::record_usage(&span, &spent);
        match ended {
            Ok((answer, mut stop)) => {
                span.record("stop", stop.label());
                if let StopReason::Paused(state) = &mut stop {
                    state.set_traceparent(crate::trace::traceparent(&span));
                }
                let typed_answer = run.typed_answer;
                let answer = typed_answer.as_ref().map_or(answer, ToString::to_string);
                let agent = run.agent.name.clone();
                let Progress { transcript, usage, models, .. } = run.progress;
                Ok(RunResult { answer, typed_answer, transcript, usage, models, stop, agent })
            }
            Err(error) => {
                crate::trace::record_error(&span, &error);
                Err(AgentError { error, transcript: Box::new(run.progress.transcript) })
            }
        }
    }
}

/// Whether `dialect` can express `toolset`: the definitions the first
/// request sends, limits included, and each deferred tool, which a local
/// tool search may load in any later turn. Prepare steps only hide tools,
/// so each turn's toolset is a part of this one; the clients check each
/// request's tools again, as a fallback (`ModelError::Tools`).
pub(crate) fn check(dialect: Dialect, toolset: &Toolset) -> Result<(), DialectError> {
    dialect.definitions(toolset)?;
    if toolset.tool_search().is_some() && !dialect.has_native_tool_search() {
        for name in toolset.names().filter(|name| toolset.is_deferred(name)) {
            if let Some(tool) = toolset.get(name) {
                dialect.check(tool.as_ref())?;
            }
        }
    }
    Ok(())
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("provider", &self.model.provider())
            .field("model", &self.model.model())
            .field("toolset", &self.toolset)
            .field("limits", &self.limits)
            .field("handoffs", &self.handoffs.iter().map(|handoff| handoff.tool_name()).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}
