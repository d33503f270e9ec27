//! Every model request is bounded: a provider that accepts the connection
//! and then says nothing ends the request with `ModelError::Timeout`
//! naming it, whether it never answers a plain request, never sends a
//! stream's headers, or goes silent in the middle of a stream. The
//! stand-ins are plain TCP listeners on loopback; the bounds are set short
//! here (the defaults are minutes), and no test measures time: each checks
//! the error, and that it comes at all.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use futures::StreamExt;
use toolcall_agent::{
    Anthropic, ApiKey, Gemini, Message, Model, ModelError, ModelEvent, ModelRequest, ModelSettings,
    OpenAiChat, OpenAiResponses, ResendPolicy,
};

/// The short bound the tests set.
const SHORT: Duration = Duration::from_millis(200);

/// A guard against a test that would hang: far longer than any bound
/// here, so that only a request that is never bounded meets it.
const HANG: Duration = Duration::from_secs(60);

/// A provider that accepts each connection and, once the request has come,
/// writes `answer` (nothing, for none) and then nothing more, holding the
/// connection open: its base URL.
fn silent_after(answer: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port on loopback");
    let url = format!("http://{}", listener.local_addr().expect("the listener's address"));
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        for mut stream in listener.incoming().flatten() {
            // The request's first bytes: the answer comes after them.
            let _ = stream.read(&mut [0; 4096]);
            let _ = stream.write_all(answer.as_bytes());
            held.push(stream);
        }
    });
    url
}

/// Headers of an event stream with no length (the body runs until the
/// connection closes), and one event: a Chat Completions chunk with the
/// start of the text
/// (<https://platform.openai.com/docs/api-reference/chat-streaming>).
const ONE_EVENT: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n\
    data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\
    \"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n";

/// A client of type `$client` at `$url` (and the API's base path),
/// resending nothing, with the short bounds.
macro_rules! client {
    ($client:ty, $url:expr) => {
        <$client>::from_values("some-model", Some(ApiKey::new("sk-test")), Some(&$url))
            .with_resend(ResendPolicy::none())
            .with_request_timeout(Some(SHORT))
            .with_stream_idle_timeout(Some(SHORT))
    };
}

/// Ask `model` plainly, with `settings`: the error it ends with.
async fn plain_error(model: &dyn Model, settings: &ModelSettings) -> ModelError {
    let messages = [Message::user("Hello?")];
    let request =
        ModelRequest { instructions: None, messages: &messages, tools: None, settings, answer: None };
    let answer = tokio::time::timeout(HANG, model.request(request)).await.expect("the request never ended");
    answer.expect_err("a provider that says nothing gave an answer")
}

/// Ask `model` for a stream: what it gave before its end, and the error
/// it ended with.
async fn streamed_error(model: &dyn Model) -> (Vec<ModelEvent>, ModelError) {
    let messages = [Message::user("Hello?")];
    let settings = ModelSettings::default();
    let request = ModelRequest {
        instructions: None,
        messages: &messages,
        tools: None,
        settings: &settings,
        answer: None,
    };
    let read = async {
        let mut stream = model.stream(request);
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            match event {
                Ok(event) => events.push(event),
                Err(error) => return (events, error),
            }
        }
        panic!("the stream ended without an error after {events:?}")
    };
    tokio::time::timeout(HANG, read).await.expect("the stream never ended")
}

fn timeout(provider: &str, timeout: Duration) -> ModelError {
    ModelError::Timeout { provider: provider.into(), timeout }
}

#[tokio::test]
async fn a_plain_request_never_answered_times_out_naming_the_provider() {
    let url = silent_after("");
    let settings = ModelSettings::default();
    let models: [(Box<dyn Model>, &str); 4] = [
        (Box::new(client!(OpenAiChat, format!("{url}/v1"))), "openai"),
        (Box::new(client!(OpenAiResponses, format!("{url}/v1"))), "openai"),
        (Box::new(client!(Anthropic, url)), "anthropic"),
        (Box::new(client!(Gemini, url)), "gemini"),
    ];
    for (model, provider) in models {
        let error = plain_error(model.as_ref(), &settings).await;
        assert_eq!(error, timeout(provider, SHORT), "{error}");
        // Transient: a fallback model may answer the same request.
        assert!(error.is_transient());
    }
}

#[tokio::test]
async fn the_settings_timeout_bounds_a_plain_request_over_the_clients() {
    let url = silent_after("");
    let model = client!(OpenAiChat, format!("{url}/v1")).with_request_timeout(None);
    let settings = ModelSettings::default().with_request_timeout(Duration::from_millis(150));
    let error = plain_error(&model, &settings).await;
    assert_eq!(error, timeout("openai", Duration::from_millis(150)), "{error}");
}

#[tokio::test]
async fn a_stream_whose_headers_never_come_times_out() {
    let url = silent_after("");
    let model = client!(Anthropic, url);
    let (events, error) = streamed_error(&model).await;
    assert_eq!(error, timeout("anthropic", SHORT), "{error}");
    assert!(events.is_empty(), "{events:?}");
}

#[tokio::test]
async fn a_stream_that_goes_silent_times_out_after_what_it_sent() {
    let url = silent_after(ONE_EVENT);
    // No bound in all: the silence alone ends it.
    let model = client!(OpenAiChat, format!("{url}/v1")).with_request_timeout(None);
    let (events, error) = streamed_error(&model).await;
    assert_eq!(error, timeout("openai", SHORT), "{error}");
    assert!(matches!(events.as_slice(), [ModelEvent::TextDelta(text)] if text == "Hel"), "{events:?}");
}
