//! Google's Gemini API: `POST {base}/v1beta/models/{model}:generateContent`,
//! and `:streamGenerateContent?alt=sse` for a stream.
//!
//! Everything of the client is in this folder: here the URL, headers,
//! body and the response and stream readers, in `fields` the settings'
//! fields. The tools, messages and results it writes are those of
//! `toolcall-provider`'s `Dialect::Gemini`, whose rules
//! `toolcall_provider::gemini` documents.
//!
//! The shapes this client relies on, from Google's documentation:
//!
//! - The request (`contents` of `{role: "user" | "model", parts}`,
//!   `systemInstruction`, `tools`, `toolConfig`, `generationConfig` with
//!   `maxOutputTokens` and `temperature`), the response
//!   (`candidates[0].content.parts`, `finishReason`, `usageMetadata` with
//!   `promptTokenCount`, `candidatesTokenCount`, `thoughtsTokenCount`), and
//!   the stream, whose every event is a whole `GenerateContentResponse`:
//!   <https://ai.google.dev/api/generate-content>.
//! - The key in the `x-goog-api-key` header: <https://ai.google.dev/api>.
//! - `functionCall` parts (`name`, `args`, and an `id` on some models),
//!   answered by `functionResponse` parts (`name`, `response`, the `id` if
//!   there was one) in a user content, in call order:
//!   <https://ai.google.dev/gemini-api/docs/function-calling>.
//!   `toolConfig.functionCallingConfig` (`mode` `AUTO`, `ANY`, `NONE` or
//!   `VALIDATED`, `allowedFunctionNames`) comes from `Dialect::tool_choice`,
//!   which cites its pages; Gemini has no switch for parallel calls, so
//!   `parallel_tool_calls: Some(false)` fails the request before it is sent
//!   (but with `ToolChoice::None`, which makes no calls).
//! - `thoughtSignature`: a model that thinks signs its parts, and the
//!   signature must be sent back on the part it came on in the next turns:
//!   <https://ai.google.dev/gemini-api/docs/thought-signatures>. They are
//!   content of the transcript (`Dialect::content` reads them,
//!   `Dialect::messages` writes them back), so a saved run resumed by another
//!   client sends them too; the client remembers nothing between requests.
//!
//! The contents (user, model, `functionCall` and `functionResponse` parts)
//! are written by `Dialect::messages`.

use eventsource_stream::Event;
use serde_json::{Map, Value, json};
use toolcall_provider::gemini::SYNTHETIC_ID_PREFIX;
use toolcall_provider::{Content, Dialect, Finish, Reasoning};

pub(super) mod fields;

use crate::ModelError;
use crate::clients::body::{self, GEMINI};
use crate::clients::http::Decode;
use crate::clients::{Client, Provider, response_id};
use crate::model::{ContentAssembler, ModelEvent, ModelRequest, ModelResponse, Usage};

const PROVIDER: &str = "gemini";

/// A client of the Gemini API (Google AI Studio keys).
///
/// ```no_run
/// use toolcall_agent::{Agent, Gemini};
/// use toolcall_core::Toolset;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // The key from GEMINI_API_KEY, the base URL from GEMINI_BASE_URL if set.
/// let model = Gemini::new("gemini-2.5-flash");
/// let answer = Agent::new(model, Toolset::new())?.run("Hello").await?.answer;
/// # Ok(()) }
/// ```
pub type Gemini = Client<GeminiApi>;

/// `generateContent`, as the [`Gemini`] client speaks it.
#[derive(Clone, Copy, Debug, Default)]
pub struct GeminiApi;

impl Provider for GeminiApi {
    const NAME: &'static str = PROVIDER;
    const CLIENT: &'static str = "Gemini";
    const KEY_VARIABLE: &'static str = "GEMINI_API_KEY";
    const BASE_URL_VARIABLE: &'static str = "GEMINI_BASE_URL";
    const DEFAULT_BASE_URL: &'static str = "https://generativelanguage.googleapis.com";
    const KEY_HEADER: (&'static str, &'static str) = ("x-goog-api-key", "");
    type Events = Decoder;

    fn dialect(&self) -> Dialect {
        Dialect::Gemini
    }

    /// Gemini 3 and later: earlier models take a response schema or
    /// function calling, not both in one request ("Structured outputs with
    /// tools", <https://ai.google.dev/gemini-api/docs/structured-output>).
    fn native_answers(&self, model: &str) -> bool {
        let version = model.strip_prefix("models/").unwrap_or(model).strip_prefix("gemini-");
        let major = version.and_then(|version| version.split(['.', '-']).next()?.parse::<u32>().ok());
        major.is_some_and(|major| major >= 3)
    }

    fn url(&self, base_url: &str, model: &str, stream: bool) -> String {
        let method = if stream { "streamGenerateContent?alt=sse" } else { "generateContent" };
        format!("{base_url}/v1beta/models/{model}:{method}")
    }

    /// The request body, as <https://ai.google.dev/api/generate-content> shows it;
    /// the settings' fields from `fields::gemini`, the extra JSON last.
    fn body(&self, _model: &str, request: &ModelRequest<'_>, _stream: bool) -> Result<Value, ModelError> {
        let settings = request.settings;
        let mut body = Map::new();
        if let Some(system) = request.instructions.filter(|system| !system.is_empty()) {
            body.insert("systemInstruction".into(), json!({"parts": [{"text": system}]}));
        }
        body.insert("contents".into(), Value::Array(Dialect::Gemini.messages(request.messages)?));
        // `tools`, and `toolConfig` for the function declarations.
        body.extend(super::tool_fields(Dialect::Gemini, request)?);
        // `generationConfig`: sampling, stop sequences, seed, `thinkingConfig`.
        fields::fields(settings, &mut body)?;
        body::unsupported(GEMINI, settings)?;
        fields::cache(&settings.cache)?;
        if let Some(answer) = request.answer {
            fields::answer(answer, &mut body)?;
        }
        body::merge_extra(GEMINI, &mut body, settings.extra.as_ref())?;
        Ok(Value::Object(body))
    }

    fn read(&self, value: &Value) -> Result<ModelResponse, ModelError> {
        let chunk = read_chunk(value)?;
        let Some(finish) = chunk.finish else {
            return Err(malformed(value, "no candidate content and no finishReason"));
        };
        let content = number_calls(chunk.content, 0);
        let usage = chunk.usage.unwrap_or_default();
        let response =
            ModelResponse { content, usage, finish, model: None, id: response_id(value, "responseId") };
        not_empty(response, chunk.reason.as_deref().unwrap_or_default())
    }

    fn events(&self) -> Decoder {
        Decoder::default()
    }

    fn refine(&self, error: ModelError) -> ModelError {
        key_refused(error)
    }
}

/// A candidate that ended normally with nothing in it is no answer: an
/// error that says so, with the `finishReason` (Gemini sends one now and
/// then, with `STOP`, `OTHER`, `MALFORMED_RESPONSE`...).
fn not_empty(response: ModelResponse, reason: &str) -> Result<ModelResponse, ModelError> {
    let nothing = response.content.iter().all(|piece| matches!(piece, Content::Reasoning(_)));
    if nothing && response.finish == Finish::Complete {
        return Err(ModelError::Empty { provider: PROVIDER.into(), reason: reason.to_owned() });
    }
    Ok(response)
}

/// Gemini refuses a bad key with HTTP 400 `INVALID_ARGUMENT`, "API key not
/// valid" (reason `API_KEY_INVALID`), not 401:
/// <https://ai.google.dev/gemini-api/docs/troubleshooting>. It is the same
/// mistake as a 401, so it is told the same way, naming the variable.
fn key_refused(error: ModelError) -> ModelError {
    match error {
        ModelError::Rejected { provider, status: 400, message } if message.contains("API key not valid") => {
            ModelError::Unauthorized { provider, status: 400, variable: GeminiApi::KEY_VARIABLE }
        }
        other => other,
    }
}

/// One `GenerateContentResponse`, read.
struct Chunk {
    content: Vec<Content>,
    finish: Option<Finish>,
    /// The `finishReason` as it came.
    reason: Option<String>,
    usage: Option<Usage>,
}

fn read_chunk(value: &Value) -> Result<Chunk, ModelError> {
    if let Some(error) = value.get("error") {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("no message");
        let status = error.get("code").and_then(Value::as_u64).and_then(|code| u16::try_from(code).ok());
        return Err(ModelError::Rejected {
            provider: PROVIDER.into(),
            status: status.unwrap_or(200),
            message: message.to_owned(),
        });
    }
    let candidate = value.pointer("/candidates/0");
    if candidate.is_none()
        && let Some(reason) = value.pointer("/promptFeedback/blockReason").and_then(Value::as_str)
    {
        return Err(ModelError::Rejected {
            provider: PROVIDER.into(),
            status: 200,
            message: format!("the prompt was blocked ({reason})"),
        });
    }
    let field = |name: &str| candidate.and_then(|c| c.get(name)).and_then(Value::as_str);
    let finish = field("finishReason").map(|reason| match Dialect::Gemini.finish(reason) {
        // The reason alone says little; its message says what was wrong.
        Finish::Malformed { reason } => match field("finishMessage") {
            Some(message) => Finish::Malformed { reason: format!("{reason}: {message}") },
            None => Finish::Malformed { reason },
        },
        finish => finish,
    });
    let content = match candidate.and_then(|c| c.get("content")).filter(|c| c.get("parts").is_some()) {
        Some(content) => Dialect::Gemini.content(content).map_err(|error| malformed(value, error))?,
        // A candidate stopped by safety or length may have no content.
        None => Vec::new(),
    };
    let usage = value.get("usageMetadata").map(|usage| {
        let tokens = |field: &str| usage.get(field).and_then(Value::as_u64);
        let thoughts = tokens("thoughtsTokenCount");
        // Thinking tokens are billed as output; `promptTokenCount` counts
        // the cached content too.
        Usage {
            input_tokens: tokens("promptTokenCount"),
            output_tokens: tokens("candidatesTokenCount")
                .map(|output| output + thoughts.unwrap_or(0))
                .or(thoughts),
            cache_read_tokens: tokens("cachedContentTokenCount"),
            cache_write_tokens: None,
            reasoning_tokens: thoughts,
        }
    });
    Ok(Chunk { content, finish, reason: field("finishReason").map(str::to_owned), usage })
}

/// The synthetic ids of calls that came without one, numbered from `first`
/// across the chunks of a stream, so that no two calls of a turn share one.
fn number_calls(content: Vec<Content>, first: usize) -> Vec<Content> {
    let mut index = first;
    content
        .into_iter()
        .map(|piece| match piece {
            Content::Call(mut call) => {
                if call.id.starts_with(SYNTHETIC_ID_PREFIX) {
                    call.id = format!("{SYNTHETIC_ID_PREFIX}{index}-{}", call.name).into();
                }
                index += 1;
                Content::Call(call)
            }
            other => other,
        })
        .collect()
}

/// What a stream has said so far.
#[derive(Debug, Default)]
pub struct Decoder {
    content: ContentAssembler,
    /// The calls so far.
    calls: usize,
    /// The slots of thought summaries so far, and the one text of the last
    /// piece joins, if the last piece was a thought.
    thoughts: (usize, Option<usize>),
    usage: Usage,
    /// How the candidate ended, once a chunk said.
    finish: Option<Finish>,
    /// The `finishReason` as it came.
    reason: String,
    /// The response's id, which every chunk repeats (`responseId`).
    id: Option<String>,
}

impl Decode for Decoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError> {
        let value: Value = serde_json::from_str(&event.data)
            .map_err(|error| crate::clients::http::malformed(PROVIDER, &event.data, error))?;
        let chunk = read_chunk(&value)?;
        if self.id.is_none() {
            self.id = response_id(&value, "responseId");
        }
        for piece in number_calls(chunk.content, self.calls) {
            self.piece(piece, out);
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage;
        }
        // Usage may come in a chunk after the one that finishes, so the
        // response is given when the stream closes.
        if let Some(finish) = chunk.finish {
            self.finish = Some(finish);
            self.reason = chunk.reason.unwrap_or_default();
        }
        Ok(None)
    }

    fn end(&mut self) -> Result<ModelResponse, ModelError> {
        let Some(finish) = self.finish.take() else {
            return Err(ModelError::StreamEnded {
                provider: PROVIDER.into(),
                message: "the stream closed before a chunk with a finishReason".into(),
            });
        };
        let content = std::mem::take(&mut self.content).finish();
        let id = self.id.take();
        not_empty(ModelResponse { content, usage: self.usage, finish, model: None, id }, &self.reason)
    }
}

impl Decoder {
    /// One part's piece: text and thoughts join those just before them, a
    /// call comes whole, in one chunk.
    fn piece(&mut self, piece: Content, out: &mut Vec<ModelEvent>) {
        let (thoughts, joining) = &mut self.thoughts;
        match piece {
            Content::Reasoning(Reasoning::Thought { text: piece }) => {
                let slot = *joining.get_or_insert_with(|| {
                    *thoughts += 1;
                    *thoughts
                });
                let start = || Content::Reasoning(Reasoning::Thought { text: String::new() });
                if let Content::Reasoning(Reasoning::Thought { text }) = self.content.piece(slot, start) {
                    text.push_str(&piece);
                }
                out.push(ModelEvent::ReasoningDelta(piece));
                return;
            }
            Content::Text { text } => {
                self.content.text(&text);
                out.push(ModelEvent::TextDelta(text));
            }
            Content::Call(call) => {
                self.content.call(self.calls, Some(&call.id), Some(&call.name), &call.arguments);
                out.push(ModelEvent::CallDelta {
                    index: self.calls,
                    id: Some(call.id.to_string()),
                    name: Some(call.name.to_string()),
                    arguments: call.arguments,
                });
                self.calls += 1;
            }
            other => self.content.push(other),
        }
        *joining = None;
    }
}

fn malformed(value: &Value, problem: impl std::fmt::Display) -> ModelError {
    crate::clients::http::malformed(PROVIDER, &value.to_string(), problem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApiKey, Message};

    #[test]
    fn answers_are_native_from_gemini_3_on() {
        let native = |model: &str| GeminiApi.native_answers(model);
        for model in ["gemini-3-pro-preview", "models/gemini-3.1-flash", "gemini-4-argon", "gemini-10"] {
            assert!(native(model), "{model}");
        }
        for model in ["gemini-2.5-flash", "gemini-exp-1206", "gemma-3-27b-it", "gemini", "my-deployment"] {
            assert!(!native(model), "{model}");
        }
    }

    #[test]
    fn the_key_and_base_url_come_from_the_variables_values() {
        let client = Gemini::from_values("gemini-x", Some(ApiKey::new("AIza-x")), Some("http://proxy/"));
        assert_eq!(client.key, Some(ApiKey::new("AIza-x")));
        assert_eq!(client.url(false), "http://proxy/v1beta/models/gemini-x:generateContent");
        assert_eq!(client.url(true), "http://proxy/v1beta/models/gemini-x:streamGenerateContent?alt=sse");
        let client = Gemini::from_values("m", None, Some(""));
        assert_eq!(client.key, None);
        assert!(client.url(false).starts_with("https://generativelanguage.googleapis.com/v1beta/"));
        let error = client.request_headers().unwrap_err();
        assert!(error.to_string().contains("GEMINI_API_KEY"), "{error}");
        assert!(
            !format!("{:?}", Gemini::from_values("m", Some(ApiKey::new("AIza-x")), None)).contains("AIza-x")
        );
    }

    #[test]
    fn thought_signatures_go_back_on_their_parts() {
        let api = GeminiApi;
        let value = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "a", "args": {}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "b", "args": {}}}]}, "finishReason": "STOP"}]});
        let content = api.read(&value).unwrap().content;
        let settings = crate::ModelSettings::default();
        let messages = [Message::Assistant { content }];
        let request = ModelRequest {
            instructions: None,
            messages: &messages,
            tools: None,
            settings: &settings,
            answer: None,
        };
        let contents = api.body("m", &request, false).unwrap()["contents"].clone();
        assert_eq!(contents[0]["parts"][0]["thoughtSignature"], "c2ln");
        assert!(contents[0]["parts"][1].get("thoughtSignature").is_none());
    }
}
