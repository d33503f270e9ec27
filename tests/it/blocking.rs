//! `#[tool(blocking)]`: a plain fn whose body blocks runs on the blocking
//! pool. Shown on a one-thread runtime, where a body blocking the runtime
//! would stall every sibling: the siblings run, the timeout holds, a panic
//! is isolated.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use toolcall::{Outcome, ToolCall, ToolContext, ToolError, Toolset, tool};

/// A channel a blocking tool waits on and an async sibling sends on.
struct Gate(Mutex<Sender<String>>, Mutex<Receiver<String>>);

impl Gate {
    fn new() -> Self {
        let (sender, receiver) = channel();
        Self(Mutex::new(sender), Mutex::new(receiver))
    }
    fn open(&self, word: impl Into<String>) {
        self.0.lock().unwrap().send(word.into()).unwrap();
    }
    /// Blocks the thread until the gate opens, or 10 s.
    fn wait(&self) -> Option<String> {
        self.1.lock().unwrap().recv_timeout(Duration::from_secs(10)).ok()
    }
}

static SIBLINGS: LazyLock<Gate> = LazyLock::new(Gate::new);
static SLOW: LazyLock<Gate> = LazyLock::new(Gate::new);

/// Waits, blocking its thread, for its sibling's word.
#[tool(args, blocking)]
fn wait_for_sibling(_ctx: &ToolContext, label: String) -> Result<String, ToolError> {
    match SIBLINGS.wait() {
        Some(word) => Ok(format!("{label}: {word}")),
        None => Err(ToolError::failed("the sibling never ran: the runtime was blocked")),
    }
}

/// Sends the word the blocking tool waits for.
#[tool(args)]
async fn sibling(word: String) -> String {
    SIBLINGS.open(word);
    "sent".into()
}

/// Blocks far past its timeout.
#[tool(blocking, timeout = "100ms")]
fn stuck() -> String {
    SLOW.wait().unwrap_or_default()
}

/// Panics on the blocking pool.
#[tool(blocking)]
fn explode() -> String {
    panic!("boom on the pool")
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

#[tokio::test(flavor = "current_thread")]
async fn a_blocking_tool_leaves_its_siblings_running() {
    let tools = Toolset::builder().add(WaitForSibling).add(Sibling).build().unwrap();
    let calls =
        [call("1", "wait_for_sibling", r#"{"label":"got"}"#), call("2", "sibling", r#"{"word":"hello"}"#)];
    let results = tools.run_turn(&ToolContext::new(), &calls).await;
    assert_eq!(results[0].outcome, Outcome::Success, "{:?}", results[0]);
    assert_eq!(results[0].content, "got: hello");
    assert_eq!(results[1].content, "sent");
}

#[tokio::test(flavor = "current_thread")]
async fn a_blocking_tool_past_its_timeout_is_timed_out_and_its_turn_ends() {
    let tools = Toolset::builder().add(Stuck).add(Sibling).build().unwrap();
    let results = tools.run_turn(&ToolContext::new(), &[call("1", "stuck", "{}")]).await;
    assert_eq!(results[0].outcome, Outcome::TimedOut, "{:?}", results[0]);
    // The thread runs on until its body returns: let it.
    SLOW.open("released");
}

#[tokio::test(flavor = "current_thread")]
async fn a_panic_on_the_blocking_pool_is_the_calls_failure() {
    let tools = Toolset::builder().add(Explode).build().unwrap();
    let results = tools.run_turn(&ToolContext::new(), &[call("1", "explode", "{}")]).await;
    assert!(results[0].outcome.is_failure(), "{:?}", results[0]);
    // What the model reads of any panicking tool.
    assert_eq!(results[0].content, r#"{"error":"tool `explode` panicked"}"#);
}
