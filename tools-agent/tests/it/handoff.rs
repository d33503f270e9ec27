//! Handoffs (`Agent::with_handoff`): the model calls `transfer_to_{name}`
//! and the run goes on with that agent, its instructions, tools and model,
//! the conversation as the handoff's history says; a paused run resumes
//! with the agent it paused in; the result names the agent that answered.

use std::sync::Arc;

use futures::StreamExt;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{
    Agent, AgentEvent, Handoff, HandoffError, HandoffHistory, Message, ModelError, ModelName, ModelResponse,
    RunLimits, RunResult, RunState, StopReason,
};
use toolcall_core::{ToolCall, ToolContext, ToolError, Toolset};
use toolcall_macros::tool;

/// Look an order up.
#[tool(args, read_only, crate = "toolcall_core")]
async fn find_order(_ctx: &ToolContext, order: String) -> Result<String, ToolError> {
    Ok(format!("order {order}: 2 books, paid"))
}

/// Refund an order.
#[tool(args, needs_approval, crate = "toolcall_core")]
async fn refund(_ctx: &ToolContext, order: String) -> Result<String, ToolError> {
    Ok(format!("refunded {order}"))
}

/// A model whose one answer is `text` and `calls`.
fn text_and_calls(text: &str, calls: impl IntoIterator<Item = ToolCall>) -> ScriptedModel {
    ScriptedModel::new().then(Ok(ModelResponse::new(text, calls)))
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

/// The billing agent over `model`, with a tool to look orders up and one
/// to refund them (held for approval).
fn billing(model: &Arc<ScriptedModel>) -> Agent {
    let tools = Toolset::builder().add(FindOrder).add(Refund).build().unwrap();
    Agent::from_shared(model.clone(), tools)
        .unwrap()
        .with_name("billing")
        .with_instructions("You handle refunds.")
}

/// The triage agent over `model`, handing off to `to`.
fn triage(model: &Arc<ScriptedModel>, to: Handoff) -> Agent {
    Agent::from_shared(model.clone(), Toolset::new())
        .unwrap()
        .with_name("triage")
        .with_instructions("You route questions.")
        .with_handoff(to)
        .unwrap()
}

fn tool_results(result: &RunResult) -> Vec<(String, String)> {
    let tool_messages = result.transcript.messages.iter().filter_map(|message| match message {
        Message::Tool { results } => Some(results),
        _ => None,
    });
    tool_messages.flatten().map(|result| (result.name.to_string(), result.content.clone())).collect()
}

#[tokio::test]
async fn the_receiving_agent_answers_with_its_instructions_tools_and_model() {
    let first =
        Arc::new(text_and_calls("Let me pass you to billing.", [call("c1", "transfer_to_billing", "{}")]));
    let second = Arc::new(
        ScriptedModel::new()
            .then_calls([call("b1", "find_order", r#"{"order":"A7"}"#)])
            .then_text("Order A7 is paid; I can refund it."),
    );
    let agent = triage(&first, Handoff::to(&billing(&second)).with_description("Refunds and invoices."));

    // The triage model is offered the handoff as a tool, described.
    let spec = agent.toolset().get("transfer_to_billing").unwrap().spec().clone();
    assert_eq!(spec.description(), "Hand the conversation to the agent `billing`: Refunds and invoices.");

    let result = agent.run("Refund order A7, please.").await.unwrap();
    assert_eq!(result.answer, "Order A7 is paid; I can refund it.");
    assert_eq!(result.stop, StopReason::Answered);
    assert_eq!(result.agent.as_deref(), Some("billing"));
    assert_eq!(result.transcript.instructions.as_deref(), Some("You handle refunds."));
    assert_eq!(
        tool_results(&result),
        [
            ("transfer_to_billing".into(), "The conversation was handed to the agent `billing`.".into()),
            ("find_order".into(), "order A7: 2 books, paid".into()),
        ]
    );
    // One request of triage's, two of billing's, each counted.
    assert_eq!(result.usage.len(), 3);
    assert_eq!(result.models.len(), 3);

    let (asked_first, asked_second) = (first.seen(), second.seen());
    assert_eq!(asked_first.len(), 1);
    assert_eq!(asked_first[0].tools.as_deref(), Some(&["transfer_to_billing".to_owned()][..]));
    assert_eq!(asked_second.len(), 2);
    // Billing is offered its own tools, and sees the whole conversation:
    // the user, triage's call and its result.
    assert_eq!(asked_second[0].tools.as_deref(), Some(&["find_order".to_owned(), "refund".to_owned()][..]));
    assert_eq!(asked_second[0].messages.len(), 3);
    assert!(matches!(&asked_second[0].messages[0], Message::User { .. }));
    assert!(matches!(&asked_second[0].messages[2], Message::Tool { .. }));
}

#[tokio::test]
async fn user_and_last_answer_sends_a_summary_in_place_of_the_calls_before() {
    let second = Arc::new(ScriptedModel::new().then_text("Refund started."));
    let handoff = Handoff::to(&billing(&second)).with_history(HandoffHistory::UserAndLastAnswer);
    // Triage first answers once, then, asked again, hands off.
    let hand_off = ModelResponse::new("Passing you on.", [call("t1", "transfer_to_billing", "{}")]);
    let first = Arc::new(ScriptedModel::new().then_text("Which order?").then(Ok(hand_off)));
    let agent = triage(&first, handoff);
    let answered = agent.run("I want a refund.").await.unwrap();
    let mut transcript = answered.transcript;
    transcript.push(Message::user("Order A7."));
    let result = agent.run(transcript).await.unwrap();
    assert_eq!((result.answer.as_str(), result.agent.as_deref()), ("Refund started.", Some("billing")));

    // Billing was sent one message: the conversation as the user's words
    // and the last answer, marked as a summary.
    let seen = second.seen();
    assert_eq!(seen.len(), 1);
    let [Message::Summary { text, covers }] = &seen[0].messages[..] else { panic!("{:?}", seen[0].messages) };
    assert_eq!(text, "User: I want a refund.\n\nUser: Order A7.\n\nAssistant: Passing you on.");
    assert_eq!(*covers, 5);
    // The transcript keeps everything, the summary after it.
    assert_eq!(result.transcript.messages.len(), 7);
    assert!(matches!(result.transcript.messages[5], Message::Summary { covers: 5, .. }));
}

#[tokio::test]
async fn the_first_handoff_of_a_turn_is_taken_and_the_turns_other_calls_run() {
    let second = Arc::new(ScriptedModel::new().then_text("Billing here."));
    let third = Arc::new(ScriptedModel::new().then_text("unused"));
    let shipping = Agent::from_shared(third.clone(), Toolset::new()).unwrap().with_name("shipping");
    let first = Arc::new(ScriptedModel::new().then_calls([
        call("c1", "transfer_to_billing", "{}"),
        call("c2", "transfer_to_shipping", "{}"),
        call("c3", "find_order", r#"{"order":"A7"}"#),
    ]));
    let tools = Toolset::builder().add(FindOrder).build().unwrap();
    let agent = Agent::from_shared(first.clone(), tools)
        .unwrap()
        .with_handoff(Handoff::to(&billing(&second)))
        .unwrap()
        .with_handoff(Handoff::to(&shipping))
        .unwrap();
    let result = agent.run("Where is A7, and refund it.").await.unwrap();
    assert_eq!(result.agent.as_deref(), Some("billing"));
    assert_eq!(result.answer, "Billing here.");
    assert_eq!(
        tool_results(&result),
        [
            ("transfer_to_billing".into(), "The conversation was handed to the agent `billing`.".into()),
            (
                "transfer_to_shipping".into(),
                "Not handed to `shipping`: the conversation went to `billing`, called first in this turn."
                    .into()
            ),
            ("find_order".into(), "order A7: 2 books, paid".into()),
        ]
    );
    assert!(third.seen().is_empty());
}

#[tokio::test]
async fn a_run_paused_after_a_handoff_resumes_with_the_agent_it_paused_in() {
    let first = Arc::new(ScriptedModel::new().then_calls([call("c1", "transfer_to_billing", "{}")]));
    let second = Arc::new(ScriptedModel::new().then_calls([call("b1", "refund", r#"{"order":"A7"}"#)]));
    let agent = triage(&first, Handoff::to(&billing(&second)));
    let paused = agent.run("Refund A7.").await.unwrap();
    assert_eq!(paused.agent.as_deref(), Some("billing"));
    let StopReason::Paused(state) = paused.stop else { panic!("{:?}", paused.stop) };
    assert_eq!(state.pending()[0].call.name, "refund");

    // Saved, loaded in another process with fresh agents and models.
    let mut state: RunState = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    state.approve("b1").unwrap();
    let (first, second) =
        (Arc::new(ScriptedModel::new()), Arc::new(ScriptedModel::new().then_text("Refunded.")));
    let billing_again = billing(&second);
    let agent = triage(&first, Handoff::to(&billing_again));
    let result = agent.run(state.clone()).await.unwrap();
    assert_eq!((result.answer.as_str(), result.agent.as_deref()), ("Refunded.", Some("billing")));
    assert!(tool_results(&result).contains(&("refund".into(), "refunded A7".into())));
    assert!(first.seen().is_empty(), "triage's model was asked again");
    assert_eq!(second.seen().len(), 1);

    // The receiving agent alone does not know the way there.
    let refused = billing_again.run(state).await.unwrap_err();
    assert_eq!(refused.error, ModelError::UnknownAgent { path: vec!["billing".into()] });
    assert_eq!(
        refused.to_string(),
        "the run stopped: the paused run was handed to `billing`, which this agent does not hand off to: resume \
         it with the agent it started with"
    );
}

#[tokio::test]
async fn the_stream_says_when_the_conversation_changes_hands() {
    let first = Arc::new(ScriptedModel::new().then_calls([call("c1", "transfer_to_billing", "{}")]));
    let second = Arc::new(ScriptedModel::new().then_text("Billing here."));
    let agent = triage(&first, Handoff::to(&billing(&second)));
    let events: Vec<AgentEvent> = agent.stream("Refund A7.").collect().await;
    let at = events
        .iter()
        .position(|event| {
            matches!(event, AgentEvent::Handoff { from, to } if from.as_deref() == Some("triage") && to == "billing")
        })
        .unwrap();
    let text_at = events.iter().position(|event| matches!(event, AgentEvent::TextDelta(_))).unwrap();
    let result_at = events.iter().position(|event| matches!(event, AgentEvent::ToolResult(_))).unwrap();
    assert!(result_at < at && at < text_at, "{events:?}");
    let Some(AgentEvent::Finished(Ok(result))) = events.last() else { panic!("{events:?}") };
    assert_eq!(result.agent.as_deref(), Some("billing"));
}

#[tokio::test]
async fn the_run_keeps_counting_under_the_receiving_agents_limits() {
    let first =
        Arc::new(
            ScriptedModel::new()
                .then_calls([call("c1", "find_order", r#"{"order":"A1"}"#)])
                .then_calls([call("c2", "transfer_to_billing", "{}")]),
        );
    let second = Arc::new(
        ScriptedModel::new()
            .then_calls([call("b1", "find_order", r#"{"order":"A2"}"#)])
            .then_text("Out of turns."),
    );
    let receiving = billing(&second).with_limits(RunLimits::default().with_max_turns(3));
    let tools = Toolset::builder().add(FindOrder).build().unwrap();
    let agent =
        Agent::from_shared(first.clone(), tools).unwrap().with_handoff(Handoff::to(&receiving)).unwrap();
    let result = agent.run("Orders?").await.unwrap();
    // Two turns with tools before, one after: billing's third is its last,
    // asked without tools.
    assert_eq!(result.stop, StopReason::MaxTurns { turns: 3 });
    assert_eq!(second.seen()[1].tools, None);
    assert_eq!(result.models, vec![ModelName::new("scripted", "scripted"); 4]);
}

#[test]
fn a_handoff_needs_a_name_and_a_free_tool_name() {
    let model = || ScriptedModel::new();
    let unnamed = Agent::new(model(), Toolset::new()).unwrap();
    let refused =
        Agent::new(model(), Toolset::new()).unwrap().with_handoff(Handoff::to(&unnamed)).unwrap_err();
    assert!(matches!(refused, HandoffError::Unnamed));
    assert_eq!(
        refused.to_string(),
        "the agent to hand off to has no name: give it one with `Agent::with_name`"
    );

    let named = unnamed.with_name("billing");
    let twice = Agent::new(model(), Toolset::new())
        .unwrap()
        .with_handoff(Handoff::to(&named))
        .unwrap()
        .with_handoff(Handoff::to(&named))
        .unwrap_err();
    assert!(matches!(twice, HandoffError::Toolset(_)), "{twice}");

    let spaced = named.clone().with_name("billing desk");
    let bad = Agent::new(model(), Toolset::new()).unwrap().with_handoff(Handoff::to(&spaced)).unwrap_err();
    assert!(matches!(bad, HandoffError::Toolset(_)), "{bad}");
}
