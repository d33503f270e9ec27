//! An agent as a tool (`Agent::as_tool`): the calling model reads the
//! sub-agent's answer; the sub-agent's tokens, calls, events, spans and
//! cancellation belong to the calling run; a failing sub-agent is an
//! error the calling model reads; nesting is bounded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use futures::StreamExt;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{
    Agent, AgentEvent, AgentTool, AnswerType, LimitExceeded, Message, ModelName, ModelResponse, Pending,
    RunLimits, RunResult, RunState, StopReason, Usage,
};
use toolcall_core::{
    CancellationToken, Outcome, OutputFuture, Parameters, Tool, ToolCall, ToolContext, ToolError, ToolResult,
    ToolSpec, Toolset,
};
use toolcall_macros::tool;

/// Echo the text.
#[tool(args, crate = "toolcall_core")]
async fn echo(_ctx: &ToolContext, text: String) -> Result<String, ToolError> {
    Ok(text)
}

fn tokens(input: u64) -> Usage {
    Usage { input_tokens: Some(input), ..Usage::default() }
}

/// A response that names the model that gave it and its tokens.
fn from(model: &ModelName, input: u64, response: ModelResponse) -> ModelResponse {
    ModelResponse { model: Some(model.clone()), usage: tokens(input), ..response }
}

fn ask(id: &str, tool: &str, prompt: &str) -> ToolCall {
    ToolCall::new(id, tool, serde_json::json!({ "prompt": prompt }).to_string())
}

fn tools(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Toolset {
    let mut set = Toolset::new();
    for tool in tools {
        set.add(tool).unwrap();
    }
    set
}

/// The results the run's tool messages hold, in order.
fn results(result: &RunResult) -> Vec<&ToolResult> {
    result
        .transcript
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool { results } => Some(results),
            _ => None,
        })
        .flatten()
        .collect()
}

fn researcher(model: ScriptedModel) -> AgentTool {
    Agent::new(model, Toolset::new()).unwrap().as_tool("researcher", "Looks facts up.")
}

#[tokio::test]
async fn the_calling_model_reads_the_sub_agents_answer() {
    let inner = Arc::new(ScriptedModel::new().then_text("Oslo has 709,000 people."));
    let sub =
        Agent::from_shared(inner.clone(), Toolset::new()).unwrap().as_tool("researcher", "Looks facts up.");
    // The default input: one string, `prompt`, required.
    assert_eq!(sub.spec().parameters()["required"], serde_json::json!(["prompt"]));
    let outer = ScriptedModel::new()
        .then_calls([ask("c1", "researcher", "Population of Oslo?")])
        .then_text("About 709,000.");
    let agent = Agent::new(outer, tools([Arc::new(sub) as Arc<dyn Tool>])).unwrap();
    let result = agent.run("How many people live in Oslo?").await.unwrap();
    assert_eq!((result.answer.as_str(), &result.stop), ("About 709,000.", &StopReason::Answered));
    let results = results(&result);
    assert_eq!(results.len(), 1);
    assert_eq!(
        (results[0].outcome, results[0].content.as_str()),
        (Outcome::Success, "Oslo has 709,000 people.")
    );
    // The sub-agent ran from the prompt the calling model wrote.
    let seen = inner.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].messages, [Message::user("Population of Oslo?")]);
}

#[tokio::test]
async fn the_runs_usage_has_the_sub_agents_tokens_by_model() {
    let (lead, mini) = (ModelName::new("scripted", "scripted"), ModelName::new("acme", "mini"));
    let inner = ScriptedModel::new()
        .then(Ok(from(&mini, 100, ModelResponse::new("", [ToolCall::new("i1", "echo", r#"{"text":"x"}"#)]))))
        .then(Ok(from(&mini, 200, ModelResponse::new("found it", []))));
    let sub = Agent::new(inner, tools([Arc::new(Echo) as Arc<dyn Tool>]))
        .unwrap()
        .as_tool("researcher", "Looks up.");
    let outer = ScriptedModel::new()
        .then(Ok(from(&lead, 10, ModelResponse::new("", [ask("c1", "researcher", "find it")]))))
        .then(Ok(from(&lead, 20, ModelResponse::new("done", []))));
    let agent = Agent::new(outer, tools([Arc::new(sub) as Arc<dyn Tool>])).unwrap();
    let result = agent.run("go").await.unwrap();
    assert_eq!(result.answer, "done");
    // The sub-agent's requests come after the request whose call started them.
    assert_eq!(result.models, [lead.clone(), mini.clone(), mini.clone(), lead.clone()]);
    assert_eq!(result.usage, [tokens(10), tokens(100), tokens(200), tokens(20)]);
    assert_eq!(result.usage_by_model(), [(lead, tokens(30)), (mini, tokens(300))]);
    assert_eq!(result.total_usage(), tokens(330));
}

#[tokio::test]
async fn the_sub_agents_calls_count_against_the_calling_runs_limit() {
    let inner = ScriptedModel::new()
        .then_calls([ToolCall::new("i1", "echo", r#"{"text":"a"}"#)])
        .then_calls([
            ToolCall::new("i2", "echo", r#"{"text":"b"}"#),
            ToolCall::new("i3", "echo", r#"{"text":"c"}"#),
        ])
        .then_text("never read");
    let sub = Agent::new(inner, tools([Arc::new(Echo) as Arc<dyn Tool>]))
        .unwrap()
        .as_tool("researcher", "Looks up.");
    let outer = ScriptedModel::new()
        .then_calls([ask("c1", "researcher", "find it")])
        .then_calls([
            ToolCall::new("c2", "echo", r#"{"text":"d"}"#),
            ToolCall::new("c3", "echo", r#"{"text":"e"}"#),
        ])
        .then_text("never asked");
    let agent = Agent::new(outer, tools([Arc::new(sub) as Arc<dyn Tool>, Arc::new(Echo)]))
        .unwrap()
        .with_limits(RunLimits::default().with_max_tool_calls(3));
    let result = agent.run("go").await.unwrap();
    // The outer run's 3 calls: its own, then 1 of the sub-agent's; the
    // sub-agent's next 2 would pass them (its own limit is 128).
    let results = results(&result);
    assert_eq!(results[0].outcome, Outcome::Failed);
    assert!(
        results[0]
            .content
            .contains("sub-agent `researcher` stopped before answering: tool calls limit is exceeded")
            && results[0].content.contains("the limit is 3"),
        "{}",
        results[0].content
    );
    // The sub-agent's call counts: the outer turn of 2 more is refused.
    assert_eq!(result.stop, StopReason::Budget(LimitExceeded::ToolCalls { limit: 3, requested: 4 }));
}

#[tokio::test]
async fn the_stream_has_the_sub_agents_events_marked_with_their_path() {
    let checker = ScriptedModel::new()
        .then_calls([ToolCall::new("k1", "echo", r#"{"text":"true"}"#)])
        .then_text("It is true.");
    let checker = Agent::new(checker, tools([Arc::new(Echo) as Arc<dyn Tool>]))
        .unwrap()
        .as_tool("fact_checker", "Checks.");
    let inner = ScriptedModel::new()
        .then_calls([ask("i1", "fact_checker", "Is it true?")])
        .then_text("Checked: yes.");
    let sub = Agent::new(inner, tools([Arc::new(checker) as Arc<dyn Tool>]))
        .unwrap()
        .as_tool("researcher", "Looks up.");
    let outer = ScriptedModel::new().then_calls([ask("c1", "researcher", "Check it")]).then_text("Yes.");
    let agent = Agent::new(outer, tools([Arc::new(sub) as Arc<dyn Tool>])).unwrap();
    let events: Vec<AgentEvent> = agent.stream("Is it true?").collect().await;
    let Some(AgentEvent::Finished(Ok(result))) = events.last() else { panic!("{events:?}") };
    assert_eq!(result.answer, "Yes.");
    let nested: Vec<(Vec<&str>, &str, &AgentEvent)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Nested { path, call_id, event } => {
                Some((path.iter().map(String::as_str).collect(), call_id.as_str(), &**event))
            }
            _ => None,
        })
        .collect();
    // Every nested event is of the outer call `c1`, none is another's end
    // or another nesting.
    assert!(nested.iter().all(|(_, call_id, _)| *call_id == "c1"), "{nested:?}");
    assert!(
        !nested
            .iter()
            .any(|(_, _, event)| matches!(event, AgentEvent::Finished(_) | AgentEvent::Nested { .. })),
        "{nested:?}"
    );
    let of =
        |path: &[&str]| nested.iter().filter(|(p, _, _)| p == path).map(|(_, _, e)| *e).collect::<Vec<_>>();
    let researcher = of(&["researcher"]);
    let checker = of(&["researcher", "fact_checker"]);
    assert!(
        researcher
            .iter()
            .any(|event| matches!(event, AgentEvent::ToolCall(call) if call.name == "fact_checker")),
        "{researcher:?}"
    );
    assert!(
        researcher
            .iter()
            .any(|event| matches!(event, AgentEvent::TextDelta(text) if text == "Checked: yes.")),
        "{researcher:?}"
    );
    assert_eq!(researcher.iter().filter(|event| matches!(event, AgentEvent::Usage(_))).count(), 2);
    assert!(
        checker
            .iter()
            .any(|event| matches!(event, AgentEvent::ToolResult(result) if result.content == "true")),
        "{checker:?}"
    );
    assert!(
        checker.iter().any(|event| matches!(event, AgentEvent::TextDelta(text) if text == "It is true.")),
        "{checker:?}"
    );
    // Inside the outer call: after it starts, before its result.
    let position = |wanted: &dyn Fn(&AgentEvent) -> bool| events.iter().position(wanted).unwrap();
    let call = position(&|event| matches!(event, AgentEvent::ToolCall(call) if call.id == "c1"));
    let result = position(&|event| matches!(event, AgentEvent::ToolResult(result) if result.id == "c1"));
    let first = position(&|event| matches!(event, AgentEvent::Nested { .. }));
    let last = events.iter().rposition(|event| matches!(event, AgentEvent::Nested { .. })).unwrap();
    assert!(call < first && last < result, "{call} {first} {last} {result}");
    // The outer run's own usage events are its two requests only.
    assert_eq!(events.iter().filter(|event| matches!(event, AgentEvent::Usage(_))).count(), 2);
}

#[tokio::test]
async fn a_failing_sub_agent_is_an_error_the_calling_model_reads() {
    // The inner model has nothing scripted: its first request fails.
    let sub = researcher(ScriptedModel::new());
    let outer = ScriptedModel::new()
        .then_calls([ask("c1", "researcher", "find it")])
        .then_text("The researcher is down; I answer alone.");
    let outer = Arc::new(outer);
    let agent = Agent::from_shared(outer.clone(), tools([Arc::new(sub) as Arc<dyn Tool>])).unwrap();
    let result = agent.run("go").await.unwrap();
    assert_eq!(
        (result.answer.as_str(), &result.stop),
        ("The researcher is down; I answer alone.", &StopReason::Answered)
    );
    let results = results(&result);
    assert_eq!(results[0].outcome, Outcome::Failed);
    assert!(
        results[0].content.starts_with(r#"{"error":"sub-agent `researcher` failed: "#),
        "{}",
        results[0].content
    );
    assert!(results[0].content.contains("script"), "{}", results[0].content);
    // The calling model read it.
    let seen = outer.seen();
    assert!(
        matches!(seen[1].messages.last(), Some(Message::Tool { results }) if results[0].outcome == Outcome::Failed)
    );
}

/// The guarded tool's arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[expect(dead_code, reason = "only its schema is used")]
struct Dir {
    /// The directory.
    path: String,
}

/// A tool that needs approval and records the arguments of each call that
/// ran.
#[derive(Clone)]
struct Guarded(Arc<Mutex<Vec<String>>>, ToolSpec);

impl Guarded {
    fn new() -> Self {
        let spec = ToolSpec::from_parameters("remove_dir", "Removes a directory.", Parameters::of::<Dir>())
            .with_approval_required();
        Self(Arc::default(), spec)
    }

    fn ran(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl Tool for Guarded {
    fn spec(&self) -> &ToolSpec {
        &self.1
    }
    fn call<'a>(&'a self, _ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        self.0.lock().unwrap().push(arguments.to_owned());
        Box::pin(async move { Ok(format!("removed {arguments}").into()) })
    }
}

fn remove(id: &str, path: &str) -> ToolCall {
    ToolCall::new(id, "remove_dir", serde_json::json!({ "path": path }).to_string())
}

/// The lead agent over `outer`, with the janitor (over `inner`, with the
/// guarded tool) as its tool `janitor`, and the guarded tool too: the
/// agents a process builds, the same in each.
fn janitor_team(inner: &Arc<ScriptedModel>, outer: &Arc<ScriptedModel>, guarded: &Guarded) -> Agent {
    let janitor = Agent::from_shared(inner.clone(), tools([Arc::new(guarded.clone()) as Arc<dyn Tool>]))
        .unwrap()
        .as_tool("janitor", "Cleans.");
    let own = tools([Arc::new(janitor) as Arc<dyn Tool>, Arc::new(guarded.clone()) as Arc<dyn Tool>]);
    Agent::from_shared(outer.clone(), own).unwrap()
}

/// The state saved as JSON and read back, as another process would.
fn saved(stop: StopReason) -> RunState {
    let StopReason::Paused(state) = stop else { panic!("not paused: {stop:?}") };
    serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap()
}

#[tokio::test]
async fn a_sub_agents_call_that_needs_approval_pauses_the_calling_run() {
    // This replaces "approval cannot yet be given through an agent tool":
    // the call now pauses the run above instead of failing its call.
    let guarded = Guarded::new();
    let inner = Arc::new(ScriptedModel::new().then_calls([remove("i1", "tmp")]));
    let outer = Arc::new(ScriptedModel::new().then_calls([ask("c1", "janitor", "clean up")]));
    let agent = janitor_team(&inner, &outer, &guarded);
    let events: Vec<AgentEvent> = agent.stream("go").collect().await;
    let Some(AgentEvent::Finished(Ok(result))) = events.last() else { panic!("{events:?}") };
    let StopReason::Paused(state) = &result.stop else { panic!("{:?}", result.stop) };
    let [pending] = state.pending() else { panic!("{:?}", state.pending()) };
    assert_eq!(pending.call, remove("i1", "tmp"));
    assert_eq!(
        (pending.path.as_slice(), pending.call_path.as_slice()),
        (&["janitor".to_owned()][..], &["c1".to_owned()][..])
    );
    assert_eq!((pending.id(), &pending.decision), ("c1/i1".to_owned(), &None));
    // The stream asked about it as the run's own event, with its path, so
    // a UI that knows only `ApprovalRequested` asks.
    let asked: Vec<&Pending> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ApprovalRequested(pending) => Some(pending),
            _ => None,
        })
        .collect();
    assert_eq!(asked, [pending]);
    assert!(!events.iter().any(|event| matches!(event,
        AgentEvent::Nested { event, .. } if matches!(&**event, AgentEvent::ApprovalRequested(_)))));
    // Nor is the janitor's call given a result: it waits with its sub-agent.
    assert!(!events.iter().any(|event| matches!(event, AgentEvent::ToolResult(_))), "{events:?}");
    assert!(results(result).is_empty());
    assert!(guarded.ran().is_empty());
    assert_eq!((inner.seen().len(), outer.seen().len()), (1, 1));
    // Both requests are the run's, the janitor's after the lead's.
    assert_eq!(result.usage.len(), 2);
}

#[tokio::test]
async fn approved_in_another_process_the_sub_agent_goes_on_and_the_lead_reads_its_answer() {
    let guarded = Guarded::new();
    let inner = Arc::new(ScriptedModel::new().then_calls([remove("i1", "tmp")]));
    let outer = Arc::new(ScriptedModel::new().then_calls([ask("c1", "janitor", "clean up")]));
    let paused = janitor_team(&inner, &outer, &guarded).run("go").await.unwrap();
    let mut state = saved(paused.stop);

    // Another process: fresh agents, whose models have only what is left.
    let inner = Arc::new(ScriptedModel::new().then_text("Removed tmp."));
    let outer = Arc::new(ScriptedModel::new().then_text("The janitor removed tmp."));
    state.approve("c1/i1").unwrap();
    let result = janitor_team(&inner, &outer, &guarded).run(state).await.unwrap();
    assert_eq!((result.answer.as_str(), &result.stop), ("The janitor removed tmp.", &StopReason::Answered));
    assert_eq!(guarded.ran(), [r#"{"path":"tmp"}"#]);
    // The janitor's run went on where it was: its model was asked once,
    // with its transcript and the approved call's result, not for the
    // turn that paused.
    let seen = inner.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].messages[0], Message::user("clean up"));
    assert!(matches!(&seen[0].messages[1], Message::Assistant { content } if content.len() == 1));
    let Some(Message::Tool { results: read }) = seen[0].messages.last() else {
        panic!("{:?}", seen[0].messages)
    };
    assert_eq!((read[0].id.as_str(), read[0].outcome), ("i1", Outcome::Success));
    assert_eq!(seen[0].messages.len(), 3);
    // The lead read the janitor's answer as its call's result.
    let seen = outer.seen();
    assert_eq!(seen.len(), 1);
    let Some(Message::Tool { results: read }) = seen[0].messages.last() else {
        panic!("{:?}", seen[0].messages)
    };
    assert_eq!(
        (read[0].id.as_str(), read[0].outcome, read[0].content.as_str()),
        ("c1", Outcome::Success, "Removed tmp.")
    );
    // Every request of both processes is counted once.
    assert_eq!(result.usage.len(), 4);
}

#[tokio::test]
async fn denied_the_sub_agents_model_reads_the_reason() {
    let guarded = Guarded::new();
    let inner = Arc::new(ScriptedModel::new().then_calls([remove("i1", "tmp")]));
    let outer = Arc::new(ScriptedModel::new().then_calls([ask("c1", "janitor", "clean up")]));
    let paused = janitor_team(&inner, &outer, &guarded).run("go").await.unwrap();
    let mut state = saved(paused.stop);
    let inner = Arc::new(ScriptedModel::new().then_text("I was not allowed to."));
    let outer = Arc::new(ScriptedModel::new().then_text("Nothing was removed."));
    state.deny("c1/i1", "tmp is in use").unwrap();
    let result = janitor_team(&inner, &outer, &guarded).run(state).await.unwrap();
    assert_eq!(result.answer, "Nothing was removed.");
    assert!(guarded.ran().is_empty());
    let seen = inner.seen();
    assert_eq!(seen.len(), 1);
    let Some(Message::Tool { results: read }) = seen[0].messages.last() else {
        panic!("{:?}", seen[0].messages)
    };
    assert_eq!(read[0].outcome, Outcome::Denied);
    assert!(read[0].content.contains("tmp is in use"), "{}", read[0].content);
    let answered = results(&result);
    assert_eq!((answered[0].id.as_str(), answered[0].content.as_str()), ("c1", "I was not allowed to."));
}

#[tokio::test]
async fn an_id_shared_by_the_lead_and_the_sub_agent_names_one_call() {
    // The lead's own call and the janitor's are both `c1`.
    let guarded = Guarded::new();
    let inner = Arc::new(ScriptedModel::new().then_calls([remove("c1", "inner")]));
    let outer =
        Arc::new(ScriptedModel::new().then_calls([remove("c1", "outer"), ask("c2", "janitor", "clean up")]));
    let paused = janitor_team(&inner, &outer, &guarded).run("go").await.unwrap();
    let mut state = saved(paused.stop);
    let ids: Vec<String> = state.pending().iter().map(Pending::id).collect();
    assert_eq!(ids, ["c1", "c2/c1"]);
    let unknown = state.approve("c3/c1").unwrap_err();
    assert_eq!(unknown.pending, ["c1", "c2/c1"]);

    // First only the lead's own call is decided: the janitor stays paused.
    state.deny("c1", "keep outer").unwrap();
    let (inner, outer) = (Arc::new(ScriptedModel::new()), Arc::new(ScriptedModel::new()));
    let again = janitor_team(&inner, &outer, &guarded).run(state).await.unwrap();
    let mut state = saved(again.stop);
    assert_eq!(state.pending().iter().map(Pending::id).collect::<Vec<_>>(), ["c2/c1"]);
    assert!(guarded.ran().is_empty());
    assert_eq!((inner.seen().len(), outer.seen().len()), (0, 0));

    state.approve("c2/c1").unwrap();
    let inner = Arc::new(ScriptedModel::new().then_text("Removed inner."));
    let outer = Arc::new(ScriptedModel::new().then_text("Done."));
    let result = janitor_team(&inner, &outer, &guarded).run(state).await.unwrap();
    assert_eq!(result.answer, "Done.");
    // The janitor's call ran, the lead's did not.
    assert_eq!(guarded.ran(), [r#"{"path":"inner"}"#]);
    let seen = outer.seen();
    let Some(Message::Tool { results: read }) = seen[0].messages.last() else {
        panic!("{:?}", seen[0].messages)
    };
    assert_eq!((read[0].id.as_str(), read[0].outcome), ("c1", Outcome::Denied));
    assert_eq!(
        (read[1].id.as_str(), read[1].outcome, read[1].content.as_str()),
        ("c2", Outcome::Success, "Removed inner.")
    );
}

#[tokio::test]
async fn a_sub_agent_called_outside_a_run_cannot_wait_for_approval() {
    let inner = ScriptedModel::new().then_calls([remove("i1", "tmp")]);
    let sub = Agent::new(inner, tools([Arc::new(Guarded::new()) as Arc<dyn Tool>]))
        .unwrap()
        .as_tool("janitor", "Cleans.");
    let error = sub.call_text(&ToolContext::new(), r#"{"prompt":"clean up"}"#).await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("sub-agent `janitor` stopped: its call `remove_dir` needs a person's approval"),
        "{message}"
    );
}

#[tokio::test]
async fn cancelling_the_calling_run_reaches_the_sub_agents_calls() {
    let outer_token = CancellationToken::new();
    let seen_cancelled = Arc::new(AtomicBool::new(false));

    /// Cancels the outermost run, then looks whether its own call sees it.
    struct CancelAbove(CancellationToken, Arc<AtomicBool>, ToolSpec);
    impl Tool for CancelAbove {
        fn spec(&self) -> &ToolSpec {
            &self.2
        }
        fn call<'a>(&'a self, ctx: &'a ToolContext, _arguments: &'a str) -> OutputFuture<'a> {
            self.0.cancel();
            // Cancellation comes down synchronously through every level.
            self.1.store(ctx.is_cancelled(), Ordering::SeqCst);
            Box::pin(async { Ok("cancelled".into()) })
        }
    }

    let spec = ToolSpec::from_parameters("cancel_above", "Cancels.", Parameters::of::<()>());
    let cancel = CancelAbove(outer_token.clone(), Arc::clone(&seen_cancelled), spec);
    let inner = Arc::new(
        ScriptedModel::new().then_calls([ToolCall::new("i1", "cancel_above", "{}")]).then_text("never asked"),
    );
    let sub = Agent::from_shared(inner.clone(), tools([Arc::new(cancel) as Arc<dyn Tool>]))
        .unwrap()
        .as_tool("researcher", "Looks up.");
    let outer = ScriptedModel::new().then_calls([ask("c1", "researcher", "go")]).then_text("never asked");
    let agent = Agent::new(outer, tools([Arc::new(sub) as Arc<dyn Tool>]))
        .unwrap()
        .with_context(ToolContext::new().with_cancellation(outer_token));
    let result = agent.run("go").await.unwrap();
    assert!(seen_cancelled.load(Ordering::SeqCst), "the sub-agent's call did not see the cancellation");
    assert_eq!(result.stop, StopReason::Cancelled);
    // The sub-agent stopped too: it never asked its model again.
    assert_eq!(inner.seen().len(), 1);
}

/// A tool that stands for an agent tool made later: how an agent gets
/// itself among its own tools.
struct Later(Arc<OnceLock<AgentTool>>, ToolSpec);

impl Tool for Later {
    fn spec(&self) -> &ToolSpec {
        &self.1
    }
    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        match self.0.get() {
            Some(tool) => tool.call(ctx, arguments),
            None => Box::pin(async { Err(ToolError::failed("not made yet")) }),
        }
    }
}

#[tokio::test]
async fn an_agent_that_calls_itself_stops_at_the_depth_limit() {
    // Each run calls itself once, then answers: runs 0 to 4 call, the
    // call from run 4 (5 deep) is refused, and each run answers in turn.
    let mut script = ScriptedModel::new();
    for _ in 0..5 {
        script = script.then_calls([ask("r", "recurse", "deeper")]);
    }
    for depth in (0..5).rev() {
        script = script.then_text(format!("answer {depth}"));
    }
    let model = Arc::new(script);
    let later = Arc::new(OnceLock::new());
    // The spec of the agent tool it stands for: the same name and input.
    let spec = researcher(ScriptedModel::new()).spec().clone().with_name("recurse");
    let agent =
        Agent::from_shared(model.clone(), tools([Arc::new(Later(later.clone(), spec)) as Arc<dyn Tool>]))
            .unwrap();
    let _ = later.set(agent.as_tool("recurse", "Itself."));
    let result = agent.run("go").await.unwrap();
    assert_eq!(result.stop, StopReason::Answered);
    // Five runs asked twice each; the sixth never ran.
    assert_eq!(result.usage.len(), 10);
    let seen = model.seen();
    assert_eq!(seen.len(), 10);
    // The run 4 deep read why its call did not run.
    let Some(Message::Tool { results }) = seen[5].messages.last() else { panic!("{:?}", seen[5]) };
    assert_eq!(results[0].outcome, Outcome::Failed);
    assert!(
        results[0].content.contains("sub-agent `recurse` was not run: it would run 5 agents deep")
            && results[0].content.contains("at most 4 deep"),
        "{}",
        results[0].content
    );
    // Each run's answer went up to the run that called it.
    assert_eq!(result.answer, "answer 0");
    let Some(Message::Tool { results: answered }) = seen[6].messages.last() else { panic!("{:?}", seen[6]) };
    assert_eq!(answered[0].content, "answer 4");
    // A lower limit stops it sooner: no sub-agent at all.
    let refused = agent.as_tool("recurse", "Itself.").with_max_depth(0);
    let error = refused.call_text(&ToolContext::new(), r#"{"prompt":"go"}"#).await.unwrap_err();
    assert!(error.model_content().contains("at most 0 deep"), "{}", error.model_content());
}

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Verdict {
    approved: bool,
    reason: String,
}

#[tokio::test]
async fn a_typed_answer_comes_back_as_its_json() {
    let inner = ScriptedModel::new().then_calls([ToolCall::new(
        "i1",
        "final_answer",
        r#"{"approved": true, "reason": "fits"}"#,
    )]);
    let sub = Agent::new(inner, Toolset::new())
        .unwrap()
        .with_answer_type(AnswerType::of::<Verdict>())
        .unwrap()
        .as_tool("reviewer", "Reviews.");
    let outer = ScriptedModel::new().then_calls([ask("c1", "reviewer", "review it")]).then_text("Approved.");
    let agent = Agent::new(outer, tools([Arc::new(sub) as Arc<dyn Tool>])).unwrap();
    let result = agent.run("go").await.unwrap();
    let content = &results(&result)[0].content;
    let verdict: Verdict = serde_json::from_str(content).unwrap();
    assert_eq!(verdict, Verdict { approved: true, reason: "fits".into() });
}

/// A span's name, id, parent's id and `gen_ai.agent.name`.
type Node = (String, u64, Option<u64>, Option<String>);

/// Every span as a registry knows it, in creation order.
#[derive(Clone, Default)]
struct Tree(Arc<Mutex<Vec<Node>>>);

impl<S> tracing_subscriber::Layer<S> for Tree
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Agent(Option<String>);
        impl tracing::field::Visit for Agent {
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                if field.name() == "gen_ai.agent.name" {
                    self.0 = Some(value.to_owned());
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut agent = Agent(None);
        attrs.record(&mut agent);
        let parent = ctx.span(id).and_then(|span| span.parent()).map(|parent| parent.id().into_u64());
        self.0.lock().unwrap().push((attrs.metadata().name().to_owned(), id.into_u64(), parent, agent.0));
    }
}

#[test]
fn the_sub_agents_span_is_inside_the_calls_span() {
    use tracing_subscriber::layer::SubscriberExt;

    let sub = Agent::new(ScriptedModel::new().then_text("found"), Toolset::new())
        .unwrap()
        .with_name("researcher")
        .as_tool("researcher", "Looks up.");
    let outer = ScriptedModel::new().then_calls([ask("c1", "researcher", "find it")]).then_text("done");
    let agent = Agent::new(outer, tools([Arc::new(sub) as Arc<dyn Tool>])).unwrap().with_name("lead");
    let tree = Tree::default();
    let subscriber = tracing_subscriber::registry().with(tree.clone());
    let result = crate::spans::capture::traced(subscriber, || futures::executor::block_on(agent.run("go")));
    assert_eq!(result.unwrap().answer, "done");
    let spans = tree.0.lock().unwrap();
    let find = |name: &str, agent: Option<&str>| {
        spans
            .iter()
            .find(|(n, _, _, a)| n == name && a.as_deref() == agent)
            .unwrap_or_else(|| panic!("{spans:?}"))
    };
    let lead = find("agent_run", Some("lead"));
    let inner = find("agent_run", Some("researcher"));
    let call = spans.iter().find(|(_, id, _, _)| Some(*id) == inner.2).unwrap_or_else(|| panic!("{spans:?}"));
    // lead's invoke_agent > the call's execute_tool > researcher's invoke_agent.
    assert_eq!((call.0.as_str(), call.2), ("tool_call", Some(lead.1)), "{spans:?}");
    // The researcher's request is inside its own run.
    let requests: Vec<_> = spans.iter().filter(|(n, _, _, _)| n == "model_request").collect();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests.iter().filter(|(_, _, parent, _)| *parent == Some(inner.1)).count(), 1, "{spans:?}");
}

/// A stream ends when its run does, even while a tool holds on to its
/// call's context, where agent tools find the stream's sender.
#[tokio::test]
async fn a_stream_ends_though_a_tool_keeps_its_context() {
    let kept: Arc<Mutex<Vec<ToolContext>>> = Arc::default();

    /// Keeps its call's context.
    struct Keep(Arc<Mutex<Vec<ToolContext>>>, ToolSpec);
    impl Tool for Keep {
        fn spec(&self) -> &ToolSpec {
            &self.1
        }
        fn call<'a>(&'a self, ctx: &'a ToolContext, _arguments: &'a str) -> OutputFuture<'a> {
            self.0.lock().unwrap().push(ctx.clone());
            Box::pin(async { Ok("kept".into()) })
        }
    }

    let keep = Keep(Arc::clone(&kept), ToolSpec::from_parameters("keep", "Keeps.", Parameters::of::<()>()));
    let model = ScriptedModel::new().then_calls([ToolCall::new("c1", "keep", "{}")]).then_text("done");
    let agent = Agent::new(model, tools([Arc::new(keep) as Arc<dyn Tool>])).unwrap();
    let events =
        tokio::time::timeout(std::time::Duration::from_secs(5), agent.stream("go").collect::<Vec<_>>())
            .await
            .expect("the stream ended");
    assert!(matches!(events.last(), Some(AgentEvent::Finished(Ok(result))) if result.answer == "done"));
    assert_eq!(kept.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_call_two_agents_down_pauses_the_lead_and_is_decided_by_its_whole_path() {
    let guarded = Guarded::new();
    let team = |janitor: &Arc<ScriptedModel>, manager: &Arc<ScriptedModel>, lead: &Arc<ScriptedModel>| {
        let janitor =
            Agent::from_shared(janitor.clone(), tools([Arc::new(guarded.clone()) as Arc<dyn Tool>]))
                .unwrap()
                .as_tool("janitor", "Cleans.");
        let manager = Agent::from_shared(manager.clone(), tools([Arc::new(janitor) as Arc<dyn Tool>]))
            .unwrap()
            .as_tool("manager", "Manages.");
        Agent::from_shared(lead.clone(), tools([Arc::new(manager) as Arc<dyn Tool>])).unwrap()
    };
    let janitor = Arc::new(ScriptedModel::new().then_calls([remove("x", "tmp")]));
    let manager = Arc::new(ScriptedModel::new().then_calls([ask("x", "janitor", "clean tmp")]));
    let lead = Arc::new(ScriptedModel::new().then_calls([ask("x", "manager", "get tmp cleaned")]));
    let events: Vec<AgentEvent> = team(&janitor, &manager, &lead).stream("go").collect().await;
    let Some(AgentEvent::Finished(Ok(result))) = events.last() else { panic!("{events:?}") };
    let mut state = saved(result.stop.clone());
    let [pending] = state.pending() else { panic!("{:?}", state.pending()) };
    assert_eq!(
        (pending.id(), pending.path.as_slice()),
        ("x/x/x".to_owned(), &["manager".to_owned(), "janitor".to_owned()][..])
    );
    assert!(
        events.iter().any(|event| matches!(event, AgentEvent::ApprovalRequested(asked) if asked == pending))
    );

    state.approve("x/x/x").unwrap();
    let janitor = Arc::new(ScriptedModel::new().then_text("Removed tmp."));
    let manager = Arc::new(ScriptedModel::new().then_text("The janitor removed tmp."));
    let lead = Arc::new(ScriptedModel::new().then_text("tmp is gone."));
    let result = team(&janitor, &manager, &lead).run(state).await.unwrap();
    assert_eq!(result.answer, "tmp is gone.");
    assert_eq!(guarded.ran(), [r#"{"path":"tmp"}"#]);
    assert_eq!((janitor.seen().len(), manager.seen().len(), lead.seen().len()), (1, 1, 1));
    let answered = results(&result);
    assert_eq!(answered[0].content, "The janitor removed tmp.");
    // The three paused requests and the three that went on.
    assert_eq!(result.usage.len(), 6);
}
