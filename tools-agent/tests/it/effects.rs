//! The seam a run's side effects go through ([`Effects`]): a streamed
//! run's requests go through it as a plain run's do, the calls say whether
//! a person approved them, an engine's failure keeps its error, and what a
//! run gives back reads from its JSON as it was (what a durable engine
//! gives back from another process).

use std::error::Error as _;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use futures::{StreamExt, stream};
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{
    Agent, AgentEvent, Approval, Effects, InProcess, LimitExceeded, Model, ModelError, ModelEvent, ModelName,
    ModelRequest, ModelResponse, ModelStream, RunResult, RunState, StopReason, Transcript, Usage,
};
use toolcall_core::{IdempotencyScope, ToolCall, ToolContext, ToolError, ToolResult, Toolset};
use toolcall_macros::tool;

/// Current temperature for a city.
#[tool(args, crate = "toolcall_core")]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("12°C in {city}"))
}

/// Remove a file.
#[tool(args, needs_approval, crate = "toolcall_core")]
async fn remove_file(_ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    Ok(format!("removed {path}"))
}

fn tools() -> Toolset {
    Toolset::builder().add(GetWeather).add(RemoveFile).build().unwrap()
}

/// A scripted model that streams its text a word at a time, as a
/// provider sends it in pieces.
struct Pieces(ScriptedModel);

impl Model for Pieces {
    fn provider(&self) -> &str {
        self.0.provider()
    }

    fn model(&self) -> &str {
        self.0.model()
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.0.request(request)
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        stream::once(self.0.request(request))
            .flat_map(|response| {
                let events: Vec<Result<ModelEvent, ModelError>> = match response {
                    Ok(response) => {
                        let text = response.text();
                        let words =
                            text.split_inclusive(' ').map(|word| Ok(ModelEvent::TextDelta(word.into())));
                        words.chain([Ok(ModelEvent::Done(response))]).collect()
                    }
                    Err(error) => vec![Err(error)],
                };
                stream::iter(events)
            })
            .boxed()
    }
}

/// What an engine was asked to do: each request, plain or streamed, and
/// each turn's calls with their approval. Everything happens in process.
#[derive(Default)]
struct Recorded(Mutex<Vec<String>>);

impl Recorded {
    fn note(&self, what: impl Into<String>) {
        self.0.lock().unwrap().push(what.into());
    }

    fn seen(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl Effects for Recorded {
    fn request<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.note("request");
        InProcess.request(model, request)
    }

    fn request_streamed<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelEvent) + Send + Sync),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.note("streamed request");
        InProcess.request_streamed(model, request, deltas)
    }

    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approval: Approval,
    ) -> BoxFuture<'a, Vec<ToolResult>> {
        let ids: Vec<&str> = calls.iter().map(|call| call.id.as_str()).collect();
        self.note(format!("calls {} {approval:?}", ids.join(",")));
        InProcess.run_calls(toolset, context, calls, approval)
    }
}

fn weather_model() -> ScriptedModel {
    ScriptedModel::new()
        .then_calls([ToolCall::new("c1", "get_weather", r#"{"city":"Oslo"}"#)])
        .then_text("It is 12°C in Oslo.")
}

fn texts(events: &[AgentEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_streamed_run_asks_through_its_effects_and_still_streams_each_piece() {
    let agent = Agent::new(Pieces(weather_model()), tools()).unwrap();
    let recorded = Recorded::default();
    let events: Vec<AgentEvent> = agent.stream_with("Weather in Oslo?", &recorded).collect().await;

    assert_eq!(recorded.seen(), ["streamed request", "calls c1 Required", "streamed request"]);
    assert_eq!(texts(&events), ["It ", "is ", "12°C ", "in ", "Oslo."]);
    let Some(AgentEvent::Finished(Ok(result))) = events.last() else { panic!("{events:?}") };
    assert_eq!((result.answer.as_str(), &result.stop), ("It is 12°C in Oslo.", &StopReason::Answered));

    // The same run in process streams the same and ends the same.
    let agent = Agent::new(Pieces(weather_model()), tools()).unwrap();
    let in_process: Vec<AgentEvent> = agent.stream("Weather in Oslo?").collect().await;
    assert_eq!(texts(&in_process), texts(&events));
    let Some(AgentEvent::Finished(Ok(expected))) = in_process.last() else { panic!("{in_process:?}") };
    assert_eq!(result, expected);
}

/// An engine that journals each response and, on replay, gives it back
/// without asking the model, its text as one piece: what
/// `toolcall-restate` does.
#[derive(Default)]
struct Replaying {
    journal: Mutex<Vec<ModelResponse>>,
    /// The requests of the run so far: where it is in the journal.
    at: Mutex<usize>,
}

impl Effects for Replaying {
    fn request_streamed<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelEvent) + Send + Sync),
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            let journaled = {
                let mut at = self.at.lock().unwrap();
                *at += 1;
                self.journal.lock().unwrap().get(*at - 1).cloned()
            };
            if let Some(response) = journaled {
                let text = response.text();
                if !text.is_empty() {
                    deltas(ModelEvent::TextDelta(text));
                }
                return Ok(response);
            }
            let response = InProcess.request_streamed(model, request, deltas).await?;
            self.journal.lock().unwrap().push(response.clone());
            Ok(response)
        })
    }
}

#[tokio::test]
async fn a_replayed_streamed_run_gives_the_journaled_responses_without_asking_the_model() {
    let engine = Replaying::default();
    let agent = Agent::new(Pieces(weather_model()), tools()).unwrap();
    let first: Vec<AgentEvent> = agent.stream_with("Weather in Oslo?", &engine).collect().await;
    assert_eq!(texts(&first), ["It ", "is ", "12°C ", "in ", "Oslo."]);

    // The model has no answer left: only the journal can answer.
    let agent = Agent::new(Pieces(ScriptedModel::new()), tools()).unwrap();
    *engine.at.lock().unwrap() = 0;
    let replayed: Vec<AgentEvent> = agent.stream_with("Weather in Oslo?", &engine).collect().await;
    assert_eq!(texts(&replayed), ["It is 12°C in Oslo."]);
    let (Some(AgentEvent::Finished(Ok(first))), Some(AgentEvent::Finished(Ok(replayed)))) =
        (first.last(), replayed.last())
    else {
        panic!("{replayed:?}")
    };
    assert_eq!(replayed.transcript, first.transcript);
}

#[tokio::test]
async fn the_calls_say_whether_a_person_approved_them() {
    let model = ScriptedModel::new()
        .then_calls([
            ToolCall::new("w1", "get_weather", r#"{"city":"Oslo"}"#),
            ToolCall::new("r1", "remove_file", r#"{"path":"old.log"}"#),
        ])
        .then_text("Done.");
    let agent = Agent::new(model, tools()).unwrap();
    let recorded = Recorded::default();
    let paused = agent.run_with("Tidy up", &recorded).await.unwrap();
    let StopReason::Paused(mut state) = paused.stop else { panic!("{:?}", paused.stop) };
    state.approve("r1").unwrap();
    let done = agent.run_with(state, &recorded).await.unwrap();
    assert_eq!(done.answer, "Done.");
    assert_eq!(recorded.seen(), ["request", "calls w1 Required", "calls r1 Approved", "request"]);
}

/// An engine whose journal is gone.
struct Broken;

impl Effects for Broken {
    fn request<'a>(
        &'a self,
        _model: &'a dyn Model,
        _request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async {
            Err(ModelError::engine("journal", io::Error::new(io::ErrorKind::NotFound, "gone")))
        })
    }
}

#[tokio::test]
async fn an_engine_failure_keeps_the_engine_error_as_its_source() {
    let agent = Agent::new(weather_model(), tools()).unwrap();
    let failed = agent.run_with("Weather in Oslo?", &Broken).await.unwrap_err();
    assert_eq!(failed.to_string(), "the run stopped: the run's engine (journal) failed: gone");
    let ModelError::Engine { engine, source } = &failed.error else { panic!("{:?}", failed.error) };
    assert_eq!(*engine, "journal");
    assert_eq!(source.downcast_ref::<io::Error>().map(io::Error::kind), Some(io::ErrorKind::NotFound));
    // The chain goes from the run to the model error to what the engine said.
    let model_error = failed.source().unwrap();
    assert_eq!(model_error.source().map(ToString::to_string).as_deref(), Some("gone"));
    // An engine failure equals its clone, and one that says the same.
    assert_eq!(failed.error.clone(), failed.error);
    assert_eq!(failed.error, ModelError::engine("journal", "gone"));
    assert_ne!(failed.error, ModelError::engine("session", "gone"));
    assert_eq!(failed.transcript.messages.len(), 1);
}

/// Every stop reason, as a durable engine's worker sends it back.
#[tokio::test]
async fn every_stop_reason_and_its_result_read_back_from_their_json() {
    let model = ScriptedModel::new().then_calls([ToolCall::new("r1", "remove_file", r#"{"path":"a"}"#)]);
    let paused = Agent::new(model, tools()).unwrap().run("Tidy up").await.unwrap();
    assert!(matches!(paused.stop, StopReason::Paused(_)), "{:?}", paused.stop);
    let stops = [
        StopReason::Answered,
        StopReason::MaxTurns { turns: 3 },
        StopReason::Budget(LimitExceeded::ToolCalls { limit: 2, requested: 3 }),
        StopReason::Budget(LimitExceeded::NotFound { limit: 1, count: 2, name: "nope".into() }),
        StopReason::Budget(LimitExceeded::Malformed { limit: 1, count: 2, reason: "cut".into() }),
        StopReason::Budget(LimitExceeded::Retries { tool: "get_weather".into(), limit: 1, count: 2 }),
        StopReason::EndTool { tool: "final_answer".into() },
        StopReason::Truncated { reason: "length".into() },
        StopReason::Refused { reason: "content_filter".into() },
        StopReason::Cancelled,
        paused.stop.clone(),
    ];
    for stop in stops {
        let json = serde_json::to_string(&stop).unwrap();
        assert_eq!(serde_json::from_str::<StopReason>(&json).unwrap(), stop, "{json}");
    }
    assert_eq!(serde_json::to_value(StopReason::Answered).unwrap(), serde_json::json!("answered"));
    assert_eq!(
        serde_json::to_value(StopReason::MaxTurns { turns: 3 }).unwrap(),
        serde_json::json!({"max_turns": {"turns": 3}})
    );

    let spent = Usage { input_tokens: Some(12), output_tokens: Some(3), ..Usage::default() };
    let typed = RunResult {
        answer: r#"{"city":"Oslo"}"#.into(),
        typed_answer: Some(serde_json::json!({"city": "Oslo"})),
        transcript: Transcript::default(),
        usage: vec![spent],
        models: vec![ModelName::new("openai", "gpt-4.1")],
        stop: StopReason::Answered,
        agent: None,
    };
    for result in [paused, typed] {
        let json = serde_json::to_string(&result).unwrap();
        assert_eq!(serde_json::from_str::<RunResult>(&json).unwrap(), result, "{json}");
    }
}

/// The keys `key_of` was called with.
static KEYS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The key of this call.
#[tool(args, crate = "toolcall_core")]
async fn key_of(ctx: &ToolContext, why: String) -> Result<String, ToolError> {
    KEYS.lock().unwrap().push(ctx.idempotency_key().unwrap_or_default());
    Ok(why)
}

/// Logs each request and turn with how deep its run is, and gives its
/// sub-agents the same one level down; sets a scope on the turns of a run
/// that has none, as an engine does; counts its waits for a person.
#[derive(Clone, Default)]
struct Levels {
    log: Arc<Mutex<Vec<String>>>,
    depth: usize,
    waits: Arc<AtomicUsize>,
}

impl Effects for Levels {
    fn request<'a>(
        &'a self,
        model: &'a dyn Model,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.log.lock().unwrap().push(format!("request {}", self.depth));
        model.request(request)
    }

    fn run_calls<'a>(
        &'a self,
        toolset: &'a Toolset,
        context: &'a ToolContext,
        calls: &'a [ToolCall],
        approval: Approval,
    ) -> BoxFuture<'a, Vec<ToolResult>> {
        let names: Vec<&str> = calls.iter().map(|call| &*call.name).collect();
        self.log.lock().unwrap().push(format!("calls {} {}", self.depth, names.join(" ")));
        let context = match context.get::<IdempotencyScope>() {
            Some(_) => context.clone(),
            None => context.clone().with_extension(IdempotencyScope::new("run-1:1")),
        };
        Box::pin(async move { InProcess.run_calls(toolset, &context, calls, approval).await })
    }

    fn decide<'a>(&'a self, state: &'a RunState) -> BoxFuture<'a, Result<Option<RunState>, ModelError>> {
        self.waits.fetch_add(1, Ordering::SeqCst);
        InProcess.decide(state)
    }

    fn below(&self) -> Option<Arc<dyn Effects>> {
        Some(Arc::new(Self { depth: self.depth + 1, ..self.clone() }))
    }
}

#[tokio::test]
async fn a_sub_agents_requests_and_calls_go_through_the_effects_its_run_gives() {
    let reader = ScriptedModel::new()
        .then_calls([ToolCall::new("inner-1", "key_of", r#"{"why": "to show it"}"#)])
        .then_calls([ToolCall::new("inner-2", "remove_file", r#"{"path": "/tmp/x"}"#)]);
    let reader = Agent::new(reader, Toolset::builder().add(KeyOf).add(RemoveFile).build().unwrap()).unwrap();
    let writer =
        ScriptedModel::new().then_calls([ToolCall::new("outer-1", "reader", r#"{"prompt": "Read."}"#)]);
    let tools = Toolset::builder().add(reader.as_tool("reader", "Reads.")).build().unwrap();
    let writer = Agent::new(writer, tools).unwrap();
    let levels = Levels::default();

    let result = writer.run_with("Write.", &levels).await.unwrap();

    // Each of the sub-agent's steps went through the effects one level
    // down, in the run's order; its call's key is under its agent tool
    // call's.
    assert_eq!(
        *levels.log.lock().unwrap(),
        ["request 0", "calls 0 reader", "request 1", "calls 1 key_of", "request 1"]
    );
    assert_eq!(*KEYS.lock().unwrap(), ["run-1:1:outer-1:inner-1"]);
    // The sub-agent's held call paused it without a wait of its own: the
    // run above waited once, for the call it holds.
    let StopReason::Paused(state) = &result.stop else { panic!("{:?}", result.stop) };
    assert_eq!(state.pending()[0].call.name, "remove_file");
    assert_eq!(levels.waits.load(Ordering::SeqCst), 1);
}
