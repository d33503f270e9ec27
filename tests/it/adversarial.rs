//! Hostile input against the SDK: each test attacks one part (argument
//! size, nesting, the stdio framing, duplicate keys, number ranges, a huge
//! turn, a tool that hangs, a tool that panics holding a lock, an HTTP
//! client that vanishes mid-call) and checks that the attacked call gets a
//! clear result while the process and the other calls carry on. The MCP
//! attacks run against the example server over stdio; the HTTP one is
//! tools-mcp's own (tools-mcp/tests/it/disconnect.rs).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Barrier;
use toolcall::toolset::{ToolOptions, TurnOptions};
use toolcall::{
    ArgumentLimits, Outcome, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec, Toolset, TypedTool, tool,
};

use crate::support;
use support::CountDrop;

/// Long enough to tell a hang from a slow debug build; never a measure of speed.
const HANG: Duration = Duration::from_secs(30);

async fn within<F: Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(HANG, future).await.unwrap_or_else(|_| panic!("{what}: no answer within {HANG:?}"))
}

/// The process's peak resident set so far (`VmHWM`), for the log. All tests
/// of this file share one process, so it is the peak of whatever ran so far.
fn peak_rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        let line = status.lines().find(|line| line.starts_with(name)).unwrap_or("? unknown");
        line.split_whitespace().skip(1).collect::<Vec<_>>().join(" ")
    };
    format!("VmHWM {} (now VmRSS {})", field("VmHWM:"), field("VmRSS:"))
}

/// The reason the model is shown for invalid arguments.
fn invalid(reason: &str) -> String {
    ToolError::invalid_arguments(reason).model_content()
}

fn one(tools: &Toolset, id: &str, name: &str, arguments: &str) -> ToolCall {
    assert!(tools.get(name).is_some(), "no tool {name}");
    ToolCall::new(id, name, arguments)
}

/// Doubles `n`: the innocent bystander of every attack.
#[tool(args)]
async fn double(n: i64) -> i64 {
    n * 2
}

// ---- 1. a 100 MB argument ----

/// How many times a `Counted` request was deserialized.
static DESERIALIZED: AtomicUsize = AtomicUsize::new(0);

/// A request that counts its deserializations: the proof that the size
/// check runs before any parsing.
#[derive(schemars::JsonSchema)]
struct Counted {
    text: String,
}

impl<'de> serde::Deserialize<'de> for Counted {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        struct Fields {
            text: String,
        }
        DESERIALIZED.fetch_add(1, Ordering::SeqCst);
        let Fields { text } = Fields::deserialize(deserializer)?;
        Ok(Self { text })
    }
}

/// The length of `text`.
#[tool]
async fn measure(req: Counted) -> String {
    req.text.len().to_string()
}

#[tokio::test]
async fn a_100_mb_argument_is_refused_by_its_size_without_being_parsed() {
    let tools = Toolset::builder().add(Measure).add(Double).build().unwrap();
    // Built in place, so that the test itself holds one copy: 100 MiB of text.
    let mut huge = String::with_capacity((100 << 20) + 16);
    huge.push_str(r#"{"text":""#);
    let mebibyte = "a".repeat(1 << 20);
    huge.extend(std::iter::repeat_n(mebibyte.as_str(), 100));
    huge.push_str(r#""}"#);
    let size = huge.len();
    let calls = [
        ToolCall::new("huge", "measure", huge),
        one(&tools, "small", "measure", r#"{"text":"four"}"#),
        one(&tools, "other", "double", r#"{"n":21}"#),
    ];
    let results = within("a turn with a 100 MB argument", tools.run_turn(&ToolContext::new(), &calls)).await;

    assert_eq!(results[0].outcome, Outcome::InvalidArguments);
    assert_eq!(
        results[0].content,
        invalid(&format!("the arguments are {size} bytes, more than the limit of 1048576 bytes"))
    );
    assert_eq!((results[1].outcome, results[1].content.as_str()), (Outcome::Success, "4"));
    assert_eq!((results[2].outcome, results[2].content.as_str()), (Outcome::Success, "42"));
    // Only the small call reached serde: the 100 MB one was refused unread.
    assert_eq!(DESERIALIZED.load(Ordering::SeqCst), 1);
    eprintln!("peak RSS after the 100 MB argument: {}", peak_rss());
}

// ---- 2. 10,000-deep nesting ----

/// Takes any JSON value, nested up to a million levels by its limits.
struct AnyValue(ToolSpec);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AnyValueRequest {
    value: Value,
}

impl TypedTool for AnyValue {
    type Request = AnyValueRequest;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn run(&self, _: &ToolContext, req: AnyValueRequest) -> Result<String, ToolError> {
        Ok(req.value.to_string())
    }
}

#[tokio::test]
async fn ten_thousand_levels_of_nesting_end_in_a_clear_outcome_without_recursion() {
    const DEPTH: usize = 10_000;
    let lenient = ToolSpec::new::<AnyValueRequest>("any_value", "Takes any value.")
        .with_limits(ArgumentLimits::default().with_max_depth(1_000_000));
    let tools = Toolset::builder()
        .add(Double)
        .add(AnyValue(ToolSpec::new::<AnyValueRequest>("strict_value", "Takes any value.")))
        .add(AnyValue(lenient))
        .build()
        .unwrap();
    let arrays = format!("{}{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let objects = format!("{}1{}", r#"{"a":"#.repeat(DEPTH), "}".repeat(DEPTH));
    let deep = format!(r#"{{"n":{arrays}}}"#);
    // Unterminated, behind prose: the cleaner's own search for the JSON
    // reads it first.
    let in_prose = format!("Here you go: {}", r#"{"n":"#.repeat(DEPTH));
    // Double-encoded: the cleaner decodes the string, then the depth is checked.
    let encoded = serde_json::to_string(&format!(r#"{{"value":{objects}}}"#)).unwrap();
    let calls = [
        one(&tools, "arrays", "double", &deep),
        one(&tools, "skipped", "double", &format!(r#"{{"n":21,"junk":{arrays}}}"#)),
        one(&tools, "prose", "double", &in_prose),
        one(&tools, "encoded", "strict_value", &encoded),
        // A tool that lifts its depth limit still has serde_json's own (128).
        one(&tools, "lifted", "any_value", &format!(r#"{{"value":{objects}}}"#)),
        one(&tools, "shallow", "any_value", r#"{"value":[[[1]]]}"#),
        one(&tools, "bystander", "double", r#"{"n":1}"#),
    ];
    let results = within("a turn with deep nesting", tools.run_turn(&ToolContext::new(), &calls)).await;

    // `double` reads a number: serde refuses the first bracket, and the
    // text needs no depth scan. A key it does not name is skipped.
    assert_eq!(
        (results[0].outcome, &results[0].content),
        (Outcome::InvalidArguments, &invalid("at `n`: invalid type: sequence, expected i64"))
    );
    assert_eq!((results[1].outcome, results[1].content.as_str()), (Outcome::Success, "42"));
    // Unterminated, behind prose: the cleaner finds no whole value in it.
    assert_eq!(
        (results[2].outcome, &results[2].content),
        (
            Outcome::InvalidArguments,
            &invalid("the arguments are not valid JSON: expected value at line 1 column 1")
        )
    );
    // A tool that takes any value gets the depth limit.
    assert_eq!(
        (results[3].outcome, &results[3].content),
        (
            Outcome::InvalidArguments,
            &invalid("the arguments are nested more than 64 levels deep, under the key `value`")
        )
    );
    // serde_json stops at 128 levels; the path it reached is in the reason.
    assert_eq!(results[4].outcome, Outcome::InvalidArguments);
    assert_eq!(
        results[4].content,
        invalid(&format!("at `value{}`: recursion limit exceeded at line 1 column 640", ".a".repeat(126)))
    );
    assert_eq!((results[5].outcome, results[5].content.as_str()), (Outcome::Success, "[[[1]]]"));
    assert_eq!((results[6].outcome, results[6].content.as_str()), (Outcome::Success, "2"));
}

// ---- 3. bad bytes on MCP stdio ----

#[tokio::test]
async fn stdio_server_answers_bad_bytes_with_parse_errors_and_the_next_call() {
    let (mut child, mut stdin, stdout) = support::stdio_example();
    let mut stdout = stdout;

    let call = |id: u32, city: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_weather","arguments":{{"city":"{city}"}}}}}}"#
        )
        .into_bytes()
    };
    let mut bytes: Vec<u8> = Vec::new();
    // Before initialize: a line of invalid UTF-8, a line of NUL bytes.
    bytes.extend_from_slice(b"\xff\xfe\xc3\x28 not UTF-8 \x80\n");
    bytes.extend_from_slice(b"\x00\x00{\"jsonrpc\":\"2.0\",\x00\"id\":9}\x00\n");
    bytes.extend_from_slice(
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"adversary","version":"1"}}}"#,
    );
    bytes.push(b'\n');
    bytes.extend_from_slice(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    bytes.push(b'\n');
    // After initialize: the same, then a request with an id whose only fault
    // is one invalid UTF-8 byte or one NUL in a string, then JSON that is no
    // JSON-RPC message.
    bytes.extend_from_slice(b"\xc0\xc1\xf5\xff\n\x00\x00\x00\n");
    for bad in [&b"\xff"[..], &b"\x00"[..]] {
        let mut line = call(7, "X");
        let at = line.iter().position(|&b| b == b'X').unwrap();
        line.splice(at..=at, bad.iter().copied());
        bytes.extend_from_slice(&line);
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(b"{\"foo\":1}\n");
    bytes.extend_from_slice(&call(2, "Paris"));
    bytes.push(b'\n');
    stdin.write_all(&bytes).await.unwrap();
    stdin.flush().await.unwrap();

    // Six lines are not JSON (bad UTF-8, NUL, even in a request with an id):
    // each gets a -32700 with `id: null`, on its own path, so they may come
    // before or after the answers.
    let parse_errors =
        |replies: &Vec<Value>| replies.iter().filter(|reply| reply["error"]["code"] == -32700).count();
    let mut replies: Vec<Value> = Vec::new();
    while !(replies.iter().any(|reply| reply["id"] == 2) && parse_errors(&replies) == 6) {
        let mut line = Vec::new();
        let read = within("the replies", stdout.read_until(b'\n', &mut line)).await.unwrap();
        assert_ne!(read, 0, "the server closed stdout; replies so far: {replies:?}");
        replies.push(serde_json::from_slice::<Value>(&line).expect("the server writes JSON lines"));
    }
    let (errors, answers): (Vec<Value>, Vec<Value>) =
        replies.into_iter().partition(|reply| reply["error"]["code"] == -32700);
    assert!(errors.iter().all(|error| error["id"] == Value::Null), "{errors:?}");
    // JSON that is not a message gets a -32600 with `id: null` (it has none),
    // on the same path as the parse errors.
    assert_eq!(answers.len(), 3, "{answers:?}");
    let by_id = |id: Value| answers.iter().find(|answer| answer["id"] == id).expect("an answer with the id");
    assert_eq!(by_id(json!(1))["result"]["serverInfo"]["name"], "tools-example");
    let invalid = by_id(Value::Null);
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    assert!(invalid["error"]["message"].as_str().unwrap_or_default().contains("`jsonrpc`"), "{invalid}");
    let paris = by_id(json!(2));
    assert_eq!(paris["result"]["isError"], false);
    assert_eq!(paris["result"]["structuredContent"]["city"], "Paris");

    // Still running, and still answering.
    assert!(child.try_wait().unwrap().is_none(), "the server exited");
    stdin.write_all(&call(3, "Oslo")).await.unwrap();
    stdin.write_all(b"\n").await.unwrap();
    stdin.flush().await.unwrap();
    let mut line = Vec::new();
    within("the reply to a later call", stdout.read_until(b'\n', &mut line)).await.unwrap();
    let reply: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(
        (reply["id"].clone(), reply["result"]["structuredContent"]["city"].clone()),
        (json!(3), json!("Oslo"))
    );

    // Closing stdin ends the session cleanly.
    drop(stdin);
    let status = within("the server's exit", child.wait()).await.unwrap();
    assert!(status.success(), "{status}");
}

// ---- 4. duplicate keys ----

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Trip {
    city: String,
    days: Option<u8>,
}

/// Echoes the trip it read.
#[tool]
async fn plain_trip(req: Trip) -> String {
    format!("{} {:?}", req.city, req.days)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CheckedTripRequest {
    city: String,
    #[schemars(range(min = 1, max = 16))]
    days: Option<u8>,
    big: Option<i64>,
}

/// Echoes the trip it read; `days` has a range, so a validator checks it.
#[tool]
async fn checked_trip(req: CheckedTripRequest) -> String {
    format!("{} {:?} {:?}", req.city, req.days, req.big)
}

#[tokio::test]
async fn duplicate_keys_are_refused_with_or_without_a_validator() {
    let tools = Toolset::builder().add(PlainTrip).add(CheckedTrip).add(Double).build().unwrap();
    let calls = [
        one(&tools, "plain", "plain_trip", r#"{"city":"Oslo","city":"Rome"}"#),
        one(&tools, "checked", "checked_trip", r#"{"city":"Oslo","city":"Rome"}"#),
        one(&tools, "checked_days", "checked_trip", r#"{"city":"Oslo","days":99,"days":3}"#),
        one(&tools, "checked_days_last", "checked_trip", r#"{"city":"Oslo","days":3,"days":99}"#),
        one(&tools, "bystander", "double", r#"{"n":5}"#),
    ];
    let results = within("a turn with duplicate keys", tools.run_turn(&ToolContext::new(), &calls)).await;
    let got: Vec<(Outcome, &str)> = results.iter().map(|r| (r.outcome, r.content.as_str())).collect();
    // Every tool reads the text with serde first, whose derived struct
    // refuses the second key (no field path: it is the object's), so a
    // duplicate can neither slip past the constraints nor be merged away.
    let duplicate = |field: &str| invalid(&format!("duplicate field `{field}`"));
    assert_eq!(got[0], (Outcome::InvalidArguments, duplicate("city").as_str()));
    assert_eq!(got[1], (Outcome::InvalidArguments, duplicate("city").as_str()));
    assert_eq!(got[2], (Outcome::InvalidArguments, duplicate("days").as_str()));
    assert_eq!(got[3], (Outcome::InvalidArguments, duplicate("days").as_str()));
    assert_eq!(got[4], (Outcome::Success, "10"));
}

// ---- 5. numbers out of range ----

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SizesRequest {
    small: u8,
    big: Option<i64>,
}

/// Echoes the numbers it read.
#[tool]
async fn sizes(req: SizesRequest) -> String {
    format!("{} {:?}", req.small, req.big)
}

#[tokio::test]
async fn numbers_out_of_range_name_their_field() {
    let tools = Toolset::builder().add(Sizes).add(CheckedTrip).add(Double).build().unwrap();
    let calls = [
        one(&tools, "u8", "sizes", r#"{"small":300}"#),
        one(&tools, "i64", "sizes", r#"{"small":1,"big":1e400}"#),
        one(&tools, "i64_float", "sizes", r#"{"small":1,"big":99999999999999999999}"#),
        one(&tools, "u8_checked", "checked_trip", r#"{"city":"Oslo","days":300}"#),
        one(&tools, "i64_checked", "checked_trip", r#"{"city":"Oslo","big":1e400}"#),
        one(&tools, "fine", "sizes", r#"{"small":255,"big":-9223372036854775808}"#),
        one(&tools, "bystander", "double", r#"{"n":-4}"#),
    ];
    let results =
        within("a turn with numbers out of range", tools.run_turn(&ToolContext::new(), &calls)).await;
    let got: Vec<(Outcome, &str)> = results.iter().map(|r| (r.outcome, r.content.as_str())).collect();
    let expected_invalid = [
        "at `small`: invalid value: integer `300`, expected u8",
        "at `big`: number out of range at line 1 column 22",
        "at `big`: invalid type: floating point `1e+20`, expected i64",
        "at `days`: invalid value: integer `300`, expected u8",
        // With a validator too: serde reads the text first.
        "at `big`: number out of range at line 1 column 26",
    ];
    for (got, reason) in got.iter().zip(expected_invalid) {
        assert_eq!(*got, (Outcome::InvalidArguments, invalid(reason).as_str()));
    }
    assert_eq!(got[5], (Outcome::Success, "255 Some(-9223372036854775808)"));
    assert_eq!(got[6], (Outcome::Success, "-8"));
}

// ---- 6. 10,000 calls in one turn ----

/// Waits until every call of the turn has started, then doubles `n`: the
/// turn finishes only if all its calls really run at once.
struct Gather(Arc<Barrier>);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Number {
    n: i64,
}

impl TypedTool for Gather {
    type Request = Number;
    type Output = i64;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Number>("gather", "Wait for the others, double n."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Number) -> Result<i64, ToolError> {
        self.0.wait().await;
        Ok(req.n * 2)
    }
}

#[tokio::test]
async fn ten_thousand_concurrent_calls_all_succeed_in_call_order() {
    const CALLS: usize = 10_000;
    let tools = Toolset::builder().add(Gather(Arc::new(Barrier::new(CALLS)))).build().unwrap();
    let calls: Vec<ToolCall> =
        (0..CALLS).map(|n| ToolCall::new(format!("call_{n}"), "gather", format!(r#"{{"n":{n}}}"#))).collect();
    let results =
        within("10,000 calls waiting for each other", tools.run_turn(&ToolContext::new(), &calls)).await;
    assert_eq!(results.len(), CALLS);
    for (n, result) in results.iter().enumerate() {
        let expected = ToolResult::new(format!("call_{n}"), "gather", (n * 2).to_string(), Outcome::Success);
        assert_eq!(*result, expected);
    }
    let counts = tools.counts("gather").unwrap();
    assert_eq!((counts.calls, counts.failures), (CALLS as u64, 0));
    eprintln!("peak RSS after 10,000 calls in one turn: {}", peak_rss());
}

// ---- 7. a tool that never returns ----

/// Never returns; counts the times its future is dropped.
struct Hang(ToolSpec, Arc<AtomicUsize>);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

impl TypedTool for Hang {
    type Request = Nothing;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn run(&self, _: &ToolContext, _: Nothing) -> Result<String, ToolError> {
        let _dropped = CountDrop(Arc::clone(&self.1));
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_tool_that_never_returns_times_out_alone() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let hang =
        |name: &'static str| Hang(ToolSpec::new::<Nothing>(name, "Never returns."), Arc::clone(&dropped));
    let mut tools =
        Toolset::new().with_options(TurnOptions::new().with_default_timeout(Duration::from_millis(300)));
    tools
        .add_with(hang("hang_registered"), ToolOptions::new().with_timeout(Duration::from_millis(200)))
        .unwrap();
    tools.add(hang("hang_default")).unwrap();
    tools.add(Double).unwrap();
    let calls = [
        one(&tools, "1", "hang_registered", "{}"),
        one(&tools, "2", "double", r#"{"n":8}"#),
        one(&tools, "3", "hang_default", "{}"),
    ];
    let results = within("a turn with hanging tools", tools.run_turn(&ToolContext::new(), &calls)).await;
    assert_eq!(results[0].outcome, Outcome::TimedOut);
    assert_eq!(results[0].content, r#"{"error":"tool `hang_registered` timed out after 200ms"}"#);
    assert_eq!((results[1].outcome, results[1].content.as_str()), (Outcome::Success, "16"));
    assert_eq!(results[2].outcome, Outcome::TimedOut);
    assert_eq!(results[2].content, r#"{"error":"tool `hang_default` timed out after 300ms"}"#);
    // Both hanging futures were dropped, not left behind.
    assert_eq!(dropped.load(Ordering::SeqCst), 2);
}

// ---- 8. a panic that poisons a mutex ----

/// Takes the lock, writes `n`, and panics while holding it.
struct PanicsHoldingLock(Arc<Mutex<Vec<i64>>>);
/// Appends `n` under the lock, taking it back from a poisoning.
struct Append(Arc<Mutex<Vec<i64>>>);
/// Appends `n` under the lock, unwrapping it: no care for poisoning.
struct AppendCareless(Arc<Mutex<Vec<i64>>>);

impl TypedTool for PanicsHoldingLock {
    type Request = Number;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Number>("panics_holding_lock", "Panic under the lock."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Number) -> Result<String, ToolError> {
        let mut values = self.0.lock().unwrap();
        values.push(req.n);
        panic!("panicking with the lock held");
    }
}

impl TypedTool for Append {
    type Request = Number;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Number>("append", "Append n under the lock."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Number) -> Result<String, ToolError> {
        // Whatever order the turn's calls are polled in, go after the panic.
        while !self.0.is_poisoned() {
            tokio::task::yield_now().await;
        }
        let mut values = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        values.push(req.n);
        Ok(format!("{values:?}"))
    }
}

impl TypedTool for AppendCareless {
    type Request = Number;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Number>("append_careless", "Append n, unwrapping the lock."));
        &SPEC
    }
    async fn run(&self, _: &ToolContext, req: Number) -> Result<String, ToolError> {
        let mut values = self.0.lock().unwrap();
        values.push(req.n);
        Ok(format!("{values:?}"))
    }
}

#[tokio::test]
async fn a_panic_that_poisons_a_mutex_fails_only_its_own_call() {
    let shared = Arc::new(Mutex::new(Vec::new()));
    let tools = Toolset::builder()
        .add(PanicsHoldingLock(Arc::clone(&shared)))
        .add(Append(Arc::clone(&shared)))
        .add(AppendCareless(Arc::clone(&shared)))
        .add(Double)
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    let turn = [
        one(&tools, "1", "append", r#"{"n":2}"#),
        one(&tools, "2", "panics_holding_lock", r#"{"n":1}"#),
        one(&tools, "3", "double", r#"{"n":3}"#),
    ];
    let results = within("a turn with a panic under a lock", tools.run_turn(&ctx, &turn)).await;
    assert_eq!((results[0].outcome, results[0].content.as_str()), (Outcome::Success, "[1, 2]"));
    assert_eq!(results[1].outcome, Outcome::Panicked);
    // The panic message stays in the logs, away from the model.
    assert_eq!(results[1].content, r#"{"error":"tool `panics_holding_lock` panicked"}"#);
    assert_eq!((results[2].outcome, results[2].content.as_str()), (Outcome::Success, "6"));
    assert!(shared.is_poisoned());

    // The next turn: the tool that takes the lock back still works; the
    // careless one panics on the poisoned lock, for its call alone.
    let turn = [
        one(&tools, "4", "append", r#"{"n":4}"#),
        one(&tools, "5", "append_careless", r#"{"n":5}"#),
        one(&tools, "6", "double", r#"{"n":6}"#),
    ];
    let results = within("the turn after the poisoning", tools.run_turn(&ctx, &turn)).await;
    assert_eq!((results[0].outcome, results[0].content.as_str()), (Outcome::Success, "[1, 2, 4]"));
    assert_eq!(results[1].outcome, Outcome::Panicked);
    assert_eq!((results[2].outcome, results[2].content.as_str()), (Outcome::Success, "12"));
    let counts = tools.counts("panics_holding_lock").unwrap();
    assert_eq!((counts.calls, counts.failures), (1, 1));
    assert_eq!(tools.counts("append").unwrap().failures, 0);
}

// ---- 9. an HTTP client that disconnects mid-call: tools-mcp/tests/it/disconnect.rs ----

// ---- 10. a stdio client that never reads ----

/// The CPU time (clock ticks) of a process whose threads are all asleep;
/// `None` while one of them runs or can run.
#[cfg(target_os = "linux")]
fn asleep(pid: u32) -> Option<u64> {
    let mut ticks = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("stat")).ok()?;
        // After the name in parentheses: state, then utime and stime 11 and 12 on.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        if fields.first() != Some(&"S") {
            return None;
        }
        ticks += fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    }
    Some(ticks)
}

/// A process's resident set in KiB (`VmRSS`).
#[cfg(target_os = "linux")]
fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's status");
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).expect("a VmRSS line");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("VmRSS in kB")
}

/// A client that sends and never reads: the server's answers wait in a
/// queue of 1 MiB, and once it is full the server stops reading, so the
/// client's pipe fills, not the server's memory (it grew by about 0.4 KiB
/// per unread answer: +76 MB for 200,000). Then the client reads and gets
/// every answer.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_stdio_client_that_never_reads_stops_the_server_reading_and_then_gets_every_answer() {
    flood_a_stdio_server_that_is_not_read(None).await;
}

/// The same, with every seventh request refused by the reader itself (its
/// `params` do not fit its method): its error lines wait for room in the
/// same queue as rmcp's answers, and neither blocks the other.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_readers_own_error_lines_wait_in_the_same_queue_as_the_answers() {
    flood_a_stdio_server_that_is_not_read(Some(7)).await;
}

/// Send calls to the stdio example without reading until it is at rest,
/// check it took a bounded part of them in bounded memory, then read every
/// answer. With `refused`, every request whose id it divides is one the
/// reader refuses.
#[cfg(target_os = "linux")]
async fn flood_a_stdio_server_that_is_not_read(refused: Option<u64>) {
    use std::io::ErrorKind;
    /// Enough to see the server read them all (and its memory grow
    /// linearly) if it never stopped.
    const SENT: u64 = 200_000;
    let binary = support::build_example("mcp_server");
    let (input, to_server) = std::io::pipe().unwrap();
    let mut child = tokio::process::Command::new(binary)
        .env_remove("TAVILY_API_KEY")
        .stdin(input)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().expect("a pid");
    // Non-blocking, so the test sees the pipe full instead of waiting on it.
    let to_server = tokio::net::unix::pipe::Sender::from_owned_fd(to_server.into()).unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let send = async |to_server: &tokio::net::unix::pipe::Sender, line: &str| {
        let mut bytes = line.as_bytes();
        while !bytes.is_empty() {
            to_server.writable().await.unwrap();
            match to_server.try_write(bytes) {
                Ok(written) => bytes = &bytes[written..],
                Err(error) if error.kind() == ErrorKind::WouldBlock => {}
                Err(error) => panic!("writing to the server: {error}"),
            }
        }
    };
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"adversary","version":"1"}}}"#;
    send(&to_server, &format!("{initialize}\n")).await;
    let mut line = String::new();
    within("the answer to initialize", stdout.read_line(&mut line)).await.unwrap();
    assert!(line.contains(r#""id":0"#), "{line}");
    send(&to_server, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await;
    let idle = vm_rss_kib(pid);

    let is_refused = |id: u64| refused.is_some_and(|every| id.is_multiple_of(every));
    let request = |id: u64| {
        if is_refused(id) {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":[]}}\n")
        } else {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"get_weather\",\"arguments\":{{\"city\":\"Paris\",\"days\":3}}}}}}\n"
            )
        }
    };
    let (mut id, mut next, mut at) = (1, request(1), 0);
    let mut last_seen_asleep = None;
    let mut full_since = None;
    loop {
        match to_server.try_write(&next.as_bytes()[at..]) {
            Ok(written) => {
                at += written;
                if at == next.len() {
                    assert!(id < SENT, "the server read all {SENT} requests, none of its answers read");
                    (id, next, at) = (id + 1, request(id + 1), 0);
                }
                (last_seen_asleep, full_since) = (None, None);
            }
            Err(error) if error.kind() == ErrorKind::WouldBlock => {
                let full_for = full_since.get_or_insert_with(std::time::Instant::now).elapsed();
                assert!(full_for < HANG, "its input full for {full_for:?}, the server is not yet asleep");
                // The pipe is full. At rest is asleep twice over, with no
                // CPU time spent between: the server waits for the client.
                let now = asleep(pid);
                if now.is_some() && now == last_seen_asleep {
                    break;
                }
                last_seen_asleep = now;
                // Room in the pipe wakes this early; a server at rest never does.
                let _ = tokio::time::timeout(Duration::from_millis(200), to_server.writable()).await;
            }
            Err(error) => panic!("writing to the server: {error}"),
        }
    }
    // At most: the pipe holds some of them, and the last is not all written.
    let taken = id;
    assert!(taken < SENT / 10, "the server took {taken} of {SENT} requests before it stopped reading");
    let grown = vm_rss_kib(pid).saturating_sub(idle);
    assert!(grown < 16 * 1024, "{grown} KiB more than idle, with {taken} requests taken");
    eprintln!("stopped reading after {taken} requests, {grown} KiB more than idle");

    // The client reads now; the rest of the last request goes out as the
    // server reads again, then the end of the input.
    let rest = next[at..].to_owned();
    let finish = tokio::spawn(async move {
        send(&to_server, &rest).await;
    });
    let mut answered = std::collections::BTreeSet::new();
    let mut errors = Vec::new();
    loop {
        let mut line = String::new();
        if within("an answer", stdout.read_line(&mut line)).await.unwrap() == 0 {
            break;
        }
        let answer: Value = serde_json::from_str(&line).expect("a JSON line");
        let id = answer["id"].as_u64().unwrap_or_else(|| panic!("an id: {answer}"));
        assert!(answered.insert(id), "answered twice: {answer}");
        if is_refused(id) {
            assert_eq!(answer["error"]["code"], -32600, "{answer}");
            errors.push(id);
        } else {
            assert_eq!(answer["result"]["isError"], false, "{answer}");
        }
        if answered.len() as u64 == taken {
            break;
        }
    }
    let missing: Vec<u64> = (1..=taken).filter(|id| !answered.contains(id)).collect();
    assert!(missing.is_empty() && answered.len() as u64 == taken, "unanswered: {missing:?} of {taken}");
    // The reader's error lines leave in the order it wrote them.
    assert!(errors.is_sorted(), "{errors:?}");
    within("the last request written", finish).await.unwrap();
    let status = within("the server's exit", child.wait()).await.unwrap();
    assert!(status.success(), "{status}");
}

/// A client that sends its calls, closes its input (how it stops the
/// server) and reads the answers slowly, 10 ms a line: it gets every one
/// before the server exits, however long that takes; only a client that
/// takes nothing for a second is given up on. (The server used to give the
/// last answers 1 s in all and cut the rest.)
#[tokio::test]
async fn a_stdio_client_that_reads_its_last_answers_slowly_gets_them_all() {
    const CALLS: u64 = 600;
    let (mut child, mut stdin, stdout) = support::stdio_example();
    let mut stdout = stdout;
    let mut bytes = String::from(concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"adversary","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n"
    ));
    for id in 1..=CALLS {
        bytes += &format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"get_weather\",\"arguments\":{{\"city\":\"Paris\"}}}}}}\n"
        );
    }
    // Written, then closed, while the answers are read.
    let writing = tokio::spawn(async move {
        stdin.write_all(bytes.as_bytes()).await.unwrap();
    });
    let mut answered = std::collections::BTreeSet::new();
    loop {
        let mut line = String::new();
        if within("an answer", stdout.read_line(&mut line)).await.unwrap() == 0 {
            break;
        }
        let answer: Value = serde_json::from_str(&line).expect("a JSON line");
        assert!(answered.insert(answer["id"].as_u64().expect("an id")), "answered twice: {answer}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    within("the calls written", writing).await.unwrap();
    assert_eq!(answered, (0..=CALLS).collect(), "every request answered once, then the end");
    let status = within("the server's exit", child.wait()).await.unwrap();
    assert!(status.success(), "{status}");
}
