//! A person approves what an agent may destroy: the run pauses before the
//! destructive calls, its state is saved as JSON (where a real program would
//! put it in a database and wait for a reviewer), and a fresh agent loads it,
//! applies the reviewer's decisions and finishes the run.
//!
//! The model is scripted and the "disk" is a list in memory, so it runs
//! offline and deletes nothing real:
//!
//! ```sh
//! cargo run --example approval --features agent
//! ```

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use toolcall::agent::testing::ScriptedModel;
use toolcall::agent::{Agent, Decision, Message, RunState, StopReason};
use toolcall::toolset::Toolset;
use toolcall::{ToolCall, ToolContext, ToolError, tool};

/// The files the tools see, shared through the context so the agent that
/// resumes works on the same "disk" as the one that paused.
#[derive(Clone)]
struct Disk(Arc<Mutex<Vec<String>>>);

impl Disk {
    fn new(files: &[&str]) -> Self {
        Self(Arc::new(Mutex::new(files.iter().map(|file| (*file).to_owned()).collect())))
    }

    fn files(&self) -> Vec<String> {
        // A tool that panicked mid-call poisons the lock; the list is still
        // whole, so read it anyway.
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

const FILES: [&str; 4] = ["notes.txt", "old.log", "report.pdf", "build.tmp"];

/// List the files in the working directory.
#[tool(read_only)]
async fn list_files(ctx: &ToolContext) -> Result<String, ToolError> {
    let disk = ctx.get::<Disk>().ok_or_else(|| ToolError::failed("no disk is mounted"))?;
    Ok(disk.files().join("\n"))
}

/// Delete a file from the working directory.
// `destructive` is an annotation the provider formats and MCP pass on; the
// toolset's rule below turns it into "needs approval". `#[tool(args,
// needs_approval)]` would hold every call of this one tool without a rule,
// and `ToolOptions::with_approval_when(|ctx, args| ...)` only some calls.
#[tool(args, destructive)]
async fn delete_file(ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    let disk = ctx.get::<Disk>().ok_or_else(|| ToolError::failed("no disk is mounted"))?;
    let mut files = disk.0.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(index) = files.iter().position(|file| *file == path) else {
        return Err(ToolError::failed(format!("no file named {path}")));
    };
    files.remove(index);
    Ok(format!("deleted {path}"))
}

/// The same toolset in both processes: the approval rule is code, not
/// state, so the agent that resumes must be built with it too.
fn toolset() -> Result<Toolset, Box<dyn std::error::Error>> {
    let tools = Toolset::builder().add(ListFiles).add(DeleteFile).build()?;
    Ok(tools.with_approval_rule(|tool| tool.spec().annotations().destructive == Some(true)))
}

fn agent(model: ScriptedModel, disk: &Disk) -> Result<Agent, Box<dyn std::error::Error>> {
    Ok(Agent::new(model, toolset()?)?
        .with_instructions("Tidy the working directory with the tools.")
        .with_context(ToolContext::new().with_extension(disk.clone())))
}

/// The first process: run until the agent wants to delete, and give back
/// the paused run as the JSON a database would keep.
async fn until_paused(disk: &Disk) -> Result<String, Box<dyn std::error::Error>> {
    // One turn: a look at the files, and three deletions at once.
    let model = ScriptedModel::new().then_calls([
        ToolCall::new("call_1", "list_files", "{}"),
        ToolCall::new("call_2", "delete_file", r#"{"path":"old.log"}"#),
        ToolCall::new("call_3", "delete_file", r#"{"path":"report.pdf"}"#),
        ToolCall::new("call_4", "delete_file", r#"{"path":"build"}"#),
    ]);
    let result = agent(model, disk)?.run("Delete the files we no longer need.").await?;
    let StopReason::Paused(state) = result.stop else {
        return Err(format!("the run was expected to pause, and stopped with {:?}", result.stop).into());
    };
    println!("paused: {} calls wait for approval", state.pending().len());
    for pending in state.pending() {
        let call = &pending.call;
        println!("pending: {} {} {}", call.id, call.name, call.arguments);
    }
    // list_files ran; nothing was deleted.
    println!("files: {}", disk.files().join(" "));
    let saved = serde_json::to_string(&state)?;
    println!("saved: {} bytes of JSON", saved.len());
    Ok(saved)
}

/// What the reviewer decides about one call, from its arguments as the
/// model wrote them (which may not even be JSON).
fn review(call: &ToolCall) -> Decision {
    let arguments: Option<Value> = serde_json::from_str(&call.arguments).ok();
    match arguments.as_ref().and_then(|arguments| arguments["path"].as_str()) {
        Some("old.log") => Decision::Approve,
        // The model meant the build output; run the call on the right file.
        Some("build") => Decision::ApproveWith { arguments: r#"{"path":"build.tmp"}"#.into() },
        // The model reads the reason as the call's result.
        Some("report.pdf") => Decision::Deny { reason: "report.pdf is the only copy; keep it".into() },
        // What the reviewer cannot read, they do not approve.
        _ => Decision::Deny { reason: "say which file, as {\"path\": \"...\"}".into() },
    }
}

/// The second process: load the saved run, decide about each pending call
/// and resume with a fresh agent whose model continues the script.
async fn resume(saved: &str, disk: &Disk) -> Result<(), Box<dyn std::error::Error>> {
    let mut state: RunState = serde_json::from_str(saved)?;
    let calls: Vec<ToolCall> = state.pending().iter().map(|pending| pending.call.clone()).collect();
    for call in &calls {
        // `approve`, `approve_with` and `deny` are shorthands of `decide`.
        let decision = review(call);
        println!("decided: {} {}", call.id, serde_json::to_string(&decision)?);
        state.decide(&call.id, decision)?;
    }

    let model = ScriptedModel::new()
        .then_text("Deleted old.log and build.tmp; report.pdf stays, since it is the only copy.");
    let result = agent(model, disk)?.run(state).await?;
    println!("resumed: {:?}", result.stop);
    // The paused turn's results, in call order: the one that ran before
    // the pause and the three decided ones.
    let turn = result.transcript.messages.iter().find_map(|message| match message {
        Message::Tool { results } => Some(results),
        _ => None,
    });
    for result in turn.into_iter().flatten() {
        let content = result.content.replace('\n', " ");
        println!("result: {} {} {} {}", result.id, result.name, result.outcome.as_str(), content);
    }
    for file in FILES.iter().filter(|file| !disk.files().iter().any(|left| left == *file)) {
        println!("deleted: {file}");
    }
    println!("files: {}", disk.files().join(" "));
    println!("answer: {}", result.answer);
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The disk outlives both agents, as a real one outlives the processes.
    let disk = Disk::new(&FILES);
    let saved = until_paused(&disk).await?;
    resume(&saved, &disk).await
}
