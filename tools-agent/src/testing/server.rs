//! The scripted OpenAI-compatible server: its replies, their bodies and
//! (feature `scripted-server`) the server on loopback.

use serde_json::{Value, json};
use toolcall_core::ToolCall;

/// One model turn as a [`ScriptedServer`] answers it: text, calls, or both;
/// the tokens it reports ([`Reply::with_usage`]) and its id
/// ([`Reply::with_id`]) if the test chooses them.
///
/// ```
/// use toolcall_agent::testing::{Reply, chat_completion};
/// use toolcall_core::ToolCall;
///
/// let reply = Reply::calls([ToolCall::new("call_1", "get_weather", r#"{"city":"Paris"}"#)]).with_usage(120, 7);
/// let body = chat_completion(&reply);
/// assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
/// assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_weather");
/// assert_eq!((body["usage"]["prompt_tokens"].as_u64(), body["usage"]["total_tokens"].as_u64()), (Some(120), Some(127)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// The assistant's text (none: `content` is `null`).
    pub text: String,
    /// The tool calls the assistant makes, in order.
    pub calls: Vec<ToolCall>,
    /// The tokens the response reports, `(prompt, completion)`, with none
    /// cached and none of reasoning; `None`: 19 in (16 of them cached) and
    /// 10 out (4 of them reasoning).
    pub usage: Option<(u64, u64)>,
    /// The response's id; `None`: the server numbers its responses
    /// (`chatcmpl-scripted-1`, `-2`, ...), and [`chat_completion`] and
    /// [`chat_chunks`] alone write OpenAI's example ids.
    pub id: Option<String>,
}

impl Reply {
    /// A turn that answers with this text.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: text.into(), ..Self::default() }
    }

    /// A turn that calls these tools.
    pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Self { calls: calls.into_iter().collect(), ..Self::default() }
    }

    /// The turn reporting these tokens: `prompt` in, `completion` out (the
    /// `usage` of the body, or of the streamed usage chunk).
    #[must_use]
    pub fn with_usage(mut self, prompt: u64, completion: u64) -> Self {
        self.usage = Some((prompt, completion));
        self
    }

    /// The turn answered with this response id (in every chunk, streamed).
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// The tokens a scripted body reports: the reply's own, or 19 in (16 of
/// them cached), 10 out (4 of them reasoning).
fn usage(reply: Option<&Reply>) -> Value {
    let (prompt, completion, cached, reasoning) = match reply.and_then(|reply| reply.usage) {
        Some((prompt, completion)) => (prompt, completion, 0, 0),
        None => (19, 10, 16, 4),
    };
    json!({
        "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0,
            "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
    })
}

/// The id of a whole body without an id of its own: OpenAI's example.
const COMPLETION_ID: &str = "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG";
/// The id of a chunk without an id of its own: OpenAI's example.
const CHUNK_ID: &str = "chatcmpl-123";

fn finish_reason(reply: &Reply) -> &'static str {
    if reply.calls.is_empty() { "stop" } else { "tool_calls" }
}

/// The turn as a whole `chat.completion` object (a request without
/// `stream`): its id the reply's, or OpenAI's example id.
pub fn chat_completion(reply: &Reply) -> Value {
    let tool_calls: Vec<Value> = reply
        .calls
        .iter()
        .map(|call| {
            json!({"id": call.id, "type": "function",
                   "function": {"name": call.name, "arguments": call.arguments}})
        })
        .collect();
    let mut message = json!({
        "role": "assistant",
        "content": if reply.text.is_empty() { Value::Null } else { json!(reply.text) },
        "refusal": null,
        "annotations": []
    });
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    json!({
        "id": reply.id.as_deref().unwrap_or(COMPLETION_ID),
        "object": "chat.completion",
        "created": 1741570283,
        "model": "gpt-4o-2024-08-06",
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(reply)
        }],
        "usage": usage(Some(reply)),
        "service_tier": "default",
        "system_fingerprint": "fp_fc9f1d7035"
    })
}

/// One `chat.completion.chunk` (its JSON text) with this delta and finish
/// reason, for a stream [`chat_chunks`] does not write (a refusal, calls
/// that interleave).
pub fn chat_chunk(delta: Value, finish: Option<&str>) -> String {
    chunk(CHUNK_ID, delta, finish)
}

fn chunk(id: &str, delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": id, "object": "chat.completion.chunk", "created": 1694268190,
        "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "service_tier": "default",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        "usage": null
    })
    .to_string()
}

/// The usage chunk that `stream_options.include_usage` adds before `[DONE]`.
pub fn chat_usage_chunk() -> String {
    usage_chunk(CHUNK_ID, None)
}

fn usage_chunk(id: &str, reply: Option<&Reply>) -> String {
    json!({
        "id": id, "object": "chat.completion.chunk", "created": 1694268190,
        "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices": [],
        "usage": usage(reply)
    })
    .to_string()
}

/// A tool call piece: the first carries id, type and name.
fn call_piece(index: usize, head: Option<&ToolCall>, arguments: &str) -> Value {
    match head {
        Some(call) => json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                   "function": {"name": call.name, "arguments": arguments}}]}),
        None => json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}),
    }
}

/// The byte offset `num/den` of the way into `text`'s characters.
fn cut(text: &str, num: usize, den: usize) -> usize {
    text.char_indices().nth(text.chars().count() * num / den).map_or(0, |(i, _)| i)
}

/// The pieces a streamed call's arguments come in ([`chat_chunks`]): the
/// head's empty text, then the arguments cut two thirds of the way in.
///
/// ```
/// use toolcall_agent::testing::argument_pieces;
///
/// assert_eq!(argument_pieces(r#"{"city":"Paris"}"#), ["", r#"{"city":"P"#, r#"aris"}"#]);
/// ```
pub fn argument_pieces(arguments: &str) -> Vec<String> {
    let at = cut(arguments, 2, 3);
    vec![String::new(), arguments[..at].into(), arguments[at..].into()]
}

/// The data of each event of the turn streamed (a request with `"stream":
/// true`): the role, the text in two pieces, each call's head (id, name)
/// then its arguments in two more pieces ([`argument_pieces`]), the finish,
/// the usage, `[DONE]`. Every chunk carries the reply's id, or OpenAI's
/// example id.
///
/// ```
/// use toolcall_agent::testing::{Reply, chat_chunks};
///
/// let chunks = chat_chunks(&Reply::text("Sunny."));
/// assert_eq!(chunks.len(), 6);
/// assert_eq!(chunks.last().map(String::as_str), Some("[DONE]"));
/// ```
pub fn chat_chunks(reply: &Reply) -> Vec<String> {
    let id = reply.id.as_deref().unwrap_or(CHUNK_ID);
    let chat_chunk = |delta, finish| chunk(id, delta, finish);
    let mut out = vec![chat_chunk(json!({"role": "assistant", "content": "", "refusal": null}), None)];
    if !reply.text.is_empty() {
        let at = cut(&reply.text, 1, 2);
        out.push(chat_chunk(json!({"content": &reply.text[..at]}), None));
        out.push(chat_chunk(json!({"content": &reply.text[at..]}), None));
    }
    for (index, call) in reply.calls.iter().enumerate() {
        let mut pieces = argument_pieces(&call.arguments).into_iter();
        let head = pieces.next().unwrap_or_default();
        out.push(chat_chunk(call_piece(index, Some(call), &head), None));
        out.extend(pieces.map(|piece| chat_chunk(call_piece(index, None, &piece), None)));
    }
    out.push(chat_chunk(json!({}), Some(finish_reason(reply))));
    out.push(usage_chunk(id, Some(reply)));
    out.push("[DONE]".into());
    out
}

/// An error object as OpenAI writes them, for a status.
pub fn chat_error(status: u16, message: &str) -> Value {
    let (kind, code) = match status {
        400 => ("invalid_request_error", Value::Null),
        401 => ("invalid_request_error", json!("invalid_api_key")),
        429 => ("requests", json!("rate_limit_exceeded")),
        _ => ("server_error", Value::Null),
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

#[cfg(feature = "scripted-server")]
pub use loopback::ScriptedServer;

#[cfg(feature = "scripted-server")]
mod loopback {
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use axum::Router;
    use axum::body::Body;
    use axum::extract::State;
    use axum::http::{StatusCode, header};
    use axum::response::{IntoResponse, Response};
    use axum::routing::post;
    use serde_json::Value;
    use tokio::sync::oneshot;

    use super::{Reply, chat_chunks, chat_completion, chat_error};

    /// What decides each reply: the request's body in, a reply out (none:
    /// the script is over).
    type Script = dyn Fn(&Value) -> Option<Reply> + Send + Sync;

    struct Shared {
        script: Box<Script>,
        requests: Mutex<Vec<Value>>,
        /// The responses sent so far, which numbers the next one's id.
        answered: AtomicUsize,
    }

    /// A Chat Completions server on `127.0.0.1` (a free port) that answers
    /// `POST /v1/chat/completions` from a script: a queue of [`Reply`]s
    /// ([`ScriptedServer::start`]) or a function of the request
    /// ([`ScriptedServer::answering`]), whole or, when the request says
    /// `"stream": true`, as server-sent events. It records each request's
    /// body ([`ScriptedServer::requests`]); each response has an id of its
    /// own, `chatcmpl-scripted-1`, `-2`, ... in the order they are sent
    /// (unless the reply names one: [`Reply::with_id`]), and reports the
    /// reply's tokens ([`Reply::with_usage`]); a request it has no reply for,
    /// or that is not JSON, gets a 400 with OpenAI's error object. It stops
    /// when dropped.
    ///
    /// Point [`OpenAiChat`](crate::OpenAiChat) at [`ScriptedServer::base_url`]
    /// to run an agent offline through the real client, streaming included
    /// (what [`ScriptedModel`](crate::testing::ScriptedModel) skips).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// use toolcall_agent::testing::{Reply, ScriptedServer};
    /// use toolcall_agent::{Agent, OpenAiChat};
    /// use toolcall_core::toolset::Toolset;
    ///
    /// let server = ScriptedServer::start([Reply::text("Hello.")]).await?;
    /// let model = OpenAiChat::from_values("gpt-4o", None, Some(server.base_url()));
    /// let agent = Agent::new(model, Toolset::builder().build().unwrap()).unwrap();
    /// let result = agent.run("Hi").await.unwrap();
    /// assert_eq!(result.answer, "Hello.");
    /// assert_eq!(server.requests()[0]["messages"][0]["content"], "Hi");
    /// # Ok(())
    /// # }
    /// ```
    pub struct ScriptedServer {
        base_url: String,
        shared: Arc<Shared>,
        _stop: oneshot::Sender<()>,
    }

    impl std::fmt::Debug for ScriptedServer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ScriptedServer").field("base_url", &self.base_url).finish_non_exhaustive()
        }
    }

    impl ScriptedServer {
        /// A server that answers each request with the next of these replies.
        ///
        /// # Errors
        ///
        /// The [`std::io::Error`] of binding a local port (`127.0.0.1:0`) or reading its address.
        pub async fn start(replies: impl IntoIterator<Item = Reply>) -> std::io::Result<Self> {
            let queue = Mutex::new(replies.into_iter().collect::<VecDeque<_>>());
            Self::serve(Box::new(move |_: &Value| queue.lock().ok()?.pop_front())).await
        }

        /// A server that answers each request (its JSON body) with what
        /// `script` makes of it; `None` answers a 400.
        ///
        /// # Errors
        ///
        /// The [`std::io::Error`] of binding a local port (`127.0.0.1:0`) or reading its address.
        pub async fn answering(
            script: impl Fn(&Value) -> Option<Reply> + Send + Sync + 'static,
        ) -> std::io::Result<Self> {
            Self::serve(Box::new(script)).await
        }

        async fn serve(script: Box<Script>) -> std::io::Result<Self> {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            let base_url = format!("http://{}/v1", listener.local_addr()?);
            let shared =
                Arc::new(Shared { script, requests: Mutex::new(Vec::new()), answered: AtomicUsize::new(0) });
            let app = Router::new().route("/v1/chat/completions", post(complete)).with_state(shared.clone());
            let (stop, stopped) = oneshot::channel::<()>();
            tokio::spawn(async move {
                let stopped = async {
                    let _ = stopped.await;
                };
                // An error here ends the server; the client reads it as a refused connection.
                let _ = axum::serve(listener, app).with_graceful_shutdown(stopped).await;
            });
            Ok(Self { base_url, shared, _stop: stop })
        }

        /// The base URL to give a client: `http://127.0.0.1:PORT/v1`.
        pub fn base_url(&self) -> &str {
            &self.base_url
        }

        /// The JSON body of each request so far, in order.
        pub fn requests(&self) -> Vec<Value> {
            self.shared.requests.lock().map(|requests| requests.clone()).unwrap_or_default()
        }
    }

    fn refuse(message: &str) -> Response {
        (StatusCode::BAD_REQUEST, axum::Json(chat_error(400, message))).into_response()
    }

    async fn complete(State(shared): State<Arc<Shared>>, body: axum::body::Bytes) -> Response {
        let Ok(request) = serde_json::from_slice::<Value>(&body) else {
            return refuse("the request body is not JSON");
        };
        if let Ok(mut requests) = shared.requests.lock() {
            requests.push(request.clone());
        }
        let Some(mut reply) = (shared.script)(&request) else {
            return refuse("the scripted server has no reply for this request: the script is over");
        };
        let number = shared.answered.fetch_add(1, Ordering::Relaxed) + 1;
        reply.id.get_or_insert_with(|| format!("chatcmpl-scripted-{number}"));
        if request["stream"] != true {
            return axum::Json(chat_completion(&reply)).into_response();
        }
        // One body frame per event, as a real server flushes them.
        let events = chat_chunks(&reply)
            .into_iter()
            .map(|data| Ok::<_, std::convert::Infallible>(format!("data: {data}\n\n")));
        let body = Body::from_stream(futures::stream::iter(events));
        ([(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")], body)
            .into_response()
    }
}
