//! What every client shares over HTTP, through one of them: a request that
//! takes too long is its own error, and cancelling the context stops a run
//! whose model request is still waiting.

use std::time::{Duration, Instant};

use serde_json::json;
use toolcall_agent::{Agent, ApiKey, ModelError, ModelSettings, OpenAiChat, ResendPolicy, StopReason};
use toolcall_core::ToolContext;
use toolcall_core::toolset::Toolset;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A Chat Completions answer (https://platform.openai.com/docs/api-reference/chat/object),
/// sent after `delay`.
async fn slow_server(delay: Duration) -> MockServer {
    let server = MockServer::start().await;
    let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "late"}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}});
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body).set_delay(delay))
        .mount(&server)
        .await;
    server
}

fn client(server: &MockServer) -> OpenAiChat {
    OpenAiChat::from_values("gpt-4.1", Some(ApiKey::new("sk-test")), Some(&format!("{}/v1", server.uri())))
        .with_resend(ResendPolicy::none())
}

#[tokio::test]
async fn a_request_past_its_timeout_is_a_timeout_error() {
    let server = slow_server(Duration::from_secs(5)).await;
    let agent = Agent::new(client(&server), Toolset::new())
        .unwrap()
        .with_settings(ModelSettings::default().with_request_timeout(Duration::from_millis(100)));
    let started = Instant::now();
    let err = agent.run("hi").await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    assert_eq!(
        err.error,
        ModelError::Timeout { provider: "openai".into(), timeout: Duration::from_millis(100) }
    );
    assert_eq!(err.to_string(), "the run stopped: the request to openai timed out after 100ms");
    assert_eq!(err.transcript.messages.len(), 1);
}

#[tokio::test]
async fn cancelling_the_context_stops_a_run_waiting_for_the_model() {
    let server = slow_server(Duration::from_secs(30)).await;
    let ctx = ToolContext::new();
    let token = ctx.cancellation().clone();
    let agent = Agent::new(client(&server), Toolset::new()).unwrap().with_context(ctx);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        token.cancel();
    });
    let started = Instant::now();
    let result = agent.run("hi").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(result.stop, StopReason::Cancelled);
    assert!(result.usage.is_empty());
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(1));
}

#[tokio::test]
async fn extra_headers_go_with_every_request_and_the_key_stays_the_clients() {
    use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
    use wiremock::matchers::header;
    let server = MockServer::start().await;
    let body = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]});
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("openai-organization", "org-1"))
        .and(header("authorization", "Bearer sk-test"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .expect(1)
        .mount(&server)
        .await;
    let model = client(&server)
        .with_header(HeaderName::from_static("openai-organization"), HeaderValue::from_static("org-1"))
        .with_header(AUTHORIZATION, HeaderValue::from_static("Bearer not-the-key"));
    assert!(!format!("{model:?}").contains("org-1"));
    let result = Agent::new(model, Toolset::new()).unwrap().run("hi").await.unwrap();
    assert_eq!(result.answer, "ok");
}

/// A server that answers every request with `status` and `body`.
async fn failing_server(status: u16, body: serde_json::Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .mount(&server)
        .await;
    server
}

fn resending(server: &MockServer, attempts: u32) -> OpenAiChat {
    let policy =
        ResendPolicy::default().with_max_attempts(attempts).with_initial_backoff(Duration::from_millis(1));
    client(server).with_resend(policy)
}

/// What llama-cpp-python answers to a request it cannot validate: a 500
/// whose `detail`, past the 200 characters the old excerpt kept, names the
/// cause. The same answer every time: sent once, and its message whole.
#[tokio::test]
async fn a_500_that_says_validation_is_not_resent_and_keeps_its_cause() {
    let cause = "messages.1.content: Input should be a valid string";
    let detail = format!("{} {cause}", "1 validation error for CreateChatCompletionRequest;".repeat(5));
    let server = failing_server(500, json!({"detail": detail})).await;
    let err = Agent::new(resending(&server, 4), Toolset::new()).unwrap().run("hi").await.unwrap_err();
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    match &err.error {
        ModelError::Server { status: 500, attempts: 1, excerpt, .. } => {
            assert!(excerpt.ends_with(cause), "{excerpt}")
        }
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// A plain 500 may pass on a second try; a 408 (timeout) and a 409
/// (conflict) too; a 400 never does.
#[tokio::test]
async fn transient_statuses_are_resent_and_others_are_not() {
    for (status, sent) in [(500, 3), (408, 3), (409, 3), (400, 1), (422, 1)] {
        let server = failing_server(status, json!({"error": {"message": "no", "type": "x"}})).await;
        let err = Agent::new(resending(&server, 3), Toolset::new()).unwrap().run("hi").await.unwrap_err();
        assert_eq!(server.received_requests().await.unwrap().len(), sent, "HTTP {status}: {err}");
    }
}
