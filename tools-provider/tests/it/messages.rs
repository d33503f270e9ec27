//! Each provider's assistant message parsed into the turn's calls, and the
//! turn's results formatted back, on payloads shaped as the providers'
//! documentation shows them; malformed payloads give errors, not panics.

use serde_json::{Value, json};
use toolcall_core::{Outcome, ToolCall, ToolResult};
use toolcall_provider::Dialect;

fn result(call: &ToolCall, content: &str, outcome: Outcome) -> ToolResult {
    ToolResult::new(call.id.clone(), call.name.clone(), content, outcome)
}

/// A turn's results for these calls: the first succeeds with JSON, the second fails.
fn results(calls: &[ToolCall]) -> Vec<ToolResult> {
    vec![
        result(&calls[0], r#"{"celsius":21}"#, Outcome::Success),
        result(&calls[1], r#"{"error":"no such city"}"#, Outcome::Failed),
    ]
}

/// From the Chat Completions function-calling guide: parallel calls, string arguments.
fn chat_response() -> Value {
    json!({
        "id": "chatcmpl-abc123",
        "object": "chat.completion",
        "model": "gpt-4.1",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {"id": "call_12345xyz", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}"}},
                    {"id": "call_67890abc", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"location\":\"Bogotá, Colombia\"}"}}
                ]
            },
            "finish_reason": "tool_calls"
        }]
    })
}

/// Shaped as the Responses API reference shows: a reasoning item, then two `function_call` items.
fn responses_response() -> Value {
    json!({
        "id": "resp_67ccd2bed1ec8190",
        "object": "response",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_12345xyz", "call_id": "call_12345xyz",
             "name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}"},
            {"type": "function_call", "id": "fc_67890abc", "call_id": "call_67890abc",
             "name": "send_email", "arguments": "{\"to\":\"ilan@example.com\"}", "status": "completed"}
        ]
    })
}

/// From the tool-use docs: text, then two tool_use blocks with object input.
fn anthropic_response() -> Value {
    json!({
        "id": "msg_01Aq9w938a90dw8q",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "stop_reason": "tool_use",
        "content": [
            {"type": "text", "text": "I'll check the weather and the time."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
             "input": {"location": "San Francisco, CA", "unit": "celsius"}},
            {"type": "tool_use", "id": "toolu_01B", "name": "get_time", "input": {}}
        ]
    })
}

/// From the function-calling docs: parallel calls in one message, no ids.
fn gemini_response() -> Value {
    json!({
        "candidates": [{
            "content": {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "power_disco_ball", "args": {"power": true}}},
                    {"functionCall": {"name": "start_music", "args": {"energetic": true, "loud": true}}},
                    {"functionCall": {"name": "dim_lights", "args": {"brightness": 0.5}}}
                ]
            },
            "finishReason": "STOP"
        }]
    })
}

#[test]
fn openai_chat_round_trip() {
    let response = chat_response();
    let calls = Dialect::OpenAiChat.parse_calls(&response).unwrap();
    assert_eq!(
        calls,
        [
            ToolCall::new("call_12345xyz", "get_weather", r#"{"location":"Paris, France"}"#),
            ToolCall::new("call_67890abc", "get_weather", r#"{"location":"Bogotá, Colombia"}"#),
        ]
    );
    // The message alone parses the same.
    assert_eq!(Dialect::OpenAiChat.parse_calls(&response["choices"][0]["message"]).unwrap(), calls);
    let messages = Dialect::OpenAiChat.format_results(&results(&calls)).unwrap();
    assert_eq!(
        messages,
        [
            json!({"role": "tool", "tool_call_id": "call_12345xyz", "content": "{\"celsius\":21}"}),
            json!({"role": "tool", "tool_call_id": "call_67890abc", "content": "{\"error\":\"no such city\"}"}),
        ]
    );
    // A message without tool calls has none.
    let text = json!({"choices": [{"message": {"role": "assistant", "content": "Hi"}}]});
    assert!(Dialect::OpenAiChat.parse_calls(&text).unwrap().is_empty());
}

#[test]
fn openai_responses_round_trip() {
    let response = responses_response();
    let calls = Dialect::OpenAiResponses.parse_calls(&response).unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0], ToolCall::new("call_12345xyz", "get_weather", r#"{"location":"Paris, France"}"#));
    assert_eq!(calls[1].name, "send_email");
    assert_eq!(Dialect::OpenAiResponses.parse_calls(&response["output"]).unwrap(), calls);
    let items = Dialect::OpenAiResponses.format_results(&results(&calls)).unwrap();
    assert_eq!(
        items[0],
        json!({"type": "function_call_output", "call_id": "call_12345xyz", "output": "{\"celsius\":21}"})
    );
    assert_eq!(items[1]["call_id"], "call_67890abc");
}

#[test]
fn anthropic_round_trip() {
    let response = anthropic_response();
    let calls = Dialect::Anthropic.parse_calls(&response).unwrap();
    assert_eq!(
        calls,
        [
            ToolCall::new(
                "toolu_01A09q90qw90lq917835lq9",
                "get_weather",
                r#"{"location":"San Francisco, CA","unit":"celsius"}"#
            ),
            ToolCall::new("toolu_01B", "get_time", "{}"),
        ]
    );
    let messages = Dialect::Anthropic.format_results(&results(&calls)).unwrap();
    assert_eq!(
        messages,
        [json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "{\"celsius\":21}"},
            {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "{\"error\":\"no such city\"}", "is_error": true}
        ]})]
    );
}

#[test]
fn gemini_round_trip_with_synthesized_ids() {
    let response = gemini_response();
    let calls = Dialect::Gemini.parse_calls(&response).unwrap();
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        ["gemini-call-0-power_disco_ball", "gemini-call-1-start_music", "gemini-call-2-dim_lights"]
    );
    assert_eq!(calls[1].arguments, r#"{"energetic":true,"loud":true}"#);
    // Stable: the same message gives the same ids.
    assert_eq!(Dialect::Gemini.parse_calls(&response).unwrap(), calls);
    let turn = vec![
        result(&calls[0], r#"{"status":"on"}"#, Outcome::Success),
        result(&calls[1], "Playing loud music.", Outcome::Success),
        result(&calls[2], "fix your arguments: `brightness` must be at most 1", Outcome::InvalidArguments),
    ];
    assert_eq!(
        Dialect::Gemini.format_results(&turn).unwrap(),
        [json!({"role": "user", "parts": [
            {"functionResponse": {"name": "power_disco_ball", "response": {"status": "on"}}},
            {"functionResponse": {"name": "start_music", "response": {"content": "Playing loud music."}}},
            {"functionResponse": {"name": "dim_lights",
                                  "response": {"error": "fix your arguments: `brightness` must be at most 1"}}}
        ]})]
    );
}

#[test]
fn gemini_ids_it_sent_are_echoed_and_non_object_json_is_wrapped() {
    let parts = json!([{"text": "ok"}, {"functionCall": {"id": "fc-7", "name": "count", "args": null}}]);
    let calls = Dialect::Gemini.parse_calls(&parts).unwrap();
    assert_eq!(calls, [ToolCall::new("fc-7", "count", "{}")]);
    let formatted =
        Dialect::Gemini.format_results(&[result(&calls[0], "[1,2,3]", Outcome::Success)]).unwrap();
    assert_eq!(
        formatted[0]["parts"][0]["functionResponse"],
        json!({"name": "count", "response": {"content": [1, 2, 3]}, "id": "fc-7"})
    );
}

/// Every dialect with messages, the provider payload it reads, and the
/// methods of its non-strict twin, which it must agree with (the strict
/// dialects differ in their definitions only).
type Messages = (
    Dialect,
    Value,
    fn(&Value) -> Result<Vec<ToolCall>, toolcall_provider::MessageError>,
    fn(&[ToolResult]) -> Result<Vec<Value>, toolcall_provider::MessageError>,
);

fn every_dialect_with_messages() -> Vec<Messages> {
    vec![
        (
            Dialect::OpenAiChat,
            chat_response(),
            |r: &Value| Dialect::OpenAiChat.parse_calls(r),
            |t: &[ToolResult]| Dialect::OpenAiChat.format_results(t),
        ),
        (
            Dialect::OpenAiChatStrict,
            chat_response(),
            |r: &Value| Dialect::OpenAiChat.parse_calls(r),
            |t: &[ToolResult]| Dialect::OpenAiChat.format_results(t),
        ),
        (
            Dialect::OpenAiResponses,
            responses_response(),
            |r: &Value| Dialect::OpenAiResponses.parse_calls(r),
            |t: &[ToolResult]| Dialect::OpenAiResponses.format_results(t),
        ),
        (
            Dialect::OpenAiResponsesStrict,
            responses_response(),
            |r: &Value| Dialect::OpenAiResponses.parse_calls(r),
            |t: &[ToolResult]| Dialect::OpenAiResponses.format_results(t),
        ),
        (
            Dialect::Anthropic,
            anthropic_response(),
            |r: &Value| Dialect::Anthropic.parse_calls(r),
            |t: &[ToolResult]| Dialect::Anthropic.format_results(t),
        ),
        (
            Dialect::AnthropicStrict,
            anthropic_response(),
            |r: &Value| Dialect::Anthropic.parse_calls(r),
            |t: &[ToolResult]| Dialect::Anthropic.format_results(t),
        ),
        (
            Dialect::Gemini,
            gemini_response(),
            |r: &Value| Dialect::Gemini.parse_calls(r),
            |t: &[ToolResult]| Dialect::Gemini.format_results(t),
        ),
    ]
}

#[test]
fn every_dialect_reads_calls_and_answers_through_dialect() {
    let table = every_dialect_with_messages();
    let covered: Vec<Dialect> = table.iter().map(|(dialect, ..)| *dialect).collect();
    let expected: Vec<Dialect> = Dialect::ALL.into_iter().filter(|d| d.has_messages()).collect();
    assert_eq!(covered, expected, "every dialect with messages is in the table");
    for (dialect, response, parse, format) in table {
        let calls = dialect.parse_calls(&response).unwrap();
        assert!(calls.len() >= 2, "{dialect}: {calls:?}");
        assert_eq!(calls, parse(&response).unwrap(), "{dialect}");
        // The calls are those of the response's content.
        let content = dialect.content(&response).unwrap();
        assert_eq!(calls, toolcall_provider::calls_of(&content).cloned().collect::<Vec<_>>(), "{dialect}");
        let turn = results(&calls);
        let formatted = dialect.format_results(&turn).unwrap();
        assert_eq!(formatted, format(&turn).unwrap(), "{dialect}");
        // One shape for every dialect: values to append, each answering the calls in order.
        let text = serde_json::to_string(&formatted).unwrap();
        let first = text.find(&*calls[0].id).or_else(|| text.find(&*calls[0].name));
        let second = text.find(&*calls[1].id).or_else(|| text.find(&*calls[1].name));
        assert!(first.is_some() && first < second, "{dialect}: results out of order in {text}");
        // A turn without results appends nothing.
        assert_eq!(dialect.format_results(&[]).unwrap(), Vec::<Value>::new(), "{dialect}");
    }
}

#[test]
fn the_shape_of_the_results_per_dialect() {
    // The turn's values to append, for the first two calls of the response.
    let answer = |dialect: Dialect, response: Value| {
        let calls = dialect.parse_calls(&response).unwrap();
        dialect.format_results(&results(&calls)).unwrap()
    };
    // OpenAI: one message (Chat) or input item (Responses) per result.
    let chat = answer(Dialect::OpenAiChatStrict, chat_response());
    assert_eq!(chat.len(), 2);
    assert!(chat.iter().all(|message| message["role"] == "tool"));
    let responses = answer(Dialect::OpenAiResponses, responses_response());
    assert_eq!(responses.len(), 2);
    assert!(responses.iter().all(|item| item["type"] == "function_call_output"));
    // Anthropic and Gemini: one message holding every result.
    let anthropic = answer(Dialect::AnthropicStrict, anthropic_response());
    assert_eq!(anthropic.len(), 1);
    assert_eq!(anthropic[0]["role"], "user");
    assert_eq!(anthropic[0]["content"].as_array().map(Vec::len), Some(2));
    assert_eq!(anthropic[0]["content"][1]["is_error"], true);
    let gemini = answer(Dialect::Gemini, gemini_response());
    assert_eq!(gemini.len(), 1);
    assert_eq!(gemini[0]["parts"].as_array().map(Vec::len), Some(2));
    assert_eq!(gemini[0]["parts"][1]["functionResponse"]["response"], json!({"error": "no such city"}));
}

#[test]
fn mcp_has_definitions_only() {
    assert!(!Dialect::Mcp.has_messages());
    assert!(Dialect::ALL.into_iter().filter(|d| *d != Dialect::Mcp).all(Dialect::has_messages));
    // An MCP `tools/call` request is not a model response: it is refused, naming the dialect.
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "get_weather", "arguments": {"city": "Paris"}}});
    let err = Dialect::Mcp.parse_calls(&request).unwrap_err();
    assert_eq!(err.what, "mcp");
    assert!(err.to_string().starts_with("mcp: MCP has no model messages to read calls from"), "{err}");
    assert!(err.to_string().contains("tools/call"), "{err}");
    let calls = Dialect::Anthropic.parse_calls(&anthropic_response()).unwrap();
    let err = Dialect::Mcp.format_results(&results(&calls)).unwrap_err();
    assert!(err.to_string().starts_with("mcp: MCP has no model messages to write results to"), "{err}");
}

#[test]
fn malformed_payloads_are_errors_not_panics() {
    let chat_cases = [
        (json!({"choices": []}), "openai chat response: `choices` is empty"),
        (
            json!({"choices": [{"message": {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}}]}),
            "openai chat response: at `choices[0].message.tool_calls[0].function.arguments`: invalid type: map, expected a string",
        ),
        (
            json!({"choices": [{"message": {"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}),
            "openai chat response: at `choices[0].message.tool_calls[0]`: missing field `id`",
        ),
        (json!("hello"), "openai chat response: invalid type: string \"hello\", expected struct ChatMessage"),
    ];
    for (payload, expected) in chat_cases {
        assert_eq!(Dialect::OpenAiChat.parse_calls(&payload).unwrap_err().to_string(), expected);
    }
    let responses = json!({"output": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]});
    assert_eq!(
        Dialect::OpenAiResponses.parse_calls(&responses).unwrap_err().to_string(),
        "openai responses output: output item 0: missing field `name`"
    );
    assert!(Dialect::OpenAiResponses.parse_calls(&json!({"output": 1})).is_err());
    let tool_use = json!({"content": [{"type": "tool_use", "id": "t", "input": {}}]});
    assert_eq!(
        Dialect::Anthropic.parse_calls(&tool_use).unwrap_err().to_string(),
        "anthropic response: content[0]: missing field `name`"
    );
    assert!(Dialect::Anthropic.parse_calls(&json!({"content": "text"})).is_err());
    assert!(Dialect::Anthropic.parse_calls(&Value::Null).is_err());
    let candidates = [
        (json!({"candidates": []}), "gemini response: `candidates` is empty"),
        (
            json!({"candidates": [{"finishReason": "SAFETY"}]}),
            "gemini response: `candidates[0]` has no `content`",
        ),
        (
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]}),
            "gemini response: parts[0].functionCall: missing field `name`",
        ),
        (json!(42), "gemini response: expected a response, a content object or a parts array"),
    ];
    for (payload, expected) in candidates {
        assert_eq!(Dialect::Gemini.parse_calls(&payload).unwrap_err().to_string(), expected);
    }
}

mod fuzz {
    use proptest::prelude::*;
    use serde_json::{Value, json};
    use toolcall_provider::Dialect;

    /// Any JSON value, biased towards the keys the parsers look for.
    fn json_value() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just("choices".to_owned()),
            Just("message".to_owned()),
            Just("tool_calls".to_owned()),
            Just("function".to_owned()),
            Just("arguments".to_owned()),
            Just("output".to_owned()),
            Just("type".to_owned()),
            Just("content".to_owned()),
            Just("candidates".to_owned()),
            Just("parts".to_owned()),
            Just("functionCall".to_owned()),
            Just("name".to_owned()),
            Just("id".to_owned()),
            "[a-z]{1,6}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            prop_oneof![
                Just("function".to_owned()),
                Just("tool_use".to_owned()),
                Just("function_call".to_owned()),
                ".{0,8}"
            ]
            .prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key.clone(), inner), 0..5)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn parsers_never_panic(value in json_value()) {
            for dialect in Dialect::ALL {
                let _ = dialect.parse_calls(&value);
                let _ = dialect.content(&value);
            }
        }
    }
}

/// An assistant turn holding every provider's reasoning and a server
/// tool's item, then a call.
fn every_reasoning() -> Vec<toolcall_provider::Message> {
    use toolcall_provider::{Content, Message, Reasoning};
    let content = vec![
        Content::Reasoning(Reasoning::Thinking { thinking: "t".into(), signature: "sig-a".into() }),
        Content::Reasoning(Reasoning::RedactedThinking { data: "red-a".into() }),
        Content::Reasoning(Reasoning::Thought { text: "summary-g".into() }),
        Content::Reasoning(Reasoning::ThoughtSignature { signature: "sig-g".into() }),
        Content::Reasoning(Reasoning::Item {
            id: "rs_o".into(),
            summary: vec!["summary-o".into()],
            encrypted_content: Some("enc-o".into()),
        }),
        Content::Reasoning(Reasoning::ReasoningContent { text: "content-c".into() }),
        Content::Native {
            provider: "anthropic".into(),
            item: json!({"type": "server_tool_use", "id": "srv-a"}),
        },
        Content::Call(ToolCall::new("call_1", "weather", "{}")),
    ];
    vec![Message::user("Weather?"), Message::Assistant { content }]
}

#[test]
fn each_provider_sends_back_its_own_reasoning_and_leaves_out_the_others() {
    let transcript = every_reasoning();
    let written = [
        ("anthropic", json!(Dialect::Anthropic.messages(&transcript).unwrap())),
        ("gemini", json!(Dialect::Gemini.messages(&transcript).unwrap())),
        ("responses", json!(Dialect::OpenAiResponses.messages(&transcript).unwrap())),
        ("chat", json!(Dialect::OpenAiChat.messages(&transcript).unwrap())),
    ];
    let marks = [
        ("anthropic", ["sig-a", "red-a", "srv-a"].as_slice()),
        ("gemini", &["summary-g", "sig-g"]),
        ("responses", &["rs_o", "summary-o", "enc-o"]),
        ("chat", &["content-c"]),
    ];
    for (writer, value) in &written {
        let text = value.to_string();
        for (owner, owned) in marks {
            for mark in owned {
                assert_eq!(text.contains(mark), *writer == owner, "{writer} and {owner}'s {mark}: {text}");
            }
        }
        assert!(text.contains("call_1") || *writer == "gemini", "{writer}: {text}");
    }
    // Gemini's signature lands on the part after it, the call.
    assert_eq!(written[1].1[1]["parts"][1]["thoughtSignature"], "sig-g");
    assert_eq!(written[1].1[1]["parts"][1]["functionCall"]["name"], "weather");
}

#[test]
fn a_transcript_with_reasoning_survives_json() {
    let transcript = every_reasoning();
    let saved = serde_json::to_string(&transcript).unwrap();
    let loaded: Vec<toolcall_provider::Message> = serde_json::from_str(&saved).unwrap();
    assert_eq!(loaded, transcript);
}
