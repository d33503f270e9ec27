//! A [`FallbackModel`] over two clients, each against its own stand-in:
//! the first answers the error its provider documents for an outage, the
//! second answers. Written once over [`ProviderMock`] and run with each
//! client first (and another provider's second), plainly and streamed.
//!
//! The outages, as each provider documents them (the stand-ins' bodies):
//! OpenAI's 500 "The server had an error while processing your request"
//! and 503 "The engine is currently overloaded"
//! (<https://platform.openai.com/docs/guides/error-codes>), Anthropic's 529
//! `overloaded_error` (<https://docs.claude.com/en/api/errors>), Gemini's
//! 503 `UNAVAILABLE` (<https://ai.google.dev/gemini-api/docs/troubleshooting>).

use serde_json::{Value, json};
use toolcall_agent::{Agent, Anthropic, ApiKey, FallbackModel, Gemini, ModelError, ModelName, StopReason};
use wiremock::{MockServer, ResponseTemplate};

use crate::scenarios::{
    Item, ProviderMock, Turn, assert_every_call_answered, bodies, client, mock, received,
};
use crate::support::openai::{fast_retry, run, tools};

/// The first client's attempts: its own resend policy runs out (one
/// resend) before the chain falls over.
const ATTEMPTS: u32 = 2;

/// `P` first, `Q` next, each against its own stand-in.
fn chain<P: ProviderMock, Q: ProviderMock>(first: &MockServer, second: &MockServer) -> FallbackModel {
    FallbackModel::new(client::<P>(first, ATTEMPTS)).or(client::<Q>(second, 1))
}

fn agent(model: FallbackModel) -> Agent {
    Agent::new(model, tools()).expect("both dialects take the tools").with_instructions("Be brief.")
}

/// `P` is down for the whole run (`status`, after its resend): each turn
/// goes to `Q`, which calls a tool, then answers. Each request starts at
/// `P` again, which is sent `Q`'s turn in its own format; `Q` is sent the
/// same run in its. The run records `Q` for each request.
pub(crate) async fn an_outage_falls_over_to_the_next_model<P: ProviderMock, Q: ProviderMock>(
    streamed: bool,
    status: u16,
    message: &str,
) {
    let first = mock((0..2 * ATTEMPTS).map(|_| P::error(status, message)).collect()).await;
    let call = Turn::calls(&[("call_1", "get_weather", r#"{"city":"Oslo"}"#)]);
    let second =
        mock(vec![Q::reply(&call, streamed), Q::reply(&Turn::text("12°C in Oslo."), streamed)]).await;
    let (result, events) = run(&agent(chain::<P, Q>(&first, &second)), "Weather in Oslo?", streamed).await;
    let result = result.expect("the second model answers");
    assert_eq!((result.answer.as_str(), &result.stop), ("12°C in Oslo.", &StopReason::Answered));
    let answered = ModelName::of(&client::<Q>(&second, 1));
    assert_eq!(result.models, [answered.clone(), answered.clone()]);
    assert_eq!(result.usage, [Q::USAGE, Q::USAGE]);
    assert_eq!(result.usage_by_model(), [(answered, Q::USAGE + Q::USAGE)]);
    if streamed {
        assert_eq!(crate::scenarios::streamed_text(&events), "12°C in Oslo.");
    }

    // The first stand-in: each request twice (its resend policy), the
    // second time with the fallback's turn, as the first provider writes it.
    let tried = bodies(&received::<P>(&first, streamed).await);
    assert_eq!(tried.len(), 4);
    assert_eq!((&tried[0], &tried[2]), (&tried[1], &tried[3]), "each resend is the same request");
    let id = Q::call_id(0, "call_1", "get_weather");
    let asked = P::read(&tried[0]);
    assert_eq!(asked.system.as_deref(), Some("Be brief."));
    assert_eq!(asked.messages, [Item::User("Weather in Oslo?".into())]);
    let again = P::read(&tried[2]).messages;
    assert_eq!(again.len(), 3, "{again:?}");
    let Item::Assistant { calls, .. } = &again[1] else { panic!("{:?}", again[1]) };
    assert_eq!((calls[0].name.as_str(), &calls[0].args), ("get_weather", &json!({"city": "Oslo"})));
    assert_every_call_answered(&again);

    // The second stand-in: the same run, in its provider's format.
    let answered = bodies(&received::<Q>(&second, streamed).await);
    assert_eq!(answered.len(), 2);
    assert_eq!(Q::read(&answered[0]).messages, [Item::User("Weather in Oslo?".into())]);
    let sent = Q::read(&answered[1]);
    assert_eq!((sent.system.as_deref(), sent.tools.len()), (Some("Be brief."), 2));
    assert_eq!(sent.messages.len(), 3);
    assert_every_call_answered(&sent.messages);
    let Item::Results(results) = &sent.messages[2] else { panic!("{:?}", sent.messages[2]) };
    assert_eq!(results[0].content, "12°C in Oslo");
    assert!(result.transcript.messages[1].calls().all(|c| c.id == id.as_str()));
}

/// A 400 is the request's own fault: the same for every model, so it is
/// the error, as it is, and the second stand-in is never asked.
pub(crate) async fn a_refused_request_does_not_fall_over<P: ProviderMock, Q: ProviderMock>(streamed: bool) {
    let message = "Invalid value for 'temperature': expected a number.";
    let first = mock(vec![P::error(400, message)]).await;
    let second = mock(vec![Q::reply(&Turn::text("never"), streamed)]).await;
    let (result, _) = run(&agent(chain::<P, Q>(&first, &second)), "Hi", streamed).await;
    let error = result.expect_err("a 400 ends the request").error;
    assert_eq!(
        error,
        ModelError::Rejected { provider: P::NAME.into(), status: 400, message: message.into() }
    );
    assert_eq!(received::<P>(&first, streamed).await.len(), 1, "a 400 is not resent");
    assert_eq!(second.received_requests().await.map(|r| r.len()), Some(0));
}

/// Both down: the error lists each model's, in order.
pub(crate) async fn every_model_down_lists_each_error<P: ProviderMock, Q: ProviderMock>(streamed: bool) {
    let first = mock((0..ATTEMPTS).map(|_| P::error(500, "first down")).collect()).await;
    let second = mock(vec![Q::error(500, "second down")]).await;
    let (result, _) = run(&agent(chain::<P, Q>(&first, &second)), "Hi", streamed).await;
    let error = result.expect_err("no model answers").error;
    let ModelError::Fallback { failures } = &error else { panic!("{error:?}") };
    let names: Vec<&ModelName> = failures.iter().map(|(name, _)| name).collect();
    assert_eq!(names, [&ModelName::of(&client::<P>(&first, 1)), &ModelName::of(&client::<Q>(&second, 1))]);
    assert!(
        matches!(&failures[0].1, ModelError::Server { status: 500, attempts: ATTEMPTS, excerpt, .. } if excerpt == "first down"),
        "{failures:?}"
    );
    assert!(matches!(&failures[1].1, ModelError::Server { status: 500, attempts: 1, .. }), "{failures:?}");
    assert!(error.to_string().starts_with("2 models failed in turn: "), "{error}");
    assert_eq!(received::<P>(&first, streamed).await.len(), ATTEMPTS as usize);
    assert_eq!(received::<Q>(&second, streamed).await.len(), 1);
}

/// A stream falls over only before its first event: once text has been
/// passed on, a cut is the request's error, and the next model is not
/// asked.
pub(crate) async fn a_stream_cut_after_its_first_event_does_not_fall_over<
    P: ProviderMock,
    Q: ProviderMock,
>() {
    let cut = ResponseTemplate::new(200)
        .set_body_raw(P::stream(&Turn::text("It is noon."), true), "text/event-stream");
    let first = mock(vec![cut]).await;
    let second = mock(vec![Q::reply(&Turn::text("never"), true)]).await;
    let (result, events) = run(&agent(chain::<P, Q>(&first, &second)), "Time?", true).await;
    let error = result.expect_err("the stream was cut").error;
    assert!(
        matches!(error, ModelError::StreamEnded { ref provider, .. } if provider == P::NAME),
        "{error:?}"
    );
    assert_eq!(crate::scenarios::streamed_text(&events), "It is noon.");
    assert_eq!(received::<P>(&first, true).await.len(), 1);
    assert_eq!(second.received_requests().await.map(|r| r.len()), Some(0));
}

/// A refusal falls over only when asked ([`FallbackModel::with_refusals`]),
/// and in a stream only before anything of it was passed on: here the
/// refusal's text comes first, so a streamed refusal is the answer.
pub(crate) async fn a_refusal_falls_over_only_when_asked<P: ProviderMock, Q: ProviderMock>(streamed: bool) {
    let (edits, reason) = P::REFUSED;
    // The edits turn a turn with a call into a refused one (as in the scenarios).
    let turn = Turn {
        text: "I can't".into(),
        calls: vec![("call_1".into(), "get_weather".into(), r#"{"city":"Par"}"#.into())],
    };
    let mut refusal = if streamed { P::stream(&turn, false) } else { P::body(&turn).to_string() };
    for (from, to) in edits {
        assert!(refusal.contains(from), "{from} is not in {refusal}");
        refusal = refusal.replace(from, to);
    }
    let kind = if streamed { "text/event-stream" } else { "application/json" };
    let refused = || ResponseTemplate::new(200).set_body_raw(refusal.clone(), kind);
    for refusals in [false, true] {
        let first = mock(vec![refused()]).await;
        let second = mock(vec![Q::reply(&Turn::text("Here it is."), streamed)]).await;
        let model =
            FallbackModel::new(client::<P>(&first, 1)).or(client::<Q>(&second, 1)).with_refusals(refusals);
        let (result, _) = run(&agent(model), "Help?", streamed).await;
        let result = result.expect("an answer or a refusal");
        let asked = second.received_requests().await.map(|r| r.len());
        if refusals && !streamed {
            assert_eq!((result.answer.as_str(), &result.stop), ("Here it is.", &StopReason::Answered));
            assert_eq!(result.models, [ModelName::of(&client::<Q>(&second, 1))]);
            assert_eq!(asked, Some(1));
        } else {
            assert_eq!(result.stop, StopReason::Refused { reason: reason.into() }, "refusals: {refusals}");
            assert_eq!(result.models, [ModelName::of(&client::<P>(&first, 1))]);
            assert_eq!(asked, Some(0));
        }
        assert_eq!(received::<P>(&first, streamed).await.len(), 1);
    }
}

/// One test per first client, its outage and mode:
/// `fallback!(chat: Mock => Other, 500, "...")`.
macro_rules! fallback {
    ($($name:ident: $first:ty => $next:ty, $status:expr, $message:expr;)*) => {$(
        mod $name {
            use super::*;
            #[tokio::test]
            async fn an_outage_falls_over_plain() {
                an_outage_falls_over_to_the_next_model::<$first, $next>(false, $status, $message).await;
            }
            #[tokio::test]
            async fn an_outage_falls_over_streamed() {
                an_outage_falls_over_to_the_next_model::<$first, $next>(true, $status, $message).await;
            }
            #[tokio::test]
            async fn a_400_does_not_fall_over_plain() {
                a_refused_request_does_not_fall_over::<$first, $next>(false).await;
            }
            #[tokio::test]
            async fn a_400_does_not_fall_over_streamed() {
                a_refused_request_does_not_fall_over::<$first, $next>(true).await;
            }
            #[tokio::test]
            async fn every_model_down_plain() {
                every_model_down_lists_each_error::<$first, $next>(false).await;
            }
            #[tokio::test]
            async fn every_model_down_streamed() {
                every_model_down_lists_each_error::<$first, $next>(true).await;
            }
            #[tokio::test]
            async fn a_refusal_falls_over_only_when_asked_plain() {
                a_refusal_falls_over_only_when_asked::<$first, $next>(false).await;
            }
            #[tokio::test]
            async fn a_refusal_falls_over_only_when_asked_streamed() {
                a_refusal_falls_over_only_when_asked::<$first, $next>(true).await;
            }
            #[tokio::test]
            async fn a_stream_cut_after_its_first_event_does_not_fall_over() {
                super::a_stream_cut_after_its_first_event_does_not_fall_over::<$first, $next>().await;
            }
        }
    )*};
}

fallback! {
    openai_chat: crate::openai_chat::Mock => crate::anthropic::Mock, 500,
        "The server had an error while processing your request. Sorry about that!";
    openai_responses: crate::openai_responses::Mock => crate::gemini::Mock, 503,
        "The engine is currently overloaded, please try again later.";
    anthropic: crate::anthropic::Mock => crate::openai_chat::Mock, 529, "Overloaded";
    gemini: crate::gemini::Mock => crate::openai_responses::Mock, 503,
        "The model is overloaded. Please try again later.";
}

const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
const REDACTED: &str = "EmwKAhgBEgy3va3pzix";
const GEMINI_SIGNATURE: &str = "CiQBcsjafBzIYGjUJtZYYwUzGA1n0gF";

/// Anthropic thinks and calls, then is overloaded: Gemini takes the next
/// turn and calls again, then Anthropic is back and answers. Each is sent
/// its own reasoning back and never the other's: Gemini gets Anthropic's
/// call without its thinking, Anthropic gets its thinking blocks unchanged
/// and Gemini's call without Gemini's signature. Bodies as documented:
/// <https://platform.claude.com/docs/en/build-with-claude/extended-thinking>
/// (a `thinking` block with its `signature`, a `redacted_thinking` block),
/// <https://ai.google.dev/gemini-api/docs/thought-signatures> (a signed
/// `functionCall` part).
#[tokio::test]
async fn each_model_is_sent_its_own_reasoning_and_never_anothers() {
    let thinking = json!({"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Paris is in France, so the weather tool.", "signature": SIGNATURE},
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}],
        "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 89}});
    let overloaded = ResponseTemplate::new(529).set_body_json(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}),
    );
    let answer = json!({"id": "msg_02", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "12°C in Paris and in Rome."}],
        "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 90, "output_tokens": 12}});
    let anthropic = mock(vec![
        ResponseTemplate::new(200).set_body_json(thinking),
        overloaded,
        ResponseTemplate::new(200).set_body_json(answer),
    ])
    .await;
    let signed_call = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}, "thoughtSignature": GEMINI_SIGNATURE}]},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 60, "candidatesTokenCount": 8, "totalTokenCount": 68},
        "modelVersion": "gemini-2.5-flash"});
    let gemini = mock(vec![ResponseTemplate::new(200).set_body_json(signed_call)]).await;
    let claude =
        Anthropic::from_values("claude-sonnet-4-5", Some(ApiKey::new("sk-ant-test")), Some(&anthropic.uri()))
            .with_resend(fast_retry(1));
    let flash = Gemini::from_values("gemini-2.5-flash", Some(ApiKey::new("AIza-test")), Some(&gemini.uri()));
    let model = FallbackModel::new(claude).or(flash);
    let result = agent(model).run("Weather in Paris and Rome?").await.expect("answered");
    assert_eq!(result.answer, "12°C in Paris and in Rome.");
    let (claude, flash) =
        (ModelName::new("anthropic", "claude-sonnet-4-5"), ModelName::new("gemini", "gemini-2.5-flash"));
    assert_eq!(result.models, [claude.clone(), flash, claude]);

    // Gemini: Anthropic's call and its result, none of Anthropic's reasoning.
    let asked = crate::support::ag::bodies(&gemini).await;
    assert_eq!(asked.len(), 1);
    let contents = asked[0]["contents"].as_array().expect("contents");
    let roles: Vec<&Value> = contents.iter().map(|content| &content["role"]).collect();
    assert_eq!(roles, ["user", "model", "user"]);
    assert_eq!(
        contents[1]["parts"],
        json!([{"functionCall": {"id": "toolu_01", "name": "get_weather", "args": {"city": "Paris"}}}])
    );
    assert_eq!(contents[2]["parts"][0]["functionResponse"]["name"], "get_weather");
    let sent = asked[0].to_string();
    for theirs in [SIGNATURE, REDACTED, "Paris is in France"] {
        assert!(!sent.contains(theirs), "{theirs} went to Gemini: {sent}");
    }

    // Anthropic, back: its own blocks as they came, Gemini's call bare.
    let asked = crate::support::ag::bodies(&anthropic).await;
    assert_eq!(asked.len(), 3);
    let messages = asked[2]["messages"].as_array().expect("messages");
    // The same messages, but for the cache breakpoint on each request's last.
    let unmarked = |messages: &[Value]| {
        let mut messages = messages.to_vec();
        for block in messages.iter_mut().filter_map(|m| m["content"].as_array_mut()).flatten() {
            block.as_object_mut().map(|block| block.remove("cache_control"));
        }
        messages
    };
    let second = asked[1]["messages"].as_array().expect("messages");
    assert_eq!(unmarked(second), unmarked(&messages[..3]), "the second turn's request");
    assert_eq!(messages.len(), 5);
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "thinking", "thinking": "Paris is in France, so the weather tool.", "signature": SIGNATURE},
            {"type": "redacted_thinking", "data": REDACTED},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}])
    );
    let rome = &messages[3]["content"];
    assert_eq!(rome.as_array().map(Vec::len), Some(1), "{rome}");
    assert_eq!(
        (&rome[0]["type"], &rome[0]["name"], &rome[0]["input"]),
        (&json!("tool_use"), &json!("get_weather"), &json!({"city": "Rome"}))
    );
    assert!(!asked[2].to_string().contains(GEMINI_SIGNATURE));
    assert_eq!(messages[4]["content"][0]["tool_use_id"], rome[0]["id"]);
}

/// A scripted model under its own name.
struct Named(&'static str, toolcall_agent::testing::ScriptedModel);

impl toolcall_agent::Model for Named {
    fn provider(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        self.0
    }

    fn request<'a>(
        &'a self,
        request: toolcall_agent::ModelRequest<'a>,
    ) -> futures::future::BoxFuture<'a, Result<toolcall_agent::ModelResponse, ModelError>> {
        self.1.request(request)
    }
}

/// A chain inside a chain: the model that answered is the inner one's,
/// not the inner chain's; an inner chain that ran out of models falls
/// over, one that met an error that does not fall over ends both.
#[tokio::test]
async fn a_chain_inside_a_chain_names_the_model_that_answered() {
    use toolcall_agent::testing::ScriptedModel;
    let down =
        || ModelError::Timeout { provider: "scripted".into(), timeout: std::time::Duration::from_secs(1) };
    let inner = FallbackModel::new(Named("a", ScriptedModel::new().then(Err(down()))))
        .or(Named("b", ScriptedModel::new().then_text("from b")));
    let chain = FallbackModel::new(inner).or(Named("c", ScriptedModel::new().then_text("from c")));
    assert_eq!(toolcall_agent::Model::model(&chain), "fallback:scripted:a,scripted:b,scripted:c");
    let result = Agent::new(chain, tools()).unwrap().run("Hi").await.unwrap();
    assert_eq!(
        (result.answer.as_str(), result.models.as_slice()),
        ("from b", &[ModelName::new("scripted", "b")][..])
    );

    // The inner chain ran out of models: the outer one goes on.
    let overloaded = ModelError::Unavailable { provider: "scripted".into(), status: 503, attempts: 1 };
    let inner = FallbackModel::new(Named("a", ScriptedModel::new().then(Err(down()))))
        .or(Named("b", ScriptedModel::new().then(Err(overloaded))));
    let chain = FallbackModel::new(inner).or(Named("c", ScriptedModel::new().then_text("from c")));
    let result = Agent::new(chain, tools()).unwrap().run("Hi").await.unwrap();
    assert_eq!(result.models, [ModelName::new("scripted", "c")]);

    // The inner chain stopped at a refused request: so does the outer one.
    let refused = ModelError::Rejected { provider: "scripted".into(), status: 400, message: "bad".into() };
    let inner = FallbackModel::new(Named("a", ScriptedModel::new().then(Err(down()))))
        .or(Named("b", ScriptedModel::new().then(Err(refused.clone()))));
    let chain = FallbackModel::new(inner).or(Named("c", ScriptedModel::new().then_text("never")));
    let error = Agent::new(chain, tools()).unwrap().run("Hi").await.unwrap_err().error;
    let ModelError::Fallback { failures } = error else { panic!("{error:?}") };
    assert_eq!(
        failures,
        [(ModelName::new("scripted", "a"), down()), (ModelName::new("scripted", "b"), refused)]
    );
}
