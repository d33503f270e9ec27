//! What the OpenAI client tests share: a toolset, a scripted mock server,
//! response bodies shaped as OpenAI documents them (plain and streamed), a
//! raw server that writes a stream in chosen byte chunks, and a way to run
//! an agent plainly or streamed.
#![allow(dead_code, reason = "each test file uses its own part")]

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::Mutex;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use toolcall_agent::{Agent, AgentError, AgentEvent, ApiKey, ResendPolicy, RunInput, RunResult};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolContext, ToolError};
use toolcall_macros::tool;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The key the tests send: it must never show in an error.
pub(crate) const KEY: &str = "sk-test-very-secret-4242";

/// Current temperature for a city.
#[tool(args, crate = "toolcall_core")]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    if city == "Atlantis" {
        return Err(ToolError::failed("no station there"));
    }
    Ok(format!("12°C in {city}"))
}

/// Current time in a time zone.
#[tool(args, crate = "toolcall_core")]
async fn get_time(_ctx: &ToolContext, zone: String) -> Result<String, ToolError> {
    Ok(format!("12:00 in {zone}"))
}

pub(crate) fn tools() -> Toolset {
    Toolset::builder().add(GetWeather).add(GetTime).build().unwrap()
}

/// The same tools and the native web search.
pub(crate) fn tools_with_search(search: toolcall_core::toolset::WebSearch) -> Toolset {
    Toolset::builder().add(GetWeather).add(GetTime).add_web_search(search).build().unwrap()
}

/// Retries with (almost) no wait.
pub(crate) fn fast_retry(attempts: u32) -> ResendPolicy {
    ResendPolicy::default().with_max_attempts(attempts).with_initial_backoff(Duration::from_millis(1))
}

/// One model turn, as the mock answers it: text and calls `(id, name, arguments)`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Turn {
    pub text: String,
    pub calls: Vec<(String, String, String)>,
}

impl Turn {
    pub(crate) fn text(text: &str) -> Self {
        Self { text: text.into(), calls: Vec::new() }
    }

    pub(crate) fn calls(calls: &[(&str, &str, &str)]) -> Self {
        let calls = calls.iter().map(|(i, n, a)| ((*i).into(), (*n).into(), (*a).into())).collect();
        Self { text: String::new(), calls }
    }
}

/// Answers each request with the next scripted response.
pub(crate) struct Script(Mutex<VecDeque<ResponseTemplate>>);

impl Script {
    pub(crate) fn new(responses: impl IntoIterator<Item = ResponseTemplate>) -> Self {
        Self(Mutex::new(responses.into_iter().collect()))
    }
}

impl Respond for Script {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let next = self.0.lock().unwrap().pop_front();
        next.unwrap_or_else(|| ResponseTemplate::new(418).set_body_string("the script is over"))
    }
}

/// A mock server answering POST `/v1/{route}` with these responses, in order.
pub(crate) async fn mock(route: &str, responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!("/v1/{route}")))
        .respond_with(Script(Mutex::new(responses.into())))
        .mount(&server)
        .await;
    server
}

/// The base URL of a mock server.
pub(crate) fn base(server: &MockServer) -> String {
    format!("{}/v1", server.uri())
}

/// The JSON bodies the mock received, in order.
pub(crate) async fn bodies(server: &MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests.iter().map(|request| serde_json::from_slice(&request.body).unwrap()).collect()
}

/// The Authorization headers the mock received, in order.
pub(crate) async fn authorizations(server: &MockServer) -> Vec<Option<String>> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests
        .iter()
        .map(|request| request.headers.get("authorization").map(|value| value.to_str().unwrap().to_owned()))
        .collect()
}

/// An SSE response from `(event name, data)` pairs (no name: a bare `data:` line).
pub(crate) fn sse(events: &[(Option<&str>, String)]) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(sse_text(events), "text/event-stream")
}

pub(crate) fn sse_text(events: &[(Option<&str>, String)]) -> String {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body
}

/// Run the agent plainly or streamed; streamed, also the events before the end.
pub(crate) async fn run(
    agent: &Agent,
    input: impl Into<RunInput>,
    streamed: bool,
) -> (Result<RunResult, AgentError>, Vec<AgentEvent>) {
    if !streamed {
        return (agent.run(input).await, Vec::new());
    }
    let mut events: Vec<AgentEvent> = agent.stream(input).collect().await;
    match events.pop() {
        Some(AgentEvent::Finished(result)) => (result, events),
        other => panic!("the stream did not end with Finished: {other:?}"),
    }
}

/// The arguments streamed for each call index, in order of arrival.
pub(crate) fn streamed_arguments(events: &[AgentEvent]) -> Vec<(usize, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::CallDelta { index, arguments, .. } => Some((*index, arguments.clone())),
            _ => None,
        })
        .collect()
}

/// A key that the tests give explicitly (never the environment).
pub(crate) fn key() -> Option<ApiKey> {
    Some(ApiKey::new(KEY))
}

/// A server on loopback that answers each connection, in turn, with an
/// event stream written in exactly these byte chunks (flushed one by one,
/// a pause between them), and records each request's body.
pub(crate) struct ChunkedServer {
    /// Scheme, host and port.
    pub root: String,
    /// The root and `/v1`.
    pub base: String,
    thread: std::thread::JoinHandle<Vec<Value>>,
}

impl ChunkedServer {
    pub(crate) fn start(connections: Vec<Vec<Vec<u8>>>) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let root = format!("http://{}", listener.local_addr().unwrap());
        let base = format!("{root}/v1");
        let thread = std::thread::spawn(move || {
            let mut bodies = Vec::new();
            for chunks in connections {
                let (mut socket, _) = listener.accept().unwrap();
                bodies.push(read_request(&mut socket));
                socket
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
                    )
                    .unwrap();
                for chunk in chunks {
                    socket.write_all(&chunk).unwrap();
                    socket.flush().unwrap();
                    std::thread::sleep(Duration::from_millis(15));
                }
            }
            bodies
        });
        Self { root, base, thread }
    }

    /// The request bodies, once every connection was answered.
    pub(crate) fn bodies(self) -> Vec<Value> {
        self.thread.join().unwrap()
    }
}

fn read_request(socket: &mut std::net::TcpStream) -> Value {
    let mut received = Vec::new();
    let mut buffer = [0; 4096];
    loop {
        let read = socket.read(&mut buffer).unwrap();
        assert!(read > 0, "the client closed before sending its request");
        received.extend_from_slice(&buffer[..read]);
        let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        let head = String::from_utf8_lossy(&received[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .map_or(0, |value| value.trim().parse().unwrap());
        if received.len() >= end + 4 + length {
            return serde_json::from_slice(&received[end + 4..end + 4 + length]).unwrap();
        }
    }
}

/// Split `text` into byte chunks at these byte offsets (which may fall
/// inside a UTF-8 character).
pub(crate) fn split_at(text: &str, cuts: &[usize]) -> Vec<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut chunks = Vec::new();
    let mut start = 0;
    for &cut in cuts {
        chunks.push(bytes[start..cut].to_vec());
        start = cut;
    }
    chunks.push(bytes[start..].to_vec());
    chunks
}

/// The key appears in neither the Display nor the Debug of an error.
pub(crate) fn assert_no_key(error: &impl std::fmt::Debug, display: &str) {
    assert!(!display.contains(KEY), "the key shows in: {display}");
    assert!(!format!("{error:?}").contains(KEY), "the key shows in: {error:?}");
}

/// JSON of a string list.
pub(crate) fn names(values: &[&str]) -> Value {
    json!(values)
}

/// An error response as OpenAI writes them (both APIs):
/// <https://platform.openai.com/docs/guides/error-codes>.
pub(crate) fn error(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .insert_header("retry-after", "0")
        .set_body_json(toolcall_agent::testing::chat_error(status, message))
}

/// The key of an `Authorization: Bearer` header.
pub(crate) fn bearer(request: &Request) -> Option<String> {
    let value = request.headers.get("authorization")?.to_str().ok()?;
    Some(value.strip_prefix("Bearer ").expect("a bearer key").to_owned())
}

/// The byte offset `num/den` of the way into `text`'s characters.
pub(crate) fn cut(text: &str, num: usize, den: usize) -> usize {
    text.char_indices().nth(text.chars().count() * num / den).map_or(0, |(i, _)| i)
}
