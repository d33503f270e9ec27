//! The loop itself, against a scripted model: every stop reason, the
//! contract for bad calls, streaming order, and a run saved and continued.

use std::sync::Arc;
use std::time::Duration;
use toolcall_core::toolset::TurnOptions;

use futures::StreamExt;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Agent, AgentEvent, Message, RunLimits, StopReason, Transcript};
use toolcall_core::toolset::Toolset;
use toolcall_core::{Outcome, ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;

/// Current temperature for a city.
#[tool(args, crate = "toolcall_core")]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    if city == "Atlantis" {
        return Err(ToolError::failed("no station there"));
    }
    Ok(format!("12°C in {city}"))
}

/// Sleeps for a while.
#[tool(args, crate = "toolcall_core")]
async fn nap(_ctx: &ToolContext, ms: u64) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok("rested".into())
}

/// Gives the final answer.
#[tool(args, crate = "toolcall_core")]
async fn final_answer(_ctx: &ToolContext, answer: String) -> Result<String, ToolError> {
    Ok(answer)
}

fn tools() -> Toolset {
    Toolset::builder().add(GetWeather).add(Nap).add(FinalAnswer).build().unwrap()
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

fn results_of(message: &Message) -> Vec<(toolcall_core::SmolStr, Outcome)> {
    match message {
        Message::Tool { results } => results.iter().map(|r| (r.id.clone(), r.outcome)).collect(),
        other => panic!("expected tool results, got {other:?}"),
    }
}

#[tokio::test]
async fn parallel_calls_a_bad_one_an_unknown_one_and_a_failure_all_reach_the_model() {
    let model = Arc::new(
        ScriptedModel::new()
            .then_calls([
                call("a", "get_weather", r#"{"city":"Oslo"}"#),
                call("b", "get_weather", r#"{"town":"Rome"}"#),
                call("c", "get_wether", "{}"),
                call("d", "get_weather", r#"{"city":"Atlantis"}"#),
            ])
            .then_calls([call("e", "get_weather", "```json\n{\"city\":\"Rome\"}\n```")])
            .then_text("Oslo 12°C, Rome 12°C."),
    );
    let agent = Agent::from_shared(model.clone(), tools()).unwrap();
    let result = agent.run("Weather?").await.unwrap();
    assert_eq!(result.stop, StopReason::Answered);
    assert_eq!(result.answer, "Oslo 12°C, Rome 12°C.");
    let messages = &result.transcript.messages;
    assert_eq!(messages.len(), 6);
    assert_eq!(
        results_of(&messages[2]),
        [
            ("a".into(), Outcome::Success),
            ("b".into(), Outcome::InvalidArguments),
            ("c".into(), Outcome::NotFound),
            ("d".into(), Outcome::Failed),
        ]
    );
    assert_eq!(results_of(&messages[4]), [("e".into(), Outcome::Success)]);
    // What the model was sent: the tools every time, and each turn's results.
    let seen = model.seen();
    assert_eq!(seen.len(), 3);
    assert_eq!(
        seen[0].tools.as_deref(),
        Some(&["get_weather".to_owned(), "nap".into(), "final_answer".into()][..])
    );
    assert_eq!(seen[0].messages, [Message::user("Weather?")]);
    assert_eq!(seen[1].messages.len(), 3);
    assert_eq!(seen[2].messages, messages[..5]);
    assert_eq!(result.usage.len(), 3);
}

#[tokio::test]
async fn max_turns_ends_with_a_request_without_tools() {
    let model = Arc::new(
        ScriptedModel::new()
            .then_calls([call("1", "nap", r#"{"ms":1}"#)])
            .then_calls([call("2", "nap", r#"{"ms":1}"#)])
            .then_calls([call("3", "nap", r#"{"ms":1}"#)])
            .then_text("I napped twice."),
    );
    let agent = Agent::from_shared(model.clone(), tools())
        .unwrap()
        .with_limits(RunLimits::default().with_max_turns(2));
    let result = agent.run("Rest").await.unwrap();
    assert_eq!(result.stop, StopReason::MaxTurns { turns: 2 });
    // Two turns with tools, then the tool-less one; the third call was never asked for.
    let seen = model.seen();
    assert_eq!(seen.iter().map(|s| s.tools.is_some()).collect::<Vec<_>>(), [true, true, false]);
    assert_eq!(result.answer, "");
    assert_eq!(model.remaining(), 1);
    // The last assistant message has no unanswered calls.
    assert!(result.transcript.pending_calls().is_empty());
}

#[tokio::test]
async fn the_budget_stops_a_run_and_a_bigger_one_continues_it() {
    let model = Arc::new(
        ScriptedModel::new()
            .then_calls([call("1", "nap", r#"{"ms":1}"#), call("2", "nap", r#"{"ms":1}"#)])
            .then_calls([call("3", "nap", r#"{"ms":1}"#)])
            .then_text("done"),
    );
    let tight = Agent::from_shared(model.clone(), tools())
        .unwrap()
        .with_limits(RunLimits::default().with_max_tool_calls(2));
    let stopped = tight.run("Rest").await.unwrap();
    assert!(matches!(
        stopped.stop,
        StopReason::Budget(toolcall_agent::LimitExceeded::ToolCalls { limit: 2, requested: 3 })
    ));
    assert_eq!(stopped.transcript.pending_calls().len(), 1);
    // Saved, loaded, continued: the pending call runs first.
    let saved = serde_json::to_string(&stopped.transcript).unwrap();
    let loaded: Transcript = serde_json::from_str(&saved).unwrap();
    let roomy = Agent::from_shared(model.clone(), tools()).unwrap();
    let continued = roomy.run(loaded).await.unwrap();
    assert_eq!((continued.answer.as_str(), &continued.stop), ("done", &StopReason::Answered));
    assert_eq!(results_of(&continued.transcript.messages[4]), [("3".into(), Outcome::Success)]);
}

#[tokio::test]
async fn retries_of_one_tool_are_bounded() {
    let bad = || [call("x", "get_weather", "{}")];
    let model = ScriptedModel::new().then_calls(bad()).then_calls(bad()).then_text("never");
    let agent =
        Agent::new(model, tools()).unwrap().with_limits(RunLimits::default().with_max_retries_per_tool(1));
    let result = agent.run("?").await.unwrap();
    assert!(
        matches!(result.stop, StopReason::Budget(toolcall_agent::LimitExceeded::Retries { .. })),
        "{:?}",
        result.stop
    );
}

#[tokio::test]
async fn an_ending_tool_gives_the_answer() {
    let model = ScriptedModel::new()
        .then_calls([call("1", "final_answer", r#"{"answer":"42"}"#)])
        .then_text("never asked");
    let agent = Agent::new(model, tools()).unwrap().with_end_tool("final_answer");
    let result = agent.run("?").await.unwrap();
    assert_eq!(
        (result.answer.as_str(), &result.stop),
        ("42", &StopReason::EndTool { tool: "final_answer".into() })
    );
}

#[tokio::test]
async fn a_slow_tool_times_out_and_the_run_goes_on() {
    let model = ScriptedModel::new().then_calls([call("1", "nap", r#"{"ms":5000}"#)]).then_text("too slow");
    let tools = tools().with_options(TurnOptions::new().with_default_timeout(Duration::from_millis(20)));
    let agent = Agent::new(model, tools).unwrap();
    let result = agent.run("?").await.unwrap();
    assert_eq!(results_of(&result.transcript.messages[2]), [("1".into(), Outcome::TimedOut)]);
    assert_eq!(result.answer, "too slow");
}

#[tokio::test]
async fn cancelling_the_context_stops_the_run_mid_turn() {
    let ctx = ToolContext::new();
    let token = ctx.cancellation().clone();
    let model = ScriptedModel::new().then_calls([call("1", "nap", r#"{"ms":60000}"#)]).then_text("never");
    let agent = Agent::new(model, tools()).unwrap().with_context(ctx);
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    });
    let result = tokio::time::timeout(Duration::from_secs(10), agent.run("?")).await.unwrap().unwrap();
    canceller.await.unwrap();
    assert_eq!(result.stop, StopReason::Cancelled);
    assert_eq!(results_of(&result.transcript.messages[2]), [("1".into(), Outcome::Cancelled)]);
}

#[tokio::test]
async fn a_model_error_keeps_the_transcript() {
    let model = ScriptedModel::new().then_calls([call("1", "nap", r#"{"ms":1}"#)]);
    let agent = Agent::new(model, tools()).unwrap();
    let err = agent.run("?").await.unwrap_err();
    assert!(err.to_string().contains("no answer left"), "{err}");
    assert_eq!(err.transcript.messages.len(), 3);
}

#[tokio::test]
async fn streaming_yields_calls_results_and_the_end_last() {
    let model =
        ScriptedModel::new().then_calls([call("1", "get_weather", r#"{"city":"Oslo"}"#)]).then_text("12°C.");
    let agent = Agent::new(model, tools()).unwrap();
    let events: Vec<AgentEvent> = agent.stream("Oslo?").collect().await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| match event {
            AgentEvent::TextDelta(_) => "text",
            AgentEvent::CallDelta { .. } => "call_delta",
            AgentEvent::ToolCall(_) => "call",
            AgentEvent::ToolResult(_) => "result",
            AgentEvent::Usage(_) => "usage",
            AgentEvent::Finished(_) => "finished",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["usage", "call", "result", "text", "usage", "finished"]);
    match events.last() {
        Some(AgentEvent::Finished(Ok(result))) => assert_eq!(result.answer, "12°C."),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn argument_repairs_are_bounded_by_the_run_across_turns() {
    // A repair that turns `town` into `city`, as a small model might.
    let town_to_city = || {
        toolcall_core::layers::RepairArguments::new(|repair| {
            let fixed = repair.arguments.replace("town", "city");
            Box::pin(async move { Some(fixed) })
        })
    };
    let model = Arc::new(
        ScriptedModel::new()
            .then_calls([call("a", "get_weather", r#"{"town":"Oslo"}"#)])
            .then_calls([call("b", "get_weather", r#"{"town":"Rome"}"#)])
            .then_text("done"),
    );
    let agent = Agent::from_shared(model.clone(), tools().with_layer(town_to_city()))
        .unwrap()
        .with_limits(RunLimits::default().with_max_repairs(1));
    let result = agent.run("Weather?").await.unwrap();
    let outcomes: Vec<_> =
        [2, 4].iter().flat_map(|at| results_of(&result.transcript.messages[*at])).collect();
    // The first turn's call was repaired; the run had no repair left for the second.
    assert_eq!(outcomes, [("a".into(), Outcome::Success), ("b".into(), Outcome::InvalidArguments)]);
    let Message::Tool { results } = &result.transcript.messages[4] else { panic!() };
    assert!(results[0].content.contains("missing field `city`"), "{}", results[0].content);
    // A fresh run has its own budget.
    let model =
        ScriptedModel::new().then_calls([call("c", "get_weather", r#"{"town":"Oslo"}"#)]).then_text("ok");
    let agent = Agent::new(model, tools().with_layer(town_to_city()))
        .unwrap()
        .with_limits(RunLimits::default().with_max_repairs(1));
    let result = agent.run("Weather?").await.unwrap();
    assert_eq!(results_of(&result.transcript.messages[2]), [("c".into(), Outcome::Success)]);
}

/// Whether the vault was unlocked in this run: shared by the tools and the
/// prepare step through the agent's context.
#[derive(Clone, Default)]
struct Unlocked(Arc<std::sync::atomic::AtomicBool>);

impl Unlocked {
    fn of(ctx: &ToolContext) -> bool {
        ctx.get::<Unlocked>().is_some_and(|unlocked| unlocked.0.load(std::sync::atomic::Ordering::SeqCst))
    }
}

/// Unlocks the vault.
#[tool(args, crate = "toolcall_core")]
async fn unlock(ctx: &ToolContext) -> Result<String, ToolError> {
    let unlocked = ctx.get::<Unlocked>().ok_or_else(|| ToolError::failed("there is no vault"))?;
    unlocked.0.store(true, std::sync::atomic::Ordering::SeqCst);
    Ok("unlocked".into())
}

/// Opens the unlocked vault.
#[tool(args, crate = "toolcall_core")]
async fn open_vault(_ctx: &ToolContext) -> Result<String, ToolError> {
    Ok("gold".into())
}

#[tokio::test]
async fn the_prepare_step_decides_what_the_model_sees_each_turn() {
    let tools = Toolset::builder().add(GetWeather).add(Unlock).add(OpenVault).build().unwrap().with_prepare(
        |ctx, tool| match tool.spec().name() {
            "unlock" => !Unlocked::of(ctx),
            "open_vault" => Unlocked::of(ctx),
            _ => true,
        },
    );
    let model = Arc::new(
        ScriptedModel::new()
            // The vault is hidden this turn: that call is answered as unknown.
            .then_calls([call("a", "open_vault", "{}"), call("b", "unlock", "{}")])
            .then_calls([call("c", "open_vault", "{}"), call("d", "unlock", "{}")])
            .then_text("Gold."),
    );
    let agent = Agent::from_shared(model.clone(), tools)
        .unwrap()
        .with_context(ToolContext::new().with_extension(Unlocked::default()));
    let result = agent.run("Open the vault").await.unwrap();
    assert_eq!(result.stop, StopReason::Answered);

    let seen: Vec<_> = model.seen().into_iter().map(|seen| seen.tools.unwrap_or_default()).collect();
    assert_eq!(
        seen,
        [
            vec!["get_weather".to_owned(), "unlock".into()],
            vec!["get_weather".to_owned(), "open_vault".into()],
            vec!["get_weather".to_owned(), "open_vault".into()],
        ]
    );
    let messages = &result.transcript.messages;
    assert_eq!(results_of(&messages[2]), [("a".into(), Outcome::NotFound), ("b".into(), Outcome::Success)]);
    let Message::Tool { results } = &messages[2] else { panic!() };
    assert!(
        results[0].content.contains("the available tools are: get_weather, unlock"),
        "{}",
        results[0].content
    );
    // Unlocked, the vault opens and `unlock` is the hidden one.
    assert_eq!(results_of(&messages[4]), [("c".into(), Outcome::Success), ("d".into(), Outcome::NotFound)]);
    // The agent's toolset itself is whole.
    assert_eq!(agent.toolset().len(), 3);
}
