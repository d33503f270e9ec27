//! The `tool_search` entry in each dialect: Anthropic's own search with the
//! deferred tools marked `defer_loading`
//! (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool>),
//! the local `tool_search` function elsewhere with the deferred tools left
//! out; and the name reserved.

use crate::corpus;

use serde_json::{Value, json};
use toolcall_core::toolset::{ToolSearch, Toolset, ToolsetError};
use toolcall_provider::Dialect;

fn toolset() -> Toolset {
    let mut tools = Toolset::new();
    for (name, description) in [
        ("get_weather", "Weather."),
        ("jira_create_issue", "Create a Jira issue."),
        ("jira_delete_issue", "Delete a Jira issue."),
    ] {
        tools.add(corpus::tool::<corpus::Flat>(name, description)).unwrap();
    }
    tools.with_tool_search(ToolSearch::new().with_loaded(["Get_Weather"]))
}

fn name_of(dialect: Dialect, definition: &Value) -> String {
    let name = match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiChatStrict => &definition["function"]["name"],
        _ => &definition["name"],
    };
    name.as_str().unwrap_or_default().to_owned()
}

#[test]
fn anthropic_searches_the_deferred_tools_itself() {
    for dialect in [Dialect::Anthropic, Dialect::AnthropicStrict] {
        let tools = dialect.tools(&toolset()).unwrap();
        let tools = tools.as_array().unwrap();
        assert_eq!(
            tools[0],
            json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
        );
        assert_eq!(tools[1]["name"], "get_weather");
        assert!(tools[1].get("defer_loading").is_none(), "{}", tools[1]);
        for deferred in &tools[2..] {
            assert_eq!(deferred["defer_loading"], true, "{deferred}");
            assert!(deferred["input_schema"].is_object(), "{deferred}");
        }
        assert_eq!(tools.len(), 4);
        // What a search found (in a transcript from another provider) keeps
        // its place: the definitions are the same from the start.
        let found = dialect.tools(&toolset().with_loaded(["jira_delete_issue"])).unwrap();
        let names: Vec<&str> = found.as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(names, ["tool_search_tool_bm25", "get_weather", "jira_create_issue", "jira_delete_issue"]);
    }
}

#[test]
fn elsewhere_the_local_search_function_stands_in_and_the_deferred_tools_wait() {
    for dialect in [
        Dialect::OpenAiChat,
        Dialect::OpenAiChatStrict,
        Dialect::OpenAiResponses,
        Dialect::OpenAiResponsesStrict,
        Dialect::Gemini,
        Dialect::Mcp,
    ] {
        let definitions = dialect.definitions(&toolset()).unwrap();
        let names: Vec<String> =
            definitions.iter().map(|definition| name_of(dialect, &definition.value)).collect();
        assert_eq!(names, ["tool_search", "get_weather"], "{dialect}");
        // Once a search found a tool, it is offered.
        let found = toolset().with_loaded(["jira_create_issue"]);
        let names: Vec<String> = dialect
            .definitions(&found)
            .unwrap()
            .iter()
            .map(|definition| name_of(dialect, &definition.value))
            .collect();
        assert_eq!(names, ["tool_search", "get_weather", "jira_create_issue"], "{dialect}");
        // A later find comes after the earlier one, though it was registered
        // before it: what was sent keeps its bytes, and the provider's prompt
        // cache its prefix.
        let before = dialect.tools(&found).unwrap().to_string();
        let later =
            found.with_loaded(["Jira_Delete_Issue", "get_weather"]).with_loaded(["jira_create_issue"]);
        let names: Vec<String> =
            dialect.definitions(&later).unwrap().iter().map(|d| name_of(dialect, &d.value)).collect();
        assert_eq!(
            names,
            ["tool_search", "get_weather", "jira_create_issue", "jira_delete_issue"],
            "{dialect}"
        );
        if dialect != Dialect::Gemini {
            let after = dialect.tools(&later).unwrap().to_string();
            assert!(after.starts_with(before.trim_end_matches(']')), "{dialect}:\n{before}\n{after}");
        }
    }
    // The same finds, the other way round, in the other order.
    let names: Vec<String> = Dialect::OpenAiChat
        .definitions(&toolset().with_loaded(["jira_delete_issue"]).with_loaded(["jira_create_issue"]))
        .unwrap()
        .iter()
        .map(|d| name_of(Dialect::OpenAiChat, &d.value))
        .collect();
    assert_eq!(names, ["tool_search", "get_weather", "jira_delete_issue", "jira_create_issue"]);
    let search = &Dialect::OpenAiChatStrict.definitions(&toolset()).unwrap()[0].value;
    assert_eq!(search["function"]["parameters"]["required"], json!(["query"]));
    assert_eq!(search["function"]["strict"], true);
}

#[test]
fn the_tool_choice_can_name_the_local_search() {
    let fields = Dialect::OpenAiChat
        .tool_choice(&toolset(), &toolcall_provider::ToolChoice::tool("tool_search"), None)
        .unwrap();
    assert_eq!(fields["tool_choice"], json!({"type": "function", "function": {"name": "tool_search"}}));
}

#[test]
fn no_tool_may_take_the_name() {
    let mut tools = Toolset::new();
    let error = tools.add(corpus::tool::<corpus::Flat>("Tool_Search", "Mine.")).unwrap_err();
    assert!(matches!(error, ToolsetError::Reserved { .. }), "{error:?}");
    assert!(
        error.to_string().contains("reserved for tool search: turn it on with Toolset::with_tool_search"),
        "{error}"
    );
    tools.add(corpus::tool::<corpus::Flat>("finder", "Mine.")).unwrap();
    assert!(matches!(tools.rename("finder", "tool_search"), Err(ToolsetError::Reserved { .. })));
    let tools = Toolset::builder().add(corpus::tool::<corpus::Flat>("search", "Mine.")).build().unwrap();
    assert!(matches!(tools.prefixed("tool"), Err(ToolsetError::Reserved { .. })));
}
