//! The spans as an OpenTelemetry exporter receives them, through
//! tracing-opentelemetry and nothing else: names, kinds, parents, status
//! and the attributes of OpenTelemetry's GenAI semantic conventions
//! (v1.41.0), for a run against the Chat Completions stand-in with a call
//! that succeeds and one that fails, a run whose request fails, and the
//! opt-in content.

use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use toolcall_agent::{Agent, ApiKey};
use tracing_subscriber::layer::SubscriberExt;

use crate::openai_chat::Mock;
use crate::scenarios::{ProviderMock, Turn, mock};
use crate::support::openai::{KEY, error, tools};

/// The spans `run` made, as an in-memory exporter received them.
fn exported<T>(run: impl FnOnce() -> T) -> (T, Vec<SpanData>) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    // Only the SDK's own attributes: no source locations, threads or timings.
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("tools-agent"))
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_target(false)
        .with_level(false);
    let out = crate::spans::capture::traced(tracing_subscriber::registry().with(layer), run);
    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    // Each attribute is recorded once: an exporter keeps every recording.
    for span in &spans {
        let mut keys: Vec<&str> = span.attributes.iter().map(|kv| kv.key.as_str()).collect();
        keys.sort_unstable();
        let count = keys.len();
        keys.dedup();
        assert_eq!(
            keys.len(),
            count,
            "an attribute of `{}` is recorded twice: {:?}",
            span.name,
            span.attributes
        );
    }
    (out, spans)
}

/// The attribute `key` of `span`, as text (an integer as its digits).
fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
}

/// The attribute `key` of `span`, which must be an integer.
fn int(span: &SpanData, key: &str) -> Option<i64> {
    let value = &span.attributes.iter().find(|kv| kv.key.as_str() == key)?.value;
    match value {
        opentelemetry::Value::I64(n) => Some(*n),
        other => panic!("`{key}` is {other:?}, not an integer"),
    }
}

/// The spans named `name`, in the order they ended.
fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|span| span.name == name).collect()
}

/// One line per span and attribute, for a person to read (`--nocapture`).
fn show(spans: &[SpanData]) -> String {
    let mut out = String::new();
    for span in spans {
        let status = match &span.status {
            Status::Error { .. } => "error",
            Status::Ok => "ok",
            Status::Unset => "unset",
        };
        let parent = spans.iter().find(|p| p.span_context.span_id() == span.parent_span_id);
        let parent = parent.map_or("(root)".to_owned(), |p| format!("under `{}`", p.name));
        out += &format!("{} [{:?}, status {status}] {parent}\n", span.name, span.span_kind);
        for kv in &span.attributes {
            out += &format!("    {} = {}\n", kv.key, kv.value);
        }
    }
    out
}

/// A run with two calls (one fails) and an answer, against the stand-in.
fn weather_run(agent: impl FnOnce(Agent) -> Agent) -> (toolcall_agent::RunResult, Vec<SpanData>) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let calls = Turn::calls(&[
        ("call_1", "get_weather", r#"{"city":"Paris"}"#),
        ("call_2", "get_weather", r#"{"city":"Atlantis"}"#),
    ]);
    let server = runtime.block_on(mock(vec![
        Mock::reply(&calls, false),
        Mock::reply(&Turn::text("12°C in Paris; Atlantis has no station."), false),
    ]));
    let client = Mock::client(&server.uri(), Some(ApiKey::new(KEY)), 1);
    let agent = agent(Agent::new(client, tools()).unwrap().with_instructions("Be brief."));
    let (result, spans) = exported(|| runtime.block_on(agent.run("Weather in Paris and Atlantis?")));
    (result.unwrap(), spans)
}

#[test]
fn a_runs_spans_follow_the_genai_conventions() {
    let (result, spans) = weather_run(|agent| agent.with_name("forecaster"));
    assert_eq!(result.answer, "12°C in Paris; Atlantis has no station.");
    println!("{}", show(&spans));

    let runs = named(&spans, "invoke_agent forecaster");
    let chats = named(&spans, "chat gpt-4o");
    let tools = named(&spans, "execute_tool get_weather");
    assert_eq!((runs.len(), chats.len(), tools.len(), spans.len()), (1, 2, 2, 5), "{}", show(&spans));
    let run = runs[0];

    assert_eq!(run.span_kind, SpanKind::Internal);
    assert_eq!(run.status, Status::Unset);
    for (key, value) in [
        ("gen_ai.operation.name", "invoke_agent"),
        ("gen_ai.provider.name", "openai"),
        ("gen_ai.request.model", "gpt-4o"),
        ("gen_ai.agent.name", "forecaster"),
        ("stop", "Answered"),
    ] {
        assert_eq!(attr(run, key).as_deref(), Some(value), "{key}");
    }
    // The run's tokens are its two requests' together.
    assert_eq!(int(run, "gen_ai.usage.input_tokens"), Some(2 * 19));
    assert_eq!(int(run, "gen_ai.usage.cache_read.input_tokens"), Some(2 * 16));

    // Both requests, and both calls, are the run's children, in its trace.
    for child in chats.iter().chain(&tools) {
        assert_eq!(child.parent_span_id, run.span_context.span_id(), "{}", child.name);
        assert_eq!(child.span_context.trace_id(), run.span_context.trace_id());
    }

    for (chat, finish) in chats.iter().zip(["tool_call", "stop"]) {
        assert_eq!(chat.span_kind, SpanKind::Client);
        assert_eq!(chat.status, Status::Unset);
        for (key, value) in [
            ("gen_ai.operation.name", "chat"),
            ("gen_ai.provider.name", "openai"),
            ("gen_ai.request.model", "gpt-4o"),
            ("gen_ai.response.model", "gpt-4o"),
            ("gen_ai.response.id", "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG"),
            ("gen_ai.response.finish_reasons", finish),
        ] {
            assert_eq!(attr(chat, key).as_deref(), Some(value), "{key}");
        }
        // As OpenAI's usage says them: cached and reasoning tokens are
        // parts of the input and the output.
        assert_eq!(int(chat, "gen_ai.usage.input_tokens"), Some(19));
        assert_eq!(int(chat, "gen_ai.usage.output_tokens"), Some(10));
        assert_eq!(int(chat, "gen_ai.usage.cache_read.input_tokens"), Some(16));
        assert_eq!(int(chat, "gen_ai.usage.reasoning.output_tokens"), Some(4));
        assert_eq!(int(chat, "gen_ai.usage.cache_creation.input_tokens"), None);
        assert_eq!(attr(chat, "error.type"), None);
    }

    let by_id =
        |id: &str| *tools.iter().find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some(id)).unwrap();
    let (paris, atlantis) = (by_id("call_1"), by_id("call_2"));
    for tool in [paris, atlantis] {
        assert_eq!(tool.span_kind, SpanKind::Internal);
        assert_eq!(attr(tool, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
        assert_eq!(attr(tool, "gen_ai.tool.name").as_deref(), Some("get_weather"));
        assert_eq!(attr(tool, "gen_ai.tool.type").as_deref(), Some("function"));
    }
    assert_eq!((paris.status.clone(), attr(paris, "error.type")), (Status::Unset, None));
    // The tool's failure is the span's error, by its outcome.
    assert!(matches!(atlantis.status, Status::Error { .. }), "{:?}", atlantis.status);
    assert_eq!(attr(atlantis, "error.type").as_deref(), Some("failed"));

    // No content unless asked for.
    for span in &spans {
        for key in [
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.system_instructions",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
        ] {
            assert_eq!(attr(span, key), None, "{key} on {}", span.name);
        }
    }
}

#[test]
fn a_conversations_runs_carry_its_id_on_the_run_and_its_requests() {
    let (_, spans) = weather_run(|agent| agent.with_conversation_id("trip-42"));
    let run = named(&spans, "invoke_agent")[0];
    assert_eq!(attr(run, "gen_ai.conversation.id").as_deref(), Some("trip-42"));
    for chat in named(&spans, "chat gpt-4o") {
        assert_eq!(attr(chat, "gen_ai.conversation.id").as_deref(), Some("trip-42"));
    }
    // A run outside a conversation has none.
    let (_, spans) = weather_run(|agent| agent);
    assert!(spans.iter().all(|span| attr(span, "gen_ai.conversation.id").is_none()), "{}", show(&spans));
}

#[test]
fn content_is_traced_when_the_agent_asks() {
    let (_, spans) = weather_run(|agent| agent.with_trace_content(true));
    println!("{}", show(&spans));
    assert_eq!(named(&spans, "invoke_agent").len(), 1);
    let chats = named(&spans, "chat gpt-4o");
    let json_attr = |span: &SpanData, key: &str| -> Value {
        serde_json::from_str(&attr(span, key).unwrap_or_else(|| panic!("no {key}"))).unwrap()
    };
    let first = chats[0];
    assert_eq!(
        json_attr(first, "gen_ai.system_instructions"),
        json!([{"type": "text", "content": "Be brief."}])
    );
    assert_eq!(
        json_attr(first, "gen_ai.input.messages"),
        json!([{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris and Atlantis?"}]}])
    );
    assert_eq!(
        json_attr(first, "gen_ai.output.messages"),
        json!([{"role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
            {"type": "tool_call", "id": "call_2", "name": "get_weather", "arguments": {"city": "Atlantis"}}]}])
    );
    // The second request sends the calls and their results back.
    let input = json_attr(chats[1], "gen_ai.input.messages");
    let roles: Vec<&str> = input.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(
        input[2]["parts"][0],
        json!({"type": "tool_call_response", "id": "call_1", "response": "12°C in Paris"})
    );
    assert_eq!(
        json_attr(chats[1], "gen_ai.output.messages")[0]["parts"],
        json!([{"type": "text", "content": "12°C in Paris; Atlantis has no station."}])
    );

    let tools = named(&spans, "execute_tool get_weather");
    let by_id =
        |id: &str| *tools.iter().find(|s| attr(s, "gen_ai.tool.call.id").as_deref() == Some(id)).unwrap();
    let (paris, atlantis) = (by_id("call_1"), by_id("call_2"));
    assert_eq!(attr(paris, "gen_ai.tool.call.arguments").as_deref(), Some(r#"{"city":"Paris"}"#));
    assert_eq!(attr(paris, "gen_ai.tool.call.result").as_deref(), Some("12°C in Paris"));
    // A failed call has arguments and no result.
    assert_eq!(attr(atlantis, "gen_ai.tool.call.arguments").as_deref(), Some(r#"{"city":"Atlantis"}"#));
    assert_eq!(attr(atlantis, "gen_ai.tool.call.result"), None);
}

#[test]
fn a_failed_request_is_an_error_on_its_span_and_the_runs() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let message = "The server had an error while processing your request. Sorry about that!";
    let server = runtime.block_on(mock(vec![error(500, message)]));
    let client = Mock::client(&server.uri(), Some(ApiKey::new(KEY)), 1);
    let agent = Agent::new(client, tools()).unwrap();
    let (result, spans) = exported(|| runtime.block_on(agent.run("Weather in Paris?")));
    assert!(result.is_err());
    println!("{}", show(&spans));
    let (chat, run) = (named(&spans, "chat gpt-4o")[0], named(&spans, "invoke_agent")[0]);
    for span in [chat, run] {
        assert!(matches!(span.status, Status::Error { .. }), "{}: {:?}", span.name, span.status);
        // The provider's status is the error's class.
        assert_eq!(attr(span, "error.type").as_deref(), Some("500"), "{}", span.name);
        assert_eq!(attr(span, "gen_ai.provider.name").as_deref(), Some("openai"), "{}", span.name);
    }
    assert_eq!((attr(chat, "gen_ai.response.id"), int(chat, "gen_ai.usage.input_tokens")), (None, None));
}

/// The `gen_ai.response.id` and `gen_ai.provider.name` of the one request
/// of a run against `P`'s stand-in, plain or streamed.
fn traced_response<P: ProviderMock>(streamed: bool) -> (Option<String>, Option<String>) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let server = runtime.block_on(mock(vec![P::reply(&Turn::text("Hi."), streamed)]));
    let agent = Agent::new(crate::scenarios::client::<P>(&server, 1), tools()).unwrap();
    let (ran, spans) = exported(|| runtime.block_on(crate::support::openai::run(&agent, "Hi", streamed)));
    assert_eq!(ran.0.unwrap().answer, "Hi.");
    let chat = spans.iter().find(|span| span.name.starts_with("chat ")).expect("a chat span");
    (attr(chat, "gen_ai.response.id"), attr(chat, "gen_ai.provider.name"))
}

#[test]
fn each_client_traces_the_providers_response_id() {
    let some = |id: &str, provider: &str| (Some(id.to_owned()), Some(provider.to_owned()));
    for streamed in [false, true] {
        let chat = if streamed { "chatcmpl-123" } else { "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG" };
        assert_eq!(traced_response::<Mock>(streamed), some(chat, "openai"), "streamed: {streamed}");
        assert_eq!(
            traced_response::<crate::openai_responses::Mock>(streamed),
            some("resp_67ccd3a9da748190baa7f1570fe91ac604becb25c8e9a5f2", "openai"),
            "streamed: {streamed}"
        );
        let message =
            if streamed { "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY" } else { "msg_01XFDUDYJgAACzvnptvVoYEL" };
        assert_eq!(
            traced_response::<crate::anthropic::Mock>(streamed),
            some(message, "anthropic"),
            "streamed: {streamed}"
        );
        assert_eq!(
            traced_response::<crate::gemini::Mock>(streamed),
            some("mAitaLmkHPPlz7IPvtfUqQ4", "gcp.gemini"),
            "streamed: {streamed}"
        );
    }
}

/// Issue 45, point 11: a run resumed from a pause is a trace of its own
/// whose `invoke_agent` span links to the paused run's (feature `otel`),
/// from the state as the pause gave it and from the state saved as JSON
/// and loaded under another tracer provider, as another process would.
#[cfg(feature = "otel")]
mod resumed {
    use opentelemetry::trace::SpanId;
    use opentelemetry_sdk::trace::SpanData;
    use toolcall_agent::testing::ScriptedModel;
    use toolcall_agent::{Agent, RunState, StopReason};
    use toolcall_core::{ToolCall, ToolContext, ToolError, Toolset};

    use super::{exported, named, show};

    /// On a runtime of its own (the exporter's simple processor blocks on
    /// the futures executor, which cannot run inside another).
    fn block_on<T>(future: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
    }

    /// Remove a directory.
    #[toolcall_macros::tool(args, needs_approval, crate = "toolcall_core")]
    async fn remove_dir(_ctx: &ToolContext, path: String) -> Result<String, ToolError> {
        Ok(format!("removed {path}"))
    }

    /// An agent whose model asks to remove `tmp`, then answers, `runs` times.
    fn agent(runs: usize) -> Agent {
        let mut model = ScriptedModel::new();
        for _ in 0..runs {
            model = model
                .then_calls([ToolCall::new("1", "remove_dir", r#"{"path":"tmp"}"#)])
                .then_text("Removed.");
        }
        Agent::new(model, Toolset::builder().add(RemoveDir).build().unwrap()).unwrap()
    }

    /// The one `invoke_agent` span among `spans`.
    fn run_span(spans: &[SpanData]) -> &SpanData {
        let runs = named(spans, "invoke_agent");
        assert_eq!(runs.len(), 1, "{}", show(spans));
        runs[0]
    }

    /// Pause a run, traced: its state (a decision made) and its span.
    fn paused(agent: &Agent) -> (Box<RunState>, SpanData) {
        let (result, spans) = exported(|| block_on(agent.run("Clean up")));
        let result = result.unwrap();
        let StopReason::Paused(mut state) = result.stop else { panic!("{:?}", result.stop) };
        state.approve("1").unwrap();
        (state, run_span(&spans).clone())
    }

    /// Resume `state`, traced, and check that its run span is a root in a
    /// trace of its own, linked to `paused`.
    fn resumed_links_to(agent: &Agent, state: impl Into<toolcall_agent::RunInput>, paused: &SpanData) {
        let (result, spans) = exported(|| block_on(agent.run(state)));
        assert_eq!(result.unwrap().answer, "Removed.");
        let run = run_span(&spans);
        assert_eq!(run.parent_span_id, SpanId::INVALID, "the resumed run is a root");
        assert_ne!(run.span_context.trace_id(), paused.span_context.trace_id(), "a trace of its own");
        let links: Vec<_> = run.links.iter().map(|link| &link.span_context).collect();
        assert_eq!(links.len(), 1, "{links:?}");
        let (link, to) = (links[0], &paused.span_context);
        assert_eq!((link.trace_id(), link.span_id()), (to.trace_id(), to.span_id()));
        assert_eq!(link.trace_flags(), to.trace_flags());
        assert!(link.is_remote());
        // Only the run span links; its children are in its own trace.
        for span in spans.iter().filter(|span| span.name != "invoke_agent") {
            assert!(span.links.is_empty(), "{}", span.name);
            assert_eq!(span.span_context.trace_id(), run.span_context.trace_id(), "{}", span.name);
        }
    }

    #[test]
    fn a_resumed_run_links_to_the_run_it_paused_in() {
        let agent = agent(2);
        let (state, paused_span) = paused(&agent);
        let context = &paused_span.span_context;
        let traceparent = format!(
            "00-{:032x}-{:016x}-{:02x}",
            context.trace_id(),
            context.span_id(),
            context.trace_flags().to_u8()
        );
        assert_eq!(state.traceparent(), Some(traceparent.as_str()));
        resumed_links_to(&agent, state, &paused_span);

        // Saved as JSON and loaded: the trace context is data.
        let (state, paused_span) = paused(&agent);
        let saved = serde_json::to_string(&state).unwrap();
        let loaded: RunState = serde_json::from_str(&saved).unwrap();
        assert_eq!(&loaded, state.as_ref());
        // Kept apart from its transcript, as a store keeps it, too.
        let (transcript, turn) = loaded.split();
        let turn: toolcall_agent::PausedTurn =
            serde_json::from_value(serde_json::to_value(&turn).unwrap()).unwrap();
        assert_eq!(turn.traceparent(), state.traceparent());
        resumed_links_to(&agent, RunState::join(transcript, turn), &paused_span);
    }

    #[test]
    fn a_state_without_a_trace_context_resumes_without_a_link() {
        let agent = agent(2);
        // Paused without a trace: nothing to link to, and nothing saved.
        let result = block_on(agent.run("Clean up")).unwrap();
        let StopReason::Paused(mut state) = result.stop else { panic!("{:?}", result.stop) };
        assert_eq!(state.traceparent(), None);
        assert!(!serde_json::to_string(&state).unwrap().contains("traceparent"));
        state.approve("1").unwrap();
        let (result, spans) = exported(|| block_on(agent.run(state)));
        assert_eq!(result.unwrap().answer, "Removed.");
        assert!(run_span(&spans).links.is_empty());

        // A state saved before the field existed loads; one whose trace
        // context does not read resumes, unlinked.
        let (state, _) = paused(&agent);
        let mut saved = serde_json::to_value(&*state).unwrap();
        assert!(saved.as_object_mut().unwrap().remove("traceparent").is_some(), "{saved}");
        let old: RunState = serde_json::from_value(saved.clone()).unwrap();
        assert_eq!(old.traceparent(), None);
        saved["traceparent"] = "00-not-a-trace-01".into();
        let garbled: RunState = serde_json::from_value(saved).unwrap();
        let (result, spans) = exported(|| block_on(agent.run(garbled)));
        assert_eq!(result.unwrap().answer, "Removed.");
        assert!(run_span(&spans).links.is_empty());
    }
}
