//! A typed answer, for every client, plain and streamed: given natively
//! (each provider's structured-output field, asserted on the requests the
//! mock received) or through the answer's tool; a bad answer goes back to
//! the model with the field named and spends the retry budget; a schema a
//! dialect cannot express is refused when the agent is built.

use serde_json::{Value, json};
use toolcall_agent::ApiKey;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{
    Agent, AnswerMode, AnswerType, Gemini, LimitExceeded, Model, OpenAiChat, RunLimits, StopReason,
};
use toolcall_core::{ToolCall, Toolset};
use toolcall_provider::Dialect;

use crate::scenarios::{Item, ProviderMock, Sent, Turn, bodies, client, mock, received, streamed_text};
use crate::support::openai::{run, tools};

/// The answer the runs ask for.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: f64,
}

/// Where each provider's request carries a native answer's schema.
pub(crate) trait AnswerMock: ProviderMock {
    /// The schema the body asks the answer to follow, if it asks.
    fn native(body: &Value) -> Option<Value>;
}

impl AnswerMock for crate::openai_chat::Mock {
    /// `response_format` (<https://platform.openai.com/docs/guides/structured-outputs>).
    fn native(body: &Value) -> Option<Value> {
        let format = body.get("response_format")?;
        assert_eq!(format["type"], "json_schema");
        assert_eq!(
            (&format["json_schema"]["name"], &format["json_schema"]["strict"]),
            (&json!("final_answer"), &json!(true))
        );
        Some(format["json_schema"]["schema"].clone())
    }
}

impl AnswerMock for crate::openai_responses::Mock {
    /// `text.format` (<https://platform.openai.com/docs/api-reference/responses/create#responses-create-text>).
    fn native(body: &Value) -> Option<Value> {
        let format = body.pointer("/text/format")?;
        assert_eq!(
            (&format["type"], &format["name"], &format["strict"]),
            (&json!("json_schema"), &json!("final_answer"), &json!(true))
        );
        Some(format["schema"].clone())
    }
}

impl AnswerMock for crate::anthropic::Mock {
    /// `output_config.format` (<https://platform.claude.com/docs/en/build-with-claude/structured-outputs>).
    fn native(body: &Value) -> Option<Value> {
        let format = body.pointer("/output_config/format")?;
        assert_eq!(format["type"], "json_schema");
        Some(format["schema"].clone())
    }
}

impl AnswerMock for crate::gemini::Mock {
    /// `generationConfig.responseSchema` (<https://ai.google.dev/gemini-api/docs/structured-output>).
    fn native(body: &Value) -> Option<Value> {
        let config = body.get("generationConfig")?;
        let schema = config.get("responseSchema")?;
        assert_eq!(config["responseMimeType"], "application/json");
        Some(schema.clone())
    }
}

fn answer(mode: AnswerMode) -> AnswerType {
    AnswerType::of::<Forecast>().with_mode(mode).with_description("The forecast.")
}

fn agent<P: ProviderMock>(server: &wiremock::MockServer, mode: AnswerMode) -> Agent {
    let agent = Agent::new(client::<P>(server, 1), tools()).unwrap().with_instructions("Be brief.");
    agent.with_answer_type(answer(mode)).expect("the schema fits every dialect")
}

/// A tool call, an answer missing a field, then a good one: every request
/// carries the schema in the provider's field (in its structured-output
/// form: strict for OpenAI and Anthropic), the bad answer goes back with
/// the field named, and the run ends with the typed value.
pub(crate) async fn a_typed_answer_natively<P: AnswerMock>(streamed: bool) {
    let call = Turn::calls(&[("call_a", "get_weather", r#"{"city":"Oslo"}"#)]);
    let bad = Turn::text(r#"{"city": "Oslo"}"#);
    let good = Turn::text(r#"{"city": "Oslo", "celsius": 12.5}"#);
    let server =
        mock(vec![P::reply(&call, streamed), P::reply(&bad, streamed), P::reply(&good, streamed)]).await;
    let (result, events) =
        run(&agent::<P>(&server, AnswerMode::Native), "Forecast for Oslo?", streamed).await;
    let result = result.expect("the run answers");
    assert_eq!(result.stop, StopReason::Answered);
    assert_eq!(result.typed_answer, Some(json!({"city": "Oslo", "celsius": 12.5})));
    assert_eq!(result.answer, r#"{"city":"Oslo","celsius":12.5}"#);
    if streamed {
        assert_eq!(streamed_text(&events), format!("{}{}", bad.text, good.text));
    }

    let requests = received::<P>(&server, streamed).await;
    let bodies = bodies(&requests);
    assert_eq!(bodies.len(), 3);
    let dialect = P::client("http://unused", None, 1).dialect().expect("a client has a dialect");
    let schema = answer(AnswerMode::Native).schema(dialect).unwrap();
    assert_eq!(schema["required"], json!(["city", "celsius"]));
    if dialect != Dialect::Gemini {
        assert_eq!(schema["additionalProperties"], json!(false), "the strict form");
    }
    for body in &bodies {
        assert_eq!(P::native(body), Some(schema.clone()), "{body}");
    }
    let sent: Vec<Sent> = bodies.iter().map(P::read).collect();
    assert_eq!(sent[0].tools, ["get_weather", "get_time"], "no answer tool");
    let last = &sent[2].messages;
    assert_eq!(last.len(), 5, "{last:?}");
    assert_eq!(last[3], Item::Assistant { text: bad.text.clone(), calls: Vec::new() });
    let Item::User(told) = &last[4] else { panic!("{:?}", last[4]) };
    assert!(told.contains("celsius") && told.contains("JSON schema"), "{told}");
}

/// The answer as a tool: offered after the other tools, with no native
/// field; a call with bad arguments is answered as any such call, and the
/// good one ends the run with the typed value.
pub(crate) async fn a_typed_answer_as_a_tool<P: AnswerMock>(streamed: bool) {
    let bad = Turn::calls(&[("call_a", "final_answer", r#"{"city": "Oslo", "celsius": "warm"}"#)]);
    let good = Turn::calls(&[("call_b", "final_answer", r#"{"city": "Oslo", "celsius": 12.5}"#)]);
    let server = mock(vec![P::reply(&bad, streamed), P::reply(&good, streamed)]).await;
    let (result, _) = run(&agent::<P>(&server, AnswerMode::Tool), "Forecast for Oslo?", streamed).await;
    let result = result.expect("the run answers");
    assert_eq!(result.stop, StopReason::Answered);
    assert_eq!(result.typed_answer, Some(json!({"city": "Oslo", "celsius": 12.5})));

    let bodies = bodies(&received::<P>(&server, streamed).await);
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_eq!(P::native(body), None, "{body}");
    }
    let sent: Vec<Sent> = bodies.iter().map(P::read).collect();
    assert_eq!(sent[0].tools, ["get_weather", "get_time", "final_answer"]);
    let Item::Results(results) = &sent[1].messages[2] else { panic!("{:?}", sent[1].messages) };
    assert!(results[0].content.contains("celsius"), "{results:?}");
}

/// Answers that never read spend the retry budget of the answer's name.
pub(crate) async fn bad_answers_spend_the_retry_budget<P: AnswerMock>(streamed: bool) {
    let bad = Turn::text("It is warm in Oslo.");
    let server = mock(vec![P::reply(&bad, streamed), P::reply(&bad, streamed)]).await;
    let agent = agent::<P>(&server, AnswerMode::Native)
        .with_limits(RunLimits::default().with_max_retries_per_tool(1));
    let (result, _) = run(&agent, "Forecast for Oslo?", streamed).await;
    let result = result.expect("the run stops");
    let limit = LimitExceeded::Retries { tool: "final_answer".into(), limit: 1, count: 2 };
    assert_eq!(result.stop, StopReason::Budget(limit));
    assert_eq!(result.typed_answer, None);
    assert_eq!(received::<P>(&server, streamed).await.len(), 2);
}

crate::support::per_client!(
    [a_typed_answer_natively, a_typed_answer_as_a_tool, bad_answers_spend_the_retry_budget]
    openai_chat: crate::openai_chat::Mock;
    openai_responses: crate::openai_responses::Mock;
    anthropic: crate::anthropic::Mock;
    gemini: crate::gemini::Mock;
);

/// `Auto` is native where the model constrains text next to tools: the
/// built-in clients, but Gemini before 3; a tool elsewhere.
#[test]
fn auto_picks_native_where_the_model_has_it() {
    let key = || Some(ApiKey::new("k"));
    let toolset = |agent: &Agent| agent.toolset().names().map(str::to_owned).collect::<Vec<_>>();
    let with =
        |model: Box<dyn Fn() -> Agent>| model().with_answer_type(AnswerType::of::<Forecast>()).unwrap();
    for (agent, native) in [
        (
            with(Box::new(move || {
                Agent::new(OpenAiChat::from_values("gpt-5", key(), None), tools()).unwrap()
            })),
            true,
        ),
        (
            with(Box::new(move || {
                Agent::new(Gemini::from_values("gemini-3-pro-preview", key(), None), tools()).unwrap()
            })),
            true,
        ),
        (
            with(Box::new(move || {
                Agent::new(Gemini::from_values("gemini-2.5-flash", key(), None), tools()).unwrap()
            })),
            false,
        ),
        (with(Box::new(|| Agent::new(ScriptedModel::new(), tools()).unwrap())), false),
    ] {
        let names = toolset(&agent);
        assert_eq!(names.contains(&"final_answer".to_owned()), !native, "{agent:?}: {names:?}");
    }
}

/// A field of any JSON value has no strict form: refused for OpenAI as an
/// answer natively, naming the keyword, but fine as a non-strict tool.
#[test]
fn a_schema_the_dialect_cannot_express_is_refused_when_built() {
    #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    struct Loose {
        anything: Value,
    }
    let model = || OpenAiChat::from_values("gpt-5", Some(ApiKey::new("k")), None);
    let agent = Agent::new(model(), Toolset::new()).unwrap();
    let refused = agent.with_answer_type(AnswerType::of::<Loose>()).unwrap_err();
    assert_eq!(refused.tool.as_deref(), Some("final_answer"));
    assert!(refused.to_string().contains("openai-strict"), "{refused}");
    let agent = Agent::new(model(), Toolset::new()).unwrap();
    assert!(agent.with_answer_type(AnswerType::of::<Loose>().with_mode(AnswerMode::Tool)).is_ok());

    #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    struct Tree {
        children: Vec<Tree>,
    }
    let gemini =
        Agent::new(Gemini::from_values("gemini-3-pro-preview", Some(ApiKey::new("k")), None), Toolset::new());
    let refused = gemini.unwrap().with_answer_type(AnswerType::of::<Tree>()).unwrap_err();
    assert_eq!(refused.keyword, "$ref", "{refused}");
}

/// The answer type can change: the old answer tool goes, the new one is
/// the only one; a run ends with the last type's value.
#[tokio::test]
async fn a_new_answer_type_replaces_the_old_one() {
    #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    struct Yes {
        yes: bool,
    }
    let model = ScriptedModel::new().then_calls([ToolCall::new("c1", "verdict", r#"{"yes": true}"#)]);
    let agent = Agent::new(model, tools()).unwrap();
    let agent = agent.with_answer_type(AnswerType::of::<Forecast>()).unwrap();
    let agent = agent.with_answer_type(AnswerType::of::<Yes>().with_name("verdict")).unwrap();
    let names: Vec<&str> = agent.toolset().names().collect();
    assert_eq!(names, ["get_weather", "get_time", "verdict"]);
    let result = agent.run("Yes?").await.unwrap();
    assert_eq!((result.stop, result.typed_answer), (StopReason::Answered, Some(json!({"yes": true}))));
}

/// `run_as` reads the answer into the type; the last, tool-less request
/// of a run out of turns still gives one when its text reads.
#[tokio::test]
async fn run_as_reads_the_type_even_on_the_last_turn() {
    let model = ScriptedModel::new()
        .then_calls([ToolCall::new("c1", "get_weather", r#"{"city":"Oslo"}"#)])
        .then_text(r#"{"city": "Oslo", "celsius": 12}"#);
    let agent = Agent::new(model, tools()).unwrap().with_limits(RunLimits::default().with_max_turns(1));
    let typed = agent.run_as::<Forecast>("Forecast?").await.unwrap();
    assert_eq!(typed.run.stop, StopReason::MaxTurns { turns: 1 });
    assert_eq!(typed.answer, Some(Forecast { city: "Oslo".into(), celsius: 12.0 }));
}
