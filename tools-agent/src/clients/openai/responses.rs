//! OpenAI Responses, `POST {base}/responses`.
//!
//! - The request and the response:
//!   <https://platform.openai.com/docs/api-reference/responses/create>
//!   (`instructions`, `input` items: messages, `function_call` and
//!   `function_call_output`; `tools` with the native `web_search`,
//!   `tool_choice`, `parallel_tool_calls`, `max_output_tokens`,
//!   `temperature`, `store`; the `output` items: `message` with
//!   `output_text` parts, `function_call`; `usage.input_tokens`,
//!   `usage.output_tokens`). `tool_choice` and `parallel_tool_calls` come
//!   from `Dialect::tool_choice`, which cites their pages.
//! - The stream: <https://platform.openai.com/docs/api-reference/responses-streaming>
//!   (`response.output_text.delta`, `response.output_item.added`,
//!   `response.function_call_arguments.delta` keyed by `output_index`,
//!   `response.completed` with the whole response, `response.incomplete`,
//!   `response.failed`, `error`).
//! - The messages (user, assistant, tool calls and their results):
//!   `Dialect::messages` of `toolcall-provider`, with the `OpenAiResponses`
//!   dialect (<https://platform.openai.com/docs/guides/function-calling>).
//!
//! Requests say `store: false`: the transcript is the state, sent whole
//! each turn, and nothing is kept on OpenAI's side.
//!
//! - Server-side compaction (`ModelSettings::native_context`, written by
//!   `clients::native`): `context_management: [{"type": "compaction",
//!   "compact_threshold"}]`; the `compaction` output item comes back in the
//!   response's `output` (so a stream's `response.completed` has it) and
//!   is kept as a native piece of the assistant message, which
//!   `Dialect::messages` sends back, leaving out
//!   what came before it: <https://developers.openai.com/api/docs/guides/compaction>.

use eventsource_stream::Event;
use serde_json::{Value, json};
use toolcall_provider::{Dialect, Finish};

use super::fields;
use super::{self as common, error_text, event_json, malformed, stream_ended, usage};
use crate::ModelError;
use crate::clients::body::{self, RESPONSES};
use crate::clients::http::Decode;
use crate::clients::{Client, Provider, Strict, response_id};
use crate::model::{ModelEvent, ModelRequest, ModelResponse};

/// A [`Model`](crate::Model) over OpenAI's Responses API.
///
/// ```
/// use toolcall_agent::{ApiKey, Model, OpenAiResponses};
///
/// // `OpenAiResponses::new` reads OPENAI_API_KEY and OPENAI_BASE_URL.
/// let model = OpenAiResponses::from_values("gpt-4.1-mini", Some(ApiKey::new("sk-...")), None);
/// assert_eq!((model.provider(), model.model()), ("openai", "gpt-4.1-mini"));
/// assert!(!format!("{model:?}").contains("sk-"));
/// ```
pub type OpenAiResponses = Client<OpenAiResponsesApi>;

/// The Responses API, as the [`OpenAiResponses`] client speaks it: whether
/// its function tools are strict.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiResponsesApi {
    strict: bool,
}

impl Strict for OpenAiResponsesApi {
    fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }
}

impl Provider for OpenAiResponsesApi {
    const NAME: &'static str = common::PROVIDER;
    const CLIENT: &'static str = "OpenAiResponses";
    const KEY_VARIABLE: &'static str = common::KEY_VARIABLE;
    const BASE_URL_VARIABLE: &'static str = common::BASE_URL_VARIABLE;
    const DEFAULT_BASE_URL: &'static str = common::DEFAULT_BASE_URL;
    const KEY_HEADER: (&'static str, &'static str) = common::KEY_HEADER;
    type Events = ResponsesDecoder;

    fn dialect(&self) -> Dialect {
        if self.strict { Dialect::OpenAiResponsesStrict } else { Dialect::OpenAiResponses }
    }

    /// `{base}/responses`.
    fn url(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        format!("{base_url}/responses")
    }

    fn needs_key(&self, base_url: &str) -> bool {
        common::needs_key(base_url)
    }

    /// The request body: <https://platform.openai.com/docs/api-reference/responses/create>;
    /// the settings' fields (and `include`) from `fields::openai_responses`,
    /// the extra JSON last.
    fn body(&self, model: &str, request: &ModelRequest<'_>, stream: bool) -> Result<Value, ModelError> {
        let dialect = self.dialect();
        let input = dialect.messages(request.messages)?;
        let mut body = serde_json::Map::new();
        body.insert("model".into(), json!(model));
        body.insert("input".into(), Value::Array(input));
        body.insert("store".into(), json!(false));
        if let Some(instructions) = request.instructions {
            body.insert("instructions".into(), json!(instructions));
        }
        body.extend(crate::clients::tool_fields(dialect, request)?);
        let settings = request.settings;
        fields::responses(model, settings, &mut body)?;
        fields::responses_native_context(settings, &mut body)?;
        fields::cache(RESPONSES, &settings.cache, &mut body)?;
        if let Some(answer) = request.answer {
            fields::responses_answer(answer, &mut body)?;
        }
        if stream {
            body.insert("stream".into(), json!(true));
        }
        body::merge_extra(RESPONSES, &mut body, settings.extra.as_ref())?;
        Ok(Value::Object(body))
    }

    fn read(&self, body: &Value) -> Result<ModelResponse, ModelError> {
        read(body)
    }

    fn events(&self) -> ResponsesDecoder {
        ResponsesDecoder::default()
    }
}

/// A response object (the plain answer, or the one `response.completed`
/// carries): its output as content (`Dialect::content` of `toolcall-provider`:
/// reasoning items, the `output_text` and `refusal` parts of its `message`
/// items, its `function_call` items), its usage. A `failed` or `cancelled`
/// response is an error naming the provider's error.
fn read(body: &Value) -> Result<ModelResponse, ModelError> {
    if body.get("output").and_then(Value::as_array).is_none() {
        return Err(malformed(body, "no `output` array"));
    }
    if let Some(error) = failed(body) {
        return Err(error);
    }
    let status = body.get("status").and_then(Value::as_str).unwrap_or("completed");
    // The strict dialect reads responses the same way.
    let dialect = Dialect::OpenAiResponses;
    let content = dialect.content(body).map_err(|error| malformed(body, error))?;
    let refused = body
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| item.get("content").and_then(Value::as_array))
        .flatten()
        .any(|part| part.get("type").and_then(Value::as_str) == Some("refusal"));
    // Only an `incomplete` response has a reason to read (`failed` and
    // `cancelled` are errors above).
    let finish = match status {
        "incomplete" => {
            let reason = body.pointer("/incomplete_details/reason").and_then(Value::as_str);
            dialect.finish(reason.unwrap_or(status))
        }
        _ if refused => Finish::Refused { reason: "refusal".into() },
        _ => Finish::Complete,
    };
    Ok(ModelResponse {
        content,
        usage: usage(body.get("usage"), common::RESPONSES_USAGE),
        finish,
        model: None,
        id: response_id(body, "id"),
    })
}

/// The error a `failed` or `cancelled` response is, naming the provider's
/// error; `None` for another status. The same for a plain response and a
/// stream's `response.failed`.
fn failed(response: &Value) -> Option<ModelError> {
    let status = response.get("status").and_then(Value::as_str)?;
    matches!(status, "failed" | "cancelled").then(|| ModelError::Rejected {
        provider: common::PROVIDER.into(),
        status: 200,
        message: format!(
            "the response {status}: {}",
            error_text(response.get("error").filter(|e| e.is_object()))
        ),
    })
}

/// What a streamed response said so far: the output indexes of its
/// function calls, whose position is the call's index in the turn. The
/// content itself is read from the whole response at the end.
#[derive(Debug, Default)]
pub struct ResponsesDecoder {
    calls: Vec<u64>,
}

impl Decode for ResponsesDecoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError> {
        if event.data.trim().is_empty() {
            return Ok(None);
        }
        let data = event_json(event)?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(event.event.as_str());
        let text = |name: &str| data.get(name).and_then(Value::as_str);
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(delta) = text("delta").filter(|delta| !delta.is_empty()) {
                    out.push(ModelEvent::TextDelta(delta.to_owned()));
                }
            }
            // A reasoning summary (or an open model's reasoning text) as it
            // comes; the items themselves come whole at the end.
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(delta) = text("delta").filter(|delta| !delta.is_empty()) {
                    out.push(ModelEvent::ReasoningDelta(delta.to_owned()));
                }
            }
            "response.output_item.added" => {
                let Some(item) = data.get("item") else {
                    return Err(malformed(&data, "`response.output_item.added` without its `item`"));
                };
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    let output_index = data.get("output_index").and_then(Value::as_u64).unwrap_or(u64::MAX);
                    let field = |name: &str| item.get(name).and_then(Value::as_str);
                    self.calls.push(output_index);
                    out.push(ModelEvent::CallDelta {
                        index: self.calls.len() - 1,
                        id: field("call_id").map(str::to_owned),
                        name: field("name").map(str::to_owned),
                        arguments: field("arguments").unwrap_or_default().to_owned(),
                    });
                }
            }
            "response.function_call_arguments.delta" => {
                let output_index = data.get("output_index").and_then(Value::as_u64);
                let position = self.calls.iter().position(|index| Some(*index) == output_index);
                // Arguments of an item that is not a function call (a custom
                // tool's input) are not ours to show.
                if let (Some(index), Some(delta)) = (position, text("delta")) {
                    out.push(ModelEvent::CallDelta {
                        index,
                        id: None,
                        name: None,
                        arguments: delta.to_owned(),
                    });
                }
            }
            // The whole response: what it holds is authoritative. An
            // incomplete one (cut by `max_output_tokens`) ends the turn as
            // truncated.
            "response.completed" | "response.incomplete" => {
                let Some(response) = data.get("response") else {
                    return Err(malformed(&data, format!("`{kind}` without its `response`")));
                };
                return read(response).map(Some);
            }
            // A failed response is the same error as a plain one; the
            // stream itself ended as it should.
            "response.failed" => {
                if let Some(error) = data.get("response").and_then(failed) {
                    return Err(error);
                }
                let error = data.pointer("/response/error");
                return Err(stream_ended(format!("the response failed: {}", error_text(error))));
            }
            "error" => {
                let error = data.get("error").filter(|error| error.is_object()).unwrap_or(&data);
                return Err(stream_ended(format!("the server sent an error: {}", error_text(Some(error)))));
            }
            _ => {}
        }
        Ok(None)
    }

    fn end(&mut self) -> Result<ModelResponse, ModelError> {
        Err(stream_ended("no `response.completed` event"))
    }
}
