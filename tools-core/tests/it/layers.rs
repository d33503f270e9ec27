//! Layers around calls: their order, short-circuits, panics, and each
//! ready layer's behaviour, through `Toolset::run_turn`.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{FnTool, echo};
use futures::future::BoxFuture;
use toolcall_core::layers::{Cache, ConcurrencyLimit, Guardrail, RepairArguments, RepairBudget, Rerun};
use toolcall_core::toolset::{Before, Layer, LayerCall, Next, OnError, ToolOptions, Toolset};
use toolcall_core::{
    Outcome, Output, OutputFuture, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec, TypedTool,
};

async fn run(tools: &Toolset, calls: &[(&str, &str)]) -> Vec<ToolResult> {
    let calls: Vec<ToolCall> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| ToolCall::new(i.to_string(), *name, *args))
        .collect();
    tools.run_turn(&ToolContext::new(), &calls).await
}

/// Writes what it sees into a shared log.
struct Logs(&'static str, Arc<Mutex<Vec<String>>>);

impl Logs {
    fn push(&self, step: &str) {
        self.1.lock().unwrap().push(format!("{} {step}", self.0));
    }
}

impl Layer for Logs {
    fn before<'a>(&'a self, call: LayerCall<'a>) -> BoxFuture<'a, Before> {
        self.push(&format!("before {}", call.arguments));
        Box::pin(async move { Before::RunWith(format!("{}+", call.arguments)) })
    }
    fn after<'a>(&'a self, _: LayerCall<'a>, output: Output) -> BoxFuture<'a, Result<Output, ToolError>> {
        self.push("after");
        Box::pin(async move { Ok(Output::text(format!("{}{}", output.text, self.0))) })
    }
}

#[tokio::test]
async fn layers_run_toolset_first_outside_in_then_the_tools_own() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let tools = Toolset::builder()
        .add_with(echo("echo"), ToolOptions::new().with_layer(Logs("c", Arc::clone(&log))))
        .add(echo("plain"))
        .build()
        .unwrap()
        .with_layer(Logs("a", Arc::clone(&log)))
        .with_layer(Logs("b", Arc::clone(&log)));
    let results = run(&tools, &[("echo", "x")]).await;
    // Each before step rewrote the arguments, each after step the output.
    assert_eq!(results[0].content, "x+++cba");
    assert_eq!(
        *log.lock().unwrap(),
        ["a before x", "b before x+", "c before x++", "c after", "b after", "a after"]
    );
    log.lock().unwrap().clear();
    assert_eq!(run(&tools, &[("plain", "y")]).await[0].content, "y++ba", "the tool's own layer is its own");
}

/// Answers `forbidden` without running it.
struct Forbid;

impl Layer for Forbid {
    fn before<'a>(&'a self, call: LayerCall<'a>) -> BoxFuture<'a, Before> {
        let answer = (call.tool.spec().name() == "forbidden")
            .then(|| Before::Answer(Err(ToolError::retry("not now"))));
        Box::pin(async { answer.unwrap_or(Before::Run) })
    }
}

#[tokio::test]
async fn a_before_step_can_answer_without_running_the_tool() {
    let ran = Arc::new(AtomicUsize::new(0));
    let counted = {
        let ran = Arc::clone(&ran);
        FnTool::new("forbidden", move |_, _| {
            ran.fetch_add(1, Ordering::SeqCst);
            async { Ok("ran".to_owned()) }
        })
    };
    let tools = Toolset::builder().add(counted).add(echo("echo")).build().unwrap().with_layer(Forbid);
    let results = run(&tools, &[("forbidden", "{}"), ("echo", "{}")]).await;
    assert_eq!((results[0].outcome, results[0].content.as_str()), (Outcome::Retry, "not now"));
    assert_eq!((results[1].outcome, results[1].content.as_str()), (Outcome::Success, "{}"));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

/// Panics around `echo`.
struct Panics;

impl Layer for Panics {
    fn around<'a>(&'a self, call: LayerCall<'a>, next: Next<'a>) -> OutputFuture<'a> {
        if call.tool.spec().name() == "echo" {
            panic!("a layer's bug");
        }
        next.call(call)
    }
}

#[tokio::test]
async fn a_panicking_layer_is_that_calls_panic_only() {
    let tools = Toolset::builder().add(echo("echo")).add(echo("other")).build().unwrap().with_layer(Panics);
    let results = run(&tools, &[("echo", "{}"), ("other", "{}")]).await;
    assert_eq!(results[0].outcome, Outcome::Panicked);
    assert_eq!((results[1].outcome, results[1].content.as_str()), (Outcome::Success, "{}"));
    assert_eq!(tools.counts("echo").unwrap().failures, 1);
}

/// Fails transiently `failures` times, then answers; counts its runs.
fn flaky(name: &str, failures: usize, runs: Arc<AtomicUsize>, transient: bool) -> FnTool {
    FnTool::new(name, move |_, _| {
        let run = runs.fetch_add(1, Ordering::SeqCst);
        async move {
            match run < failures {
                true if transient => Err(ToolError::transient("503 from upstream")),
                true => Err(ToolError::failed("no such city")),
                false => Ok(format!("answered on run {}", run + 1)),
            }
        }
    })
}

#[tokio::test(start_paused = true)]
async fn retry_runs_transient_failures_again_with_backoff_and_stops_at_its_bound() {
    let (recovers, gives_up, permanent) =
        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let tools = Toolset::builder()
        .add(flaky("recovers", 2, Arc::clone(&recovers), true))
        .add(flaky("gives_up", 10, Arc::clone(&gives_up), true))
        .add(flaky("permanent", 10, Arc::clone(&permanent), false))
        .build()
        .unwrap()
        .with_layer(Rerun::new(3).with_backoff(Duration::from_millis(100), Duration::from_millis(250)));
    let started = tokio::time::Instant::now();
    let results = run(&tools, &[("recovers", "{}"), ("gives_up", "{}"), ("permanent", "{}")]).await;
    assert_eq!((results[0].outcome, results[0].content.as_str()), (Outcome::Success, "answered on run 3"));
    assert_eq!(
        (results[1].outcome, results[1].content.as_str()),
        (Outcome::Failed, r#"{"error":"503 from upstream"}"#)
    );
    assert_eq!(results[2].outcome, Outcome::Failed);
    assert_eq!(
        [recovers.load(Ordering::SeqCst), gives_up.load(Ordering::SeqCst), permanent.load(Ordering::SeqCst)],
        [3, 4, 1]
    );
    // Pauses of 100, 200 and (capped) 250 ms, the calls side by side.
    assert_eq!(started.elapsed(), Duration::from_millis(550));
}

#[tokio::test(start_paused = true)]
async fn retries_end_with_the_calls_timeout() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tools = Toolset::builder()
        .add_with(
            flaky("flaky", 100, Arc::clone(&runs), true),
            ToolOptions::new().with_timeout(Duration::from_millis(120)),
        )
        .build()
        .unwrap()
        .with_layer(Rerun::new(100).with_backoff(Duration::from_millis(50), Duration::from_millis(50)));
    assert_eq!(run(&tools, &[("flaky", "{}")]).await[0].outcome, Outcome::TimedOut);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn at_most_the_limit_of_one_tools_calls_run_at_once() {
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let busy = {
        let (now, most) = (Arc::clone(&now), Arc::clone(&most));
        FnTool::new("busy", move |_, _| {
            let (now, most) = (Arc::clone(&now), Arc::clone(&most));
            async move {
                most.fetch_max(now.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                now.fetch_sub(1, Ordering::SeqCst);
                Ok("done".to_owned())
            }
        })
    };
    let tools =
        Toolset::builder().add(busy).add(echo("echo")).build().unwrap().with_layer(ConcurrencyLimit::new(2));
    let mut calls = vec![("busy", "{}"); 6];
    calls.push(("echo", "{}"));
    let results = run(&tools, &calls).await;
    assert!(results.iter().all(|result| result.outcome == Outcome::Success), "{results:?}");
    assert_eq!(most.load(Ordering::SeqCst), 2);
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Days {
    days: u8,
}

/// Counts its runs; `read_only` and `idempotent` when `cacheable`.
struct Forecast {
    runs: Arc<AtomicUsize>,
    spec: ToolSpec,
}

impl Forecast {
    fn new(name: &'static str, cacheable: bool, runs: &Arc<AtomicUsize>) -> Self {
        let spec =
            ToolSpec::new::<Days>(name, "Forecast.").with_read_only(cacheable).with_idempotent(cacheable);
        Self { runs: Arc::clone(runs), spec }
    }
}

impl TypedTool for Forecast {
    type Request = Days;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn run(&self, _: &ToolContext, req: Days) -> Result<String, ToolError> {
        let run = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        if req.days == 0 {
            return Err(ToolError::failed("no days"));
        }
        Ok(format!("{} days, run {run}", req.days))
    }
}

#[tokio::test]
async fn the_cache_answers_read_only_idempotent_tools_for_the_same_cleaned_arguments() {
    let (cached_runs, other_runs) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let cache = Arc::new(Cache::new(100, Duration::from_secs(60)));
    let tools = Toolset::builder()
        .add(Forecast::new("cached", true, &cached_runs))
        .add(Forecast::new("other", false, &other_runs))
        .build()
        .unwrap()
        .with_layer(Arc::clone(&cache));
    let first = run(&tools, &[("cached", r#"{"days":3}"#)]).await;
    let same = run(&tools, &[("cached", "```json\n{ \"days\": 3 }\n```")]).await;
    assert_eq!((first[0].content.as_str(), same[0].content.as_str()), ("3 days, run 1", "3 days, run 1"));
    assert_eq!(run(&tools, &[("cached", r#"{"days":4}"#)]).await[0].content, "4 days, run 2");
    // Errors are not kept; other tools are not cached.
    run(&tools, &[("cached", r#"{"days":0}"#), ("other", r#"{"days":3}"#)]).await;
    run(&tools, &[("cached", r#"{"days":0}"#), ("other", r#"{"days":3}"#)]).await;
    assert_eq!((cached_runs.load(Ordering::SeqCst), other_runs.load(Ordering::SeqCst)), (4, 2));
    assert_eq!(cache.len(), 2);

    // A zero time to live keeps nothing for long.
    let runs = Arc::new(AtomicUsize::new(0));
    let tools = Toolset::builder()
        .add(Forecast::new("cached", true, &runs))
        .build()
        .unwrap()
        .with_layer(Cache::new(100, Duration::ZERO));
    run(&tools, &[("cached", r#"{"days":3}"#)]).await;
    run(&tools, &[("cached", r#"{"days":3}"#)]).await;
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn repair_gets_the_schema_the_text_and_the_reason_and_its_arguments_are_checked() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let runs = Arc::new(AtomicUsize::new(0));
    let repair = {
        let seen = Arc::clone(&seen);
        RepairArguments::new(move |repair| {
            seen.lock().unwrap().push((
                repair.tool.to_owned(),
                repair.arguments.to_owned(),
                repair.reason.to_owned(),
            ));
            assert!(repair.schema["properties"]["days"].is_object());
            let fixed = match repair.arguments {
                r#"{"days":"three"}"# => Some(r#"{"days":3}"#.to_owned()),
                r#"{"days":"many"}"# => Some(r#"{"days":"still many"}"#.to_owned()),
                _ => None,
            };
            Box::pin(async move { fixed })
        })
    };
    let tools =
        Toolset::builder().add(Forecast::new("forecast", false, &runs)).build().unwrap().with_layer(repair);
    let results = run(
        &tools,
        &[("forecast", r#"{"days":"three"}"#), ("forecast", r#"{"days":"many"}"#), ("forecast", "{}")],
    )
    .await;
    assert_eq!((results[0].outcome, results[0].content.as_str()), (Outcome::Success, "3 days, run 1"));
    // A repair that does not fit is checked and refused, once; no repair leaves the model's error.
    assert_eq!(results[1].outcome, Outcome::InvalidArguments);
    assert!(results[1].content.contains("still many"), "{}", results[1].content);
    assert_eq!(results[2].outcome, Outcome::InvalidArguments);
    assert!(results[2].content.contains("missing field `days`"), "{}", results[2].content);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!((seen[0].0.as_str(), seen[0].1.as_str()), ("forecast", r#"{"days":"three"}"#));
    assert!(seen[0].2.contains("at `days`"), "{:?}", seen[0]);
}

#[tokio::test]
async fn repairs_stop_when_the_runs_budget_is_spent() {
    let asked = Arc::new(AtomicUsize::new(0));
    let repair = {
        let asked = Arc::clone(&asked);
        RepairArguments::new(move |_| {
            asked.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Some(r#"{"days":2}"#.to_owned()) })
        })
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let tools =
        Toolset::builder().add(Forecast::new("forecast", false, &runs)).build().unwrap().with_layer(repair);
    let budget = RepairBudget::new(2);
    let ctx = ToolContext::new().with_extension(budget.clone());
    let calls: Vec<ToolCall> = (0..3).map(|i| ToolCall::new(i.to_string(), "forecast", "{}")).collect();
    let outcomes: Vec<Outcome> =
        tools.run_turn(&ctx, &calls).await.iter().map(|result| result.outcome).collect();
    // Two calls were repaired; the third was left to the model.
    assert_eq!(outcomes.iter().filter(|outcome| **outcome == Outcome::Success).count(), 2, "{outcomes:?}");
    assert_eq!(outcomes.iter().filter(|outcome| **outcome == Outcome::InvalidArguments).count(), 1);
    assert_eq!((asked.load(Ordering::SeqCst), budget.remaining()), (2, 0));
}

#[tokio::test]
async fn a_guardrail_replaces_an_output_with_an_error_the_model_reads() {
    let tools =
        Toolset::builder().add(echo("echo")).build().unwrap().with_layer(Guardrail::new(|call, output| {
            match output.contains("sk-") {
                true => Err(format!(
                    "the output of `{}` held an API key and was withheld",
                    call.tool.spec().name()
                )),
                false => Ok(()),
            }
        }));
    let results = run(&tools, &[("echo", "key sk-123"), ("echo", "fine")]).await;
    assert_eq!(
        (results[0].outcome, results[0].content.as_str()),
        (Outcome::Failed, r#"{"error":"the output of `echo` held an API key and was withheld"}"#)
    );
    assert_eq!(results[1].content, "fine");
}

/// Says what it got, and asks for arguments of its own once.
struct RetryOnce;

impl Layer for RetryOnce {
    fn on_error<'a>(&'a self, _: LayerCall<'a>, error: ToolError, attempt: u32) -> BoxFuture<'a, OnError> {
        Box::pin(async move {
            match attempt {
                0 => OnError::RerunWith("5".to_owned()),
                _ => OnError::Fail(error),
            }
        })
    }
}

#[tokio::test]
async fn an_error_step_can_run_the_call_again_with_other_arguments() {
    let tools = Toolset::builder().add(common::sleeper("sleeper")).build().unwrap().with_layer(RetryOnce);
    let results = run(&tools, &[("sleeper", "not a number")]).await;
    assert_eq!((results[0].outcome, results[0].content.as_str()), (Outcome::Success, "5"));
}
