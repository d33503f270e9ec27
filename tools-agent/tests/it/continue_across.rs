//! A run saved on one provider's client and continued on another's: the
//! provider-neutral transcript is turned into each API's own messages.

use serde_json::{Value, json};
use toolcall_agent::{Agent, Anthropic, ApiKey, Message, OpenAiChat, StopReason, Transcript};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolContext, ToolError};
use toolcall_macros::tool;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Current temperature for a city.
#[tool(args, crate = "toolcall_core")]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("12°C in {city}"))
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests.iter().map(|request| serde_json::from_slice(&request.body).unwrap_or(Value::Null)).collect()
}

#[tokio::test]
async fn a_run_on_openai_continues_on_anthropic() {
    let tools = Toolset::builder().add(GetWeather).build().unwrap();

    // Chat Completions, shaped as https://platform.openai.com/docs/api-reference/chat/object shows.
    let openai = MockServer::start().await;
    let call = json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_abc", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}});
    let answer = json!({"id": "chatcmpl-2", "object": "chat.completion", "created": 2, "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "12°C in Oslo."}}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}});
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(call))
        .up_to_n_times(1)
        .mount(&openai)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&openai)
        .await;
    let gpt = OpenAiChat::from_values(
        "gpt-4.1",
        Some(ApiKey::new("sk-test")),
        Some(&format!("{}/v1", openai.uri())),
    );
    let first = Agent::new(gpt, tools.clone())
        .unwrap()
        .with_instructions("Be brief.")
        .run("Weather in Oslo?")
        .await
        .unwrap();
    assert_eq!((first.answer.as_str(), &first.stop), ("12°C in Oslo.", &StopReason::Answered));

    // Saved, loaded, one more question, continued on Anthropic.
    let saved = serde_json::to_string(&first.transcript).unwrap();
    let mut transcript: Transcript = serde_json::from_str(&saved).unwrap();
    transcript.push(Message::user("And in Rome?"));

    // Messages API, shaped as https://docs.anthropic.com/en/api/messages shows.
    let anthropic = MockServer::start().await;
    let reply = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "I can look Rome up next."}],
        "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 50, "output_tokens": 7}});
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply))
        .mount(&anthropic)
        .await;
    let claude = Anthropic::new("claude-sonnet-4-5")
        .with_api_key(ApiKey::new("sk-ant-test"))
        .with_base_url(anthropic.uri());
    let second = Agent::new(claude, tools).unwrap().run(transcript).await.unwrap();
    assert_eq!(second.answer, "I can look Rome up next.");
    assert_eq!(second.transcript.messages.len(), 6);

    // What Anthropic received: the OpenAI turn as tool_use and tool_result
    // blocks with the same id, then the text, then the new question.
    let sent = bodies(&anthropic).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["system"][0]["text"], "Be brief.");
    let messages = sent[0]["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap_or("?")).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    let tool_use = &messages[1]["content"][0];
    assert_eq!(tool_use["type"], "tool_use");
    assert_eq!(tool_use["id"], "call_abc");
    assert_eq!(tool_use["name"], "get_weather");
    assert_eq!(tool_use["input"], json!({"city": "Oslo"}));
    let tool_result = &messages[2]["content"][0];
    assert_eq!(tool_result["type"], "tool_result");
    assert_eq!(tool_result["tool_use_id"], "call_abc");
    assert!(tool_result.to_string().contains("12°C in Oslo"), "{tool_result}");
    assert!(messages[3].to_string().contains("12°C in Oslo."), "{}", messages[3]);
    assert!(messages[4].to_string().contains("And in Rome?"), "{}", messages[4]);
}
