//! Tool search over a 300-tool toolset: the local BM25 index finds the tool
//! a request needs among its first five for at least 90 of 100 requests.

use crate::support::many_tools;
use crate::support::replies;

use replies::{mock, received};
use serde_json::{Value, json};
use toolcall_agent::{Agent, ApiKey, OpenAiChat, ToolIndex};
use toolcall_core::Tool;
use toolcall_core::toolset::{RESERVED_TOOL_SEARCH, ToolSearch, Toolset};
use toolcall_provider::{Dialect, limits};

#[test]
fn the_index_finds_the_needed_tool_in_its_top_five_for_90_of_100_requests() {
    let tools = many_tools::tools();
    assert_eq!(tools.len(), 300);
    let index = ToolIndex::new(tools.iter().map(|tool| tool as &dyn Tool));
    let queries = many_tools::queries();
    let (mut missed, mut first) = (Vec::new(), 0);
    for (query, wanted) in &queries {
        let found = index.search(query, 5);
        first += usize::from(found.first() == Some(&wanted.as_str()));
        if !found.contains(&wanted.as_str()) {
            missed.push(format!("{query:?} wanted {wanted}, found {found:?}"));
        }
    }
    let hits = queries.len() - missed.len();
    println!("tool search: {hits}/{} requests found their tool in the top 5, {first} first", queries.len());
    assert!(hits >= 90, "{hits}/100 hits; missed:\n{}", missed.join("\n"));
}

/// The 300 tools with tool search on: only `keep` offered from the start.
fn searched(keep: &[&str]) -> Toolset {
    let mut tools = Toolset::new();
    for tool in many_tools::tools() {
        tools.add(tool).unwrap();
    }
    tools.with_tool_search(ToolSearch::new().with_loaded(keep))
}

fn full() -> Toolset {
    let mut tools = Toolset::new();
    for tool in many_tools::tools() {
        tools.add(tool).unwrap();
    }
    tools
}

#[test]
fn the_first_request_with_search_on_is_at_most_5_percent_of_all_the_definitions() {
    let (all, searched) = (full(), searched(&[]));
    for dialect in Dialect::ALL {
        let whole = limits::report(dialect, &all).size.total_bytes;
        let first = if dialect.has_native_tool_search() {
            // The deferred tools travel with the request, marked
            // `defer_loading`: the model reads only the search tool and the
            // tools kept loaded.
            let sent = limits::report(dialect, &searched).size.total_bytes;
            println!(
                "{dialect}: the request carries {sent} bytes, {:.0}% of {whole}",
                100.0 * sent as f64 / whole as f64
            );
            let loaded = searched.iter().filter(|tool| !searched.is_deferred(tool.spec().name()));
            let loaded: usize =
                loaded.map(|tool| dialect.function(tool.as_ref()).unwrap().to_string().len()).sum();
            // The search tool's own definition: that of a toolset with nothing else.
            let alone = Toolset::new().with_tool_search(ToolSearch::new());
            let search = dialect.definitions(&alone).unwrap();
            assert_eq!(search[0].name, RESERVED_TOOL_SEARCH);
            loaded + search[0].value.to_string().len()
        } else {
            limits::report(dialect, &searched).size.total_bytes
        };
        let ratio = first as f64 / whole as f64;
        println!("{dialect}: first request {first} of {whole} bytes of definitions ({:.2}%)", 100.0 * ratio);
        assert!(ratio <= 0.05, "{dialect}: {first} of {whole} bytes");
    }
}

/// A Chat Completions response with these calls, as OpenAI documents it:
/// <https://platform.openai.com/docs/api-reference/chat/object>.
fn chat(calls: &[(&str, &str, Value)]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    let message = if tool_calls.is_empty() {
        json!({"role": "assistant", "content": "Done: JIRA-1 is open."})
    } else {
        json!({"role": "assistant", "content": null, "tool_calls": tool_calls})
    };
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

/// A Chat Completions client of the mock.
fn model(server: &wiremock::MockServer) -> OpenAiChat {
    OpenAiChat::from_values("gpt-4.1", Some(ApiKey::new("sk-test")), Some(&format!("{}/v1", server.uri())))
}

/// The names of the functions a Chat Completions request offered.
fn offered(body: &Value) -> Vec<String> {
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned)).collect()
}

#[tokio::test]
async fn a_search_finds_a_tool_and_the_next_request_offers_it() {
    let server = mock(vec![
        chat(&[("call_1", "tool_search", json!({"query": "create a new issue in Jira"}))]),
        chat(&[("call_2", "jira_create_issue", json!({"title": "Login fails"}))]),
        chat(&[]),
    ])
    .await;
    let model = model(&server);
    let agent = Agent::new(model, searched(&["slack_create_message"])).unwrap();
    let result = agent.run("Open a Jira issue: login fails").await.unwrap();
    assert_eq!(result.answer, "Done: JIRA-1 is open.");

    let requests = received(&server).await;
    assert_eq!(requests.len(), 3);
    // First: the search and the tool kept loaded, nothing else.
    assert_eq!(offered(&requests[0]), ["tool_search", "slack_create_message"]);
    // The search's result, as the model read it: the Jira tools, with their schemas.
    let search_result =
        requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    let found: Value = serde_json::from_str(search_result["content"].as_str().unwrap()).unwrap();
    let names: Vec<&str> =
        found["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"jira_create_issue"), "{names:?}");
    assert!(names.len() <= 5, "{names:?}");
    assert_eq!(found["tools"][0]["inputSchema"]["type"], "object");
    // Second: the tools found are offered too, and the call ran.
    let second = offered(&requests[1]);
    assert!(
        second.contains(&"jira_create_issue".to_owned()) && second.contains(&"tool_search".to_owned()),
        "{second:?}"
    );
    assert_eq!(second.len(), 2 + names.len(), "{second:?}");
    // The tools found come after those offered before, in the order found:
    // the definitions sent before keep their bytes (a prompt cache's prefix).
    assert_eq!(second[2..], names, "{second:?}");
    let (first, then) = (requests[0]["tools"].to_string(), requests[1]["tools"].to_string());
    assert!(then.starts_with(first.trim_end_matches(']')), "{first}\n{then}");
    let ran =
        requests[2]["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").nth(1).unwrap();
    assert!(ran["content"].as_str().unwrap().starts_with("jira_create_issue ran with"), "{ran}");
}

/// Records the names of the calls it sees start.
#[derive(Default, Clone)]
struct Started(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl toolcall_core::toolset::Observer for Started {
    fn on_start(&self, call: &toolcall_core::ToolCall) {
        self.0.lock().unwrap().push(call.name.to_string());
    }
}

#[tokio::test]
async fn a_search_runs_through_the_executor_like_any_call() {
    let server = mock(vec![
        chat(&[("call_1", "tool_search", json!({"query": "create a new issue in Jira"}))]),
        chat(&[("call_2", "tool_search", json!({"query": ""}))]),
        chat(&[]),
    ])
    .await;
    let model = model(&server);
    let started = Started::default();
    let agent = Agent::new(model, searched(&[]).with_observer(started.clone())).unwrap();
    agent.run("Open a Jira issue: login fails").await.unwrap();
    // The observers saw both searches, and the counters counted them: one
    // answered, one with arguments to fix.
    assert_eq!(*started.0.lock().unwrap(), ["tool_search", "tool_search"]);
    let counts = agent.toolset().counts("tool_search").unwrap();
    assert_eq!((counts.calls, counts.invalid_arguments, counts.failures), (2, 1, 0));
    let requests = received(&server).await;
    let second =
        requests[2]["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").nth(1).unwrap();
    assert!(second["content"].as_str().unwrap().contains("`query` is empty"), "{second}");
}
