//! What the Anthropic and Gemini client tests share: a small toolset, a
//! responder that plays a script, a raw server that writes a body in
//! chunks, and a way to run an agent plain or streamed.

#![allow(dead_code, reason = "each test file uses a part of it")]

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::Mutex;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tools_agent::{Agent, AgentError, AgentEvent, RunResult};
use tools_core::toolset::Toolset;
use tools_core::{ToolContext, ToolError};
use tools_macros::tool;
use wiremock::{Request, Respond, ResponseTemplate};

/// Current temperature for a city.
#[tool(args, crate = "tools_core")]
pub async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    if city == "Atlantis" {
        return Err(ToolError::failed("no station there"));
    }
    Ok(format!("12°C in {city}"))
}

/// The local time in a time zone.
#[tool(args, crate = "tools_core")]
pub async fn local_time(_ctx: &ToolContext, zone: String) -> Result<String, ToolError> {
    Ok(format!("12:00 in {zone}"))
}

pub fn tools() -> Toolset {
    Toolset::builder().add(GetWeather).add(LocalTime).build().expect("a valid toolset")
}

/// Answers each request with the next response of the script (and 500
/// once it is over).
pub struct Script(Mutex<VecDeque<ResponseTemplate>>);

impl Script {
    pub fn new(responses: impl IntoIterator<Item = ResponseTemplate>) -> Self {
        Self(Mutex::new(responses.into_iter().collect()))
    }
}

impl Respond for Script {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let next = self.0.lock().ok().and_then(|mut script| script.pop_front());
        next.unwrap_or_else(|| ResponseTemplate::new(500).set_body_string("the script is over"))
    }
}

/// A server-sent events body.
pub fn sse(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into_bytes(), "text/event-stream")
}

/// The JSON bodies the mock server received, in order.
pub async fn bodies(server: &wiremock::MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests.iter().map(|request| request.body_json::<Value>().expect("a JSON request body")).collect()
}

/// Run the agent plain, or streamed (then the result is the `Finished`
/// event's, which must come last, and the events are given too).
pub async fn run(
    agent: &Agent,
    input: &str,
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

/// The text deltas of a streamed run, joined.
pub fn streamed_text(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// A one-connection HTTP server on loopback that answers with a 200
/// `text/event-stream` whose body is written in these chunks, each flushed
/// and a little apart, then closes. Gives the base URL.
pub fn serve_chunks(chunks: Vec<Vec<u8>>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    std::thread::spawn(move || {
        let Ok((mut socket, _)) = listener.accept() else { return };
        let _ = socket.set_nodelay(true);
        let _ = read_request(&mut socket);
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        let _ = socket.write_all(head.as_bytes());
        for chunk in chunks {
            let _ = socket.write_all(&chunk);
            let _ = socket.flush();
            std::thread::sleep(Duration::from_millis(30));
        }
    });
    format!("http://{address}")
}

/// Read the request's head and its `content-length` body.
fn read_request(socket: &mut std::net::TcpStream) -> std::io::Result<()> {
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let read = socket.read(&mut buffer)?;
        if read == 0 {
            return Ok(());
        }
        received.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&received).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if received.len() >= end + 4 + length {
                return Ok(());
            }
        }
    }
}
