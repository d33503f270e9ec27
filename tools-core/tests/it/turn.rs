//! One turn end to end: every outcome, concurrency and order, timeouts,
//! cancellation, observers and counters.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{FnTool, Weather, echo, sleeper};
use toolcall_core::toolset::{CallCounts, Observer, ToolOptions, Toolset, TurnOptions};
use toolcall_core::{CancellationToken, Outcome, ToolCall, ToolContext, ToolError, ToolResult};

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

/// Calls, failures, invalid arguments and retries of one tool.
fn counts(tools: &Toolset, name: &str) -> (u64, u64, u64, u64) {
    let c: CallCounts = tools.counts(name).expect("the tool is registered");
    (c.calls, c.failures, c.invalid_arguments, c.retries)
}

fn error_message(result: &ToolResult) -> String {
    let value: serde_json::Value = serde_json::from_str(&result.content).expect("content is valid JSON");
    assert_eq!(value.as_object().unwrap().len(), 1, "only an `error` key: {}", result.content);
    value["error"].as_str().expect("`error` is a string").to_owned()
}

#[tokio::test]
async fn success_carries_id_name_and_content() {
    let tools = Toolset::builder().add(Weather).build().unwrap();
    let result = tools.call(&ToolContext::new(), &call("call_1", "GET_WEATHER", r#"{"city":"Paris"}"#)).await;
    assert_eq!(
        result,
        ToolResult::new("call_1", "GET_WEATHER", "21°C in Paris for 1 days", Outcome::Success)
    );
}

#[tokio::test]
async fn fenced_arguments_are_cleaned() {
    let tools = Toolset::builder().add(Weather).build().unwrap();
    let fenced = "Sure! ```json\n{\"city\": \"Rome\", \"days\": 2}\n```";
    let result = tools.call(&ToolContext::new(), &call("1", "get_weather", fenced)).await;
    assert_eq!((result.outcome, result.content.as_str()), (Outcome::Success, "21°C in Rome for 2 days"));
}

#[tokio::test]
async fn invalid_arguments_ask_the_model_to_fix_them() {
    let tools = Toolset::builder().add(Weather).build().unwrap();
    let result = tools
        .call(&ToolContext::new(), &call("1", "get_weather", r#"{"city":"Paris","days":"three"}"#))
        .await;
    assert_eq!(result.outcome, Outcome::InvalidArguments);
    assert!(!result.outcome.is_failure());
    assert!(result.content.contains("days"), "{}", result.content);
    assert!(
        result.content.contains("schema") && result.content.contains("call the tool again"),
        "{}",
        result.content
    );
    let counts = tools.counts("get_weather").unwrap();
    assert_eq!((counts.calls, counts.invalid_arguments, counts.failures), (1, 1, 0));
}

#[tokio::test]
async fn a_retry_request_shows_the_tools_message() {
    let tools = Toolset::builder()
        .add(FnTool::new("pick", |_, _| async { Err(ToolError::retry("pick a bigger city")) }))
        .build()
        .unwrap();
    let result = tools.call(&ToolContext::new(), &call("1", "pick", "{}")).await;
    assert_eq!((result.outcome, result.content.as_str()), (Outcome::Retry, "pick a bigger city"));
    assert_eq!(tools.counts("pick").unwrap().retries, 1);
}

#[tokio::test]
async fn an_error_is_a_json_error_object_whatever_it_holds() {
    let message = "bad \"quote\"\nnew line, Zürich — 東京, \\ backslash";
    let tools = Toolset::builder()
        .add(FnTool::new("fail", move |_, _| async move { Err(ToolError::failed(message)) }))
        .build()
        .unwrap();
    let result = tools.call(&ToolContext::new(), &call("1", "fail", "{}")).await;
    assert_eq!(result.outcome, Outcome::Failed);
    assert_eq!(error_message(&result), message);
    assert_eq!(result.content, serde_json::json!({ "error": message }).to_string());
}

#[tokio::test]
async fn std_and_anyhow_errors_keep_their_chain() {
    let tools = Toolset::builder()
        .add(FnTool::new("io", |_, _| async {
            let err: anyhow::Error = std::io::Error::other("disk full").into();
            Err(err.context("writing the cache").into())
        }))
        .build()
        .unwrap();
    let result = tools.call(&ToolContext::new(), &call("1", "io", "{}")).await;
    assert_eq!(error_message(&result), "writing the cache: disk full");
}

#[tokio::test]
async fn an_unknown_name_lists_the_tools() {
    let tools = Toolset::builder().add(Weather).add(echo("Search_Docs")).build().unwrap();
    let result = tools.call(&ToolContext::new(), &call("7", "get_wether", "{}")).await;
    assert_eq!(
        (result.id.as_str(), result.name.as_str(), result.outcome),
        ("7", "get_wether", Outcome::NotFound)
    );
    let message = error_message(&result);
    assert!(message.contains("`get_wether`"), "{message}");
    assert!(message.contains("get_weather, Search_Docs"), "{message}");
    assert_eq!(tools.not_found_count(), 1);

    let empty = Toolset::new().call(&ToolContext::new(), &call("1", "x", "{}")).await;
    assert!(error_message(&empty).contains("no tools are available"));
}

#[tokio::test]
async fn a_panic_is_that_calls_error_only() {
    let tools = Toolset::builder()
        .add(FnTool::new("boom", |_, _| async { panic!("secret internals") }))
        .add(echo("echo"))
        .build()
        .unwrap();
    let calls = [call("1", "boom", "{}"), call("2", "echo", "hi")];
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    assert_eq!(results[0].outcome, Outcome::Panicked);
    let message = error_message(&results[0]);
    assert!(message.contains("`boom` panicked") && !message.contains("secret"), "{message}");
    assert_eq!((results[1].outcome, results[1].content.as_str()), (Outcome::Success, "hi"));
    // The toolset is still usable afterwards.
    assert_eq!(tools.call(&ToolContext::new(), &calls[1]).await.outcome, Outcome::Success);
}

#[tokio::test]
async fn a_panic_while_building_the_future_is_caught_too() {
    struct Eager(toolcall_core::ToolSpec);
    impl toolcall_core::Tool for Eager {
        fn spec(&self) -> &toolcall_core::ToolSpec {
            &self.0
        }
        fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> toolcall_core::OutputFuture<'a> {
            panic!("before any future exists")
        }
    }
    let schema = serde_json::json!({"type": "object"}).as_object().unwrap().clone();
    let spec =
        toolcall_core::ToolSpec::from_parameters("eager", "", toolcall_core::Parameters::from_schema(schema));
    let tools = Toolset::builder().add(Eager(spec)).build().unwrap();
    assert_eq!(tools.call(&ToolContext::new(), &call("1", "eager", "{}")).await.outcome, Outcome::Panicked);
}

#[tokio::test]
async fn a_panic_after_the_tool_first_waited_is_caught_too() {
    let tools = Toolset::builder()
        .add(FnTool::new("late", |_, _| async {
            tokio::task::yield_now().await;
            panic!("after a wait")
        }))
        .add(echo("echo"))
        .build()
        .unwrap();
    let calls = [call("1", "late", "{}"), call("2", "echo", "hi"), call("3", "late", "{}")];
    let outcomes: Vec<_> =
        tools.run_turn(&ToolContext::new(), &calls).await.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Panicked, Outcome::Success, Outcome::Panicked]);
    let single = tools.call(&ToolContext::new(), &calls[0]).await;
    assert_eq!(single.outcome, Outcome::Panicked);
}

#[test]
fn calls_that_end_at_once_need_no_timer() {
    // A timeout on every call, and no Tokio runtime: a call that ends the
    // first time it is polled never reaches its deadline's timer.
    let tools = Toolset::builder()
        .add(echo("echo"))
        .build()
        .unwrap()
        .with_options(TurnOptions::new().with_default_timeout(Duration::from_secs(1)));
    let calls = [call("1", "echo", "a"), call("2", "echo", "b")];
    let results = futures::executor::block_on(tools.run_turn(&ToolContext::new(), &calls));
    let contents: Vec<_> = results.iter().map(|r| (r.outcome, r.content.as_str())).collect();
    assert_eq!(contents, [(Outcome::Success, "a"), (Outcome::Success, "b")]);
}

#[tokio::test]
async fn a_call_that_cancels_the_turn_stops_the_calls_after_it() {
    let token = CancellationToken::new();
    let ran = Arc::new(AtomicUsize::new(0));
    let (turn, ran_in_tool) = (token.clone(), Arc::clone(&ran));
    let tools = Toolset::builder()
        .add(FnTool::new("stop", move |_, _| {
            turn.cancel();
            async { Ok("stopped".to_owned()) }
        }))
        .add(FnTool::new("count", move |_, _| {
            ran_in_tool.fetch_add(1, Ordering::SeqCst);
            async { Ok(String::new()) }
        }))
        .build()
        .unwrap();
    let calls = [call("1", "stop", "{}"), call("2", "count", "{}"), call("3", "count", "{}")];
    let results = tools.run_turn(&ToolContext::new().with_cancellation(token), &calls).await;
    let outcomes: Vec<_> = results.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Success, Outcome::Cancelled, Outcome::Cancelled]);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_queued_calls_timeout_counts_from_when_it_starts() {
    // One at a time, 100 ms each, 150 ms allowed each: the third starts
    // 200 ms into the turn and still has its whole 150 ms.
    let tools = Toolset::builder().add(sleeper("sleep")).build().unwrap().with_options(
        TurnOptions::new().with_max_concurrency(1).with_default_timeout(Duration::from_millis(150)),
    );
    let calls: Vec<_> = (0..3).map(|i| call(&i.to_string(), "sleep", "100")).collect();
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    assert!(results.iter().all(|r| r.outcome == Outcome::Success), "{results:?}");
    let slow = [call("3", "sleep", "100"), call("4", "sleep", "200")];
    let outcomes: Vec<_> =
        tools.run_turn(&ToolContext::new(), &slow).await.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Success, Outcome::TimedOut]);
}

#[tokio::test(start_paused = true)]
async fn the_tools_own_timeout_applies() {
    let tools = Toolset::builder().add(sleeper("slow").with_timeout(Duration::from_secs(1))).build().unwrap();
    let result = tools.call(&ToolContext::new(), &call("1", "slow", "5000")).await;
    assert_eq!(result.outcome, Outcome::TimedOut);
    assert!(error_message(&result).contains("timed out after 1s"), "{}", result.content);
    let fast = tools.call(&ToolContext::new(), &call("2", "slow", "10")).await;
    assert_eq!((fast.outcome, fast.content.as_str()), (Outcome::Success, "10"));
    assert_eq!(counts(&tools, "slow"), (2, 1, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_registration_timeout_wins_over_the_tools_and_the_default_fills_in() {
    let mut tools =
        Toolset::new().with_options(TurnOptions::new().with_default_timeout(Duration::from_millis(300)));
    tools
        .add_with(
            sleeper("capped").with_timeout(Duration::from_secs(60)),
            ToolOptions::new().with_timeout(Duration::from_millis(50)),
        )
        .unwrap();
    tools.add(sleeper("defaulted")).unwrap();
    tools.add(sleeper("own").with_timeout(Duration::from_secs(2))).unwrap();
    let calls = [
        call("1", "capped", "100"),
        call("2", "defaulted", "200"),
        call("3", "defaulted", "400"),
        call("4", "own", "1000"),
    ];
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    let outcomes: Vec<_> = results.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::TimedOut, Outcome::Success, Outcome::TimedOut, Outcome::Success]);
    assert!(error_message(&results[0]).contains("after 50ms"));
    assert!(error_message(&results[2]).contains("after 300ms"));
}

#[tokio::test(start_paused = true)]
async fn the_turns_deadline_bounds_every_call_and_tools_see_it() {
    let seen = Arc::new(Mutex::new(None));
    let seen_in_tool = Arc::clone(&seen);
    let tools = Toolset::builder()
        .add(FnTool::new("peek", move |ctx, _| {
            let seen = Arc::clone(&seen_in_tool);
            async move {
                *seen.lock().unwrap() = ctx.remaining();
                tokio::time::sleep(Duration::from_secs(10)).await;
                Ok(String::new())
            }
        }))
        .build()
        .unwrap();
    let ctx = ToolContext::new().with_timeout(Duration::from_secs(2));
    let result = tools.call(&ctx, &call("1", "peek", "{}")).await;
    assert_eq!(result.outcome, Outcome::TimedOut);
    assert!(error_message(&result).contains("turn's deadline"), "{}", result.content);
    assert_eq!(*seen.lock().unwrap(), Some(Duration::from_secs(2)));
}

#[tokio::test]
async fn cancelling_the_turn_stops_running_calls_promptly() {
    let dropped = Arc::new(AtomicUsize::new(0));
    struct CountDrop(Arc<AtomicUsize>);
    impl Drop for CountDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped_in_tool = Arc::clone(&dropped);
    let tools = Toolset::builder()
        .add(FnTool::new("forever", move |_, _| {
            let guard = CountDrop(Arc::clone(&dropped_in_tool));
            async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                Ok(String::new())
            }
        }))
        .add(echo("quick"))
        .build()
        .unwrap();
    let token = CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation(token.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    });
    let calls = [call("1", "forever", "{}"), call("2", "quick", "ok"), call("3", "forever", "{}")];
    let started = Instant::now();
    let results = tools.run_turn(&ctx, &calls).await;
    canceller.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let outcomes: Vec<_> = results.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Cancelled, Outcome::Success, Outcome::Cancelled]);
    assert!(error_message(&results[0]).contains("cancelled"));
    // The tools' futures were dropped, not left running.
    assert_eq!(dropped.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_already_cancelled_turn_runs_nothing() {
    let ran = Arc::new(AtomicUsize::new(0));
    let ran_in_tool = Arc::clone(&ran);
    let tools = Toolset::builder()
        .add(FnTool::new("t", move |_, _| {
            ran_in_tool.fetch_add(1, Ordering::SeqCst);
            async { Ok(String::new()) }
        }))
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    ctx.cancellation().cancel();
    let results = tools.run_turn(&ctx, &[call("1", "t", "{}"), call("2", "t", "{}")]).await;
    assert!(results.iter().all(|r| r.outcome == Outcome::Cancelled));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn fifty_sleeping_calls_run_at_once() {
    let tools = Toolset::builder().add(sleeper("sleep")).build().unwrap();
    let calls: Vec<_> = (0..50).map(|i| call(&format!("c{i}"), "sleep", "100")).collect();
    let started = Instant::now();
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    let elapsed = started.elapsed();
    // Sequentially this is 5 s.
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    assert_eq!(results.len(), 50);
    assert!(results.iter().all(|r| r.outcome == Outcome::Success));
    assert_eq!(tools.counts("sleep").unwrap().calls, 50);
}

#[tokio::test]
async fn results_keep_call_order_when_later_calls_finish_first() {
    let finished = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&finished);
    let tools = Toolset::builder()
        .add(FnTool::new("sleep", move |ctx, input| {
            let log = Arc::clone(&log);
            async move {
                let ms: u64 = input.parse().unwrap();
                tokio::time::sleep(Duration::from_millis(ms)).await;
                log.lock().unwrap().push(ctx.call_id().to_owned());
                Ok(ms.to_string())
            }
        }))
        .build()
        .unwrap();
    let delays = [200, 20, 120, 5, 60];
    let calls: Vec<_> =
        delays.iter().enumerate().map(|(i, ms)| call(&i.to_string(), "sleep", &ms.to_string())).collect();
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    assert_eq!(results.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["0", "1", "2", "3", "4"]);
    assert_eq!(
        results.iter().map(|r| r.content.as_str()).collect::<Vec<_>>(),
        ["200", "20", "120", "5", "60"]
    );
    assert_eq!(*finished.lock().unwrap(), ["3", "1", "4", "2", "0"]);
}

#[tokio::test]
async fn results_keep_the_order_of_the_calls_not_of_their_endings() {
    // The calls end in reverse order; the results keep the calls' order.
    let tools = Toolset::builder().add(sleeper("sleep")).build().unwrap();
    let calls: Vec<_> = (0..40).map(|i| call(&i.to_string(), "sleep", &((40 - i) * 2).to_string())).collect();
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    let ids: Vec<String> = results.iter().map(|r| r.id.to_string()).collect();
    assert_eq!(ids, (0..40).map(|i| i.to_string()).collect::<Vec<_>>());
}

#[tokio::test]
async fn large_turns_keep_order_and_run_at_once() {
    // Every call waits, so each is driven as its own future: in order, at once.
    let tools = Toolset::builder().add(sleeper("sleep")).build().unwrap();
    for n in [64, 400] {
        let calls: Vec<_> =
            (0..n).map(|i| call(&i.to_string(), "sleep", &((n - i) % 7 * 10).to_string())).collect();
        let started = Instant::now();
        let results = tools.run_turn(&ToolContext::new(), &calls).await;
        assert!(started.elapsed() < Duration::from_secs(2), "{n} calls took {:?}", started.elapsed());
        let ids: Vec<String> = results.iter().map(|r| r.id.to_string()).collect();
        assert_eq!(ids, (0..n).map(|i| i.to_string()).collect::<Vec<_>>());
        assert!(results.iter().all(|r| r.outcome == Outcome::Success));
    }
}

#[tokio::test]
async fn a_concurrency_bound_is_respected_and_keeps_order() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (running_in, peak_in) = (Arc::clone(&running), Arc::clone(&peak));
    let tools = Toolset::builder()
        .add(FnTool::new("work", move |ctx, _| {
            let (running, peak) = (Arc::clone(&running_in), Arc::clone(&peak_in));
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(ctx.call_id().to_owned())
            }
        }))
        .build()
        .unwrap()
        .with_options(TurnOptions::new().with_max_concurrency(3));
    let calls: Vec<_> = (0..12).map(|i| call(&i.to_string(), "work", "{}")).collect();
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    assert_eq!(peak.load(Ordering::SeqCst), 3);
    assert_eq!(
        results.iter().map(|r| r.content.clone()).collect::<Vec<_>>(),
        (0..12).map(|i| i.to_string()).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn one_turn_of_every_outcome() {
    let mut tools = Toolset::new();
    tools.add(Weather).unwrap();
    tools.add(FnTool::new("fail", |_, _| async { Err(ToolError::failed("upstream 500")) })).unwrap();
    tools.add(FnTool::new("retry", |_, _| async { Err(ToolError::retry("try again later")) })).unwrap();
    tools.add(FnTool::new("boom", |_, _| async { panic!("boom") })).unwrap();
    tools.add_with(sleeper("slow"), ToolOptions::new().with_timeout(Duration::from_millis(20))).unwrap();
    let calls = [
        call("1", "get_weather", r#"{"city":"Lima"}"#),
        call("2", "get_weather", r#"{"town":"Lima"}"#),
        call("3", "retry", "{}"),
        call("4", "fail", "{}"),
        call("5", "nothing", "{}"),
        call("6", "slow", "10000"),
        call("7", "boom", "{}"),
    ];
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    let outcomes: Vec<_> = results.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::Success,
            Outcome::InvalidArguments,
            Outcome::Retry,
            Outcome::Failed,
            Outcome::NotFound,
            Outcome::TimedOut,
            Outcome::Panicked
        ]
    );
    for (call, result) in calls.iter().zip(&results) {
        assert_eq!((&result.id, &result.name), (&call.id, &call.name));
    }
    assert_eq!(error_message(&results[3]), "upstream 500");
    for i in [4, 5, 6] {
        error_message(&results[i]);
    }
}

#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Observer for Recorder {
    fn on_start(&self, call: &ToolCall) {
        self.0.lock().unwrap().push(format!("start {}", call.id));
    }
    fn on_end(&self, call: &ToolCall, result: &ToolResult, _elapsed: Duration) {
        self.0.lock().unwrap().push(format!("end {} {}", call.id, result.outcome.as_str()));
    }
    fn on_error(&self, call: &ToolCall, result: &ToolResult, _elapsed: Duration) {
        self.0.lock().unwrap().push(format!("error {} {}", call.id, result.outcome.as_str()));
    }
    fn on_not_found(&self, call: &ToolCall) {
        self.0.lock().unwrap().push(format!("not_found {}", call.name));
    }
}

/// An observer that keeps every default.
struct Silent;
impl Observer for Silent {}

#[tokio::test]
async fn observers_see_start_then_exactly_one_ending() {
    let recorder = Arc::new(Recorder::default());
    let tools = Toolset::builder()
        .add(Weather)
        .add(FnTool::new("fail", |_, _| async { Err(ToolError::failed("no")) }))
        .build()
        .unwrap()
        .with_observer(Arc::clone(&recorder))
        .with_observer(Silent);
    for (id, name, args) in [
        ("1", "get_weather", r#"{"city":"A"}"#),
        ("2", "get_weather", "[]"),
        ("3", "fail", "{}"),
        ("4", "ghost", "{}"),
    ] {
        tools.call(&ToolContext::new(), &call(id, name, args)).await;
    }
    assert_eq!(
        *recorder.0.lock().unwrap(),
        [
            "start 1",
            "end 1 success",
            "start 2",
            "error 2 invalid_arguments",
            "start 3",
            "error 3 failed",
            "not_found ghost"
        ]
    );
}

/// An observer that panics in every callback.
struct Panicky;
impl Observer for Panicky {
    fn on_start(&self, _call: &ToolCall) {
        panic!("observer bug");
    }
    fn on_end(&self, _call: &ToolCall, _result: &ToolResult, _elapsed: Duration) {
        panic!("observer bug");
    }
    fn on_not_found(&self, _call: &ToolCall) {
        panic!("observer bug");
    }
}

#[tokio::test]
async fn a_panicking_observer_is_passed_over_and_the_turn_goes_on() {
    let recorder = Arc::new(Recorder::default());
    let tools = Toolset::builder()
        .add(Weather)
        .build()
        .unwrap()
        .with_observer(Panicky)
        .with_observer(Arc::clone(&recorder));
    let calls = [call("1", "get_weather", r#"{"city":"A"}"#), call("2", "ghost", "{}")];
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    assert_eq!(results.iter().map(|r| r.outcome).collect::<Vec<_>>(), [Outcome::Success, Outcome::NotFound]);
    assert!(results[0].content.contains('A'), "{}", results[0].content);
    // The observer after the panicking one still hears of every call.
    assert_eq!(*recorder.0.lock().unwrap(), ["start 1", "end 1 success", "not_found ghost"]);
}

#[tokio::test]
async fn counters_are_per_tool_and_shared_by_clones() {
    let tools = Toolset::builder()
        .add(Weather)
        .add(FnTool::new("fail", |_, _| async { Err(ToolError::failed("no")) }))
        .build()
        .unwrap();
    let clone = tools.clone();
    let calls = [
        call("1", "get_weather", r#"{"city":"A"}"#),
        call("2", "get_weather", r#"{"city":1}"#),
        call("3", "Get_Weather", r#"{"city":"B"}"#),
        call("4", "fail", "{}"),
        call("5", "ghost", "{}"),
    ];
    clone.run_turn(&ToolContext::new(), &calls).await;
    assert_eq!(counts(&tools, "GET_WEATHER"), (3, 0, 1, 0));
    assert_eq!(counts(&tools, "fail"), (1, 1, 0, 0));
    assert!(tools.counts("ghost").is_none());
    assert_eq!(tools.not_found_count(), 1);
    let all: Vec<_> = tools.all_counts().map(|(name, counts)| (name, counts.calls)).collect();
    assert_eq!(all, [("get_weather", 3), ("fail", 1)]);
}

#[tokio::test]
async fn the_tool_sees_its_own_call_id_and_name() {
    let tools = Toolset::builder()
        .add(FnTool::new(
            "Whoami",
            |ctx, _| async move { Ok(format!("{} {}", ctx.call_id(), ctx.tool_name())) },
        ))
        .build()
        .unwrap();
    let result = tools.call(&ToolContext::new(), &call("call_9", "whoami", "{}")).await;
    assert_eq!(result.content, "call_9 Whoami");
}

#[tokio::test]
async fn an_empty_turn_has_no_results() {
    assert!(Toolset::new().run_turn(&ToolContext::new(), &[]).await.is_empty());
}
