//! The agent's tool choice and parallel setting, as each client sends them
//! to a mock of its provider: every client takes the fields from
//! `Dialect::tool_choice`, and a choice its provider cannot express stops
//! the run before anything is sent, naming the dialect.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use toolcall_agent::{
    Agent, AgentError, Anthropic, ApiKey, Gemini, Model, ModelError, ModelSettings, OpenAiChat,
    OpenAiResponses, ResendPolicy, ToolChoice,
};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolContext, ToolError};
use toolcall_macros::tool;
use toolcall_provider::Dialect;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "test-key-5d1e";

/// Current temperature for a city.
#[tool(args, crate = "toolcall_core")]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("12°C in {city}"))
}

/// Current time in a time zone.
#[tool(args, crate = "toolcall_core")]
async fn get_time(_ctx: &ToolContext, zone: String) -> Result<String, ToolError> {
    Ok(format!("12:00 in {zone}"))
}

fn tools() -> Toolset {
    Toolset::builder().add(GetWeather).add(GetTime).build().expect("a valid toolset")
}

/// A mock answering every POST with this body.
async fn server(answer: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&server)
        .await;
    server
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests.iter().map(|request| request.body_json::<Value>().expect("a JSON request body")).collect()
}

fn keys(body: &Value) -> BTreeSet<&str> {
    body.as_object().map(|body| body.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn no_retry() -> ResendPolicy {
    ResendPolicy::default().with_max_attempts(1)
}

/// Run one request's worth of agent with this choice and parallel setting.
async fn run(
    model: impl Model + 'static,
    choice: ToolChoice,
    parallel: Option<bool>,
) -> Result<String, AgentError> {
    let mut settings = ModelSettings::default().with_tool_choice(choice);
    if let Some(parallel) = parallel {
        settings = settings.with_parallel_tool_calls(parallel);
    }
    let agent = Agent::new(model, tools()).unwrap().with_settings(settings);
    agent.run("Weather in Oslo?").await.map(|result| result.answer)
}

/// The run stopped on the choice, naming the dialect, and sent nothing.
async fn assert_refused(result: Result<String, AgentError>, server: &MockServer, dialect: Dialect) -> String {
    let error = result.expect_err("the choice cannot be sent");
    let ModelError::ToolChoice(refused) = &error.error else {
        panic!("not a tool choice error: {error}");
    };
    assert_eq!(refused.dialect, dialect);
    assert!(error.to_string().contains(&format!("cannot be sent as {dialect}: ")), "{error}");
    assert!(bodies(server).await.is_empty(), "a request was sent");
    refused.to_string()
}

#[tokio::test]
async fn openai_chat_sends_the_allowed_tools_and_parallel_off() {
    let answer = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Mild."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}});
    let server = server(answer).await;
    let client =
        || OpenAiChat::from_values("gpt-4.1", Some(ApiKey::new(KEY)), Some(&format!("{}/v1", server.uri())));
    let answer =
        run(client().with_resend(no_retry()), ToolChoice::allowed(["get_weather"]), Some(false)).await;
    assert_eq!(answer.unwrap(), "Mild.");
    let sent = bodies(&server).await;
    assert_eq!(
        keys(&sent[0]),
        BTreeSet::from(["model", "messages", "tools", "tool_choice", "parallel_tool_calls"])
    );
    assert_eq!(
        sent[0]["tool_choice"],
        json!({"type": "allowed_tools", "allowed_tools": {"mode": "auto",
               "tools": [{"type": "function", "function": {"name": "get_weather"}}]}})
    );
    assert_eq!(sent[0]["parallel_tool_calls"], false);

    // Validated needs strict mode: refused without, `auto` with.
    let server = self::server(json!({})).await;
    let base = format!("{}/v1", server.uri());
    let plain = OpenAiChat::from_values("gpt-4.1", Some(ApiKey::new(KEY)), Some(&base));
    assert_refused(run(plain, ToolChoice::Validated, None).await, &server, Dialect::OpenAiChat).await;
}

#[tokio::test]
async fn openai_responses_sends_the_allowed_tools_and_parallel_off() {
    let answer = json!({"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4.1",
        "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Mild.", "annotations": []}]}],
        "usage": {"input_tokens": 9, "output_tokens": 2, "total_tokens": 11}});
    let server = server(answer).await;
    let base = format!("{}/v1", server.uri());
    let client =
        OpenAiResponses::from_values("gpt-4.1", Some(ApiKey::new(KEY)), Some(&base)).with_resend(no_retry());
    let answer = run(client, ToolChoice::allowed_required(["get_weather", "get_time"]), Some(false)).await;
    assert_eq!(answer.unwrap(), "Mild.");
    let sent = bodies(&server).await;
    assert_eq!(
        keys(&sent[0]),
        BTreeSet::from(["model", "input", "store", "tools", "tool_choice", "parallel_tool_calls"])
    );
    assert_eq!(
        sent[0]["tool_choice"],
        json!({"type": "allowed_tools", "mode": "required", "tools": [
            {"type": "function", "name": "get_weather"}, {"type": "function", "name": "get_time"}]})
    );
    assert_eq!(sent[0]["parallel_tool_calls"], false);
}

#[tokio::test]
async fn anthropic_has_no_allowed_set_but_says_what_it_can() {
    let answer = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Mild."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 9, "output_tokens": 2}});
    let client = |server: &MockServer| {
        Anthropic::new("claude-sonnet-4-5")
            .with_base_url(server.uri())
            .with_api_key(ApiKey::new(KEY))
            .with_resend(no_retry())
    };

    // A set of some of the tools: refused before anything is sent.
    let server = server(answer.clone()).await;
    let refused = assert_refused(
        run(client(&server), ToolChoice::allowed(["get_weather"]), Some(false)).await,
        &server,
        Dialect::Anthropic,
    )
    .await;
    assert!(refused.contains("no set of allowed tools"), "{refused}");

    // A required set of one tool is that tool; parallel off goes inside the choice.
    let server = self::server(answer.clone()).await;
    let answer_text = run(client(&server), ToolChoice::allowed_required(["get_weather"]), Some(false)).await;
    assert_eq!(answer_text.unwrap(), "Mild.");
    let sent = bodies(&server).await;
    assert_eq!(keys(&sent[0]), BTreeSet::from(["model", "max_tokens", "messages", "tools", "tool_choice"]));
    assert_eq!(
        sent[0]["tool_choice"],
        json!({"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true})
    );

    // A set of every tool sent is auto.
    let server = self::server(answer).await;
    run(client(&server), ToolChoice::allowed(["get_time", "get_weather"]), Some(false)).await.unwrap();
    assert_eq!(
        bodies(&server).await[0]["tool_choice"],
        json!({"type": "auto", "disable_parallel_tool_use": true})
    );
}

#[tokio::test]
async fn gemini_has_no_parallel_switch_and_sends_the_allowed_names() {
    let answer = json!({"candidates": [{"content": {"parts": [{"text": "Mild."}], "role": "model"},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 2, "totalTokenCount": 11}});
    let client = |server: &MockServer| {
        Gemini::new("gemini-2.5-flash")
            .with_base_url(server.uri())
            .with_api_key(ApiKey::new(KEY))
            .with_resend(no_retry())
    };

    // Parallel off: Gemini has no such switch, so nothing is sent.
    let server = server(answer.clone()).await;
    let refused = assert_refused(
        run(client(&server), ToolChoice::allowed(["get_weather"]), Some(false)).await,
        &server,
        Dialect::Gemini,
    )
    .await;
    assert!(refused.starts_with("`parallel_tool_calls: false` cannot be sent as gemini"), "{refused}");

    // The same set with the default parallelism: VALIDATED with the names.
    let server = self::server(answer).await;
    let answer_text = run(client(&server), ToolChoice::allowed(["get_weather"]), None).await;
    assert_eq!(answer_text.unwrap(), "Mild.");
    let sent = bodies(&server).await;
    assert_eq!(keys(&sent[0]), BTreeSet::from(["contents", "tools", "toolConfig"]));
    assert_eq!(
        sent[0]["toolConfig"],
        json!({"functionCallingConfig": {"mode": "VALIDATED", "allowedFunctionNames": ["get_weather"]}})
    );
}

#[tokio::test]
async fn a_tool_not_offered_stops_the_run_before_the_request() {
    let server = server(json!({})).await;
    let client =
        Anthropic::new("claude-sonnet-4-5").with_base_url(server.uri()).with_api_key(ApiKey::new(KEY));
    let refused =
        assert_refused(run(client, ToolChoice::tool("get_wether"), None).await, &server, Dialect::Anthropic)
            .await;
    assert!(
        refused.ends_with("no tool `get_wether` among the tools sent (get_weather, get_time)"),
        "{refused}"
    );
}
