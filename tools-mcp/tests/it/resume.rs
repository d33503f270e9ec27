//! Resuming a call's event stream over raw HTTP on loopback (protocol
//! 2025-06-18, "Resumability and Redelivery",
//! <https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#resumability-and-redelivery>):
//! a call reports progress, its stream is cut, and a GET with
//! `Last-Event-ID` gets the events strictly after the one named, while
//! the call runs and after it has answered; one that cannot be served is
//! refused with a JSON-RPC error, not an empty stream.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;
use toolcall_core::{CancellationToken, ToolContext, ToolError, ToolSpec, Toolset, TypedTool};
use toolcall_mcp::{HttpOptions, McpServer};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// Reports step 1, waits for its gate, reports step 2 and answers.
#[derive(Clone, Default)]
struct Gated(Arc<Notify>);

impl TypedTool for Gated {
    type Request = Nothing;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<Nothing>("gated", "Two steps, a gate between them."));
        &SPEC
    }
    async fn run(&self, ctx: &ToolContext, _: Nothing) -> Result<String, ToolError> {
        ctx.report_progress(1.0, Some(2.0), Some("one"));
        self.0.notified().await;
        ctx.report_progress(2.0, Some(2.0), Some("two"));
        Ok("done".into())
    }
}

struct Running {
    url: String,
    server: McpServer,
    shutdown: CancellationToken,
    gate: Arc<Notify>,
}

async fn start() -> Running {
    start_with(HttpOptions::new()).await
}

async fn start_with(options: HttpOptions) -> Running {
    let gate = Gated::default();
    let shutdown = CancellationToken::new();
    let options = options.with_shutdown(shutdown.clone()).with_stop_on_ctrl_c(false);
    let server = McpServer::new(Toolset::builder().add(gate.clone()).build().expect("a toolset"));
    let bound =
        options.bind(server.clone(), "127.0.0.1:0".parse().expect("an address")).await.expect("bound");
    let url = bound.url();
    tokio::spawn(bound.serve());
    Running { url, server, shutdown, gate: gate.0 }
}

fn post(url: &str, session: Option<&str>, body: &str) -> reqwest::RequestBuilder {
    let request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_owned());
    match session {
        Some(session) => request.header("mcp-session-id", session),
        None => request,
    }
}

/// An initialized session's id.
async fn session(url: &str) -> String {
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let response = post(url, None, initialize).send().await.unwrap();
    assert!(response.status().is_success());
    let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(url, Some(&id), initialized).send().await.unwrap().status(), 202);
    id
}

fn resume(url: &str, session: &str, last_event_id: &str, version: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", version)
        .header("last-event-id", last_event_id)
}

/// One server-sent event: its id, and its data read as JSON.
#[derive(Debug)]
struct Event {
    id: Option<String>,
    data: Option<Value>,
}

/// The events of a response, read as they come.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
        Self { response, buffer: String::new() }
    }

    /// The next event, or None once the server has ended the stream.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                let field = |name: &str| {
                    frame.lines().find_map(|line| line.strip_prefix(name)).map(|v| v.trim_start().to_owned())
                };
                let event = Event {
                    id: field("id:"),
                    data: field("data:").filter(|d| !d.is_empty()).map(|d| serde_json::from_str(&d).unwrap()),
                };
                // Keep-alive comments carry neither.
                if event.id.is_some() || event.data.is_some() {
                    return Some(event);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("an event or the end within 10 s")
                .expect("a clean read");
            self.buffer.push_str(std::str::from_utf8(&chunk?).unwrap());
        }
    }

    /// The events with data up to the end of the stream.
    async fn rest(mut self) -> Vec<Event> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            if event.data.is_some() {
                events.push(event);
            }
        }
        events
    }
}

fn progress(event: &Event) -> Option<f64> {
    let data = event.data.as_ref()?;
    (data["method"] == "notifications/progress").then(|| data["params"]["progress"].as_f64()).flatten()
}

fn answer(event: &Event) -> Option<&str> {
    event.data.as_ref()?["result"]["content"][0]["text"].as_str()
}

#[tokio::test]
async fn a_cut_call_stream_resumes_strictly_after_the_last_event_while_running_and_after_its_answer() {
    let running = start().await;
    let id = session(&running.url).await;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gated","arguments":{},"_meta":{"progressToken":"p"}}}"#;
    let mut first = Events::new(post(&running.url, Some(&id), call).send().await.unwrap());
    // The priming event (an id and a retry delay), then step 1.
    let priming = first.next().await.expect("the priming event");
    assert!(priming.data.is_none() && priming.id.is_some(), "{priming:?}");
    let one = first.next().await.expect("step 1");
    assert_eq!(progress(&one), Some(1.0), "{one:?}");
    let one_id = one.id.clone().expect("step 1 has an id");
    // The connection is cut while the call waits at its gate.
    drop(first);

    // Resumed while it runs: step 2 and the answer, not step 1 again.
    let resumed = resume(&running.url, &id, &one_id, "2025-06-18").send().await.unwrap();
    let resumed = Events::new(resumed);
    running.gate.notify_one();
    let events = resumed.rest().await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(progress(&events[0]), Some(2.0), "{events:?}");
    assert_eq!(answer(&events[1]), Some("done"), "{events:?}");
    assert_eq!(events[1].data.as_ref().unwrap()["id"], 2);
    let answer_id = events[1].id.clone().expect("the answer has an id");

    // After the answer, from step 1 again: the same two events, same ids.
    let again =
        Events::new(resume(&running.url, &id, &one_id, "2025-06-18").send().await.unwrap()).rest().await;
    assert_eq!(again.len(), 2, "{again:?}");
    assert_eq!((progress(&again[0]), answer(&again[1])), (Some(2.0), Some("done")), "{again:?}");
    assert_eq!((again[0].id.as_ref(), again[1].id.as_ref()), (events[0].id.as_ref(), Some(&answer_id)));
    // From the priming event: all three.
    let priming_id = priming.id.unwrap();
    let all =
        Events::new(resume(&running.url, &id, &priming_id, "2025-06-18").send().await.unwrap()).rest().await;
    assert_eq!(all.iter().map(progress).collect::<Vec<_>>(), [Some(1.0), Some(2.0), None], "{all:?}");
    // From the answer: nothing more, and the stream ends.
    let none =
        Events::new(resume(&running.url, &id, &answer_id, "2025-06-18").send().await.unwrap()).rest().await;
    assert!(none.is_empty(), "{none:?}");
    running.shutdown.cancel();
}

/// The JSON-RPC error message of a refused resumption.
async fn refused(response: reqwest::Response) -> String {
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["error"]["code"], -32000, "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_resumption_that_cannot_be_served_is_refused_with_a_json_rpc_error() {
    let running = start().await;
    let id = session(&running.url).await;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gated","arguments":{},"_meta":{"progressToken":"p"}}}"#;
    let mut first = Events::new(post(&running.url, Some(&id), call).send().await.unwrap());
    let priming_id = first.next().await.unwrap().id.unwrap();
    let (_, post_number) = priming_id.split_once('/').expect("<index>/<POST number>");

    // An event this stream never sent, and a stream that never was.
    let unsent = resume(&running.url, &id, &format!("99/{post_number}"), "2025-06-18").send().await.unwrap();
    assert!(refused(unsent).await.contains("cannot resume after event `99/"));
    let unknown = resume(&running.url, &id, "0/987654", "2025-06-18").send().await.unwrap();
    assert!(refused(unknown).await.contains("no longer kept"));
    let unreadable = resume(&running.url, &id, "abc", "2025-06-18").send().await.unwrap();
    assert!(refused(unreadable).await.contains("no event of this server has such an id"));
    // Another session's: not this session's to resume.
    let other = session(&running.url).await;
    let foreign = resume(&running.url, &other, &priming_id, "2025-06-18").send().await.unwrap();
    refused(foreign).await;
    // A session that is not there: 404, as for any of its requests.
    let gone = resume(&running.url, "no-such-session", &priming_id, "2025-06-18").send().await.unwrap();
    assert_eq!(gone.status(), 404);
    // 2026-07-28 has no resumption (nor GET): 405.
    let modern = resume(&running.url, &id, &priming_id, "2026-07-28").send().await.unwrap();
    assert_eq!(modern.status(), 405);

    // The stream still resumes from where it really was.
    running.gate.notify_one();
    let events = Events::new(resume(&running.url, &id, &priming_id, "2025-06-18").send().await.unwrap());
    let events = events.rest().await;
    assert_eq!(events.iter().map(progress).collect::<Vec<_>>(), [Some(1.0), Some(2.0), None], "{events:?}");
    drop(first);
    running.shutdown.cancel();
}

/// The session's own event stream (a GET without `Last-Event-ID`).
fn listen(url: &str, session: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
}

#[tokio::test]
async fn the_sessions_own_stream_resumes_strictly_after_the_last_event() {
    // The server ends the stream after 2 s, as it ends every one in time.
    let running = start_with(HttpOptions::new().with_event_stream_lifetime(Duration::from_secs(2))).await;
    let id = session(&running.url).await;
    let mut stream = Events::new(listen(&running.url, &id).send().await.unwrap());
    let priming = stream.next().await.expect("the priming event");
    assert!(priming.data.is_none(), "{priming:?}");
    // A change of tools: `notifications/tools/list_changed`, on this stream.
    running.server.update(|_| ()).await;
    let first = stream.next().await.expect("the first notice");
    assert_eq!(first.data.as_ref().unwrap()["method"], "notifications/tools/list_changed", "{first:?}");
    // Its id is not the priming event's (rmcp numbers both 0).
    assert_ne!(first.id, priming.id, "{first:?}");
    assert!(stream.next().await.is_none(), "the stream ends at its lifetime");
    // A second change while the client is away.
    running.server.update(|_| ()).await;
    let after_first = first.id.clone().unwrap();
    let mut resumed =
        Events::new(resume(&running.url, &id, &after_first, "2025-06-18").send().await.unwrap());
    let second = resumed.next().await.expect("the second notice");
    assert_eq!(second.data.as_ref().unwrap()["method"], "notifications/tools/list_changed", "{second:?}");
    assert_ne!(second.id.as_deref(), Some(after_first.as_str()), "the first notice again: {second:?}");
    // Then what comes next, with nothing in between.
    running.server.update(|_| ()).await;
    let third = resumed.next().await.expect("the third notice");
    assert_eq!(third.data.as_ref().unwrap()["method"], "notifications/tools/list_changed", "{third:?}");
    let number = |event: &Event| event.id.as_deref().unwrap().parse::<u64>().unwrap();
    assert_eq!((number(&first), number(&second), number(&third)), (1, 2, 3));
    running.shutdown.cancel();
}
