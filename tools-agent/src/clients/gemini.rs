//! Google's Gemini API: `POST {base}/v1beta/models/{model}:generateContent`,
//! and `:streamGenerateContent?alt=sse` for a stream.
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
//! - `thoughtSignature`: a model that thinks signs its function call parts,
//!   and the signature must be sent back with the part in the next turns:
//!   <https://ai.google.dev/gemini-api/docs/thought-signatures>. The
//!   transcript has no field for it, so the client keeps the signatures it
//!   received, by call, and puts them back on the calls it sends again.
//!
//! The contents (user, model, `functionCall` and `functionResponse` parts)
//! are written by `tools_provider::gemini::contents`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use eventsource_stream::Event;
use serde_json::{Map, Value, json};
use tools_core::ToolCall;
use tools_provider::gemini::{self, SYNTHETIC_ID_PREFIX};
use tools_provider::{Dialect, Finish};

use super::{Client, Provider, fields};
use crate::ModelError;
use crate::http::Decode;
use crate::model::{ModelEvent, ModelRequest, ModelResponse, Usage};

const PROVIDER: &str = "gemini";

/// The thought signatures received, by call (`id`, `name`, `arguments`).
type Signatures = Arc<Mutex<HashMap<String, String>>>;

/// A client of the Gemini API (Google AI Studio keys).
///
/// ```no_run
/// use tools_agent::{Agent, Gemini};
/// use tools_core::Toolset;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // The key from GEMINI_API_KEY, the base URL from GEMINI_BASE_URL if set.
/// let model = Gemini::new("gemini-2.5-flash");
/// let answer = Agent::new(model, Toolset::new())?.run("Hello").await?.answer;
/// # Ok(()) }
/// ```
pub type Gemini = Client<GeminiApi>;

/// `generateContent`, as the [`Gemini`] client speaks it: the thought
/// signatures it received, shared by the clones of one client.
#[derive(Clone, Debug, Default)]
pub struct GeminiApi {
    signatures: Signatures,
}

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
        let signatures = self.signatures.lock().map(|map| map.clone()).unwrap_or_default();
        let contents =
            gemini::contents(request.messages, |call| signatures.get(&signature_key(call)).cloned())?;
        body.insert("contents".into(), Value::Array(contents));
        // `tools`, and `toolConfig` for the function declarations.
        body.extend(super::tool_fields(Dialect::Gemini, request)?);
        // `generationConfig`: sampling, stop sequences, seed, `thinkingConfig`.
        fields::gemini(settings, &mut body)?;
        fields::merge_extra(fields::GEMINI, &mut body, settings.extra.as_ref())?;
        Ok(Value::Object(body))
    }

    fn read(&self, value: &Value) -> Result<ModelResponse, ModelError> {
        let chunk = read_chunk(value)?;
        if chunk.finish.is_none() && chunk.parts.is_empty() {
            return Err(malformed(value, "no candidate content and no finishReason"));
        }
        let calls = number_calls(chunk.calls, 0);
        remember(&self.signatures, signed(&calls, &chunk.signatures));
        let finish = chunk.finish.as_deref().map(gemini::finish).unwrap_or_default();
        Ok(ModelResponse { text: chunk.text, calls, usage: chunk.usage.unwrap_or_default(), finish })
    }

    fn events(&self) -> Decoder {
        Decoder {
            signatures: self.signatures.clone(),
            text: String::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            finish: None,
        }
    }

    fn refine(&self, error: ModelError) -> ModelError {
        key_refused(error)
    }
}

/// Keep the thought signatures of these calls, from the parts they came in.
fn remember(signatures: &Signatures, signed: Vec<(ToolCall, String)>) {
    if signed.is_empty() {
        return;
    }
    if let Ok(mut map) = signatures.lock() {
        for (call, signature) in signed {
            map.insert(signature_key(&call), signature);
        }
    }
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

fn signature_key(call: &ToolCall) -> String {
    format!("{}\u{0}{}\u{0}{}", call.id, call.name, call.arguments)
}

/// One `GenerateContentResponse`, read.
struct Chunk {
    text: String,
    calls: Vec<ToolCall>,
    /// The thought signature of each call that had one, by its position.
    signatures: Vec<(usize, String)>,
    parts: Vec<Value>,
    finish: Option<String>,
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
    let finish = candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str).map(str::to_owned);
    let parts = candidate
        .and_then(|c| c.pointer("/content/parts"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text: String = parts
        .iter()
        // Thought summaries are not the answer.
        .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    let calls =
        Dialect::Gemini.parse_calls(&Value::Array(parts.clone())).map_err(|error| malformed(value, error))?;
    let signatures = parts
        .iter()
        .filter(|part| part.get("functionCall").is_some())
        .enumerate()
        .filter_map(|(index, part)| {
            part.get("thoughtSignature")
                .and_then(Value::as_str)
                .map(|signature| (index, signature.to_owned()))
        })
        .collect();
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
    Ok(Chunk { text, calls, signatures, parts, finish, usage })
}

/// The synthetic ids of calls that came without one, numbered from `first`
/// across the chunks of a stream, so that no two calls of a turn share one.
fn number_calls(calls: Vec<ToolCall>, first: usize) -> Vec<ToolCall> {
    calls
        .into_iter()
        .enumerate()
        .map(|(offset, mut call)| {
            if call.id.starts_with(SYNTHETIC_ID_PREFIX) {
                call.id = format!("{SYNTHETIC_ID_PREFIX}{}-{}", first + offset, call.name).into();
            }
            call
        })
        .collect()
}

fn signed(calls: &[ToolCall], signatures: &[(usize, String)]) -> Vec<(ToolCall, String)> {
    signatures
        .iter()
        .filter_map(|(index, signature)| calls.get(*index).map(|call| (call.clone(), signature.clone())))
        .collect()
}

/// What a stream has said so far.
pub struct Decoder {
    signatures: Signatures,
    text: String,
    calls: Vec<ToolCall>,
    usage: Usage,
    /// How the candidate ended, once a chunk said.
    finish: Option<Finish>,
}

impl Decode for Decoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError> {
        let value: Value = serde_json::from_str(&event.data)
            .map_err(|error| crate::http::malformed(PROVIDER, &event.data, error))?;
        let chunk = read_chunk(&value)?;
        if !chunk.text.is_empty() {
            self.text.push_str(&chunk.text);
            out.push(ModelEvent::TextDelta(chunk.text));
        }
        // A function call arrives whole, in one chunk.
        let first = self.calls.len();
        let calls = number_calls(chunk.calls, first);
        remember(&self.signatures, signed(&calls, &chunk.signatures));
        for (offset, call) in calls.into_iter().enumerate() {
            out.push(ModelEvent::CallDelta {
                index: first + offset,
                id: Some(call.id.to_string()),
                name: Some(call.name.to_string()),
                arguments: call.arguments.clone(),
            });
            self.calls.push(call);
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage;
        }
        // Usage may come in a chunk after the one that finishes, so the
        // response is given when the stream closes.
        if let Some(reason) = &chunk.finish {
            self.finish = Some(gemini::finish(reason));
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
        Ok(ModelResponse {
            text: std::mem::take(&mut self.text),
            calls: std::mem::take(&mut self.calls),
            usage: self.usage,
            finish,
        })
    }
}

fn malformed(value: &Value, problem: impl std::fmt::Display) -> ModelError {
    crate::http::malformed(PROVIDER, &value.to_string(), problem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApiKey, Message};

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
    fn thought_signatures_go_back_on_their_calls() {
        let api = GeminiApi::default();
        let value = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "a", "args": {}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "b", "args": {}}}]}, "finishReason": "STOP"}]});
        let calls = api.read(&value).unwrap().calls;
        let settings = crate::ModelSettings::default();
        let messages = [Message::Assistant { text: String::new(), calls }];
        let request =
            ModelRequest { instructions: None, messages: &messages, tools: None, settings: &settings };
        let contents = api.body("m", &request, false).unwrap()["contents"].clone();
        assert_eq!(contents[0]["parts"][0]["thoughtSignature"], "c2ln");
        assert!(contents[0]["parts"][1].get("thoughtSignature").is_none());
    }
}
