//! The loop scenarios every model client must pass, each written once over
//! [`ProviderMock`] and run against every client's mock, plainly and
//! streamed (see [`scenarios!`] at the end). Each provider's mock, with the
//! documentation its bodies follow, is in that provider's module, with the
//! tests of what only that provider does.
//!
//! Every scenario asserts what the run gave back and what the mock
//! received, read through [`ProviderMock::read`] into a provider-neutral
//! [`Sent`]; the scenarios also return the raw bodies, so a provider's
//! module can run one and assert its own wire shape.

use serde_json::Value;
use toolcall_agent::{Agent, ModelSettings, RunLimits, StopReason, ToolChoice, Usage};
use toolcall_agent::{AgentError, AgentEvent, ApiKey, LimitExceeded, Message, Model, ModelError};
use toolcall_core::Outcome;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

pub(crate) use crate::support::openai::Turn;
use crate::support::openai::{ChunkedServer, Script, run, split_at, streamed_arguments, tools};

/// One provider's side of the scenarios: its client pointed at a mock, its
/// documented response bodies (whole, streamed, errors), and a reading of
/// what its client sent.
pub(crate) trait ProviderMock {
    /// The client under test.
    type Client: Model + std::fmt::Debug + 'static;
    /// The provider's name in errors.
    const NAME: &'static str;
    /// The key the tests give: it must never show in an error.
    const KEY: &'static str;
    /// The environment variable a refused key's error names.
    const KEY_VARIABLE: &'static str;
    /// The tokens each of its bodies reports, as [`Usage`] reads them
    /// (cached and reasoning counts included, where the provider has them).
    const USAGE: Usage;
    /// What a stream cut before its end lacks, as the error names it.
    const STREAM_END: &'static str;
    /// The edits that make a finished turn's body or stream one cut off at
    /// the output limit (the text, compact JSON, before and after), and the
    /// reason the provider gives.
    const TRUNCATED: (&'static [(&'static str, &'static str)], &'static str);
    /// The same for a refusal, or a turn its safety filter stopped.
    const REFUSED: (&'static [(&'static str, &'static str)], &'static str);

    /// The client, pointed at a server at `root` (scheme, host and port).
    fn client(root: &str, key: Option<ApiKey>, attempts: u32) -> Self::Client;
    /// The path (and query) a request goes to.
    fn path(streamed: bool) -> String;
    /// The turn as one whole response body.
    fn body(turn: &Turn) -> Value;
    /// The turn as the text of an event stream; `cut`: the stream stops
    /// after the text, before anything that ends it.
    fn stream(turn: &Turn, cut: bool) -> String;
    /// An error response with this status, its body as the provider writes
    /// errors, with this message.
    fn error(status: u16, message: &str) -> ResponseTemplate;
    /// The argument pieces a streamed call's deltas bring (as [`Self::stream`]
    /// cuts them).
    fn pieces(arguments: &str) -> Vec<String>;
    /// The id the client gives the call at `index` of a turn (Gemini's
    /// calls here carry none, so its client makes one).
    fn call_id(_index: usize, id: &str, _name: &str) -> String {
        id.to_owned()
    }
    /// The key as the request carried it.
    fn key_sent(request: &Request) -> Option<String>;
    /// Whether the request asked for a stream.
    fn streamed(request: &Request) -> bool;
    /// What a request body says, provider-neutral.
    fn read(body: &Value) -> Sent;

    /// The turn as a response, whole or streamed.
    fn reply(turn: &Turn, streamed: bool) -> ResponseTemplate {
        if streamed {
            ResponseTemplate::new(200).set_body_raw(Self::stream(turn, false), "text/event-stream")
        } else {
            ResponseTemplate::new(200).set_body_json(Self::body(turn))
        }
    }
}

/// A request body, provider-neutral.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Sent {
    /// The instructions.
    pub system: Option<String>,
    /// The function tools' names.
    pub tools: Vec<String>,
    /// The tool choice, as sent.
    pub tool_choice: Option<Value>,
    /// The conversation.
    pub messages: Vec<Item>,
}

/// One message of the conversation sent.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Item {
    User(String),
    Assistant { text: String, calls: Vec<SentCall> },
    Results(Vec<SentResult>),
}

/// A call sent back: `key` pairs it with its result (the id, or for
/// Gemini's id-less calls the name).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SentCall {
    pub key: String,
    pub name: String,
    pub args: Value,
}

/// A tool result sent: the key of the call it answers, and its content.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SentResult {
    pub key: String,
    pub content: String,
}

impl Sent {
    /// One more result: with the results before it when they are the last
    /// message (Chat's tool messages, Responses' outputs come one by one).
    pub(crate) fn push_result(&mut self, result: SentResult) {
        match self.messages.last_mut() {
            Some(Item::Results(results)) => results.push(result),
            _ => self.messages.push(Item::Results(vec![result])),
        }
    }
}

impl Item {
    fn calls(&self) -> &[SentCall] {
        match self {
            Item::Assistant { calls, .. } => calls,
            other => panic!("expected an assistant message, got {other:?}"),
        }
    }

    fn results(&self) -> &[SentResult] {
        match self {
            Item::Results(results) => results,
            other => panic!("expected tool results, got {other:?}"),
        }
    }
}

/// Each message with calls is followed by the results of those calls, with
/// the same keys in the same order.
pub(crate) fn assert_every_call_answered(messages: &[Item]) {
    for (at, item) in messages.iter().enumerate() {
        let Item::Assistant { calls, .. } = item else { continue };
        if calls.is_empty() {
            continue;
        }
        let answered: Vec<&str> = messages[at + 1].results().iter().map(|r| r.key.as_str()).collect();
        let asked: Vec<&str> = calls.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(answered, asked, "message {at}");
    }
}

/// A mock answering every POST with these responses, in order.
pub(crate) async fn mock(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(Script::new(responses)).mount(&server).await;
    server
}

/// The requests the mock received, checked for path, key and streaming,
/// and their bodies.
pub(crate) async fn received<P: ProviderMock>(server: &MockServer, streamed: bool) -> Vec<Request> {
    let requests = server.received_requests().await.unwrap_or_default();
    for request in &requests {
        let path = match request.url.query() {
            Some(query) => format!("{}?{query}", request.url.path()),
            None => request.url.path().to_owned(),
        };
        assert_eq!(path, P::path(streamed));
        assert_eq!(P::key_sent(request).as_deref(), Some(P::KEY));
        assert_eq!(P::streamed(request), streamed, "{}", request.url);
    }
    requests
}

/// The JSON bodies of these requests.
pub(crate) fn bodies(requests: &[Request]) -> Vec<Value> {
    requests.iter().map(|request| request.body_json::<Value>().expect("a JSON request body")).collect()
}

pub(crate) fn client<P: ProviderMock>(server: &MockServer, attempts: u32) -> P::Client {
    P::client(&server.uri(), Some(ApiKey::new(P::KEY)), attempts)
}

fn agent<P: ProviderMock>(server: &MockServer, attempts: u32) -> Agent {
    Agent::new(client::<P>(server, attempts), tools()).unwrap().with_instructions("Be brief.")
}

/// The outcomes of a tool message, by call id.
pub(crate) fn outcomes(message: &Message) -> Vec<(String, Outcome)> {
    match message {
        Message::Tool { results } => results.iter().map(|r| (r.id.to_string(), r.outcome)).collect(),
        other => panic!("expected tool results, got {other:?}"),
    }
}

/// The text deltas of a streamed run, joined.
pub(crate) fn streamed_text(events: &[AgentEvent]) -> String {
    crate::support::ag::streamed_text(events)
}

/// The events before the first tool result: the first turn's.
fn first_turn(events: &[AgentEvent]) -> &[AgentEvent] {
    let end = events.iter().position(|e| matches!(e, AgentEvent::ToolResult(_))).unwrap_or(events.len());
    &events[..end]
}

fn json(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap()
}

/// Text and five parallel calls in one turn: one fine, one with bad
/// arguments, one to an unknown tool, one that fails, one to the other
/// tool; then the model fixes the bad one, then answers. Every result goes
/// back to the model with its call's id, in order.
pub(crate) async fn parallel_calls_then_a_fix<P: ProviderMock>(
    streamed: bool,
    configure: fn(Agent) -> Agent,
) -> Vec<Request> {
    let mut first = Turn::calls(&[
        ("call_a", "get_weather", r#"{"city":"Oslo"}"#),
        ("call_b", "get_weather", r#"{"town":"Rome"}"#),
        ("call_c", "get_wether", r#"{"city":"Rome"}"#),
        ("call_d", "get_weather", r#"{"city":"Atlantis"}"#),
        ("call_e", "get_time", r#"{"zone":"UTC"}"#),
    ]);
    first.text = "Checking.".into();
    let fix = Turn::calls(&[("call_f", "get_weather", r#"{"city":"Rome"}"#)]);
    let answer = Turn::text("Oslo and Rome: 12°C.");
    let server =
        mock(vec![P::reply(&first, streamed), P::reply(&fix, streamed), P::reply(&answer, streamed)]).await;
    let (result, events) =
        run(&configure(agent::<P>(&server, 1)), "Weather in Oslo and Rome?", streamed).await;
    let result = result.expect("the run answers");
    assert_eq!((result.answer.as_str(), &result.stop), ("Oslo and Rome: 12°C.", &StopReason::Answered));
    let id = |index: usize, turn: &Turn| {
        let (id, name, _) = &turn.calls[index];
        P::call_id(index, id, name)
    };
    let messages = &result.transcript.messages;
    assert!(matches!(messages[1], Message::Assistant { .. }), "{:?}", messages[1]);
    assert_eq!(messages[1].text(), "Checking.");
    let calls: Vec<_> =
        messages[1].calls().map(|c| (c.id.to_string(), c.name.to_string(), json(&c.arguments))).collect();
    let expected: Vec<_> = first
        .calls
        .iter()
        .enumerate()
        .map(|(i, (_, name, args))| (id(i, &first), name.clone(), json(args)))
        .collect();
    assert_eq!(calls, expected);
    assert_eq!(
        outcomes(&messages[2]),
        [
            (id(0, &first), Outcome::Success),
            (id(1, &first), Outcome::InvalidArguments),
            (id(2, &first), Outcome::NotFound),
            (id(3, &first), Outcome::Failed),
            (id(4, &first), Outcome::Success),
        ]
    );
    assert_eq!(outcomes(&messages[4]), [(id(0, &fix), Outcome::Success)]);
    assert_eq!(result.usage.len(), 3);
    for usage in &result.usage {
        assert_eq!(*usage, P::USAGE);
    }
    if streamed {
        assert_eq!(streamed_text(&events), "Checking.Oslo and Rome: 12°C.");
        // Each call of the first turn: its pieces, as they came, by index.
        let pieces = streamed_arguments(first_turn(&events));
        for (index, (_, _, arguments)) in first.calls.iter().enumerate() {
            let of: Vec<String> =
                pieces.iter().filter(|(i, _)| *i == index).map(|(_, p)| p.clone()).collect();
            assert_eq!(of, P::pieces(arguments), "call {index}");
        }
    }

    let requests = received::<P>(&server, streamed).await;
    let bodies = bodies(&requests);
    assert_eq!(bodies.len(), 3);
    let sent: Vec<Sent> = bodies.iter().map(P::read).collect();
    assert_eq!(sent[0].system.as_deref(), Some("Be brief."));
    assert_eq!(sent[0].tools, ["get_weather", "get_time"]);
    assert_eq!(sent[0].messages, [Item::User("Weather in Oslo and Rome?".into())]);
    for later in &sent[1..] {
        assert_eq!(
            (&later.system, &later.tools, &later.tool_choice),
            (&sent[0].system, &sent[0].tools, &sent[0].tool_choice)
        );
    }
    let second = &sent[1].messages;
    assert_eq!(second.len(), 3);
    let Item::Assistant { text, calls } = &second[1] else { panic!("{:?}", second[1]) };
    assert_eq!(text, "Checking.");
    let echoed: Vec<(&str, Value)> = calls.iter().map(|c| (c.name.as_str(), c.args.clone())).collect();
    let asked: Vec<(&str, Value)> =
        first.calls.iter().map(|(_, name, args)| (name.as_str(), json(args))).collect();
    assert_eq!(echoed, asked);
    assert_every_call_answered(second);
    let results = second[2].results();
    assert_eq!(results[0].content, "12°C in Oslo");
    assert!(results[1].content.contains("city"), "the fix names the field: {:?}", results[1]);
    assert!(results[2].content.contains("get_weather"), "the real names are listed: {:?}", results[2]);
    assert!(results[3].content.contains("no station there"), "{:?}", results[3]);
    assert_eq!(results[4].content, "12:00 in UTC");
    let last = &sent[2].messages;
    assert_eq!(last.len(), 5);
    assert_eq!(last[..3], second[..]);
    assert_every_call_answered(last);
    assert_eq!(last[3], Item::Assistant { text: String::new(), calls: last[3].calls().to_vec() });
    assert_eq!(last[3].calls()[0].args, json(r#"{"city":"Rome"}"#));
    assert_eq!(last[4].results()[0].content, "12°C in Rome");
    requests
}

/// A turn asking for more calls than the budget allows stops the run
/// before any runs, keeping them pending; the tool choice and the token
/// limit are sent.
pub(crate) async fn the_budget_stops_the_run_before_the_calls<P: ProviderMock>(
    streamed: bool,
    configure: fn(ModelSettings) -> ModelSettings,
) -> Vec<Request> {
    let calls = Turn::calls(&[
        ("call_1", "get_weather", r#"{"city":"Oslo"}"#),
        ("call_2", "get_weather", r#"{"city":"Rome"}"#),
    ]);
    let server = mock(vec![P::reply(&calls, streamed)]).await;
    let settings =
        ModelSettings::default().with_tool_choice(ToolChoice::tool("get_weather")).with_max_tokens(300);
    let agent = agent::<P>(&server, 1)
        .with_limits(RunLimits::default().with_max_tool_calls(1))
        .with_settings(configure(settings));
    let (result, _) = run(&agent, "Weather?", streamed).await;
    let result = result.expect("a budget stop is a result");
    assert_eq!(result.stop, StopReason::Budget(LimitExceeded::ToolCalls { limit: 1, requested: 2 }));
    assert_eq!(result.transcript.pending_calls().len(), 2);
    let requests = received::<P>(&server, streamed).await;
    let bodies = bodies(&requests);
    assert_eq!(bodies.len(), 1);
    assert!(P::read(&bodies[0]).tool_choice.is_some());
    requests
}

/// At the turn limit, the last request goes without tools (and so without
/// a tool choice), its messages still holding the turn's calls and results.
pub(crate) async fn max_turns_ends_with_a_request_without_tools<P: ProviderMock>(
    streamed: bool,
    configure: fn(ModelSettings) -> ModelSettings,
) -> Vec<Request> {
    let server = mock(vec![
        P::reply(&Turn::calls(&[("call_1", "get_weather", r#"{"city":"Oslo"}"#)]), streamed),
        P::reply(&Turn::text("12°C in Oslo, as far as I know."), streamed),
    ])
    .await;
    let agent = agent::<P>(&server, 1)
        .with_limits(RunLimits::default().with_max_turns(1))
        .with_settings(configure(ModelSettings::default().with_max_tokens(300)));
    let (result, _) = run(&agent, "Weather?", streamed).await;
    let result = result.expect("the run ends");
    assert_eq!(
        (result.answer.as_str(), &result.stop),
        ("12°C in Oslo, as far as I know.", &StopReason::MaxTurns { turns: 1 })
    );
    let requests = received::<P>(&server, streamed).await;
    let bodies = bodies(&requests);
    assert_eq!(bodies.len(), 2);
    let sent: Vec<Sent> = bodies.iter().map(P::read).collect();
    assert_eq!(sent[0].tools, ["get_weather", "get_time"]);
    assert!(sent[0].tool_choice.is_some());
    assert_eq!((bodies[1].get("tools"), &sent[1].tool_choice), (None, &None), "{}", bodies[1]);
    assert_eq!(sent[1].messages.len(), 3);
    assert_every_call_answered(&sent[1].messages);
    assert_eq!(sent[1].messages[2].results()[0].content, "12°C in Oslo");
    requests
}

/// A 429 with `retry-after` is retried, with the same body.
pub(crate) async fn a_rate_limit_is_retried<P: ProviderMock>(
    streamed: bool,
    configure: fn(Agent) -> Agent,
) -> Vec<Request> {
    let limited = P::error(429, "Rate limit reached");
    let server = mock(vec![limited, P::reply(&Turn::text("Hello."), streamed)]).await;
    let (result, _) = run(&configure(agent::<P>(&server, 2)), "Hi", streamed).await;
    assert_eq!(result.expect("answered on the second attempt").answer, "Hello.");
    let requests = received::<P>(&server, streamed).await;
    let bodies = bodies(&requests);
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0], bodies[1]);
    requests
}

/// Server errors until the attempts run out: the error has the status,
/// the attempts and the body's excerpt, and the run so far.
pub(crate) async fn server_errors_exhaust_the_retries<P: ProviderMock>(
    streamed: bool,
    configure: fn(Agent) -> Agent,
) -> Vec<Request> {
    let message = "The server had an error while processing your request.";
    let server =
        mock(vec![P::error(500, message), P::error(500, message), P::reply(&Turn::text("never"), streamed)])
            .await;
    let (result, _) = run(&configure(agent::<P>(&server, 2)), "Hi", streamed).await;
    let error = result.expect_err("the retries run out");
    assert!(
        matches!(&error.error, ModelError::Server { status: 500, attempts: 2, excerpt, .. } if excerpt.contains("server had an error")),
        "{error:?}"
    );
    assert_eq!(error.transcript.messages, [Message::user("Hi")]);
    let requests = received::<P>(&server, streamed).await;
    let bodies = bodies(&requests);
    assert_eq!(bodies.len(), 2);
    requests
}

/// A refused key (the server even echoes it) names the variable, shows
/// the key nowhere, and is not retried.
pub(crate) async fn a_refused_key_names_the_variable_and_never_shows<P: ProviderMock>(
    streamed: bool,
    configure: fn(Agent) -> Agent,
) -> Vec<Request> {
    let refused = P::error(401, &format!("Incorrect API key provided: {}.", P::KEY));
    let server = mock(vec![refused]).await;
    let model = client::<P>(&server, 2);
    assert!(!format!("{model:?}").contains(P::KEY));
    let (result, _) = run(&configure(Agent::new(model, tools()).unwrap()), "Hi", streamed).await;
    let error = result.expect_err("the key is refused");
    assert_eq!(
        error.error,
        ModelError::Unauthorized { provider: P::NAME.into(), status: 401, variable: P::KEY_VARIABLE }
    );
    assert!(error.to_string().contains(P::KEY_VARIABLE), "{error}");
    assert_no_key::<P>(&error);
    let requests = received::<P>(&server, streamed).await;
    let bodies = bodies(&requests);
    assert_eq!(bodies.len(), 1, "a refused key is not retried");
    requests
}

/// A turn cut off at the output limit, and one refused, each with a text
/// and a call: neither is an answer, the call does not run, and the
/// transcript keeps no call without a result.
pub(crate) async fn a_cut_or_refused_turn_is_not_an_answer<P: ProviderMock>(
    streamed: bool,
    configure: fn(Agent) -> Agent,
) -> Vec<Request> {
    let mut requests = Vec::new();
    for (edits, reason) in [P::TRUNCATED, P::REFUSED] {
        let turn = Turn {
            text: "The weather in Paris is".into(),
            calls: vec![("call_1".into(), "get_weather".into(), r#"{"city":"Par"}"#.into())],
        };
        let mut text = if streamed { P::stream(&turn, false) } else { P::body(&turn).to_string() };
        for (from, to) in edits {
            assert!(text.contains(from), "{from} is not in {text}");
            text = text.replace(from, to);
        }
        let kind = if streamed { "text/event-stream" } else { "application/json" };
        let server = mock(vec![ResponseTemplate::new(200).set_body_raw(text, kind)]).await;
        let agent = configure(Agent::new(client::<P>(&server, 1), tools()).unwrap());
        let (result, _) = run(&agent, "Weather in Paris?", streamed).await;
        let result = result.unwrap();
        let expected = if edits == P::TRUNCATED.0 {
            StopReason::Truncated { reason: reason.into() }
        } else {
            StopReason::Refused { reason: reason.into() }
        };
        assert_eq!(result.stop, expected);
        assert_eq!(result.answer, "The weather in Paris is");
        let Some(last @ Message::Assistant { .. }) = result.transcript.messages.last() else {
            panic!("the turn is in the transcript: {:?}", result.transcript)
        };
        assert_eq!((last.text().as_str(), last.calls().count()), ("The weather in Paris is", 0));
        requests.extend(received::<P>(&server, streamed).await);
    }
    assert_eq!(requests.len(), 2, "nothing more was asked");
    requests
}

/// The key shows in no Display or Debug of the error.
pub(crate) fn assert_no_key<P: ProviderMock>(error: &AgentError) {
    for shown in
        [error.to_string(), format!("{error:?}"), error.error.to_string(), format!("{:?}", error.error)]
    {
        assert!(!shown.contains(P::KEY), "the key shows in: {shown}");
    }
}

/// A stream that stops before its end is an error naming what it lacked;
/// the turns before it are kept, and its text was streamed.
pub(crate) async fn a_stream_that_ends_early_keeps_the_run_so_far<P: ProviderMock>() -> Vec<Request> {
    let first = Turn::calls(&[("call_1", "get_time", r#"{"zone":"UTC"}"#)]);
    let cut = ResponseTemplate::new(200)
        .set_body_raw(P::stream(&Turn::text("It is noon."), true), "text/event-stream");
    let server = mock(vec![P::reply(&first, true), cut]).await;
    let (result, events) = run(&agent::<P>(&server, 1), "Time?", true).await;
    let error = result.expect_err("the stream was cut");
    assert!(matches!(error.error, ModelError::StreamEnded { .. }), "{:?}", error.error);
    assert!(error.to_string().contains(P::STREAM_END), "{error}");
    let messages = &error.transcript.messages;
    assert_eq!(messages.len(), 3);
    assert_eq!(outcomes(&messages[2]), [(P::call_id(0, "call_1", "get_time"), Outcome::Success)]);
    assert!(matches!(&messages[2], Message::Tool { results } if results[0].name == "get_time"));
    assert_eq!(streamed_text(&events), "It is noon.");
    let requests = received::<P>(&server, true).await;
    let bodies = bodies(&requests);
    assert_eq!(bodies.len(), 2);
    requests
}

/// Network chunks cut inside multi-byte characters, of a call's arguments
/// and of the answer: nothing is lost or doubled.
pub(crate) async fn split_characters_assemble<P: ProviderMock>() {
    let call = Turn::calls(&[("call_z", "get_weather", r#"{"city":"Zürich"}"#)]);
    let answer = "Il fait 12°C à Zürich — 晴れ。";
    let first = P::stream(&call, false);
    let second = P::stream(&Turn::text(answer), false);
    // Byte offsets inside "ü" (2 bytes), "°", "à" (2 bytes) and "晴" (3 bytes).
    let cut_in = |text: &str, needle: &str| text.find(needle).unwrap() + 1;
    // And one more in the middle of an event, past the "ü".
    let first_cuts = [cut_in(&first, "ü"), cut_in(&first, "ü") + (first.len() - cut_in(&first, "ü")) / 2];
    let second_cuts =
        [cut_in(&second, "°"), cut_in(&second, "à"), cut_in(&second, "晴"), cut_in(&second, "晴") + 1];
    let server = ChunkedServer::start(vec![split_at(&first, &first_cuts), split_at(&second, &second_cuts)]);
    let model = P::client(&server.root, Some(ApiKey::new(P::KEY)), 1);
    let (result, events) = run(&Agent::new(model, tools()).unwrap(), "Zürich?", true).await;
    let result = result.expect("answered");
    assert_eq!(result.answer, answer);
    assert_eq!(streamed_text(&events), answer);
    let id = P::call_id(0, "call_z", "get_weather");
    assert_eq!(
        result.transcript.messages[1],
        Message::assistant(
            "",
            [toolcall_core::ToolCall::new(id.as_str(), "get_weather", r#"{"city":"Zürich"}"#)]
        )
    );
    assert_eq!(outcomes(&result.transcript.messages[2]), [(id, Outcome::Success)]);
    let pieces: Vec<(usize, String)> =
        P::pieces(r#"{"city":"Zürich"}"#).into_iter().map(|p| (0, p)).collect();
    assert_eq!(streamed_arguments(first_turn(&events)), pieces);
    let bodies = server.bodies();
    let sent = P::read(&bodies[1]);
    assert_eq!(sent.messages[2].results()[0].content, "12°C in Zürich");
    assert_every_call_answered(&sent.messages);
}

/// One test per scenario, provider and mode: `scenarios!(chat: Mock)`
/// gives `chat::parallel_calls_then_a_fix::plain`, `...::streamed`, etc.
macro_rules! scenarios {
    ($($provider:ident: $mock:ty),* $(,)?) => {$(
        mod $provider {
            scenarios!(@both $mock:
                parallel_calls_then_a_fix,
                the_budget_stops_the_run_before_the_calls,
                max_turns_ends_with_a_request_without_tools,
                a_rate_limit_is_retried,
                server_errors_exhaust_the_retries,
                a_refused_key_names_the_variable_and_never_shows,
                a_cut_or_refused_turn_is_not_an_answer);
            scenarios!(@streamed $mock:
                a_stream_that_ends_early_keeps_the_run_so_far,
                split_characters_assemble);
        }
    )*};
    (@both $mock:ty: $($scenario:ident),*) => {$(
        mod $scenario {
            #[tokio::test]
            async fn plain() {
                super::super::$scenario::<$mock>(false, std::convert::identity).await;
            }
            #[tokio::test]
            async fn streamed() {
                super::super::$scenario::<$mock>(true, std::convert::identity).await;
            }
        }
    )*};
    (@streamed $mock:ty: $($scenario:ident),*) => {$(
        #[tokio::test]
        async fn $scenario() {
            super::$scenario::<$mock>().await;
        }
    )*};
}

scenarios!(
    openai_chat: crate::openai_chat::Mock,
    openai_responses: crate::openai_responses::Mock,
    anthropic: crate::anthropic::Mock,
    gemini: crate::gemini::Mock,
);
