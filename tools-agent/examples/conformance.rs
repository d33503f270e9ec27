//! The conformance driver: every scenario of the stand-in in
//! `tests/conformance/` (OpenAI Chat, OpenAI Responses, Anthropic Messages,
//! Gemini, each replying from its official SDK's response models and
//! validating every request body against the SDK's request types), run by
//! each client, plain and streamed, through the SDK's public surface only:
//! `Agent::new`, `run`, `stream`, `RunResult`, a paused `RunState` saved as
//! JSON and resumed by a fresh client and agent; for a case with a partner
//! (another provider's client), a `FallbackModel` or `Agent::with_handoff`.
//!
//! The stand-in says what each case expects (`GET /_control/cases`); the
//! driver checks the run against it (stop and reason, or the error it
//! failed with; answer, each request's `Usage`, the messages kept, the
//! reasoning each assistant message of the transcript keeps, the calls run,
//! the agent that answered, the streamed text, reasoning and handoffs),
//! tells the stand-in the agent's own estimate of each request of a case
//! under a `ContextPolicy` (`ContextPolicy::estimate`, `POST
//! /_control/estimates/{case}`),
//! asks the stand-in to check the requests it received (`GET
//! /_control/check/{case}`: valid for the SDK's types, the conversation,
//! the tools, the headers; and the checks main does not pass yet, reported
//! as pending), reports each case back for the table (`POST
//! /_control/outcome/{case}`), and exits non-zero if any case failed.
//!
//! ```sh
//! python3 tests/conformance/run.py      # starts the stand-in, builds and runs this, prints the table
//! CONFORMANCE_URL=http://127.0.0.1:PORT cargo run -p toolcall-agent --example conformance
//! ```

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Value, json};
use toolcall_agent::{
    Agent, AgentError, AgentEvent, AnswerMode, AnswerType, Anthropic, ApiKey, CacheRetention, CacheSettings,
    CacheTtl, Content, ContextPolicy, FallbackModel, Gemini, Handoff, HandoffHistory, Message, Model,
    ModelError, ModelRequest, ModelResponse, ModelSettings, ModelStream, OpenAiChat, OpenAiResponses,
    ReasoningEffort, ReasoningSettings, ReasoningSummary, ResendPolicy, RunInput, RunResult, RunState,
    StopReason, Strategy, Summarizer, ToolChoice, Transcript,
};
use toolcall_core::toolset::{Toolset, WebSearch};
use toolcall_core::{Outcome, Part, ToolCall, ToolContext, ToolError, ToolResult};
use toolcall_macros::tool;

/// The header the client that resumes a saved run sends, so the stand-in
/// can tell its requests apart.
const RESUMED: (&str, &str) = ("x-conformance-phase", "resumed");

/// How long one case may take (each takes milliseconds).
const CASE_TIMEOUT: Duration = Duration::from_secs(30);

/// Current temperature for a city.
#[tool(args, read_only, crate = "toolcall_core")]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("12°C in {city}"))
}

/// Current time in a time zone.
#[tool(args, read_only, crate = "toolcall_core")]
async fn get_time(_ctx: &ToolContext, zone: String) -> Result<String, ToolError> {
    Ok(format!("12:00 in {zone}"))
}

/// Delete a file; every call waits for a person's approval.
#[tool(args, destructive, needs_approval, crate = "toolcall_core")]
async fn delete_file(_ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    Ok(format!("deleted {path}"))
}

/// The typed answer of a case that asks for one.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Forecast {
    city: String,
    celsius: f64,
}

/// The tools a case's agent has (`scenarios.TOOLS`).
const TOOLS: [&str; 3] = ["get_weather", "get_time", "delete_file"];

/// The tools `names` names, in that order; with the provider's web search
/// too, for a case that says so.
fn toolset<'a>(names: impl IntoIterator<Item = &'a str>, web_search: bool) -> Result<Toolset, String> {
    let mut tools = Toolset::builder();
    for name in names {
        tools = match name {
            "get_weather" => tools.add(GetWeather),
            "get_time" => tools.add(GetTime),
            "delete_file" => tools.add(DeleteFile),
            other => return Err(format!("no tool `{other}`")),
        };
    }
    if web_search {
        tools = tools.add_web_search(WebSearch::new());
    }
    tools.build().map_err(|e| e.to_string())
}

/// The cache settings of a case that sets them (`scenarios.CACHE`): what
/// each API takes.
fn cache_settings(client: &str) -> CacheSettings {
    match client {
        "chat" | "responses" => {
            CacheSettings::new().with_key("conformance-cache").with_retention(CacheRetention::Day)
        }
        "anthropic" => CacheSettings::new().with_ttl(CacheTtl::OneHour),
        _ => CacheSettings::new(),
    }
}

/// Every setting a client's API takes, as a case that sends them all sets
/// them (`scenarios.SETTINGS`): the length, sampling, stop sequences, seed,
/// reasoning, tool choice, parallel calls and cache, each where the API
/// has it. Anthropic's model takes no sampling (Claude Opus 4.7): its
/// temperature, `top_p` and `top_k` are set, and must not be sent.
fn every_setting(client: &str) -> ModelSettings {
    let stops = ["\n\nObservation:"];
    let settings = ModelSettings::default()
        .with_max_tokens(2_000)
        .with_temperature(0.2)
        .with_top_p(0.9)
        .with_tool_choice(ToolChoice::Auto)
        .with_cache(cache_settings(client))
        .with_request_timeout(CASE_TIMEOUT);
    // OpenAI's sampling with reasoning off (GPT-5.1's effort `none`).
    let off = ReasoningSettings::new().with_effort(ReasoningEffort::None);
    match client {
        "chat" => settings
            .with_stop_sequences(stops)
            .with_seed(7)
            .with_parallel_tool_calls(false)
            .with_reasoning(off),
        "responses" => settings.with_parallel_tool_calls(false).with_reasoning(off),
        "anthropic" => {
            settings.with_top_k(40).with_stop_sequences(stops).with_parallel_tool_calls(false).with_reasoning(
                ReasoningSettings::new()
                    .with_effort(ReasoningEffort::High)
                    .with_summary(ReasoningSummary::Auto),
            )
        }
        // Gemini has no switch for parallel calls; a 2.5 model's budget.
        _ => settings.with_top_k(40).with_stop_sequences(stops).with_seed(7).with_reasoning(
            ReasoningSettings::new().with_budget_tokens(1_024).with_summary(ReasoningSummary::Auto),
        ),
    }
}

/// A client that records [`ContextPolicy::estimate`] of each request it
/// sends (the summary requests too), plain or streamed, and sends it.
struct Measured<M> {
    inner: M,
    estimates: Arc<Mutex<Vec<u64>>>,
}

impl<M: Model> Measured<M> {
    fn record(&self, request: &ModelRequest<'_>) {
        let estimate = ContextPolicy::estimate(&self.inner, request);
        self.estimates.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(estimate);
    }
}

impl<M: Model> Model for Measured<M> {
    fn provider(&self) -> &str {
        self.inner.provider()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn dialect(&self) -> Option<toolcall_provider::Dialect> {
        self.inner.dialect()
    }

    fn native_answers(&self) -> bool {
        self.inner.native_answers()
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.record(&request);
        self.inner.request(request)
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        self.record(&request);
        self.inner.stream(request)
    }
}

/// The policy of a case that goes on from a long conversation: the
/// default strategies, or with `summarize`, clear old results, summarize
/// with the agent's model, drop the oldest turns (`scenarios.Context`).
fn context_policy(context: &Value) -> ContextPolicy {
    let policy = ContextPolicy::new(context["budget"].as_u64().unwrap_or_default());
    if !context["summarize"].as_bool().unwrap_or(false) {
        return policy;
    }
    policy.with_strategies([
        Strategy::ClearToolResults { keep_last: 3 },
        Strategy::Summarize(Summarizer::new()),
        Strategy::DropOldestTurns,
    ])
}

/// A conversation as the stand-in writes it (`["user", text]`,
/// `["assistant", text, [[id, name, args]...]]`, `["results", [[id,
/// content]...]]`, `["summary", text, covers]`), as a transcript's
/// messages: each result named by its call.
fn messages(history: &Value) -> Result<Vec<Message>, String> {
    let mut out = Vec::new();
    let mut names = std::collections::HashMap::new();
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    for entry in history.as_array().into_iter().flatten() {
        let message = match entry[0].as_str() {
            Some("user") => Message::user(text(&entry[1])),
            Some("assistant") => {
                let calls = entry[2].as_array().into_iter().flatten().map(|call| {
                    names.insert(text(&call[0]), text(&call[1]));
                    ToolCall::new(text(&call[0]), text(&call[1]), call[2].to_string())
                });
                Message::assistant(text(&entry[1]), calls.collect::<Vec<_>>())
            }
            Some("results") => Message::Tool {
                results: entry[1]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|result| {
                        let name = names.get(&text(&result[0])).cloned().unwrap_or_default();
                        ToolResult::new(text(&result[0]), name, text(&result[1]), Outcome::Success)
                    })
                    .collect(),
            },
            Some("summary") => {
                Message::summary(text(&entry[1]), entry[2].as_u64().unwrap_or_default() as usize)
            }
            _ => return Err(format!("not a message of the history: {entry}")),
        };
        out.push(message);
    }
    Ok(out)
}

/// `$then` with `$client` the client of the stand-in's API that a
/// partner's spec (`scenarios.partner_spec`: `client`, `model`, `key`,
/// `base_path`) names, whatever its type.
macro_rules! partner_client {
    ($case:expr, $spec:expr, |$client:ident| $then:expr) => {{
        let field = |name: &str| $spec.get(name).and_then(Value::as_str).unwrap_or_default();
        let (model, key) = (field("model"), Some(ApiKey::new(field("key"))));
        let base = format!("{}{}", $case.root, field("base_path"));
        match field("client") {
            "chat" => {
                let $client = OpenAiChat::from_values(model, key, Some(&base));
                $then
            }
            "responses" => {
                let $client = OpenAiResponses::from_values(model, key, Some(&base));
                $then
            }
            "anthropic" => {
                let $client = Anthropic::from_values(model, key, Some(&base));
                $then
            }
            "gemini" => {
                let $client = Gemini::from_values(model, key, Some(&base));
                $then
            }
            other => Err(format!("no client `{other}`")),
        }
    }};
}

/// One case of the suite, as the stand-in describes it.
struct Case {
    spec: Value,
    root: String,
    /// [`ContextPolicy::estimate`] of each request, for a case under a
    /// context policy.
    estimates: Arc<Mutex<Vec<u64>>>,
}

impl Case {
    fn str(&self, name: &str) -> &str {
        self.spec.get(name).and_then(Value::as_str).unwrap_or_default()
    }

    fn expect(&self, name: &str) -> &Value {
        self.spec.pointer(&format!("/expect/{name}")).unwrap_or(&Value::Null)
    }

    /// The prompt: its `prompt_parts` (text, images, files, in their JSON
    /// form) where the case has them, else its text.
    fn prompt(&self) -> Result<RunInput, String> {
        match self.spec.get("prompt_parts").filter(|parts| !parts.is_null()) {
            Some(parts) => {
                let parts: Vec<Part> = serde_json::from_value(parts.clone())
                    .map_err(|error| format!("the case's prompt_parts: {error}"))?;
                Ok(RunInput::from(parts))
            }
            None => Ok(RunInput::from(self.str("prompt"))),
        }
    }

    /// The context policy of a case that goes on from a long conversation.
    fn context(&self) -> Option<&Value> {
        self.spec.get("context").filter(|context| !context.is_null())
    }

    /// What the run starts from: the prompt, or, for a case that goes on
    /// from a long conversation, the stand-in's history and the prompt.
    async fn input(&self, http: &reqwest::Client) -> Result<RunInput, String> {
        let prompt = self.prompt()?;
        if self.context().is_none() {
            return Ok(prompt);
        }
        let url = format!("{}/_control/history/{}", self.root, self.str("scenario"));
        let mut transcript = Transcript::new();
        transcript.messages = messages(&get(http, &url).await?)?;
        match prompt {
            RunInput::Prompt(parts) => transcript.push(Message::user_parts(parts)),
            other => return Err(format!("a prompt that is not one: {other:?}")),
        }
        Ok(RunInput::Transcript(transcript))
    }

    fn streamed(&self) -> bool {
        self.spec.get("streamed").and_then(Value::as_bool).unwrap_or(false)
    }

    /// A new agent on a new client of the case's API at the stand-in;
    /// `resumed`: the one that loads the saved run, whose client sends
    /// [`RESUMED`].
    fn agent(&self, resumed: bool) -> Result<Agent, String> {
        let base = format!("{}{}", self.root, self.str("base_path"));
        let (model, key) = (self.str("model"), Some(ApiKey::new(self.str("key"))));
        let tools = toolset(TOOLS, self.spec.get("web_search").and_then(Value::as_bool).unwrap_or(false))?;
        // Another provider's client in the run: the next model of a
        // `FallbackModel`, or the one of the agent this one hands off to.
        let partner = self.spec.get("partner").filter(|partner| !partner.is_null());
        let role = |role: &str| partner.filter(|partner| partner["role"] == role);
        let fallback = role("fallback");
        macro_rules! agent {
            ($client:ty) => {{
                let mut client = <$client>::from_values(model, key, Some(&base));
                if resumed {
                    let (name, value) = RESUMED;
                    client =
                        client.with_header(HeaderName::from_static(name), HeaderValue::from_static(value));
                }
                match fallback {
                    // Down means down: the next model, without resending.
                    Some(next) => self.fallback(client.with_resend(ResendPolicy::none()), next, tools),
                    None if self.context().is_some() => {
                        Agent::new(Measured { inner: client, estimates: self.estimates.clone() }, tools)
                            .map_err(|e| e.to_string())
                    }
                    None => Agent::new(client, tools).map_err(|e| e.to_string()),
                }
            }};
        }
        let agent = match self.str("client") {
            "chat" => agent!(OpenAiChat),
            "responses" => agent!(OpenAiResponses),
            "anthropic" => agent!(Anthropic),
            "gemini" => agent!(Gemini),
            other => return Err(format!("no client `{other}`")),
        };
        let mut agent = agent?.with_instructions(self.str("instructions"));
        if self.spec.get("answer").and_then(Value::as_bool).unwrap_or(false) {
            let answer = AnswerType::of::<Forecast>().with_mode(AnswerMode::Native);
            agent = agent.with_answer_type(answer).map_err(|e| e.to_string())?;
        }
        if let Some(context) = self.context() {
            agent = agent.with_context_policy(context_policy(context));
        }
        if self.spec.get("cache").and_then(Value::as_bool).unwrap_or(false) {
            agent =
                agent.with_settings(ModelSettings::default().with_cache(cache_settings(self.str("client"))));
        }
        if self.spec.get("settings").and_then(Value::as_bool).unwrap_or(false) {
            agent = agent.with_settings(every_setting(self.str("client")));
        }
        if let Some(name) = self.spec.get("name").and_then(Value::as_str) {
            agent = agent.with_name(name);
        }
        if let Some(to) = role("handoff") {
            let mut handoff = Handoff::to(&self.handed_to(to)?);
            if to["history"] == "user_and_last_answer" {
                handoff = handoff.with_history(HandoffHistory::UserAndLastAnswer);
            }
            agent = agent.with_handoff(handoff).map_err(|e| e.to_string())?;
        }
        Ok(agent)
    }

    /// The agent a case's agent hands the conversation to: on a client of
    /// the `to` spec's API, with its name, instructions and tools.
    fn handed_to(&self, to: &Value) -> Result<Agent, String> {
        let field = |name: &str| to.get(name).and_then(Value::as_str).unwrap_or_default();
        let names = to["tools"].as_array().into_iter().flatten().filter_map(Value::as_str);
        let tools = toolset(names, false)?;
        let agent = partner_client!(self, to, |client| Agent::new(client, tools).map_err(|e| e.to_string()))?;
        Ok(agent.with_name(field("name")).with_instructions(field("instructions")))
    }

    /// An agent over `first`, then a client of the `next` spec's API.
    fn fallback(&self, first: impl Model + 'static, next: &Value, tools: Toolset) -> Result<Agent, String> {
        let chain = FallbackModel::new(first);
        partner_client!(self, next, |client| Agent::new(chain.or(client), tools).map_err(|e| e.to_string()))
    }
}

/// What a run gave (its result, or the error it stopped with), and the
/// events of a streamed one (before its end).
type Ran = (Result<RunResult, AgentError>, Vec<AgentEvent>);

async fn run(agent: &Agent, input: RunInput, streamed: bool) -> Result<Ran, String> {
    if !streamed {
        return Ok((agent.run(input).await, Vec::new()));
    }
    let mut events: Vec<AgentEvent> = agent.stream(input).collect().await;
    match events.pop() {
        Some(AgentEvent::Finished(result)) => Ok((result, events)),
        other => Err(format!("the stream did not end with Finished: {other:?}")),
    }
}

/// The result of a run that must not fail.
fn succeeded(ran: Ran) -> Result<(RunResult, Vec<AgentEvent>), String> {
    match ran {
        (Ok(result), events) => Ok((result, events)),
        (Err(error), _) => Err(format!("the run failed: {error}")),
    }
}

/// Run one case; what did not go as expected.
async fn run_case(case: &Case, http: &reqwest::Client) -> Result<Vec<String>, String> {
    let streamed = case.streamed();
    let agent = case.agent(false)?;
    let ran = run(&agent, case.input(http).await?, streamed).await?;
    // A case that must fail: the error, as it prints, is what is compared.
    if let Some(expected) = case.expect("error").as_str() {
        return Ok(match ran.0 {
            Err(error) if error.error.to_string() == expected => Vec::new(),
            Err(error) => vec![format!("the run failed with \"{}\", expected \"{expected}\"", error.error)],
            Ok(result) => vec![format!("the run did not fail: {:?}, expected \"{expected}\"", result.stop)],
        });
    }
    let (mut result, mut events) = succeeded(ran)?;
    let mut problems = Vec::new();
    if let Some(pause) = case.spec.get("pause").filter(|pause| !pause.is_null()) {
        let StopReason::Paused(state) = &result.stop else {
            return Err(format!("the run did not pause: {:?}", result.stop));
        };
        let pending: Vec<&str> = state.pending().iter().map(|p| p.call.name.as_str()).collect();
        if json!(pending) != pause["pending"] {
            problems.push(format!("pending calls {pending:?}, expected {}", pause["pending"]));
        }
        // Saved as JSON; the agent and its client are gone; a fresh pair
        // loads it and goes on.
        let saved = serde_json::to_string(state.as_ref()).map_err(|e| format!("saving the run: {e}"))?;
        drop(agent);
        let mut state: RunState =
            serde_json::from_str(&saved).map_err(|e| format!("loading the run: {e}"))?;
        let ids: Vec<String> = state.pending().iter().map(|p| p.call.id.to_string()).collect();
        let decisions = pause["decisions"].as_array().cloned().unwrap_or_default();
        if decisions.len() != ids.len() {
            return Err(format!("{} calls wait, and {} decisions", ids.len(), decisions.len()));
        }
        for (id, decision) in ids.iter().zip(&decisions) {
            let decided = match decision["decision"].as_str() {
                Some("approve") => state.approve(id),
                Some("deny") => state.deny(id, decision["reason"].as_str().unwrap_or_default()),
                Some("approve_with") => state.approve_with(id, decision["arguments"].to_string()),
                other => return Err(format!("no decision {other:?}")),
            };
            decided.map_err(|e| e.to_string())?;
        }
        let resumed = case.agent(true)?;
        let (after, more) = succeeded(run(&resumed, RunInput::Paused(state), streamed).await?)?;
        result = after;
        events.extend(more);
    }
    if let Some(prompt) = case.spec.get("follow_up").and_then(Value::as_str) {
        if result.stop != StopReason::Answered {
            return Err(format!("the run did not answer before the follow-up: {:?}", result.stop));
        }
        // The transcript saved as JSON; a fresh client and agent load it
        // and go on with a new prompt. The usage counts both runs.
        let saved =
            serde_json::to_string(&result.transcript).map_err(|e| format!("saving the transcript: {e}"))?;
        let mut transcript: Transcript =
            serde_json::from_str(&saved).map_err(|e| format!("loading the transcript: {e}"))?;
        transcript.push(Message::user(prompt));
        let earlier = (std::mem::take(&mut result.usage), std::mem::take(&mut result.models));
        let (after, more) =
            succeeded(run(&case.agent(true)?, RunInput::Transcript(transcript), streamed).await?)?;
        result = after;
        result.usage = [earlier.0, result.usage].concat();
        result.models = [earlier.1, result.models].concat();
        events.extend(more);
    }
    problems.extend(compare(case, &result, &events));
    Ok(problems)
}

/// The reasoning (and provider items) each assistant message of the
/// transcript keeps, as it serializes.
fn kept_reasoning(result: &RunResult) -> Value {
    let kept = result.transcript.messages.iter().filter_map(|message| match message {
        Message::Assistant { content } => Some(
            content
                .iter()
                .filter(|piece| matches!(piece, Content::Reasoning(_) | Content::Native { .. }))
                .collect::<Vec<_>>(),
        ),
        _ => None,
    });
    json!(kept.collect::<Vec<_>>())
}

/// The run against what the case expects.
fn compare(case: &Case, result: &RunResult, events: &[AgentEvent]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut differ = |what: &str, got: Value, expected: &Value| {
        if got != *expected {
            problems.push(format!("{what}: got {got}, expected {expected}"));
        }
    };
    let (stop, reason) = match &result.stop {
        StopReason::Answered => (json!("Answered"), None),
        StopReason::Truncated { reason } => (json!("Truncated"), Some(reason.as_str())),
        StopReason::Refused { reason } => (json!("Refused"), Some(reason.as_str())),
        other => (json!(format!("{other:?}")), None),
    };
    differ("stop", stop, case.expect("stop"));
    differ("stop reason", json!(reason), case.expect("reason"));
    differ("answer", json!(result.answer), case.expect("answer"));
    differ("usage of each request", json!(result.usage), case.expect("usage"));
    differ("usage of the run", json!(result.total_usage()), case.expect("total_usage"));
    let models: Vec<String> = result.models.iter().map(ToString::to_string).collect();
    differ("the model that answered each request", json!(models), case.expect("models"));
    differ("messages in the transcript", json!(result.transcript.messages.len()), case.expect("messages"));
    differ("reasoning kept in the transcript", kept_reasoning(result), case.expect("reasoning"));
    differ("the agent that answered", json!(result.agent), case.expect("agent"));
    let pending = result.transcript.pending_calls().len();
    differ("calls left without a result", json!(pending), &json!(0));
    if case.streamed() {
        let streamed =
            |pick: fn(&AgentEvent) -> Option<&str>| -> String { events.iter().filter_map(pick).collect() };
        let text = streamed(|event| match event {
            AgentEvent::TextDelta(text) => Some(text),
            _ => None,
        });
        differ("streamed text", json!(text), case.expect("streamed_text"));
        let reasoning = streamed(|event| match event {
            AgentEvent::ReasoningDelta(text) => Some(text),
            _ => None,
        });
        differ("streamed reasoning", json!(reasoning), case.expect("streamed_reasoning"));
        let results = events.iter().filter(|event| matches!(event, AgentEvent::ToolResult(_))).count();
        differ("tool results streamed", json!(results), case.expect("tool_results"));
        let handoffs: Vec<Value> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::Handoff { from, to } => Some(json!([from, to])),
                _ => None,
            })
            .collect();
        differ("handoffs streamed", json!(handoffs), case.expect("handoffs"));
        // A paused run's requests are in its own stream, the resumed run's
        // in the other: together, every request once.
        let usage = events.iter().filter(|event| matches!(event, AgentEvent::Usage(_))).count();
        differ("usage events", json!(usage), case.expect("requests"));
    }
    problems
}

async fn get(http: &reqwest::Client, url: &str) -> Result<Value, String> {
    let response = http.get(url).send().await.map_err(|e| format!("GET {url}: {e}"))?;
    response.json().await.map_err(|e| format!("GET {url}: not JSON: {e}"))
}

#[tokio::main]
async fn main() {
    let Some(root) = std::env::var("CONFORMANCE_URL").ok().filter(|url| !url.trim().is_empty()) else {
        eprintln!(
            "CONFORMANCE_URL is not set: start the stand-in (python3 tests/conformance/standin.py) and give its \
             URL, or run python3 tests/conformance/run.py"
        );
        std::process::exit(2);
    };
    let root = root.trim().trim_end_matches('/').to_owned();
    let http = reqwest::Client::new();
    let spec = match get(&http, &format!("{root}/_control/cases")).await {
        Ok(spec) => spec,
        Err(error) => {
            eprintln!("the stand-in did not answer: {error}");
            std::process::exit(2);
        }
    };
    println!("SDK versions of the stand-in: {}", spec["versions"]);
    let cases = spec["cases"].as_array().cloned().unwrap_or_default();
    if cases.is_empty() {
        eprintln!("the stand-in has no cases");
        std::process::exit(2);
    }
    let began = Instant::now();
    let (total, mut failed) = (cases.len(), 0);
    for spec in cases {
        let case = Case { spec, root: root.clone(), estimates: Arc::default() };
        let name = case.str("case").to_owned();
        let started = Instant::now();
        let mut problems = match tokio::time::timeout(CASE_TIMEOUT, run_case(&case, &http)).await {
            Ok(Ok(problems)) => problems,
            Ok(Err(error)) => vec![error],
            Err(_) => vec![format!("the case took more than {CASE_TIMEOUT:?}")],
        };
        // A case under a context policy: the agent's own estimate of each
        // request, for the stand-in's checks (each under the budget).
        let estimates = case.estimates.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        if case.context().is_some() {
            let url = format!("{root}/_control/estimates/{name}");
            if let Err(error) = http.post(&url).json(&estimates).send().await {
                problems.push(format!("POST {url}: {error}"));
            }
        }
        // The stand-in's checks of the requests; those main does not pass
        // yet come apart, as pending.
        let mut pending = Vec::new();
        match get(&http, &format!("{root}/_control/check/{name}")).await {
            Ok(checked) => {
                problems.extend(
                    checked["problems"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|p| p.as_str().unwrap_or("?").to_owned()),
                );
                pending = checked["pending"].as_array().cloned().unwrap_or_default();
            }
            Err(error) => problems.push(error),
        }
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let outcome = json!({"ok": problems.is_empty(), "problems": problems, "pending": pending, "ms": ms,
            "estimates": estimates});
        if let Err(error) = http.post(format!("{root}/_control/outcome/{name}")).json(&outcome).send().await {
            eprintln!("reporting {name}: {error}");
        }
        if problems.is_empty() {
            match (estimates.iter().max(), case.context()) {
                (Some(most), Some(context)) => {
                    println!(
                        "ok    {name} ({ms:.0} ms; requests estimated at {most} tokens at most, budget {})",
                        context["budget"]
                    );
                }
                _ => println!("ok    {name} ({ms:.0} ms)"),
            }
            for check in &pending {
                println!("      pending: {} ({})", check["check"].as_str().unwrap_or("?"), check["problems"]);
            }
        } else {
            failed += 1;
            println!("FAIL  {name}");
            for problem in &problems {
                println!("      {}", problem.replace('\n', "\n      "));
            }
        }
    }
    println!(
        "{} passed, {failed} failed ({:.2} s)",
        total.saturating_sub(failed),
        began.elapsed().as_secs_f64()
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
