//! The providers' own context management ([`Strategy::Native`]), against
//! each client's mock on loopback, asserting on what the mock received.
//!
//! The bodies are shaped as the providers document them:
//! - Anthropic's context editing (the `context_management.edits` of a
//!   request, the `context-management-2025-06-27` beta, the response's
//!   `context_management.applied_edits`):
//!   <https://platform.claude.com/docs/en/build-with-claude/context-editing>;
//!   its server-side compaction (the `compact_20260112` edit, the
//!   `compact-2026-01-12` beta, the `compaction` block, streamed as a
//!   `compaction_delta`): <https://platform.claude.com/docs/en/build-with-claude/compaction>;
//! - the Responses API's server-side compaction (`context_management:
//!   [{"type": "compaction", "compact_threshold"}]`, the `compaction` output
//!   item with its `encrypted_content`, sent back in `input`, the items
//!   before it left out): <https://developers.openai.com/api/docs/guides/compaction>;
//! - and the official SDKs' types for the exact fields (`anthropic`'s
//!   `BetaCompactionBlock`, `BetaClearToolUses20250919EditResponse`;
//!   `openai`'s `ResponseCompactionItem`, `response_create_params.ContextManagement`).

use serde_json::{Value, json};
use toolcall_agent::{
    Agent, Anthropic, ApiKey, Content, ContextPolicy, Gemini, Message, ModelError, NativeContext, OpenAiChat,
    OpenAiResponses, ReasoningEffort, ReasoningSettings, Strategy, Transcript,
};
use wiremock::MockServer;

use crate::support::ag::{sse, tools};
use crate::support::replies;

/// A conversation of `turns` answered questions of 4 KB each (about
/// 1,000 tokens by the policy's estimate), and a new one.
fn long_conversation(turns: usize) -> Transcript {
    let mut transcript = Transcript::new().with_instructions("Be brief.");
    for turn in 0..turns {
        transcript.push(Message::user(format!("Question {turn}: {}", "x".repeat(4_000))));
        transcript.push(Message::assistant(format!("Answer {turn}."), []));
    }
    transcript.push(Message::user("Weather in Paris?"));
    transcript
}

/// The policy of these tests: the provider's own, else the oldest turns
/// dropped, at a budget of 60,000 tokens (or `budget`).
fn policy(budget: u64, native: NativeContext, fallback: bool) -> ContextPolicy {
    let mut strategies = vec![Strategy::Native(native)];
    if fallback {
        strategies.push(Strategy::DropOldestTurns);
    }
    ContextPolicy::new(budget).with_strategies(strategies)
}

fn key() -> Option<ApiKey> {
    Some(ApiKey::new("sk-test-native-context"))
}

/// A Messages response, as <https://docs.anthropic.com/en/api/messages>
/// shows it, with these content blocks and the context edits applied.
fn anthropic_message(content: Value, stop: &str) -> Value {
    json!({
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-6", "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 52_000, "output_tokens": 40},
        "context_management": {"applied_edits": [
            {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 8, "cleared_input_tokens": 50_000}]}
    })
}

/// The compaction block of the compaction page's example response.
fn compaction_block() -> Value {
    json!({"type": "compaction", "content": "Summary of the conversation: the user asked 30 questions, each answered."})
}

fn weather_call() -> Value {
    json!({"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
        "input": {"city": "Paris"}})
}

/// The compaction turn as a stream of events: the block starts empty, its
/// summary comes in one `compaction_delta`, then the call.
fn anthropic_stream() -> String {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut out = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_01", "type": "message", "role": "assistant",
            "content": [], "model": "claude-sonnet-4-6", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 52_000, "output_tokens": 1}}}),
    );
    out += &event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "compaction", "content": null}}),
    );
    out += &event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta",
            "content": compaction_block()["content"]}}),
    );
    out += &event("content_block_stop", json!({"type": "content_block_stop", "index": 0}));
    out += &event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use",
            "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {}}}),
    );
    out += &event(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta",
            "partial_json": "{\"city\": \"Paris\"}"}}),
    );
    out += &event("content_block_stop", json!({"type": "content_block_stop", "index": 1}));
    out += &event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 40}, "context_management": {"applied_edits": []}}),
    );
    out += &event("message_stop", json!({"type": "message_stop"}));
    out
}

async fn anthropic_mock(streamed: bool) -> MockServer {
    let first = if streamed {
        sse(anthropic_stream())
    } else {
        wiremock::ResponseTemplate::new(200)
            .set_body_json(anthropic_message(json!([compaction_block(), weather_call()]), "tool_use"))
    };
    let last = anthropic_message(json!([{"type": "text", "text": "12°C in Paris."}]), "end_turn");
    let last = if streamed {
        let text = json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "12°C in Paris."}});
        let events = [
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_02", "type": "message",
                "role": "assistant", "content": [], "model": "claude-sonnet-4-6", "stop_reason": null,
                "usage": {"input_tokens": 900, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
            ),
            ("content_block_delta", text),
            ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 8}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ];
        sse(events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect())
    } else {
        wiremock::ResponseTemplate::new(200).set_body_json(last)
    };
    let server = MockServer::start().await;
    for (at, reply) in [first, last].into_iter().enumerate() {
        wiremock::Mock::given(wiremock::matchers::method("POST"))
            .respond_with(reply)
            .up_to_n_times(1)
            .with_priority(u8::try_from(at + 1).unwrap())
            .mount(&server)
            .await;
    }
    server
}

/// Anthropic: every request carries the edits (the trigger at the budget)
/// and their betas beside the application's own, sends the whole
/// transcript (the API edits it), and the compaction block comes back into
/// the transcript and goes back in the next request, where it came.
async fn anthropic_edits_and_compaction(streamed: bool) {
    let server = anthropic_mock(streamed).await;
    let model = Anthropic::from_values("claude-sonnet-4-6", key(), Some(&server.uri())).with_header(
        reqwest::header::HeaderName::from_static("anthropic-beta"),
        reqwest::header::HeaderValue::from_static("files-api-2025-04-14"),
    );
    let native = NativeContext::new().with_keep_tool_uses(2).with_clear_at_least(5_000).with_compaction(true);
    let agent = Agent::new(model, tools()).unwrap().with_context_policy(policy(60_000, native, true));
    // About 70,000 tokens: over the budget, which the fallback would
    // bring the request under by dropping turns, but Anthropic keeps it.
    let transcript = long_conversation(70);
    let (result, _) = crate::support::openai::run(&agent, transcript.clone(), streamed).await;
    let result = result.unwrap();
    assert_eq!(result.answer, "12°C in Paris.");

    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 2);
    let expected_edits = json!({"edits": [
        {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 60_000},
         "keep": {"type": "tool_uses", "value": 2}, "clear_at_least": {"type": "input_tokens", "value": 5_000}},
        {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 60_000}}]});
    for request in &requests {
        let beta = request.headers.get("anthropic-beta").unwrap().to_str().unwrap();
        assert_eq!(beta, "files-api-2025-04-14,context-management-2025-06-27,compact-2026-01-12");
        let body: Value = request.body_json().unwrap();
        assert_eq!(body["context_management"], expected_edits);
    }
    // The whole transcript went: nothing dropped by the fallback.
    let first: Value = requests[0].body_json().unwrap();
    assert_eq!(first["messages"].as_array().unwrap().len(), 141);
    // The next request: the compaction block first in the assistant turn,
    // as it came, then the call.
    let second: Value = requests[1].body_json().unwrap();
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 143);
    let assistant = &messages[141];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"][0], compaction_block());
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    assert_eq!(messages[142]["content"][0]["type"], "tool_result");

    // The transcript keeps everything, the block as a native piece, and
    // comes back the same from its JSON.
    let kept = &result.transcript;
    assert_eq!(kept.messages.len(), transcript.messages.len() + 3);
    let Message::Assistant { content } = &kept.messages[141] else { panic!("{:?}", kept.messages[141]) };
    assert_eq!(content[0], Content::Native { provider: "anthropic".into(), item: compaction_block() });
    let saved = serde_json::to_string(kept).unwrap();
    assert_eq!(&serde_json::from_str::<Transcript>(&saved).unwrap(), kept);
}

#[tokio::test]
async fn anthropic_sends_the_edits_and_keeps_the_compaction_block() {
    anthropic_edits_and_compaction(false).await;
}

#[tokio::test]
async fn anthropic_sends_the_edits_and_keeps_the_compaction_block_streamed() {
    anthropic_edits_and_compaction(true).await;
}

#[tokio::test]
async fn anthropic_thinking_clearing_comes_first_and_needs_thinking() {
    let server =
        replies::mock(vec![anthropic_message(json!([{"type": "text", "text": "Done."}]), "end_turn")]).await;
    let native = NativeContext::new().with_keep_thinking_turns(2).with_exclude_tools(["get_time"]);
    let model = || Anthropic::from_values("claude-sonnet-4-6", key(), Some(&server.uri()));
    // Without thinking: refused, nothing sent.
    let agent =
        Agent::new(model(), tools()).unwrap().with_context_policy(policy(80_000, native.clone(), false));
    let error = agent.run("Hi").await.unwrap_err().to_string();
    assert!(error.contains("native_context.keep_thinking") && error.contains("thinking on"), "{error}");
    assert!(replies::received(&server).await.is_empty());
    // With thinking: the thinking edit first.
    let settings = toolcall_agent::ModelSettings::default()
        .with_reasoning(ReasoningSettings::new().with_effort(ReasoningEffort::High));
    let agent = Agent::new(model(), tools())
        .unwrap()
        .with_settings(settings)
        .with_context_policy(policy(80_000, native, false));
    agent.run("Hi").await.unwrap();
    let body = &replies::received(&server).await[0];
    assert_eq!(
        body["context_management"]["edits"],
        json!([{"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}},
            {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 80_000},
             "exclude_tools": ["get_time"]}])
    );
}

#[tokio::test]
async fn anthropic_compaction_under_its_least_trigger_is_refused() {
    let server = replies::mock(vec![]).await;
    let model = Anthropic::from_values("claude-sonnet-4-6", key(), Some(&server.uri()));
    let native = NativeContext::new().with_compaction(true);
    let agent = Agent::new(model, tools()).unwrap().with_context_policy(policy(20_000, native, false));
    let error = agent.run("Hi").await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("50000") && text.contains("20000"), "{text}");
    assert!(replies::received(&server).await.is_empty());
}

/// A Responses response, as <https://platform.openai.com/docs/api-reference/responses/object>
/// shows it, with these output items.
fn responses_body(output: Value) -> Value {
    json!({"id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b", "object": "response",
        "created_at": 1_741_476_542, "status": "completed", "model": "gpt-5.2", "output": output,
        "usage": {"input_tokens": 61_000, "output_tokens": 30, "total_tokens": 61_030}})
}

/// The compaction item of the compaction guide: opaque, encrypted.
fn compaction_item() -> Value {
    json!({"type": "compaction", "id": "cmp_68ab12cd34ef", "encrypted_content": "gAAAAABoQ3Tx8-compacted-window"})
}

/// The Responses API: the request asks for compaction at the budget; the
/// compaction item comes back into the transcript, and the next request
/// sends it in place of everything before it (the function call and its
/// output after it); the transcript keeps it all.
async fn responses_compaction(streamed: bool) {
    let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
        "arguments": "{\"city\":\"Paris\"}", "status": "completed"});
    let first = responses_body(json!([compaction_item(), call]));
    let message = json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": "12°C in Paris.", "annotations": []}]});
    let last = responses_body(json!([message]));
    let reply = |body: Value| {
        if !streamed {
            return wiremock::ResponseTemplate::new(200).set_body_json(body);
        }
        let mut events = String::new();
        for (index, item) in body["output"].as_array().unwrap().iter().enumerate() {
            let added = json!({"type": "response.output_item.added", "output_index": index, "item": item});
            events += &format!("event: response.output_item.added\ndata: {added}\n\n");
        }
        let done = json!({"type": "response.completed", "response": body});
        events += &format!("event: response.completed\ndata: {done}\n\n");
        sse(events)
    };
    let server = crate::support::openai::mock("responses", vec![reply(first), reply(last)]).await;
    let model = OpenAiResponses::from_values("gpt-5.2", key(), Some(&format!("{}/v1", server.uri())));
    let agent =
        Agent::new(model, tools()).unwrap().with_context_policy(policy(60_000, NativeContext::new(), true));
    // Over the budget by the estimate, as above: the provider compacts it.
    let transcript = long_conversation(70);
    let (result, _) = crate::support::openai::run(&agent, transcript.clone(), streamed).await;
    let result = result.unwrap();
    assert_eq!(result.answer, "12°C in Paris.");

    let bodies = crate::support::openai::bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_eq!(body["context_management"], json!([{"type": "compaction", "compact_threshold": 60_000}]));
        assert_eq!(body["store"], false);
    }
    // The first request: the whole transcript, nothing dropped by the
    // fallback.
    assert_eq!(bodies[0]["input"].as_array().unwrap().len(), 141);
    // The next: the compaction item in place of the 141 items before it.
    let input = bodies[1]["input"].as_array().unwrap();
    assert_eq!(input.len(), 3, "{input:#?}");
    assert_eq!(input[0], compaction_item());
    assert_eq!(input[1]["type"], "function_call");
    assert_eq!(
        (input[2]["type"].as_str(), input[2]["call_id"].as_str()),
        (Some("function_call_output"), Some("call_1"))
    );

    let kept = &result.transcript;
    assert_eq!(kept.messages.len(), transcript.messages.len() + 3);
    let Message::Assistant { content } = &kept.messages[141] else { panic!("{:?}", kept.messages[141]) };
    assert_eq!(content[0], Content::Native { provider: "openai_responses".into(), item: compaction_item() });
    let saved = serde_json::to_string(kept).unwrap();
    assert_eq!(&serde_json::from_str::<Transcript>(&saved).unwrap(), kept);
}

#[tokio::test]
async fn responses_compaction_item_replaces_what_it_covers() {
    responses_compaction(false).await;
}

#[tokio::test]
async fn responses_compaction_item_replaces_what_it_covers_streamed() {
    responses_compaction(true).await;
}

#[tokio::test]
async fn responses_refuse_anthropics_options() {
    let server = replies::mock(vec![]).await;
    let model = OpenAiResponses::from_values("gpt-5.2", key(), Some(&format!("{}/v1", server.uri())));
    let native = NativeContext::new().with_keep_tool_uses(3);
    let agent = Agent::new(model, tools()).unwrap().with_context_policy(policy(60_000, native, true));
    let error = agent.run("Hi").await.unwrap_err().to_string();
    assert!(error.contains("native_context.keep_tool_uses"), "{error}");
    assert!(replies::received(&server).await.is_empty());
}

/// A Chat Completions answer.
fn chat_answer() -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
}

/// A generateContent answer.
fn gemini_answer() -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}})
}

/// Chat Completions and Gemini have no mechanism of their own: with a
/// fallback strategy, it keeps the budget and nothing native is sent;
/// with `Native` alone, the request is refused before it is sent.
#[tokio::test]
async fn the_other_clients_fall_back_or_refuse() {
    type Make = fn(&str) -> Agent;
    let clients: [(&str, Make, Value, &str); 2] = [
        (
            "openai (Chat Completions)",
            |uri| {
                Agent::new(OpenAiChat::from_values("gpt-4.1", key(), Some(&format!("{uri}/v1"))), tools())
                    .unwrap()
            },
            chat_answer(),
            "messages",
        ),
        (
            "gemini",
            |uri| Agent::new(Gemini::from_values("gemini-2.5-flash", key(), Some(uri)), tools()).unwrap(),
            gemini_answer(),
            "contents",
        ),
    ];
    for (name, make, answer, messages) in clients {
        // With a fallback: the oldest turns dropped to the budget.
        let server = replies::mock(vec![answer]).await;
        let agent = make(&server.uri()).with_context_policy(policy(4_000, NativeContext::new(), true));
        let transcript = long_conversation(40);
        let result = agent.run(transcript.clone()).await.unwrap();
        assert_eq!(result.transcript.messages.len(), transcript.messages.len() + 1, "{name}");
        let body = &replies::received(&server).await[0];
        assert!(body.get("context_management").is_none(), "{name}: {body}");
        let sent = body[messages].as_array().unwrap().len();
        assert!(sent < 20, "{name}: {sent} messages sent");

        // Native alone: refused, naming the provider and the setting.
        let server = replies::mock(vec![]).await;
        let agent = make(&server.uri()).with_context_policy(policy(4_000, NativeContext::new(), false));
        let error = agent.run(transcript).await.unwrap_err();
        let text = error.to_string();
        assert!(text.contains(name) && text.contains("native_context"), "{text}");
        assert!(matches!(error.error, ModelError::Setting { .. }), "{error:?}");
        assert!(replies::received(&server).await.is_empty(), "{name}");
    }
}
