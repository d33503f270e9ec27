//! The tool in a toolset: under its own name, or as the `web_search`
//! fallback for dialects without a native search.

use serde_json::json;
use toolcall_core::toolset::{Toolset, ToolsetError, WebSearch};
use toolcall_core::{Tool, ToolContext};
use toolcall_tavily::{DEFAULT_NAME, Tavily};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn server() -> MockServer {
    let server = MockServer::start().await;
    let body = json!({"answer": "42", "results": [{"title": "T", "url": "https://u/", "content": "C", "score": 1.0}]});
    Mock::given(method("POST"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    server
}

fn tavily(server: &MockServer) -> Tavily {
    Tavily::from_api_key("tvly-registration").unwrap().with_base_url(&server.uri()).unwrap()
}

#[tokio::test]
async fn registers_under_its_default_name() {
    let server = server().await;
    let mut tools = Toolset::new();
    tools.add(tavily(&server)).unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), [DEFAULT_NAME]);
    let tool = tools.get("Tavily_Web_Search").unwrap();
    assert_eq!(tool.spec().parameters()["required"], json!(["query"]));
    assert!(
        tool.spec().annotations().read_only == Some(true)
            && tool.spec().annotations().open_world == Some(true)
    );
    let content = tool.call_text(&ToolContext::new(), r#"{"query":"meaning"}"#).await.unwrap();
    assert!(content.starts_with(r#"{"answer":"42","#), "{content}");
    assert!(tools.web_search().is_none());
}

#[tokio::test]
async fn registers_as_the_web_search_fallback() {
    let server = server().await;
    let mut tools = Toolset::new();
    tools.add_web_search(WebSearch::new().with_max_uses(2).with_fallback(tavily(&server))).unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["web_search"]);
    let native = tools.web_search().unwrap();
    assert_eq!(native.max_uses, Some(2));
    assert_eq!(native.fallback.as_ref().unwrap().spec().name(), DEFAULT_NAME);

    let tool = tools.get("web_search").unwrap();
    assert_eq!(tool.spec().name(), "web_search");
    assert!(tool.spec().description().starts_with("Search the web"));
    let content = tool.call_text(&ToolContext::new(), r#"{"query":"meaning"}"#).await.unwrap();
    assert!(content.contains(r#""url":"https://u/""#), "{content}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn renamed_to_web_search_it_is_the_fallback_and_nothing_else() {
    let server = server().await;
    let named = tavily(&server).with_name("web_search");
    let mut tools = Toolset::new();
    let refused = tools.add(named.clone()).unwrap_err();
    assert!(matches!(refused, ToolsetError::Reserved { .. }), "{refused}");
    tools.add_web_search(WebSearch::new().with_fallback(named)).unwrap();
    assert_eq!(tools.get("web_search").unwrap().spec().name(), "web_search");
    // Both registrations side by side: the tool itself and the fallback.
    tools.add(tavily(&server)).unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["web_search", DEFAULT_NAME]);
}

#[test]
fn the_model_sees_one_described_required_field() {
    let tavily = Tavily::from_api_key("tvly-schema").unwrap();
    let schema = serde_json::Value::Object(tavily.spec().parameters().clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(schema["properties"]["query"]["type"], "string");
    let description = schema["properties"]["query"]["description"].as_str().unwrap();
    assert!(description.starts_with("The search query") && !description.contains('\n'), "{description}");
    assert_eq!(schema["description"], "The arguments of one web search.");
}
