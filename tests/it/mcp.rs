//! The example MCP server against rmcp's own client and this SDK's
//! `McpClient`, over stdio and HTTP. (The bridge's own tests, against
//! in-process servers, are tools-mcp's: tools-mcp/tests/it.)

use std::path::PathBuf;
use std::process::Command as StdCommand;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::support;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ErrorCode, ProgressNotificationParam, Request,
    ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolcall::mcp::McpClient;
use toolcall::{Outcome, ToolCall, ToolContext, Toolset, tool};

/// The example server, built once.
fn example_binary() -> &'static PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| support::build_example("mcp_server"))
}

/// The example server as a child process, serving its own tools (Tavily
/// joins them when its key is set).
pub(crate) fn example_command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(example_binary());
    command.env_remove("TAVILY_API_KEY");
    command
}

async fn stdio_client() -> RunningService<RoleClient, ()> {
    let transport = TokioChildProcess::new(example_command()).unwrap();
    ().serve(transport).await.unwrap()
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments.as_object().unwrap().clone())
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|b| b.as_text()).map(|t| t.text.clone()).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn stdio_example_lists_its_tools_with_schemas_and_annotations() {
    let client = stdio_client().await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["get_weather", "count_slowly", "cancel_alert", "weather_chart"]);
    let weather = &tools[0];
    let schema = Value::Object((*weather.input_schema).clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["city"]));
    assert_eq!(schema["properties"]["days"]["maximum"], 16);
    assert_eq!(weather.title.as_deref(), Some("Weather forecast"));
    assert_eq!(weather.annotations.as_ref().unwrap().read_only_hint, Some(true));
    let output = weather.output_schema.as_ref().expect("get_weather declares its output");
    assert_eq!(output["type"], "object");
    assert!(tools[1].output_schema.is_none());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_calls_follow_the_error_contract() {
    let client = stdio_client().await;
    let ok = client.call_tool(call("get_weather", json!({"city": "Paris", "days": 3}))).await.unwrap();
    assert_eq!(ok.is_error, Some(false));
    let structured = ok.structured_content.clone().expect("a JSON object is structured content");
    assert_eq!(structured["days"], 3);
    assert_eq!(serde_json::from_str::<Value>(&text(&ok)).unwrap(), structured);

    let out_of_range =
        client.call_tool(call("get_weather", json!({"city": "Paris", "days": 17}))).await.unwrap();
    assert_eq!(out_of_range.is_error, Some(true));
    assert!(text(&out_of_range).contains("`days` must be at most 16"), "{}", text(&out_of_range));

    // A number sent as a string, as the MCP Inspector's CLI up to 0.16.5
    // sent `--tool-arg days=2`: read as pydantic's lax mode reads it.
    let lax = client.call_tool(call("get_weather", json!({"city": "2", "days": "2"}))).await.unwrap();
    assert_eq!(lax.is_error, Some(false), "{}", text(&lax));
    let structured = lax.structured_content.clone().unwrap();
    assert_eq!((&structured["city"], &structured["days"]), (&json!("2"), &json!(2)));

    let wrong_type =
        client.call_tool(call("get_weather", json!({"city": "Paris", "days": "three"}))).await.unwrap();
    assert_eq!(wrong_type.is_error, Some(true));
    assert!(text(&wrong_type).contains("at `days`: invalid type"), "{}", text(&wrong_type));
    assert!(wrong_type.structured_content.is_none());

    let retry = client.call_tool(call("get_weather", json!({"city": " "}))).await.unwrap();
    assert_eq!((retry.is_error, text(&retry).contains("ask again")), (Some(true), true));

    // Lookup ignores case, as for a model.
    let cased = client.call_tool(call("GET_WEATHER", json!({"city": "Oslo"}))).await.unwrap();
    assert_eq!(cased.is_error, Some(false));

    match client.call_tool(call("no_such_tool", json!({}))).await {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
            assert!(error.message.contains("no_such_tool"));
        }
        other => panic!("expected -32602, got {other:?}"),
    }
    client.cancel().await.unwrap();
}

/// The example MCP server on HTTP, on a free port of loopback, and its URL.
async fn http_example() -> (tokio::process::Child, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut server = example_command()
        .args(["--http", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().expect("the server says where it listens");
        if let Some(url) = line.strip_prefix("listening on ") {
            break url.to_owned();
        }
    };
    // Its log read on to the end: a closed stderr would fail its writes.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (server, url)
}

#[tokio::test]
async fn ctrl_c_stops_the_http_example_cleanly() {
    let (mut server, url) = http_example().await;
    let client = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
    let answer = client.call_tool(call("get_weather", json!({"city": "Oslo"}))).await.unwrap();
    assert_eq!(answer.is_error, Some(false));

    let pid = server.id().unwrap().to_string();
    assert!(StdCommand::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let status = tokio::time::timeout(Duration::from_secs(10), server.wait())
        .await
        .expect("the server stopped within 10 s of Ctrl-C")
        .unwrap();
    assert!(status.success(), "{status}");
}

/// Notified at the first progress report: the call is then running.
#[derive(Clone, Default)]
struct Started(Arc<Notify>);

impl ClientHandler for Started {
    async fn on_progress(&self, _: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.0.notify_one();
    }
}

/// SIGTERM (systemd, Docker, Kubernetes) stops the server as Ctrl-C does: a
/// call in flight finishes and answers, and the process exits with success.
#[tokio::test]
async fn sigterm_mid_call_lets_the_call_finish_and_stops_the_http_example_cleanly() {
    let (mut server, url) = http_example().await;
    let started = Started::default();
    let client = started.clone().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
    let request =
        ClientRequest::CallToolRequest(Request::new(call("count_slowly", json!({"to": 10, "step_ms": 200}))));
    let handle = client.send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), started.0.notified()).await.expect("the call started");

    let pid = server.id().unwrap().to_string();
    assert!(StdCommand::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let answer = tokio::time::timeout(Duration::from_secs(10), handle.await_response())
        .await
        .expect("answered")
        .expect("the call finished, not cut off");
    let ServerResult::CallToolResult(result) = answer else { panic!("expected a tool result: {answer:?}") };
    assert_eq!(text(&result), "counted to 10");
    let status = tokio::time::timeout(Duration::from_secs(10), server.wait())
        .await
        .expect("the server stopped within 10 s of SIGTERM")
        .unwrap();
    assert!(status.success(), "{status}");
}

/// Over stdio the client stops the server by closing its input (MCP
/// lifecycle, "Shutdown": https://modelcontextprotocol.io/specification/2025-06-18/basic/lifecycle#shutdown),
/// SIGTERM being what it sends to a server that did not then exit: a call
/// in flight when the input closes finishes and answers, and the server
/// exits with success.
#[tokio::test]
async fn closing_stdin_mid_call_lets_the_call_finish_and_the_stdio_example_exit_cleanly() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut server = example_command()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut next = async || -> Value {
        let line = support::next_line(&mut lines).await;
        serde_json::from_str(&line).unwrap()
    };
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count_slowly","arguments":{"to":10,"step_ms":200},"_meta":{"progressToken":7}}}"#,
    ];
    for message in messages {
        stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }
    assert_eq!(next().await["id"], 1);
    // The first progress report: the call is running.
    assert_eq!(next().await["method"], "notifications/progress");
    drop(stdin);
    let answer = loop {
        let message = next().await;
        if message["id"] == 2 {
            break message;
        }
    };
    assert_eq!(answer["result"]["content"][0]["text"], "counted to 10", "{answer}");
    let status = tokio::time::timeout(Duration::from_secs(10), server.wait()).await.expect("exited").unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn remote_stdio_tools_join_a_local_toolset() {
    let mut command = example_command();
    command.kill_on_drop(true);
    let client = McpClient::stdio(command).await.unwrap();
    let mut tools = Toolset::builder().add(Echo).build().unwrap();
    assert_eq!(client.register(&mut tools).await.unwrap(), 4);
    assert_eq!(
        tools.names().collect::<Vec<_>>(),
        ["echo", "get_weather", "count_slowly", "cancel_alert", "weather_chart"]
    );
    let weather = tools.get("get_weather").unwrap();
    assert_eq!(weather.spec().parameters()["properties"]["days"]["maximum"], 16);
    assert_eq!(weather.spec().annotations().read_only, Some(true));

    let ctx = ToolContext::new();
    // Fenced arguments are cleaned locally before they travel.
    let ok = tools.call(&ctx, &ToolCall::new("1", "get_weather", "```json\n{\"city\":\"Rome\"}\n```")).await;
    assert_eq!(ok.outcome, Outcome::Success, "{}", ok.content);
    assert_eq!(serde_json::from_str::<Value>(&ok.content).unwrap()["city"], "Rome");
    let remote_error =
        tools.call(&ctx, &ToolCall::new("2", "get_weather", r#"{"city":"Rome","days":99}"#)).await;
    // The server refused the arguments: not a failure, here as there.
    assert_eq!(remote_error.outcome, Outcome::InvalidArguments);
    assert!(remote_error.content.contains("at most 16"), "{}", remote_error.content);
    // A remote tool the server lists as needing approval is held here too,
    // as a local one: without an approval it is not even sent.
    assert!(tools.get("cancel_alert").unwrap().spec().needs_approval());
    let unapproved = tools.call(&ctx, &ToolCall::new("4", "cancel_alert", r#"{"city":"Rome"}"#)).await;
    assert_eq!(unapproved.outcome, Outcome::Denied);
    assert!(
        unapproved.content.contains("needs a person's approval before it runs"),
        "{}",
        unapproved.content
    );
    let not_json = tools.call(&ctx, &ToolCall::new("3", "get_weather", "[1]")).await;
    assert_eq!(not_json.outcome, Outcome::InvalidArguments);
    let local = tools.call(&ctx, &ToolCall::new("4", "echo", r#"{"n":4}"#)).await;
    assert_eq!(local.content, "8");
}

/// The first bytes of every PNG file.
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

#[tokio::test]
async fn the_examples_chart_is_an_mcp_image_of_a_png() {
    let client = stdio_client().await;
    let chart = client.call_tool(call("weather_chart", json!({"city": "Paris", "days": 5}))).await.unwrap();
    assert_eq!(chart.is_error, Some(false), "{}", text(&chart));
    assert_eq!(text(&chart), "Daily temperatures in Paris, °C: 11, 12, 13, 14, 11");
    let image = chart.content[1].as_image().expect("the second block is an image");
    assert_eq!(image.mime_type, "image/png");
    let bytes = base64_decode(&image.data);
    assert!(bytes.starts_with(PNG_SIGNATURE), "{:?}", &bytes[..8.min(bytes.len())]);
    // The artifact stays with the server's application; nothing else is sent.
    assert_eq!((chart.content.len(), chart.structured_content.clone(), chart.meta.clone()), (2, None, None));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_remote_image_reaches_the_local_toolset_intact() {
    let mut command = example_command();
    command.kill_on_drop(true);
    let client = McpClient::stdio(command).await.unwrap();
    let mut tools = Toolset::new();
    client.register(&mut tools).await.unwrap();
    let call = ToolCall::new("1", "weather_chart", r#"{"city":"Oslo","days":3}"#);
    let result = tools.call(&ToolContext::new(), &call).await;
    assert_eq!(result.outcome, Outcome::Success, "{}", result.content);
    assert_eq!(result.content, "Daily temperatures in Oslo, °C: 18, 19, 20");
    let [toolcall::Part::Image(image)] = result.parts.as_slice() else { panic!("{:?}", result.parts) };
    assert_eq!(image.media_type, "image/png");
    assert!(image.data().unwrap().starts_with(PNG_SIGNATURE));
    assert_eq!(result.artifact, None, "the remote artifact never left its server");
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).expect("MCP carries bytes as base64")
}

#[tokio::test]
async fn remote_tools_join_under_a_prefix_and_through_a_filter() {
    use toolcall::mcp::Registration;
    let mut command = example_command();
    command.kill_on_drop(true);
    let client = McpClient::stdio(command).await.unwrap();
    let mut tools = Toolset::builder().add(Echo).build().unwrap();
    // The filter judges the server's own names, before the prefix.
    let weather_only =
        Registration::new().with_prefix("Remote").with_filter(|tool| tool.spec().name() == "get_weather");
    assert_eq!(client.register_with(&mut tools, weather_only).await.unwrap(), 1);
    assert_eq!(tools.names().collect::<Vec<_>>(), ["echo", "remote_get_weather"]);
    assert_eq!(tools.source_of("remote_get_weather"), Some("tools-example"));
    let weather = tools.get("remote_get_weather").unwrap();
    assert_eq!(weather.spec().annotations().read_only, Some(true));
    assert_eq!(weather.spec().parameters()["properties"]["days"]["maximum"], 16);

    // The call goes by the prefixed name and reaches the server's `get_weather`.
    let ctx = ToolContext::new();
    let ok = tools.call(&ctx, &ToolCall::new("1", "REMOTE_GET_WEATHER", r#"{"city":"Rome"}"#)).await;
    assert_eq!(ok.outcome, Outcome::Success, "{}", ok.content);
    assert_eq!(serde_json::from_str::<Value>(&ok.content).unwrap()["city"], "Rome");
    assert_eq!(tools.call(&ctx, &ToolCall::new("2", "get_weather", "{}")).await.outcome, Outcome::NotFound);

    // The same tools again collide, naming both sources, and nothing is added.
    let again = Registration::new().with_prefix("remote").with_source("weather-server");
    let err = client.register_with(&mut tools, again).await.unwrap_err();
    assert!(matches!(err, toolcall::mcp::McpError::Register { .. }), "{err:?}");
    assert!(
        err.to_string().contains(
            "tool `remote_get_weather` from `weather-server` collides with `remote_get_weather` from `tools-example`"
        ),
        "{err}"
    );
    assert_eq!(tools.len(), 2);
    // A prefix that breaks the naming rules is refused, naming the tool.
    let err = client.register_with(&mut tools, Registration::new().with_prefix("re mote")).await.unwrap_err();
    assert!(
        err.to_string().contains("the prefix `re mote` gives tool `get_weather` an invalid name"),
        "{err}"
    );
}

/// Double n: a local tool beside the remote ones.
#[tool(args)]
async fn echo(n: i64) -> i64 {
    n * 2
}
