//! The settings, as each client sends them to a mock of its provider,
//! plainly and streamed: sampling, stop sequences, seed, reasoning, and the
//! extra JSON merged last; and the settings (or combinations) a provider
//! refuses, which stop the run before anything is sent, naming the
//! provider and the setting.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolcall_agent::{
    Agent, AgentError, Anthropic, ApiKey, Model, ModelError, ModelRequest, ModelSettings, OpenAiResponses,
    ReasoningEffort, ReasoningSettings, ReasoningSummary, ToolChoice,
};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};
use wiremock::MockServer;

use crate::scenarios::{ProviderMock, Turn, bodies, client, mock, received};
use crate::support::openai::{run, tools};
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// The body of the one request of a run with these settings, on this
/// client of `P`'s mock; the run must answer.
async fn sent_by<P: ProviderMock>(
    server: &MockServer,
    model: P::Client,
    settings: ModelSettings,
    streamed: bool,
) -> Value {
    let agent = Agent::new(model, tools()).unwrap().with_settings(settings);
    let (result, _) = run(&agent, "Weather in Oslo?", streamed).await;
    assert_eq!(result.expect("the run answers").answer, "Mild.");
    let mut bodies = bodies(&received::<P>(server, streamed).await);
    assert_eq!(bodies.len(), 1);
    bodies.remove(0)
}

/// The same on the mock's own client.
async fn sent<P: ProviderMock>(settings: ModelSettings, streamed: bool) -> Value {
    let server = mock(vec![P::reply(&Turn::text("Mild."), streamed)]).await;
    sent_by::<P>(&server, client::<P>(&server, 1), settings, streamed).await
}

/// The run stops on the settings before anything is sent: the setting
/// named, and the error's text.
async fn refused<P: ProviderMock>(settings: ModelSettings) -> (&'static str, String) {
    let server = mock(vec![P::reply(&Turn::text("Mild."), false)]).await;
    refused_by(&server, client::<P>(&server, 1), settings).await
}

/// The same with this client of the mock.
async fn refused_by(
    server: &MockServer,
    model: impl Model + 'static,
    settings: ModelSettings,
) -> (&'static str, String) {
    let agent = Agent::new(model, tools()).unwrap().with_settings(settings);
    let error: AgentError = agent.run("Weather in Oslo?").await.expect_err("the settings are refused");
    assert!(server.received_requests().await.unwrap_or_default().is_empty(), "a request was sent");
    match error.error {
        ModelError::Setting { setting, .. } => (setting, error.error.to_string()),
        other => panic!("not a setting error: {other}"),
    }
}

/// Every sampling setting, and a stop sequence.
fn sampling() -> ModelSettings {
    ModelSettings::default()
        .with_max_tokens(300)
        .with_temperature(0.2)
        .with_top_p(0.9)
        .with_stop_sequences(["END"])
}

#[tokio::test]
async fn openai_chat_sends_sampling_seed_and_effort_and_merges_the_extra() {
    for streamed in [false, true] {
        let settings = sampling()
            .with_seed(7)
            .with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::Low))
            // A field the SDK does not model, one merged into the client's
            // own `stream_options` (streamed), and one removed.
            .with_extra(json!({"service_tier": "flex", "stream_options": {"include_obfuscation": false}}))
            .with_extra(json!({"tool_choice": null}));
        let body = sent::<openai_chat::Mock>(settings, streamed).await;
        assert_eq!(body["max_completion_tokens"], 300);
        assert!(body.get("max_tokens").is_none(), "`max_tokens` is deprecated for Chat Completions");
        assert_eq!((&body["temperature"], &body["top_p"]), (&json!(0.2), &json!(0.9)));
        assert_eq!((&body["stop"], &body["seed"]), (&json!(["END"]), &json!(7)));
        assert_eq!(body["reasoning_effort"], "low");
        assert_eq!(body["service_tier"], "flex");
        assert!(body.get("tool_choice").is_none() && body.get("tools").is_some());
        if streamed {
            assert_eq!(body["stream_options"], json!({"include_usage": true, "include_obfuscation": false}));
        } else {
            assert_eq!(body["stream_options"], json!({"include_obfuscation": false}));
        }
    }
}

#[tokio::test]
async fn openai_chat_refuses_top_k_a_budget_and_a_summary() {
    type P = openai_chat::Mock;
    let (setting, error) = refused::<P>(ModelSettings::default().with_top_k(40)).await;
    assert_eq!(setting, "top_k");
    assert!(error.starts_with("openai (Chat Completions) cannot take `top_k`: "), "{error}");
    let budget = ModelSettings::default().with_reasoning(ReasoningSettings::new().with_budget_tokens(2048));
    assert_eq!(refused::<P>(budget).await.0, "reasoning.budget_tokens");
    let summary = ModelSettings::default()
        .with_reasoning(ReasoningSettings::new().with_summary(ReasoningSummary::Auto));
    assert_eq!(refused::<P>(summary).await.0, "reasoning.summary");
}

#[tokio::test]
async fn openai_responses_sends_reasoning_and_asks_for_its_encrypted_content() {
    type P = openai_responses::Mock;
    let reasoning =
        ReasoningSettings::new().with_effort(ReasoningEffort::High).with_summary(ReasoningSummary::Detailed);
    for streamed in [false, true] {
        // A reasoning model: its reasoning comes back encrypted, as `store` is false.
        let server = mock(vec![P::reply(&Turn::text("Mild."), streamed)]).await;
        let gpt5 = OpenAiResponses::from_values(
            "gpt-5",
            Some(ApiKey::new(P::KEY)),
            Some(&format!("{}/v1", server.uri())),
        );
        let settings = ModelSettings::default()
            .with_max_tokens(300)
            .with_temperature(1.0)
            .with_top_p(0.5)
            .with_reasoning(reasoning.clone())
            .with_extra(json!({"reasoning": {"context": "all_turns"}, "prompt_cache_key": "weather"}));
        let body = sent_by::<P>(&server, gpt5, settings, streamed).await;
        assert_eq!(body["store"], false);
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(
            (&body["max_output_tokens"], &body["temperature"], &body["top_p"]),
            (&json!(300), &json!(1.0), &json!(0.5))
        );
        assert_eq!(
            body["reasoning"],
            json!({"effort": "high", "summary": "detailed", "context": "all_turns"})
        );
        assert_eq!(body["prompt_cache_key"], "weather");
        assert_eq!(body["stream"].as_bool(), streamed.then_some(true));
    }

    // Without reasoning settings it is asked for too (a reasoning model
    // reasons at its default effort), but for the families that have no
    // reasoning and refuse the field (the mock's model is gpt-4.1).
    let server = mock(vec![P::reply(&Turn::text("Mild."), false)]).await;
    let gpt5 = OpenAiResponses::from_values(
        "gpt-5-mini",
        Some(ApiKey::new(P::KEY)),
        Some(&format!("{}/v1", server.uri())),
    );
    let body = sent_by::<P>(&server, gpt5, ModelSettings::default(), false).await;
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert!(body.get("reasoning").is_none());
    let body = sent::<P>(ModelSettings::default(), false).await;
    assert!(body.get("include").is_none(), "{body}");
    // And the extra takes it out for a model the SDK cannot tell.
    let server = mock(vec![P::reply(&Turn::text("Mild."), false)]).await;
    let deployment = OpenAiResponses::from_values(
        "my-deployment",
        Some(ApiKey::new(P::KEY)),
        Some(&format!("{}/v1", server.uri())),
    );
    let body = sent_by::<P>(
        &server,
        deployment,
        ModelSettings::default().with_extra(json!({"include": null})),
        false,
    )
    .await;
    assert!(body.get("include").is_none(), "{body}");
}

#[tokio::test]
async fn openai_responses_refuses_stop_sequences_seed_top_k_and_a_budget() {
    type P = openai_responses::Mock;
    let (setting, error) = refused::<P>(ModelSettings::default().with_stop_sequences(["END"])).await;
    assert_eq!(setting, "stop_sequences");
    assert_eq!(
        error,
        "openai (Responses) cannot take `stop_sequences`: the Responses API has no stop sequences"
    );
    let (setting, error) = refused::<P>(ModelSettings::default().with_seed(7)).await;
    assert_eq!(
        (setting, error.as_str()),
        ("seed", "openai (Responses) cannot take `seed`: the Responses API has no seed")
    );
    assert_eq!(refused::<P>(ModelSettings::default().with_top_k(40)).await.0, "top_k");
    let budget = ModelSettings::default().with_reasoning(ReasoningSettings::new().with_budget_tokens(2048));
    assert_eq!(refused::<P>(budget).await.0, "reasoning.budget_tokens");
}

#[tokio::test]
async fn anthropic_sends_manual_and_adaptive_thinking_and_sampling() {
    type P = anthropic::Mock;
    for streamed in [false, true] {
        // Manual thinking: a budget below `max_tokens`, a summary, a `top_p` it allows.
        let settings = ModelSettings::default()
            .with_max_tokens(16_000)
            .with_top_p(0.95)
            .with_stop_sequences(["END", "STOP"])
            .with_reasoning(
                ReasoningSettings::new().with_budget_tokens(8_000).with_summary(ReasoningSummary::Auto),
            );
        let body = sent::<P>(settings, streamed).await;
        assert_eq!(body["max_tokens"], 16_000);
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 8000, "display": "summarized"})
        );
        assert_eq!((&body["top_p"], &body["stop_sequences"]), (&json!(0.95), &json!(["END", "STOP"])));
        assert!(body.get("output_config").is_none() && body.get("temperature").is_none());

        // Adaptive thinking with an effort; temperature 1 is the one it takes.
        let settings = ModelSettings::default()
            .with_temperature(1.0)
            .with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::XHigh))
            .with_extra(json!({"thinking": {"display": "omitted"}}));
        let body = sent::<P>(settings, streamed).await;
        assert_eq!(body["thinking"], json!({"type": "adaptive", "display": "omitted"}));
        assert_eq!(body["output_config"], json!({"effort": "xhigh"}));
        assert_eq!((&body["temperature"], &body["max_tokens"]), (&json!(1.0), &json!(4096)));
    }

    // Without a `max_tokens`, the budget gets the default on top of it.
    let settings =
        ModelSettings::default().with_reasoning(ReasoningSettings::new().with_budget_tokens(8_000));
    assert_eq!(sent::<P>(settings, false).await["max_tokens"], 8_000 + 4_096);
    // Without thinking, the sampling settings go (Sonnet 4.5 takes a
    // temperature or a `top_p`, not both); effort none is thinking disabled.
    let settings = ModelSettings::default()
        .with_max_tokens(300)
        .with_temperature(0.2)
        .with_top_k(5)
        .with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::None));
    let body = sent::<P>(settings, false).await;
    assert_eq!((&body["temperature"], &body["top_k"]), (&json!(0.2), &json!(5)));
    assert!(body.get("top_p").is_none());
    assert_eq!((&body["thinking"], &body["max_tokens"]), (&json!({"type": "disabled"}), &json!(300)));
}

/// An Anthropic client of the mock for `model`.
fn claude(server: &MockServer, model: &str) -> Anthropic {
    Anthropic::from_values(
        model,
        Some(ApiKey::new(<anthropic::Mock as ProviderMock>::KEY)),
        Some(&server.uri()),
    )
}

/// Issue 45, point 1: a forced tool choice with adaptive thinking is
/// refused before sending, as with manual thinking ("Thinking may not be
/// enabled when tool_choice forces tool use", the API's 400); with
/// thinking off it is sent.
#[tokio::test]
async fn anthropic_refuses_a_forced_tool_choice_with_adaptive_thinking() {
    type P = anthropic::Mock;
    for choice in [ToolChoice::Required, ToolChoice::tool("get_weather")] {
        for reasoning in
            [ReasoningSettings::new(), ReasoningSettings::new().with_effort(ReasoningEffort::High)]
        {
            let settings =
                ModelSettings::default().with_reasoning(reasoning).with_tool_choice(choice.clone());
            let (setting, error) = refused::<P>(settings).await;
            assert_eq!(setting, "tool_choice");
            assert!(
                error.starts_with(
                    "anthropic cannot take `tool_choice`: adaptive thinking takes the tool choice `auto` or `none`"
                ),
                "{error}"
            );
        }
    }
    let off = ModelSettings::default()
        .with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::None))
        .with_tool_choice(ToolChoice::Required);
    let body = sent::<P>(off, false).await;
    assert_eq!(
        (&body["tool_choice"]["type"], &body["thinking"]),
        (&json!("any"), &json!({"type": "disabled"}))
    );
}

/// The warnings traced while `run` runs, on a runtime of its own: each
/// event's fields as `name=value` text.
fn warned<T>(run: impl std::future::Future<Output = T>) -> (T, Vec<String>) {
    let warnings = Warnings::default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let out = crate::spans::capture::traced(warnings.clone(), || runtime.block_on(run));
    let found = warnings.0.lock().unwrap().clone();
    (out, found)
}

/// Keeps the warnings' fields, and nothing else.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

struct Text<'a>(&'a mut String);

impl Visit for Text<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, "{}={value:?} ", field.name());
    }
}

impl Subscriber for Warnings {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if *event.metadata().level() == Level::WARN {
            let mut text = String::new();
            event.record(&mut Text(&mut text));
            self.0.lock().unwrap().push(text);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Issue 45, point 2: the Claude models that take no sampling settings
/// (Opus 4.7 and later, Sonnet 5, Haiku 5.5, Fable, Mythos: "temperature is
/// deprecated for this model", a 400) get none of them: each set is
/// dropped, with a warning naming the model and the settings; the rest of
/// the request goes as it would, thinking or not.
#[test]
fn anthropic_drops_sampling_with_a_warning_for_the_models_that_take_none() {
    type P = anthropic::Mock;
    let models = [
        "claude-opus-4-7",
        "claude-opus-4-8-20260601",
        "claude-opus-5",
        "claude-sonnet-5",
        "claude-sonnet-5-5",
        "claude-haiku-5-5",
        "claude-fable-5-2",
        "claude-mythos-preview",
        "us.anthropic.claude-opus-4-7-v1:0",
    ];
    for model in models {
        for streamed in [false, true] {
            let (body, warnings) = warned(async {
                let server = mock(vec![P::reply(&Turn::text("Mild."), streamed)]).await;
                sent_by::<P>(&server, claude(&server, model), sampling().with_top_k(40), streamed).await
            });
            for field in ["temperature", "top_p", "top_k"] {
                assert!(body.get(field).is_none(), "{model}: {field} was sent: {body}");
            }
            assert_eq!((&body["max_tokens"], &body["stop_sequences"]), (&json!(300), &json!(["END"])));
            assert!(
                warnings
                    .iter()
                    .any(|warning| warning.contains(model) && warning.contains("temperature, top_p, top_k")),
                "{model}: no warning: {warnings:?}"
            );
        }
    }
    // With adaptive thinking, a temperature it would refuse is dropped too.
    let settings = ModelSettings::default()
        .with_temperature(0.3)
        .with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::High));
    let (body, warnings) = warned(async {
        let server = mock(vec![P::reply(&Turn::text("Mild."), false)]).await;
        sent_by::<P>(&server, claude(&server, "claude-opus-4-7"), settings, false).await
    });
    assert!(body.get("temperature").is_none());
    assert_eq!(body["thinking"], json!({"type": "adaptive"}));
    assert!(warnings.iter().any(|warning| warning.contains("temperature")), "{warnings:?}");
    // Nothing set, nothing said.
    let (_, warnings) = warned(async {
        let server = mock(vec![P::reply(&Turn::text("Mild."), false)]).await;
        sent_by::<P>(&server, claude(&server, "claude-opus-4-7"), ModelSettings::default(), false).await
    });
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// Issue 45, point 2: Opus 4.1 to 4.6, Sonnet 4.5 and 4.6 and Haiku 4.5
/// take a temperature or a `top_p`, not both ("temperature and top_p cannot
/// both be specified for this model", a 400): both are refused before
/// sending; each alone goes, with a `top_k`. The models before them (and a
/// name that is not Claude's) take all three.
#[tokio::test]
async fn anthropic_refuses_temperature_with_top_p_where_the_model_takes_one() {
    type P = anthropic::Mock;
    for model in [
        "claude-sonnet-4-5",
        "claude-sonnet-4-6",
        "claude-haiku-4-5-20251001",
        "claude-opus-4-1",
        "claude-opus-4-6",
    ] {
        let server = mock(vec![P::reply(&Turn::text("Mild."), false)]).await;
        let (setting, error) = refused_by(&server, claude(&server, model), sampling()).await;
        assert_eq!(setting, "top_p");
        assert_eq!(
            error,
            format!(
                "anthropic cannot take `top_p`: {model} takes a temperature or a `top_p`, not both (0.2 and 0.9 were set)"
            )
        );
        for settings in [
            ModelSettings::default().with_temperature(0.2).with_top_k(40),
            ModelSettings::default().with_top_p(0.9).with_top_k(40),
        ] {
            let server = mock(vec![P::reply(&Turn::text("Mild."), false)]).await;
            let body = sent_by::<P>(&server, claude(&server, model), settings.clone(), false).await;
            assert_eq!(body.get("temperature"), settings.temperature.map(Value::from).as_ref());
            assert_eq!(body.get("top_p"), settings.top_p.map(Value::from).as_ref());
            assert_eq!(body["top_k"], 40);
        }
    }
    for model in ["claude-sonnet-4-20250514", "claude-3-7-sonnet-latest", "my-proxy-model"] {
        let server = mock(vec![P::reply(&Turn::text("Mild."), false)]).await;
        let body = sent_by::<P>(&server, claude(&server, model), sampling().with_top_k(40), false).await;
        assert_eq!(
            (&body["temperature"], &body["top_p"], &body["top_k"]),
            (&json!(0.2), &json!(0.9), &json!(40)),
            "{model}"
        );
    }
}

#[tokio::test]
async fn anthropic_refuses_what_thinking_does_not_take() {
    type P = anthropic::Mock;
    let manual = || ReasoningSettings::new().with_budget_tokens(2_048);
    let with = |reasoning: ReasoningSettings| ModelSettings::default().with_reasoning(reasoning);

    // A forced tool choice with manual thinking: `any`, and a named tool.
    for choice in [ToolChoice::Required, ToolChoice::tool("get_weather")] {
        let (setting, error) = refused::<P>(with(manual()).with_tool_choice(choice)).await;
        assert_eq!(setting, "tool_choice");
        assert!(
            error.starts_with("anthropic cannot take `tool_choice`: manual thinking (a budget) takes"),
            "{error}"
        );
    }
    // The budget: at least 1024, below `max_tokens`.
    let (setting, error) = refused::<P>(with(manual()).with_max_tokens(2_048)).await;
    assert_eq!(setting, "reasoning.budget_tokens");
    assert!(error.ends_with("the thinking budget (2048) must be below `max_tokens` (2048)"), "{error}");
    let (_, error) = refused::<P>(with(ReasoningSettings::new().with_budget_tokens(1_000))).await;
    assert!(error.ends_with("must be at least 1024 tokens, and 1000 was set"), "{error}");
    // Sampling with thinking, manual or adaptive.
    for reasoning in [manual(), ReasoningSettings::new()] {
        let (setting, error) = refused::<P>(with(reasoning.clone()).with_temperature(0.3)).await;
        assert_eq!(setting, "temperature");
        assert!(error.ends_with("thinking takes no temperature but 1, and 0.3 was set"), "{error}");
        assert_eq!(refused::<P>(with(reasoning.clone()).with_top_k(5)).await.0, "top_k");
        assert_eq!(refused::<P>(with(reasoning).with_top_p(0.5)).await.0, "top_p");
    }
    // No seed; no `minimal` effort; effort none with a budget.
    assert_eq!(refused::<P>(ModelSettings::default().with_seed(7)).await.0, "seed");
    let minimal = with(ReasoningSettings::new().with_effort(ReasoningEffort::Minimal));
    assert_eq!(refused::<P>(minimal).await.0, "reasoning.effort");
    let contradiction = with(manual().with_effort(ReasoningEffort::None));
    assert_eq!(refused::<P>(contradiction).await.0, "reasoning.budget_tokens");
}

#[tokio::test]
async fn gemini_sends_the_generation_config_and_thinking_config() {
    type P = gemini::Mock;
    for streamed in [false, true] {
        let settings = sampling()
            .with_top_k(40)
            .with_seed(7)
            .with_reasoning(
                ReasoningSettings::new()
                    .with_effort(ReasoningEffort::High)
                    .with_summary(ReasoningSummary::Auto),
            )
            .with_extra(
                json!({"generationConfig": {"responseMimeType": "text/plain"}, "safetySettings": []}),
            );
        let body = sent::<P>(settings, streamed).await;
        assert_eq!(
            body["generationConfig"],
            json!({"maxOutputTokens": 300, "temperature": 0.2, "topP": 0.9, "topK": 40, "stopSequences": ["END"],
                   "seed": 7, "thinkingConfig": {"thinkingLevel": "HIGH", "includeThoughts": true},
                   "responseMimeType": "text/plain"})
        );
        assert_eq!(body["safetySettings"], json!([]));
    }
    // Gemini 2.5's budget; effort none is a budget of 0.
    let budget = ModelSettings::default().with_reasoning(ReasoningSettings::new().with_budget_tokens(1_024));
    assert_eq!(
        sent::<P>(budget, false).await["generationConfig"],
        json!({"thinkingConfig": {"thinkingBudget": 1024}})
    );
    let off =
        ModelSettings::default().with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::None));
    assert_eq!(
        sent::<P>(off, false).await["generationConfig"],
        json!({"thinkingConfig": {"thinkingBudget": 0}})
    );
    // Nothing set, no `generationConfig`.
    assert!(sent::<P>(ModelSettings::default(), false).await.get("generationConfig").is_none());
}

#[tokio::test]
async fn gemini_refuses_a_level_with_a_budget_and_efforts_past_high() {
    type P = gemini::Mock;
    let both = ReasoningSettings::new().with_effort(ReasoningEffort::Low).with_budget_tokens(1_024);
    let (setting, error) = refused::<P>(ModelSettings::default().with_reasoning(both)).await;
    assert_eq!(setting, "reasoning.budget_tokens");
    assert_eq!(
        error,
        "gemini cannot take `reasoning.budget_tokens`: Gemini takes a thinking level or a budget, not both (level LOW, budget 1024)"
    );
    let max = ReasoningSettings::new().with_effort(ReasoningEffort::Max);
    assert_eq!(refused::<P>(ModelSettings::default().with_reasoning(max)).await.0, "reasoning.effort");
}

#[tokio::test]
async fn an_extra_that_is_not_an_object_is_refused() {
    let (setting, error) =
        refused::<gemini::Mock>(ModelSettings::default().with_extra(json!("topK=3"))).await;
    assert_eq!(setting, "extra");
    assert_eq!(error, r#"gemini cannot take `extra`: the extra fields must be a JSON object, not "topK=3""#);
}

/// Settings per request: a `ModelRequest` carries its own, whatever the
/// agent's; the same client sends each request's.
#[tokio::test]
async fn each_request_carries_its_own_settings() {
    type P = anthropic::Mock;
    let server =
        mock(vec![P::reply(&Turn::text("Mild."), false), P::reply(&Turn::text("Mild."), false)]).await;
    let model = client::<P>(&server, 1);
    let messages = [toolcall_agent::Message::user("Weather?")];
    for settings in [
        ModelSettings::default().with_temperature(0.0),
        ModelSettings::default().with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::Low)),
    ] {
        let request = ModelRequest {
            instructions: None,
            messages: &messages,
            tools: None,
            settings: &settings,
            answer: None,
        };
        assert_eq!(model.request(request).await.unwrap().text(), "Mild.");
    }
    let sent = bodies(&received::<P>(&server, false).await);
    assert_eq!((&sent[0]["temperature"], sent[0].get("thinking")), (&json!(0.0), None));
    assert_eq!((sent[1].get("temperature"), &sent[1]["thinking"]), (None, &json!({"type": "adaptive"})));
}
