//! The loop: ask the model, run every call of its turn at once, send the
//! results back, until it answers without calls or a stop says otherwise.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::channel::mpsc::UnboundedSender;
use tools_core::toolset::Toolset;
use tools_core::{ToolContext, ToolResult};
use tracing::Instrument;

use crate::model::{ModelEvent, ModelRequest, ModelResponse, ModelSettings, ToolChoice, Usage};
use crate::{AgentError, LimitExceeded, Message, Model, ModelError, RunBudget, RunLimits, Transcript};

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// The context was cancelled.
    Cancelled,
}

/// What a run gives back.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// The final answer: the model's last text, or an ending tool's output.
    pub answer: String,
    /// Every message of the run, ready to be saved or continued.
    pub transcript: Transcript,
    /// The tokens of each model request, in order.
    pub usage: Vec<Usage>,
    /// Why the run ended.
    pub stop: StopReason,
}

impl RunResult {
    /// The tokens of the whole run.
    pub fn total_usage(&self) -> Usage {
        self.usage.iter().copied().sum()
    }
}

/// What [`Agent::stream`] yields as the run goes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum AgentEvent {
    /// More of the model's text.
    TextDelta(String),
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
    ToolCall(tools_core::ToolCall),
    /// A call's result, as soon as the turn's calls have run.
    ToolResult(ToolResult),
    /// The tokens of one model request.
    Usage(Usage),
    /// The run is over: always the last event.
    Finished(Result<RunResult, AgentError>),
}

/// A model, a toolset, instructions and settings: `run` is the whole loop.
///
/// ```
/// use tools_agent::{Agent, ScriptedModel, StopReason};
/// use tools_core::{ToolCall, Toolset};
///
/// # futures::executor::block_on(async {
/// let model = ScriptedModel::new().then_text("Nothing to look up.");
/// let agent = Agent::new(model, Toolset::new()).with_instructions("Be brief.");
/// let result = agent.run("Hello").await.unwrap();
/// assert_eq!((result.answer.as_str(), &result.stop), ("Nothing to look up.", &StopReason::Answered));
/// assert_eq!(result.transcript.messages.len(), 2);
/// # });
/// ```
#[derive(Clone)]
pub struct Agent {
    model: Arc<dyn Model>,
    toolset: Toolset,
    instructions: Option<String>,
    max_turns: usize,
    limits: RunLimits,
    settings: ModelSettings,
    end_tools: Vec<String>,
    context: ToolContext,
}

impl Agent {
    /// An agent with 10 turns, the default [`RunLimits`] and no instructions.
    pub fn new(model: impl Model + 'static, toolset: Toolset) -> Self {
        Self::from_shared(Arc::new(model), toolset)
    }

    /// An agent over a model that is shared (between agents, with a test).
    pub fn from_shared(model: Arc<dyn Model>, toolset: Toolset) -> Self {
        Self {
            model,
            toolset,
            instructions: None,
            max_turns: 10,
            limits: RunLimits::default(),
            settings: ModelSettings::default(),
            end_tools: Vec::new(),
            context: ToolContext::new(),
        }
    }

    /// The system prompt of every request.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// How many turns may offer tools (at least one); past them one last
    /// request goes without tools.
    pub fn with_max_turns(mut self, turns: usize) -> Self {
        self.max_turns = turns.max(1);
        self
    }

    /// The limits across turns: calls in all, unknown tools, retries.
    pub fn with_limits(mut self, limits: RunLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Which tools the model may or must call.
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.settings.tool_choice = choice;
        self
    }

    /// Whether the model may call several tools at once.
    pub fn with_parallel_tool_calls(mut self, yes: bool) -> Self {
        self.settings.parallel_tool_calls = Some(yes);
        self
    }

    /// The most tokens of one answer.
    pub fn with_max_tokens(mut self, tokens: u32) -> Self {
        self.settings.max_tokens = Some(tokens);
        self
    }

    /// How long one model request may take.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.settings.request_timeout = Some(timeout);
        self
    }

    /// How long one tool call may take, for tools that declare no timeout.
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        let options = self.toolset.options().with_default_timeout(timeout);
        self.toolset = self.toolset.with_options(options);
        self
    }

    /// End the run when this tool succeeds; its output is the answer.
    pub fn ending_on(mut self, tool: impl Into<String>) -> Self {
        self.end_tools.push(tool.into());
        self
    }

    /// The context every tool call is served with (shared state, a
    /// cancellation token: cancelling it stops the run).
    pub fn with_context(mut self, context: ToolContext) -> Self {
        self.context = context;
        self
    }

    /// The toolset the model is offered.
    pub fn toolset(&self) -> &Toolset {
        &self.toolset
    }

    /// Run from one user message.
    pub async fn run(&self, input: impl Into<String>) -> Result<RunResult, AgentError> {
        self.continue_run(self.start(input)).await
    }

    /// Continue a saved run: calls left without results run first, then
    /// the loop goes on. Add a user message to the transcript to ask more.
    pub async fn continue_run(&self, transcript: Transcript) -> Result<RunResult, AgentError> {
        self.drive(transcript, None).await
    }

    /// Run from one user message, as a stream of events ending in
    /// [`AgentEvent::Finished`].
    pub fn stream(&self, input: impl Into<String>) -> impl futures::Stream<Item = AgentEvent> + Send + '_ {
        self.stream_transcript(self.start(input))
    }

    /// Continue a saved run as a stream of events.
    pub fn stream_transcript(
        &self,
        transcript: Transcript,
    ) -> impl futures::Stream<Item = AgentEvent> + Send + '_ {
        let (events, received) = futures::channel::mpsc::unbounded();
        let run = self.drive(transcript, Some(events));
        // The run's own events first, then its end: the channel closes when
        // the run future is done and has dropped its sender.
        let ended = futures::stream::once(run).map(AgentEvent::Finished);
        Interleave { run: Box::pin(ended), events: received, run_done: None }
    }

    fn start(&self, input: impl Into<String>) -> Transcript {
        let mut transcript = Transcript { instructions: self.instructions.clone(), messages: Vec::new() };
        transcript.push(Message::user(input));
        transcript
    }

    async fn drive(
        &self,
        mut transcript: Transcript,
        events: Option<UnboundedSender<AgentEvent>>,
    ) -> Result<RunResult, AgentError> {
        if transcript.instructions.is_none() {
            transcript.instructions.clone_from(&self.instructions);
        }
        let span = tracing::info_span!(
            "agent_run",
            provider = self.model.provider(),
            model = self.model.model(),
            turns = tracing::field::Empty,
            stop = tracing::field::Empty,
        );
        let mut run =
            Run { agent: self, transcript, usage: Vec::new(), budget: RunBudget::new(self.limits), events };
        let ended = run.go().instrument(span.clone()).await;
        span.record("turns", run.usage.len());
        match ended {
            Ok((answer, stop)) => {
                span.record("stop", format!("{stop:?}"));
                Ok(RunResult { answer, transcript: run.transcript, usage: run.usage, stop })
            }
            Err(error) => Err(AgentError { error, transcript: Box::new(run.transcript) }),
        }
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("provider", &self.model.provider())
            .field("model", &self.model.model())
            .field("toolset", &self.toolset)
            .field("max_turns", &self.max_turns)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// One run's state as the loop goes.
struct Run<'a> {
    agent: &'a Agent,
    transcript: Transcript,
    usage: Vec<Usage>,
    budget: RunBudget,
    events: Option<UnboundedSender<AgentEvent>>,
}

impl Run<'_> {
    async fn go(&mut self) -> Result<(String, StopReason), ModelError> {
        let agent = self.agent;
        let mut turns = 0;
        loop {
            let pending = self.transcript.pending_calls().to_vec();
            if !pending.is_empty() {
                if let Some(stop) = self.run_calls(&pending).await {
                    return Ok(stop);
                }
                continue;
            }
            if agent.context.is_cancelled() {
                return Ok((String::new(), StopReason::Cancelled));
            }
            let last = turns >= agent.max_turns;
            let Some(response) = self.ask(!last).await? else {
                return Ok((String::new(), StopReason::Cancelled));
            };
            turns += 1;
            let answered = response.calls.is_empty();
            let text = response.text.clone();
            self.transcript.push(Message::Assistant { text: response.text, calls: response.calls });
            if last {
                // A model that calls tools anyway on the tool-less request
                // leaves calls no one will answer: dropped, so the
                // transcript stays one a provider accepts.
                if let Some(Message::Assistant { calls, .. }) = self.transcript.messages.last_mut() {
                    calls.clear();
                }
                return Ok((text, StopReason::MaxTurns { turns: agent.max_turns }));
            }
            if answered {
                return Ok((text, StopReason::Answered));
            }
        }
    }

    /// One model request, traced; `None` if the context was cancelled first.
    async fn ask(&mut self, with_tools: bool) -> Result<Option<ModelResponse>, ModelError> {
        let agent = self.agent;
        let request = ModelRequest {
            instructions: self.transcript.instructions.as_deref(),
            messages: &self.transcript.messages,
            tools: with_tools.then_some(&agent.toolset),
            settings: &agent.settings,
        };
        let span = tracing::info_span!(
            "model_request",
            provider = agent.model.provider(),
            model = agent.model.model(),
            input_tokens = tracing::field::Empty,
            output_tokens = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
        );
        let started = Instant::now();
        let events = self.events.clone();
        let exchange = async {
            match &events {
                None => agent.model.request(request).await,
                Some(events) => streamed(agent.model.provider(), agent.model.stream(request), events).await,
            }
        };
        let cancelled = agent.context.cancellation().cancelled();
        let response = tokio::select! {
            biased;
            () = cancelled => return Ok(None),
            response = exchange.instrument(span.clone()) => response?,
        };
        span.record("input_tokens", response.usage.input_tokens);
        span.record("output_tokens", response.usage.output_tokens);
        span.record("duration_ms", started.elapsed().as_millis() as u64);
        self.usage.push(response.usage);
        self.emit(AgentEvent::Usage(response.usage));
        Ok(Some(response))
    }

    /// Run one turn's calls and record their results; `Some` when the run
    /// stops here.
    async fn run_calls(&mut self, calls: &[tools_core::ToolCall]) -> Option<(String, StopReason)> {
        let agent = self.agent;
        if let Err(limit) = self.budget.admit(calls) {
            // The calls stay pending in the transcript: continuing the run
            // (with a larger budget) runs them.
            return Some((String::new(), StopReason::Budget(limit)));
        }
        for call in calls {
            self.emit(AgentEvent::ToolCall(call.clone()));
        }
        let results = agent.toolset.run(&agent.context, calls).await;
        for result in &results {
            self.emit(AgentEvent::ToolResult(result.clone()));
        }
        let recorded = self.budget.record(&results);
        let ended = results.iter().find(|result| {
            result.outcome.is_success()
                && agent.end_tools.iter().any(|end| end.eq_ignore_ascii_case(&result.name))
        });
        let ended =
            ended.map(|result| (result.content.clone(), StopReason::EndTool { tool: result.name.clone() }));
        self.transcript.push(Message::Tool { results });
        if let Some(ended) = ended {
            return Some(ended);
        }
        if agent.context.is_cancelled() {
            return Some((String::new(), StopReason::Cancelled));
        }
        recorded.err().map(|limit| (String::new(), StopReason::Budget(limit)))
    }

    fn emit(&self, event: AgentEvent) {
        if let Some(events) = &self.events {
            // A dropped receiver only means no one listens any more.
            let _ = events.unbounded_send(event);
        }
    }
}

/// Read a model's stream to its end, passing every piece on.
async fn streamed(
    provider: &str,
    mut stream: crate::model::ModelStream<'_>,
    events: &UnboundedSender<AgentEvent>,
) -> Result<ModelResponse, ModelError> {
    while let Some(event) = stream.next().await {
        let forwarded = match event? {
            ModelEvent::TextDelta(text) => AgentEvent::TextDelta(text),
            ModelEvent::CallDelta { index, id, name, arguments } => {
                AgentEvent::CallDelta { index, id, name, arguments }
            }
            ModelEvent::Done(response) => return Ok(response),
        };
        let _ = events.unbounded_send(forwarded);
    }
    Err(ModelError::StreamEnded { provider: provider.to_owned(), message: "no final response".into() })
}

/// The events a run sends, then the run's end.
struct Interleave<R> {
    run: std::pin::Pin<Box<R>>,
    events: futures::channel::mpsc::UnboundedReceiver<AgentEvent>,
    run_done: Option<AgentEvent>,
}

impl<R: futures::Stream<Item = AgentEvent>> futures::Stream for Interleave<R> {
    type Item = AgentEvent;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<AgentEvent>> {
        use std::task::Poll;
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
