//! The tool against a local Tavily stand-in (wiremock on 127.0.0.1): the
//! request it sends, every option's mapping, and every way a search fails.
//! Nothing here reaches the network.

use std::time::Duration;

use serde_json::{Value, json};
use toolcall_core::{CancellationToken, Tool, ToolContext, ToolError};
use toolcall_tavily::{
    Answer, RawContent, SearchDepth, SearchOptions, SearchResponse, Tavily, TimeRange, Topic,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "tvly-test-0123456789abcdef";

fn answer_body() -> Value {
    json!({
        "query": "rust async runtime",
        "answer": "Tokio is the most used async runtime for Rust.",
        "images": [],
        "results": [
            {"title": "Tokio", "url": "https://tokio.rs/", "content": "An asynchronous runtime.", "score": 0.91, "raw_content": null},
            {"title": "async-std", "url": "https://async.rs/", "content": "Async version of std.", "score": 0.52, "raw_content": null}
        ],
        "response_time": 1.07,
        "request_id": "123e4567-e89b-12d3-a456-426614174111"
    })
}

/// A server answering every search with `response`, and a tool aimed at it.
async fn serve(response: ResponseTemplate) -> (MockServer, Tavily) {
    let server = MockServer::start().await;
    Mock::given(method("POST")).and(path("/search")).respond_with(response).mount(&server).await;
    let tavily = Tavily::from_api_key(KEY).unwrap().with_base_url(&server.uri()).unwrap();
    (server, tavily)
}

async fn only_request(server: &MockServer) -> wiremock::Request {
    let mut requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "expected exactly one request");
    requests.remove(0)
}

async fn call(tavily: &Tavily, arguments: &str) -> Result<String, ToolError> {
    tavily.call_text(&ToolContext::new(), arguments).await
}

/// The key must not show in any rendering of the error.
fn assert_no_key(error: &ToolError) {
    for text in [error.to_string(), format!("{error:?}"), error.model_content()] {
        assert!(!text.contains(KEY), "the key leaked: {text}");
    }
}

#[tokio::test]
async fn sends_the_query_and_the_defaults_with_a_bearer_key() {
    let (server, tavily) = serve(ResponseTemplate::new(200).set_body_json(answer_body())).await;
    let content = call(&tavily, "```json\n{\"query\": \"  rust async runtime \"}\n```").await.unwrap();

    let request = only_request(&server).await;
    assert_eq!(request.method.as_str(), "POST");
    assert_eq!(request.headers.get("authorization").unwrap(), &format!("Bearer {KEY}"));
    assert_eq!(request.headers.get("content-type").unwrap(), "application/json");
    let body: Value = request.body_json().unwrap();
    assert_eq!(
        body,
        json!({
            "query": "rust async runtime",
            "search_depth": "basic", "topic": "general", "include_answer": "basic", "max_results": 5
        })
    );

    // The model reads compact JSON: the answer and the results, nothing else.
    assert_eq!(
        content,
        r#"{"answer":"Tokio is the most used async runtime for Rust.","results":[{"title":"Tokio","url":"https://tokio.rs/","content":"An asynchronous runtime.","score":0.91},{"title":"async-std","url":"https://async.rs/","content":"Async version of std.","score":0.52}]}"#
    );
    let parsed: SearchResponse = serde_json::from_str(&content).unwrap();
    assert_eq!(
        parsed.to_string(),
        "ANSWER: Tokio is the most used async runtime for Rust.\n\n\
         URL: https://tokio.rs/\nTITLE: Tokio\nSCORE: 0.91\nCONTENT: An asynchronous runtime.\n\n\
         URL: https://async.rs/\nTITLE: async-std\nSCORE: 0.52\nCONTENT: Async version of std.\n"
    );
}

#[tokio::test]
async fn every_option_is_sent_as_the_api_names_it() {
    let (server, tavily) = serve(ResponseTemplate::new(200).set_body_json(answer_body())).await;
    let options = SearchOptions::new()
        .with_search_depth(SearchDepth::Advanced)
        .with_topic(Topic::News)
        .with_include_answer(Answer::Advanced)
        .with_max_results(20)
        .with_chunks_per_source(3)
        .with_time_range(TimeRange::Week)
        .with_days(7)
        .with_start_date("2025-01-01")
        .with_end_date("2025-06-30")
        .with_include_raw_content(RawContent::Markdown)
        .with_include_images(true)
        .with_include_image_descriptions(true)
        .with_include_favicon(true)
        .with_include_domains(["tokio.rs", "docs.rs"])
        .with_exclude_domains(["reddit.com"])
        .with_country("United States")
        .with_auto_parameters(true)
        .with_exact_match(true);
    let tavily = tavily.with_search_opts(options).unwrap();
    call(&tavily, r#"{"query":"tokio"}"#).await.unwrap();

    let body: Value = only_request(&server).await.body_json().unwrap();
    assert_eq!(
        body,
        json!({
            "query": "tokio",
            "search_depth": "advanced",
            "topic": "news",
            "include_answer": "advanced",
            "max_results": 20,
            "chunks_per_source": 3,
            "time_range": "week",
            "days": 7,
            "start_date": "2025-01-01",
            "end_date": "2025-06-30",
            "include_raw_content": "markdown",
            "include_images": true,
            "include_image_descriptions": true,
            "include_favicon": true,
            "include_domains": ["tokio.rs", "docs.rs"],
            "exclude_domains": ["reddit.com"],
            "country": "united states",
            "auto_parameters": true,
            "exact_match": true
        })
    );
}

#[tokio::test]
async fn the_other_spellings_of_depth_answer_and_raw_content() {
    let cases = [
        (SearchOptions::new().with_search_depth(SearchDepth::UltraFast), "search_depth", json!("ultra-fast")),
        (SearchOptions::new().with_search_depth(SearchDepth::Fast), "search_depth", json!("fast")),
        (SearchOptions::new().with_topic(Topic::Finance), "topic", json!("finance")),
        (SearchOptions::new().with_include_answer(Answer::None), "include_answer", json!(false)),
        (
            SearchOptions::new().with_include_raw_content(RawContent::Text),
            "include_raw_content",
            json!("text"),
        ),
        (SearchOptions::new().with_time_range(TimeRange::Day), "time_range", json!("day")),
        (SearchOptions::new().with_time_range(TimeRange::Month), "time_range", json!("month")),
        (SearchOptions::new().with_time_range(TimeRange::Year), "time_range", json!("year")),
    ];
    for (options, field, expected) in cases {
        let (server, tavily) = serve(ResponseTemplate::new(200).set_body_json(answer_body())).await;
        call(&tavily.with_search_opts(options).unwrap(), r#"{"query":"q"}"#).await.unwrap();
        let body: Value = only_request(&server).await.body_json().unwrap();
        assert_eq!(body[field], expected, "{field}");
    }
}

#[tokio::test]
async fn raw_content_images_and_dates_reach_the_model_when_asked() {
    let body = json!({
        "answer": null,
        "images": [{"url": "https://img/1.png", "description": "a crab"}],
        "results": [{
            "title": "T", "url": "https://u/", "content": "C", "score": 0.7,
            "raw_content": "# Full page", "published_date": "Tue, 02 Dec 2025 10:00:00 GMT",
            "favicon": "https://u/favicon.ico"
        }]
    });
    let (_server, tavily) = serve(ResponseTemplate::new(200).set_body_json(body)).await;
    let content = call(&tavily, r#"{"query":"q"}"#).await.unwrap();
    assert_eq!(
        content,
        r##"{"results":[{"title":"T","url":"https://u/","content":"C","score":0.7,"raw_content":"# Full page","published_date":"Tue, 02 Dec 2025 10:00:00 GMT","favicon":"https://u/favicon.ico"}],"images":[{"url":"https://img/1.png","description":"a crab"}]}"##
    );
}

#[tokio::test]
async fn a_base_url_with_a_path_keeps_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/proxy/tavily/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer_body()))
        .expect(1)
        .mount(&server)
        .await;
    let tavily =
        Tavily::from_api_key(KEY).unwrap().with_base_url(&format!("{}/proxy/tavily", server.uri())).unwrap();
    call(&tavily, r#"{"query":"q"}"#).await.unwrap();
}

#[tokio::test]
async fn a_caller_supplied_client_is_used() {
    let (server, tavily) = serve(ResponseTemplate::new(200).set_body_json(answer_body())).await;
    let client = reqwest::Client::builder().user_agent("my-agent/1.0").build().unwrap();
    call(&tavily.with_http_client(client), r#"{"query":"q"}"#).await.unwrap();
    assert_eq!(only_request(&server).await.headers.get("user-agent").unwrap(), "my-agent/1.0");
}

#[tokio::test]
async fn a_blank_query_is_invalid_arguments_and_sends_nothing() {
    let (server, tavily) = serve(ResponseTemplate::new(200).set_body_json(answer_body())).await;
    for arguments in [r#"{"query":""}"#, r#"{"query":"  \n\t "}"#] {
        let error = call(&tavily, arguments).await.unwrap_err();
        assert!(matches!(error, ToolError::InvalidArguments(_)), "{error:?}");
        assert!(!error.is_failure());
        assert!(error.model_content().contains("`query` is empty"), "{}", error.model_content());
    }
    let missing = call(&tavily, "{}").await.unwrap_err();
    assert!(matches!(missing, ToolError::InvalidArguments(_)), "{missing:?}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_rejected_key_says_so_without_printing_it() {
    for status in [401, 403] {
        // A server that echoes the key must not make us print it.
        let echo = json!({"detail": {"error": format!("Unauthorized: invalid API key {KEY}")}});
        let (_server, tavily) = serve(ResponseTemplate::new(status).set_body_json(echo)).await;
        let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
        assert!(error.is_failure());
        let message = error.to_string();
        assert!(message.contains("Tavily rejected the API key"), "{message}");
        assert!(message.contains(&format!("HTTP {status}")), "{message}");
        assert!(message.contains("[redacted]"), "{message}");
        assert_no_key(&error);
    }
}

#[tokio::test]
async fn a_rate_limit_asks_to_retry_later() {
    let limited = ResponseTemplate::new(429)
        .insert_header("retry-after", "7")
        .set_body_json(json!({"detail": {"error": "Rate limit exceeded"}}));
    let (_server, tavily) = serve(limited).await;
    let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
    let ToolError::Retry(message) = &error else { panic!("expected a retry, got {error:?}") };
    assert!(message.contains("HTTP 429") && message.contains("wait for 7 s"), "{message}");
    assert!(message.contains("search again") && message.contains("Rate limit exceeded"), "{message}");
    assert!(!error.is_failure());

    let (_server, tavily) = serve(ResponseTemplate::new(429)).await;
    let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
    assert!(matches!(&error, ToolError::Retry(m) if m.contains("wait, then search again")), "{error:?}");
}

#[tokio::test]
async fn server_errors_give_the_status_and_a_short_excerpt() {
    let page =
        format!("<html>\n<body>upstream exploded while checking {KEY}</body>\n</html>{}", "x".repeat(1000));
    let (_server, tavily) = serve(ResponseTemplate::new(502).set_body_string(page)).await;
    let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
    assert!(error.is_failure());
    let content: Value = serde_json::from_str(&error.model_content()).unwrap();
    let message = content["error"].as_str().unwrap();
    assert!(
        message.starts_with("Tavily failed (HTTP 502 Bad Gateway): <html> <body>upstream exploded"),
        "{message}"
    );
    assert!(message.ends_with('…') && message.chars().count() < 300, "{message}");
    assert_no_key(&error);

    let (_server, tavily) = serve(ResponseTemplate::new(503)).await;
    let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
    assert_eq!(error.to_string(), "Tavily failed (HTTP 503 Service Unavailable): empty body");
}

#[tokio::test]
async fn a_key_echoed_across_the_excerpts_end_leaves_no_part_behind() {
    // The excerpt keeps 200 characters; the key starts ten before the cut.
    for status in [200, 400, 502] {
        let page = format!("{}{KEY} and more", "x".repeat(190));
        let (_server, tavily) = serve(ResponseTemplate::new(status).set_body_string(page)).await;
        let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
        for text in [error.to_string(), error.model_content()] {
            assert!(!text.contains(&KEY[..10]), "HTTP {status}: a prefix of the key leaked: {text}");
            assert!(text.contains("[redacted]"), "HTTP {status}: {text}");
        }
    }
}

#[tokio::test]
async fn other_refusals_show_the_apis_reason() {
    let too_long = json!({"detail": {"error": "Query is too long. Max query length is 400 characters."}});
    let (_server, tavily) = serve(ResponseTemplate::new(400).set_body_json(too_long)).await;
    let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "Tavily rejected the search (HTTP 400 Bad Request): Query is too long. Max query length is 400 characters."
    );

    // 432: the plan's limit; 433: the pay-as-you-go limit.
    for status in [432, 433] {
        let plan = json!({"detail": {"error": "This request exceeds your plan's set usage limit."}});
        let (_server, tavily) = serve(ResponseTemplate::new(status).set_body_json(plan)).await;
        let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
        assert!(error.is_failure());
        let expected = format!("Tavily refused the search for this key (HTTP {status}): This request");
        assert!(error.to_string().starts_with(&expected), "{error}");
    }
}

#[tokio::test]
async fn a_malformed_body_gives_the_status_and_an_excerpt() {
    for body in
        [r#"{"results": "not a list"}"#, "<html>maintenance</html>", r#"{"answer": "no results field"}"#]
    {
        let (_server, tavily) = serve(ResponseTemplate::new(200).set_body_string(body)).await;
        let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
        let message = error.to_string();
        assert!(error.is_failure());
        assert!(message.starts_with("Tavily's answer (HTTP 200 OK) is not the expected JSON ("), "{message}");
        let excerpt: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(message.ends_with(&format!("): {excerpt}")), "{message}");
    }
}

#[tokio::test]
async fn a_runaway_body_is_cut_off() {
    let huge = "x".repeat(16 * 1024 * 1024 + 1);
    let (_server, tavily) = serve(ResponseTemplate::new(200).set_body_string(huge)).await;
    let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
    assert_eq!(error.to_string(), "Tavily's answer (HTTP 200 OK) is larger than 16 MiB");
}

#[tokio::test]
async fn a_slow_server_times_out() {
    let slow = ResponseTemplate::new(200).set_body_json(answer_body()).set_delay(Duration::from_secs(30));
    let (_server, tavily) = serve(slow).await;
    let tavily = tavily.with_timeout(Duration::from_millis(200));
    let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
    assert!(error.is_failure());
    assert_eq!(error.to_string(), "Tavily did not answer within 0.2 s");
}

#[tokio::test]
async fn the_calls_deadline_shortens_the_timeout() {
    let slow = ResponseTemplate::new(200).set_body_json(answer_body()).set_delay(Duration::from_secs(30));
    let (_server, tavily) = serve(slow).await;
    let ctx = ToolContext::new().with_timeout(Duration::from_millis(300));
    let error = tavily.call_text(&ctx, r#"{"query":"q"}"#).await.unwrap_err();
    assert!(error.to_string().starts_with("Tavily did not answer within 0."), "{error}");
}

#[tokio::test]
async fn a_cancelled_call_stops() {
    let slow = ResponseTemplate::new(200).set_body_json(answer_body()).set_delay(Duration::from_secs(30));
    let (_server, tavily) = serve(slow).await;
    let token = CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation(token.clone());
    let call = tavily.call_text(&ctx, r#"{"query":"q"}"#);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(call, cancel);
    assert_eq!(result.unwrap_err().to_string(), "the search was cancelled");
}

#[tokio::test]
async fn an_unreachable_server_is_a_failure_naming_the_endpoint() {
    // A port that was just free: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let tavily =
        Tavily::from_api_key(KEY).unwrap().with_base_url(&format!("http://127.0.0.1:{port}")).unwrap();
    let error = call(&tavily, r#"{"query":"q"}"#).await.unwrap_err();
    assert!(error.is_failure());
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("could not connect to Tavily at http://127.0.0.1:{port}/search")),
        "{message}"
    );
    assert_no_key(&error);
}

#[test]
fn the_key_is_not_in_debug_output() {
    let tavily = Tavily::from_api_key(KEY).unwrap();
    let debug = format!("{tavily:?}");
    assert!(debug.contains("api_key: \"[redacted]\""), "{debug}");
    assert!(!debug.contains(KEY), "{debug}");
    assert!(!format!("{:#?}", tavily).contains(KEY));
}
