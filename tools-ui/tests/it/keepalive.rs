//! The SSE responses over raw connections: a keep-alive comment while a
//! call runs, and a reader that stops reading holds up nothing (the run
//! goes on, its end is kept) and reads the whole run when it comes back.

use std::io::Read;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use toolcall_agent::testing::{Reply, chat_chunks};
use toolcall_agent::{Agent, OpenAiChat, RunLimits};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;
use toolcall_ui::ChatServer;

use crate::support::{Gate, SlowLookup, chunks, text, types};

/// A server of `chat` on loopback: its address.
async fn serve(chat: &ChatServer) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = chat.router();
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

fn ask(chat: &str, question: &str) -> Value {
    json!({"id": chat, "trigger": "submit-message", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": question}]}
    ]})
}

#[tokio::test]
async fn a_call_that_runs_long_gets_keep_alive_comments_before_its_output() {
    let model = toolcall_agent::testing::ScriptedServer::answering(|request: &Value| {
        let last = request["messages"].as_array()?.last()?;
        if last["role"] != "tool" {
            return Some(Reply::calls([ToolCall::new("call_1", "slow_lookup", r#"{"what":"it"}"#)]));
        }
        Some(Reply::text(format!("Done: {}", last["content"].as_str()?)))
    })
    .await
    .unwrap();
    let gate = Gate::default();
    let tools = Toolset::builder().add(SlowLookup).build().unwrap();
    let agent = Agent::new(OpenAiChat::from_values("gpt-4o", None, Some(model.base_url())), tools)
        .unwrap()
        .with_context(ToolContext::new().with_extension(gate.clone()));
    let chat = ChatServer::new(agent).with_keep_alive(Duration::from_millis(100));
    let address = serve(&chat).await;
    let response = tokio::spawn(async move {
        let response = reqwest::Client::new()
            .post(format!("http://{address}/api/chat"))
            .json(&ask("k1", "Find it"))
            .send();
        let response = response.await.unwrap();
        let headers = response.headers().clone();
        (headers, response.text().await.unwrap())
    });
    gate.started.acquire().await.unwrap().forget();
    tokio::time::sleep(Duration::from_millis(450)).await;
    gate.release.add_permits(1);
    let (headers, body) = response.await.unwrap();
    assert_eq!(headers[header::CONTENT_TYPE], "text/event-stream");
    assert_eq!(headers["x-vercel-ai-ui-message-stream"], "v1");
    let events: Vec<&str> = body.split("\n\n").filter(|event| !event.is_empty()).collect();
    let comment = |event: &str| event.lines().all(|line| line.starts_with(':'));
    let first_comment =
        events.iter().position(|event| comment(event)).unwrap_or_else(|| panic!("no comment: {body}"));
    let input = events.iter().position(|event| event.contains("\"tool-input-available\"")).unwrap();
    let output = events.iter().position(|event| event.contains("\"tool-output-available\"")).unwrap();
    assert!(input < first_comment && first_comment < output, "{body}");
    let comments = events[input..output].iter().filter(|event| comment(event)).count();
    assert!(comments >= 2, "{comments} comments while the call ran: {body}");
    // Without the comments, the data events are the stream as ever.
    let data: Vec<&str> = events.into_iter().filter(|event| !comment(event)).collect();
    let chunks = chunks(&(data.join("\n\n") + "\n\n"));
    assert_eq!(types(&chunks).last(), Some(&"finish"));
    assert_eq!(text(&chunks), "Done: found it");
}

/// How many calls the model makes at once, and how large each output is:
/// more than loopback's socket buffers and the listener's channel hold.
const CALLS: usize = 800;
const OUTPUT: usize = 20_000;

/// A bulky result.
#[tool(args, read_only, crate = "toolcall_core")]
async fn bulky(_ctx: &ToolContext, n: u32) -> Result<String, ToolError> {
    Ok(format!("{n}:{}", "x".repeat(OUTPUT)))
}

/// A Chat Completions model on loopback that takes large requests: a
/// question calls `bulky` [`CALLS`] times, tool results are answered with
/// how many there were.
async fn bulky_model() -> String {
    async fn complete(body: Bytes) -> Response {
        let request: Value = serde_json::from_slice(&body).unwrap();
        let messages = request["messages"].as_array().unwrap();
        let reply = if messages.last().unwrap()["role"] != "tool" {
            Reply::calls(
                (0..CALLS).map(|n| ToolCall::new(format!("call_{n}"), "bulky", format!(r#"{{"n":{n}}}"#))),
            )
        } else {
            let results = messages.iter().filter(|message| message["role"] == "tool").count();
            Reply::text(format!("{results} results"))
        };
        let events = chat_chunks(&reply)
            .into_iter()
            .map(|data| Ok::<_, std::convert::Infallible>(format!("data: {data}\n\n")));
        ([(header::CONTENT_TYPE, "text/event-stream")], Body::from_stream(futures::stream::iter(events)))
            .into_response()
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let app = Router::new().route("/v1/chat/completions", post(complete)).layer(DefaultBodyLimit::disable());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_stops_reading_holds_up_nothing_and_reads_the_whole_run_later() {
    let tools = Toolset::builder().add(Bulky).build().unwrap();
    let agent = Agent::new(OpenAiChat::from_values("gpt-4o", None, Some(&bulky_model().await)), tools)
        .unwrap()
        .with_limits(RunLimits::default().with_max_tool_calls(CALLS));
    let chat = ChatServer::new(agent);
    let address = serve(&chat).await;
    // A page that sends its question, then reads nothing.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(address).await.unwrap();
    let body = ask("s1", "Bulk").to_string();
    let request = format!(
        "POST /api/chat HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut written = 0;
    while written < request.len() {
        stream.writable().await.unwrap();
        match stream.try_write(&request.as_bytes()[written..]) {
            Ok(n) => written += n,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(error) => panic!("{error}"),
        }
    }
    // The run goes to its end while the page reads nothing.
    let page = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if chat.running() == 0 {
                let response = reqwest::get(format!("http://{address}/api/chat/s1")).await.unwrap();
                if response.status() == 200 {
                    let page: Value = response.json().await.unwrap();
                    if page
                        .as_array()
                        .and_then(|page| page.last())
                        .is_some_and(|last| last["role"] == "assistant")
                    {
                        break page;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the run ends though its reader reads nothing");
    // Its end is kept.
    let last = page.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "assistant");
    let said: String =
        last["parts"].as_array().unwrap().iter().filter_map(|part| part["text"].as_str()).collect();
    assert_eq!(said, format!("{CALLS} results"));
    // The page reads at last, at its pace, from the frames the run left:
    // the whole stream, to its end.
    let mut stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    let read = tokio::task::spawn_blocking(move || {
        let mut read = Vec::new();
        stream.read_to_end(&mut read).unwrap();
        read
    });
    let read = tokio::time::timeout(Duration::from_secs(30), read).await.unwrap().unwrap();
    let read = String::from_utf8_lossy(&read);
    assert!(read.starts_with("HTTP/1.1 200"), "{}", &read[..200.min(read.len())]);
    assert!(read.contains(r#""type":"finish","finishReason":"stop""#), "the run's end is in the stream");
    assert!(read.contains("data: [DONE]"), "the stream goes to its end");
}
