//! The agent's spans, named as OpenTelemetry's GenAI semantic conventions
//! name them (v1.41.0: `docs/gen-ai/gen-ai-spans.md` and
//! `gen-ai-agent-spans.md` of open-telemetry/semantic-conventions), through
//! `tracing` alone: a span field `otel.name` is the span's name for
//! tracing-opentelemetry, `otel.kind` its kind, `otel.status_code` its
//! status, and every dotted field an attribute. The toolset's `tool_call`
//! span is the conventions' `execute_tool` span in the same way.
//!
//! | tracing span | OpenTelemetry span | kind |
//! |---|---|---|
//! | `agent_run` | `invoke_agent` or `invoke_agent {gen_ai.agent.name}` | internal |
//! | `model_request` | `chat {gen_ai.request.model}` | client |
//! | `tool_call` (tools-core) | `execute_tool {gen_ai.tool.name}` | internal |
//!
//! A request that fails, and the run it ends, carry `error.type`: the
//! provider's HTTP status when it refused or failed (`401`, `429`, `500`...),
//! otherwise what went wrong: `timeout`, `network`, `malformed`, `empty`,
//! `stream_ended`, `missing_key`, `invalid_key`, `tools`, `message`,
//! `tool_choice`, `setting`, `script_ended` (a fallback's is its last
//! model's). A call that did not succeed carries its outcome
//! (`invalid_arguments`, `failed`, `timed_out`, `panicked`, `denied`,
//! `cancelled`, `retry`).
//!
//! A paused run and the run that resumes it are two traces, hours or
//! processes apart. With the feature `otel`, the paused run's `invoke_agent`
//! span context is kept in its [`RunState`](crate::RunState) as a W3C
//! `traceparent` (data, so a state saved in one process links from
//! another), and the resumed run's `invoke_agent` span gets an
//! OpenTelemetry link to it. tracing has no link of its own across
//! processes (`Span::follows_from` needs both spans alive in one
//! subscriber), so this goes through tracing-opentelemetry's
//! `OpenTelemetrySpanExt`, and only with the feature: without it the crate
//! depends on no OpenTelemetry crate, records no trace context and links
//! nothing.

use serde_json::{Value, json};
use toolcall_core::{Part, ToolResult};
use tracing::Span;
use tracing::field::Empty;

use crate::model::{ModelResponse, Usage};
use crate::{Agent, Content, Message, ModelError};

/// The conventions' `gen_ai.provider.name` of a provider as the SDK names
/// it: Gemini's API (generativelanguage.googleapis.com) is `gcp.gemini`;
/// `openai` and `anthropic` are the same, and any other stays as it is.
pub(crate) fn provider_name(provider: &str) -> &str {
    match provider {
        "gemini" => "gcp.gemini",
        other => other,
    }
}

/// The span of one run: `invoke_agent`, internal (the agent runs in this
/// process).
pub(crate) fn agent_span(agent: &Agent) -> Span {
    let name = agent.name.as_deref();
    tracing::info_span!(
        "agent_run",
        otel.name = name.map_or_else(|| "invoke_agent".to_owned(), |name| format!("invoke_agent {name}")),
        otel.kind = "internal",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = provider_name(agent.model.provider()),
        gen_ai.request.model = agent.model.model(),
        gen_ai.agent.name = name,
        gen_ai.conversation.id = agent.conversation.as_deref(),
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        "error.type" = Empty,
        otel.status_code = Empty,
        turns = Empty,
        stop = Empty,
    )
}

/// The W3C `traceparent` of `span` (`00-{trace id}-{span id}-{flags}`), if
/// tracing-opentelemetry traces it.
#[cfg(feature = "otel")]
pub(crate) fn traceparent(span: &Span) -> Option<String> {
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    let context = span.context();
    let span = context.span();
    let context = span.span_context();
    context.is_valid().then(|| {
        format!(
            "00-{:032x}-{:016x}-{:02x}",
            context.trace_id(),
            context.span_id(),
            context.trace_flags().to_u8()
        )
    })
}

/// Without the feature `otel`, no trace context is known.
#[cfg(not(feature = "otel"))]
pub(crate) fn traceparent(_span: &Span) -> Option<String> {
    None
}

/// Link `span` to the span a `traceparent` names (one that does not read,
/// or names no span, is left out).
#[cfg(feature = "otel")]
pub(crate) fn link(span: &Span, traceparent: &str) {
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    let Some((trace_id, span_id, flags)) = read_traceparent(traceparent) else { return };
    let (Ok(trace_id), Ok(span_id)) = (TraceId::from_hex(trace_id), SpanId::from_hex(span_id)) else {
        return;
    };
    // Remote: the span was made by another run, maybe another process.
    let context = SpanContext::new(trace_id, span_id, TraceFlags::new(flags), true, TraceState::NONE);
    span.add_link(context);
}

/// Without the feature `otel`, nothing is linked.
#[cfg(not(feature = "otel"))]
pub(crate) fn link(_span: &Span, _traceparent: &str) {}

/// The trace id, span id (hex) and flags of a version-00 `traceparent`.
#[cfg(feature = "otel")]
fn read_traceparent(traceparent: &str) -> Option<(&str, &str, u8)> {
    let mut parts = traceparent.split('-');
    let (version, trace_id, span_id, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |text: &str, len: usize| text.len() == len && text.bytes().all(|b| b.is_ascii_hexdigit());
    let valid =
        version == "00" && parts.next().is_none() && hex(trace_id, 32) && hex(span_id, 16) && hex(flags, 2);
    valid.then_some(())?;
    Some((trace_id, span_id, u8::from_str_radix(flags, 16).ok()?))
}

/// The span of one model request: `chat {model}`, a client span. The
/// provider is recorded with the response ([`record_response`]): a model
/// that stands for several knows only then which one answered.
pub(crate) fn chat_span(agent: &Agent) -> Span {
    let model = agent.model.model();
    let settings = &agent.settings;
    tracing::info_span!(
        "model_request",
        otel.name = format!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = Empty,
        gen_ai.request.model = model,
        gen_ai.conversation.id = agent.conversation.as_deref(),
        gen_ai.request.max_tokens = settings.max_tokens.map(i64::from),
        gen_ai.request.temperature = settings.temperature,
        gen_ai.request.top_p = settings.top_p,
        gen_ai.request.seed = settings.seed.map(i64::from),
        gen_ai.response.id = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        "error.type" = Empty,
        otel.status_code = Empty,
        duration_ms = Empty,
    )
}

/// The token counts, each only if the provider sent it (never a zero in
/// its place). As integers: tracing-opentelemetry records a `u64` as text.
pub(crate) fn record_usage(span: &Span, usage: &Usage) {
    let int = |count: Option<u64>| count.map(|count| i64::try_from(count).unwrap_or(i64::MAX));
    span.record("gen_ai.usage.input_tokens", int(usage.input_tokens));
    span.record("gen_ai.usage.output_tokens", int(usage.output_tokens));
    span.record("gen_ai.usage.cache_read.input_tokens", int(usage.cache_read_tokens));
    span.record("gen_ai.usage.cache_creation.input_tokens", int(usage.cache_write_tokens));
    span.record("gen_ai.usage.reasoning.output_tokens", int(usage.reasoning_tokens));
}

/// What a request's span says of its response: who answered (`provider`,
/// `model`: the agent's own model, or the one a fallback names), the
/// response's id, why it ended, its tokens, and with `content` what it said.
pub(crate) fn record_response(
    span: &Span,
    (provider, model): (&str, &str),
    response: &ModelResponse,
    content: bool,
) {
    record_provider(span, provider);
    span.record("gen_ai.response.model", model);
    span.record("gen_ai.response.id", response.id.as_deref());
    // A complete answer keeps no reason of its own: it is the conventions'
    // `tool_call` or `stop`. Their string array, as tracing can carry it:
    // one string, since a request asks for one choice.
    let reason = match response.finish.reason() {
        Some(reason) => reason,
        None if response.calls().next().is_some() => "tool_call",
        None => "stop",
    };
    span.record("gen_ai.response.finish_reasons", reason);
    record_usage(span, &response.usage);
    if content && !span.is_disabled() {
        let parts: Vec<Value> = response.content.iter().filter_map(content_part).collect();
        let output = json!([{"role": "assistant", "parts": parts, "finish_reason": reason}]);
        span.record("gen_ai.output.messages", output.to_string());
    }
}

/// What a request's span says of the input, with content on: the
/// instructions and the messages sent.
pub(crate) fn record_input(span: &Span, instructions: Option<&str>, messages: &[Message]) {
    if let Some(instructions) = instructions.filter(|text| !text.is_empty()) {
        span.record(
            "gen_ai.system_instructions",
            json!([{"type": "text", "content": instructions}]).to_string(),
        );
    }
    let messages: Vec<Value> = messages.iter().map(message).collect();
    span.record("gen_ai.input.messages", Value::Array(messages).to_string());
}

/// The provider of a request span, once known; recorded once, since an
/// exporter keeps each recording as an attribute of its own.
pub(crate) fn record_provider(span: &Span, provider: &str) {
    span.record("gen_ai.provider.name", provider_name(provider));
}

/// A failed request or run: its `error.type` and an error status.
pub(crate) fn record_error(span: &Span, error: &ModelError) {
    span.record("error.type", error_type(error));
    span.record("otel.status_code", "error");
}

/// The conventions' `error.type` of a model error: low-cardinality, the
/// provider's status where it sent one.
fn error_type(error: &ModelError) -> String {
    let label = match error {
        ModelError::Unauthorized { status, .. }
        | ModelError::Rejected { status, .. }
        | ModelError::Unavailable { status, .. }
        | ModelError::Server { status, .. }
            if *status >= 400 =>
        {
            return status.to_string();
        }
        // An error sent inside a 200 stream, a failed Responses object.
        ModelError::Unauthorized { .. }
        | ModelError::Rejected { .. }
        | ModelError::Unavailable { .. }
        | ModelError::Server { .. } => "rejected",
        ModelError::Malformed { .. } => "malformed",
        ModelError::Timeout { .. } => "timeout",
        ModelError::Network { .. } => "network",
        ModelError::Empty { .. } => "empty",
        ModelError::StreamEnded { .. } => "stream_ended",
        ModelError::MissingKey { .. } => "missing_key",
        ModelError::InvalidKey { .. } => "invalid_key",
        ModelError::Tools(_) => "tools",
        ModelError::Message(_) => "message",
        ModelError::ScriptEnded => "script_ended",
        ModelError::ToolChoice(_) => "tool_choice",
        ModelError::Setting { .. } => "setting",
        ModelError::Engine { .. } => "engine",
        ModelError::UnknownAgent { .. } => "unknown_agent",
        ModelError::Fallback { failures } => {
            return failures.last().map_or_else(|| "fallback".to_owned(), |(_, last)| error_type(last));
        }
    };
    label.to_owned()
}

/// A transcript message in the conventions' input message schema
/// (`gen-ai-input-messages.json`): a role and its parts.
fn message(message: &Message) -> Value {
    match message {
        Message::User { parts } => {
            json!({"role": "user", "parts": parts.iter().map(user_part).collect::<Vec<_>>()})
        }
        Message::Assistant { content } => {
            json!({"role": "assistant", "parts": content.iter().filter_map(content_part).collect::<Vec<_>>()})
        }
        Message::Tool { results } => {
            json!({"role": "tool", "parts": results.iter().map(tool_response).collect::<Vec<_>>()})
        }
        // Sent as user text, so traced as what was sent.
        Message::Summary { .. } => {
            json!({"role": "user", "parts": [{"type": "text", "content": message.summary_text().unwrap_or_default()}]})
        }
    }
}

/// A user's part: text, JSON as text, an image or a file by its bytes
/// (base64, a `blob`) or its URL (a `uri`).
fn user_part(part: &Part) -> Value {
    let media = |modality: &str, media: &toolcall_core::Media| match media.url_text() {
        Some(uri) => json!({"type": "uri", "modality": modality, "mime_type": media.media_type, "uri": uri}),
        None => json!({"type": "blob", "modality": modality, "mime_type": media.media_type,
            "content": media.base64().unwrap_or_default()}),
    };
    match part {
        Part::Text { text } => json!({"type": "text", "content": text}),
        Part::Json { value } => json!({"type": "text", "content": value.to_string()}),
        Part::Image(image) => media("image", image),
        // The conventions' modalities are image, video and audio; a file
        // is named by its media type alone.
        Part::File(file) => media("file", file),
        other => json!({"type": "text", "content": other.as_text().unwrap_or_default()}),
    }
}

/// A piece of the model's answer: text, a call (its arguments as JSON when
/// they read as JSON), readable reasoning. Opaque state (signatures, a
/// provider's own items) is left out.
fn content_part(content: &Content) -> Option<Value> {
    match content {
        Content::Text { text } => Some(json!({"type": "text", "content": text})),
        Content::Call(call) => {
            let arguments = serde_json::from_str(&call.arguments)
                .unwrap_or_else(|_| Value::String(call.arguments.clone()));
            Some(
                json!({"type": "tool_call", "id": call.id.as_str(), "name": call.name.as_str(), "arguments": arguments}),
            )
        }
        Content::Reasoning(reasoning) => {
            reasoning.visible().map(|text| json!({"type": "reasoning", "content": text}))
        }
        Content::Native { .. } => None,
    }
}

/// A call's result, as the model reads it.
fn tool_response(result: &ToolResult) -> Value {
    json!({"type": "tool_call_response", "id": result.id.as_str(), "response": result.content})
}
