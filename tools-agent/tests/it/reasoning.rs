//! What a model carries between turns, and the endings that are not an
//! answer, streamed and plain, against a mock of each provider on loopback.
//! Every body is shaped as the provider's documentation shows it:
//! - Anthropic, a streamed thinking turn:
//!   <https://docs.anthropic.com/en/docs/build-with-claude/streaming> ("Streaming
//!   request with extended thinking": `thinking_delta`, `signature_delta`),
//!   redacted thinking and `pause_turn`:
//!   <https://platform.claude.com/docs/en/build-with-claude/extended-thinking>,
//!   <https://docs.anthropic.com/en/docs/build-with-claude/handling-stop-reasons>,
//!   the web search tool's blocks:
//!   <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool>;
//! - Gemini 3, signed sequential calls and a signed text part, streamed:
//!   <https://ai.google.dev/gemini-api/docs/thought-signatures>; `finishReason`
//!   and `finishMessage`: <https://ai.google.dev/api/generate-content#FinishReason>;
//! - Responses, a reasoning item streamed (`response.reasoning_summary_text.delta`,
//!   the items whole in `response.completed`):
//!   <https://platform.openai.com/docs/api-reference/responses-streaming>;
//! - Chat Completions from a compatible server, `reasoning_content` deltas:
//!   <https://api-docs.deepseek.com/guides/thinking_mode>.

use serde_json::{Value, json};
use toolcall_agent::{
    Agent, AgentEvent, Anthropic, ApiKey, Gemini, LimitExceeded, ModelError, OpenAiChat, OpenAiResponses,
    StopReason,
};
use wiremock::ResponseTemplate;

use crate::scenarios::mock;
use crate::support::ag::{bodies, sse, tools};
use crate::support::openai::run;

fn event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn data(data: Value) -> String {
    format!("data: {data}\n\n")
}

fn reasoning_deltas(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ReasoningDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";

fn anthropic(server: &wiremock::MockServer) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5").with_api_key(ApiKey::new("sk-ant-test")).with_base_url(server.uri())
}

/// A text answer, whole or streamed.
fn anthropic_answer(text: &str, streamed: bool) -> ResponseTemplate {
    if !streamed {
        return ResponseTemplate::new(200).set_body_json(json!({"id": "msg_02", "type": "message",
            "role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 30, "output_tokens": 9}}));
    }
    sse([
        event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_02", "type": "message",
            "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 30, "output_tokens": 1}}}),
        ),
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}),
        ),
        event("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn",
            "stop_sequence": null}, "usage": {"output_tokens": 9}}),
        ),
        event("message_stop", json!({"type": "message_stop"})),
    ]
    .concat())
}

/// A thinking block, a redacted one, text and a call, streamed.
fn anthropic_thinking_stream() -> String {
    let block = |index: u32, block: Value| {
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": block}),
        )
    };
    let delta = |index: u32, delta: Value| {
        event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": delta}))
    };
    let stop =
        |index: u32| event("content_block_stop", json!({"type": "content_block_stop", "index": index}));
    [
        event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_01", "type": "message",
            "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        ),
        block(0, json!({"type": "thinking", "thinking": ""})),
        delta(0, json!({"type": "thinking_delta", "thinking": "Paris is in France, "})),
        delta(0, json!({"type": "thinking_delta", "thinking": "so the weather tool."})),
        delta(0, json!({"type": "signature_delta", "signature": SIGNATURE})),
        stop(0),
        block(1, json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"})),
        stop(1),
        block(2, json!({"type": "text", "text": ""})),
        delta(2, json!({"type": "text_delta", "text": "Checking."})),
        stop(2),
        block(3, json!({"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}})),
        delta(3, json!({"type": "input_json_delta", "partial_json": "{\"city\": \"Pa"})),
        delta(3, json!({"type": "input_json_delta", "partial_json": "ris\"}"})),
        stop(3),
        event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use",
            "stop_sequence": null}, "usage": {"output_tokens": 89}}),
        ),
        event("message_stop", json!({"type": "message_stop"})),
    ]
    .concat()
}

#[tokio::test]
async fn anthropic_streamed_thinking_is_shown_and_goes_back_whole_in_its_place() {
    let server = mock(vec![sse(anthropic_thinking_stream()), anthropic_answer("12°C in Paris.", true)]).await;
    let agent = Agent::new(anthropic(&server), tools()).unwrap();
    let (result, events) = run(&agent, "Weather in Paris?", true).await;
    let result = result.unwrap();
    assert_eq!(result.answer, "12°C in Paris.");
    assert_eq!(reasoning_deltas(&events), "Paris is in France, so the weather tool.");
    let sent = bodies(&server).await;
    assert_eq!(
        sent[1]["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Paris is in France, so the weather tool.", "signature": SIGNATURE},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}]})
    );
}

#[tokio::test]
async fn anthropic_pause_turn_is_continued_with_no_new_message() {
    let search = json!({"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
        "input": {"query": "weather Paris"}});
    let found = json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
        {"type": "web_search_result", "url": "https://weather.example/paris", "title": "Paris",
         "encrypted_content": "EqgfCioIARgBIiQ3", "page_age": "December 6, 2026"}]});
    let paused = |content: Vec<Value>| {
        ResponseTemplate::new(200).set_body_json(json!({"id": "msg_01", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": content, "stop_reason": "pause_turn", "stop_sequence": null,
            "usage": {"input_tokens": 25, "output_tokens": 40}}))
    };
    for streamed in [false, true] {
        let first = if streamed {
            let mut stream = event(
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_01",
                "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5",
                "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1}}}),
            );
            let mut start = search.clone();
            start["input"] = json!({});
            stream += &event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": start}),
            );
            stream += &event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"weather Paris\"}"}}),
            );
            stream += &event("content_block_stop", json!({"type": "content_block_stop", "index": 0}));
            stream += &event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 1, "content_block": found}),
            );
            stream += &event("content_block_stop", json!({"type": "content_block_stop", "index": 1}));
            stream += &event(
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "pause_turn",
                "stop_sequence": null}, "usage": {"output_tokens": 40}}),
            );
            stream += &event("message_stop", json!({"type": "message_stop"}));
            sse(stream)
        } else {
            paused(vec![search.clone(), found.clone()])
        };
        let server = mock(vec![first, anthropic_answer("Sunny, 12°C.", streamed)]).await;
        let agent = Agent::new(anthropic(&server), tools()).unwrap();
        let (result, _) = run(&agent, "Weather in Paris?", streamed).await;
        let result = result.unwrap();
        assert_eq!((result.answer.as_str(), &result.stop), ("Sunny, 12°C.", &StopReason::Answered));
        let sent = bodies(&server).await;
        assert_eq!(sent.len(), 2);
        // The paused turn went back as it came, last, with the same tools.
        let messages = sent[1]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2, "{streamed}: no new user message: {messages:?}");
        assert_eq!(messages[1], json!({"role": "assistant", "content": [search, found]}), "{streamed}");
        assert_eq!(sent[1]["tools"], sent[0]["tools"]);
    }
}

fn gemini(server: &wiremock::MockServer) -> Gemini {
    Gemini::new("gemini-3-pro-preview").with_api_key(ApiKey::new("AIza-test")).with_base_url(server.uri())
}

fn gemini_chunk(parts: Value, finish: Option<&str>) -> String {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(finish) = finish {
        candidate["finishReason"] = json!(finish);
    }
    data(
        json!({"candidates": [candidate], "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 8,
        "thoughtsTokenCount": 40, "totalTokenCount": 78}, "modelVersion": "gemini-3-pro-preview"}),
    )
}

#[tokio::test]
async fn gemini_3_signatures_of_sequential_calls_stay_on_their_parts_streamed() {
    let weather = json!({"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
        "thoughtSignature": "c2lnLTE="});
    let time = json!({"functionCall": {"name": "local_time", "args": {"zone": "Europe/Paris"}},
        "thoughtSignature": "c2lnLTI="});
    let server = mock(vec![
        sse(gemini_chunk(json!([{"text": "The weather first.", "thought": true}]), None)
            + &gemini_chunk(json!([weather]), Some("STOP"))),
        sse(gemini_chunk(json!([time]), Some("STOP"))),
        // A text answer may carry its signature on an empty last part.
        sse(gemini_chunk(json!([{"text": "12°C at noon."}]), None)
            + &gemini_chunk(json!([{"text": "", "thoughtSignature": "c2lnLTM="}]), Some("STOP"))),
    ])
    .await;
    let agent = Agent::new(gemini(&server), tools()).unwrap();
    let (result, events) = run(&agent, "Weather and time in Paris?", true).await;
    let result = result.unwrap();
    assert_eq!(result.answer, "12°C at noon.");
    assert_eq!(reasoning_deltas(&events), "The weather first.");
    let sent = bodies(&server).await;
    let model_turn = |request: &Value, index: usize| request["contents"][index]["parts"].clone();
    assert_eq!(
        model_turn(&sent[1], 1),
        json!([{"text": "The weather first.", "thought": true},
               {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnLTE="}])
    );
    // Each step of the turn keeps its own signature.
    assert_eq!(model_turn(&sent[2], 1), model_turn(&sent[1], 1));
    assert_eq!(model_turn(&sent[2], 3), json!([time]));
    // The saved transcript holds the answer's signature too.
    let last = serde_json::to_value(result.transcript.messages.last().unwrap()).unwrap();
    assert_eq!(
        last["content"][1],
        json!({"type": "reasoning", "format": "thought_signature", "signature": "c2lnLTM="})
    );
}

#[tokio::test]
async fn gemini_a_malformed_call_goes_back_to_the_model_within_the_retry_budget() {
    let malformed = || {
        ResponseTemplate::new(200).set_body_json(json!({"candidates": [{"content": {"role": "model"},
            "finishReason": "MALFORMED_FUNCTION_CALL", "finishMessage": "Malformed function call: get_weather(city=Paris",
            "index": 0}], "usageMetadata": {"promptTokenCount": 30, "totalTokenCount": 30}}))
    };
    let answer = ResponseTemplate::new(200)
        .set_body_json(json!({"candidates": [{"content": {"role": "model",
        "parts": [{"text": "12°C in Paris."}]}, "finishReason": "STOP", "index": 0}]}));
    let server = mock(vec![malformed(), answer]).await;
    let result = Agent::new(gemini(&server), tools()).unwrap().run("Weather in Paris?").await.unwrap();
    assert_eq!((result.answer.as_str(), &result.stop), ("12°C in Paris.", &StopReason::Answered));
    let sent = bodies(&server).await;
    let contents = sent[1]["contents"].as_array().unwrap();
    let told = contents.last().unwrap()["parts"][0]["text"].as_str().unwrap();
    assert!(told.contains("MALFORMED_FUNCTION_CALL: Malformed function call"), "{told}");

    // Past the budget (3 in a row by default), the run stops and says why.
    let server = mock((0..4).map(|_| malformed()).collect()).await;
    let result = Agent::new(gemini(&server), tools()).unwrap().run("Weather in Paris?").await.unwrap();
    assert!(
        matches!(&result.stop, StopReason::Budget(LimitExceeded::Malformed { limit: 3, count: 4, reason })
            if reason.starts_with("MALFORMED_FUNCTION_CALL")),
        "{:?}",
        result.stop
    );
}

#[tokio::test]
async fn gemini_an_empty_candidate_is_an_error_not_an_empty_answer() {
    let empty = json!({"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP", "index": 0}]});
    for streamed in [false, true] {
        let reply = if streamed {
            sse(data(empty.clone()))
        } else {
            ResponseTemplate::new(200).set_body_json(empty.clone())
        };
        let server = mock(vec![reply]).await;
        let agent = Agent::new(gemini(&server), tools()).unwrap();
        let (result, _) = run(&agent, "Hi", streamed).await;
        let error = result.unwrap_err();
        assert!(matches!(error.error, ModelError::Empty { .. }), "{streamed}: {error}");
        assert_eq!(error.error.to_string(), "gemini sent an empty answer (STOP): no text and no tool call");
    }
}

#[tokio::test]
async fn responses_streamed_reasoning_items_go_back_before_their_calls() {
    let reasoning = json!({"type": "reasoning", "id": "rs_6876cf02e0bc8192", "summary": [
        {"type": "summary_text", "text": "**Weather first**"}], "encrypted_content": "gAAAAABodnQC-opaque"});
    let call = json!({"type": "function_call", "id": "fc_6876cf0c", "call_id": "call_1", "name": "get_weather",
        "arguments": "{\"city\":\"Paris\"}", "status": "completed"});
    let response = |output: Value, status: &str| {
        json!({"id": "resp_1", "object": "response", "created_at": 1752567554, "status": status, "error": null,
            "incomplete_details": null, "model": "o4-mini-2025-04-16", "output": output,
            "usage": {"input_tokens": 60, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 150,
                "output_tokens_details": {"reasoning_tokens": 128}, "total_tokens": 210}})
    };
    let stream = [
        event(
            "response.created",
            json!({"type": "response.created", "response": response(json!([]), "in_progress")}),
        ),
        event(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_6876cf02e0bc8192", "summary": []}}),
        ),
        event(
            "response.reasoning_summary_text.delta",
            json!({"type": "response.reasoning_summary_text.delta",
            "item_id": "rs_6876cf02e0bc8192", "output_index": 0, "summary_index": 0, "delta": "**Weather"}),
        ),
        event(
            "response.reasoning_summary_text.delta",
            json!({"type": "response.reasoning_summary_text.delta",
            "item_id": "rs_6876cf02e0bc8192", "output_index": 0, "summary_index": 0, "delta": " first**"}),
        ),
        event(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning}),
        ),
        event(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 1,
            "item": {"type": "function_call", "id": "fc_6876cf0c", "call_id": "call_1", "name": "get_weather",
                "arguments": "", "status": "in_progress"}}),
        ),
        event(
            "response.function_call_arguments.delta",
            json!({"type": "response.function_call_arguments.delta",
            "item_id": "fc_6876cf0c", "output_index": 1, "delta": "{\"city\":\"Paris\"}"}),
        ),
        event(
            "response.completed",
            json!({"type": "response.completed",
            "response": response(json!([reasoning, call]), "completed")}),
        ),
    ]
    .concat();
    let answer = response(
        json!([{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": "12°C in Paris.", "annotations": []}]}]),
        "completed",
    );
    let answer = event("response.completed", json!({"type": "response.completed", "response": answer}));
    let server = mock(vec![sse(stream), sse(answer)]).await;
    let v1 = format!("{}/v1", server.uri());
    let model = OpenAiResponses::from_values("o4-mini", Some(ApiKey::new("sk-test")), Some(&v1));
    let agent = Agent::new(model, tools()).unwrap();
    let (result, events) = run(&agent, "Weather in Paris?", true).await;
    assert_eq!(result.unwrap().answer, "12°C in Paris.");
    assert_eq!(reasoning_deltas(&events), "**Weather first**");
    let sent = bodies(&server).await;
    assert_eq!(
        sent[1]["input"][1],
        json!({"type": "reasoning", "id": "rs_6876cf02e0bc8192",
        "summary": [{"type": "summary_text", "text": "**Weather first**"}], "encrypted_content": "gAAAAABodnQC-opaque"})
    );
    assert_eq!(sent[1]["input"][2]["type"], "function_call");
}

#[tokio::test]
async fn responses_a_failed_response_is_an_error_naming_its_error() {
    let failed = json!({"id": "resp_1", "object": "response", "created_at": 1752567554, "status": "failed",
        "error": {"code": "server_error", "message": "The model failed to generate a response."},
        "incomplete_details": null, "model": "o4-mini", "output": []});
    let server = mock(vec![ResponseTemplate::new(200).set_body_json(failed)]).await;
    let v1 = format!("{}/v1", server.uri());
    let model = OpenAiResponses::from_values("o4-mini", Some(ApiKey::new("sk-test")), Some(&v1));
    let error = Agent::new(model, tools()).unwrap().run("Hi").await.unwrap_err();
    assert_eq!(
        error.error.to_string(),
        "openai rejected the request (HTTP 200): the response failed: server_error: The model failed to generate a response."
    );
}

#[tokio::test]
async fn chat_streamed_reasoning_content_goes_back_on_its_message() {
    let chunk = |delta: Value, finish: Value| {
        data(json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741569952,
            "model": "deepseek-reasoner", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
    };
    let stream = [
        chunk(
            json!({"role": "assistant", "content": null, "reasoning_content": "The user wants "}),
            Value::Null,
        ),
        chunk(json!({"reasoning_content": "the weather."}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let answer = [
        chunk(json!({"role": "assistant", "content": "12°C in Paris."}), Value::Null),
        chunk(json!({}), json!("stop")),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let server = mock(vec![sse(stream), sse(answer)]).await;
    let v1 = format!("{}/v1", server.uri());
    let agent = Agent::new(OpenAiChat::from_values("deepseek-reasoner", None, Some(&v1)), tools()).unwrap();
    let (result, events) = run(&agent, "Weather in Paris?", true).await;
    assert_eq!(result.unwrap().answer, "12°C in Paris.");
    assert_eq!(reasoning_deltas(&events), "The user wants the weather.");
    let sent = bodies(&server).await;
    let assistant = &sent[1]["messages"][1];
    assert_eq!(assistant["reasoning_content"], "The user wants the weather.");
    assert_eq!(assistant["content"], "");
}
