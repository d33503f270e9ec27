//! OpenAI Chat Completions, `POST {base}/chat/completions`, and every
//! server that speaks it (Ollama, llama.cpp, vLLM, LM Studio...).
//!
//! - The request and the response:
//!   <https://platform.openai.com/docs/api-reference/chat/create> (messages
//!   `system`/`user`/`assistant` with `tool_calls`/`tool`; `tools`,
//!   `tool_choice`, `parallel_tool_calls`, `max_completion_tokens`,
//!   `temperature`; `choices[0].message`, `usage.prompt_tokens`,
//!   `usage.completion_tokens`). `tool_choice` and `parallel_tool_calls`
//!   come from `Dialect::tool_choice`, which cites their pages.
//! - The stream: <https://platform.openai.com/docs/api-reference/chat-streaming>
//!   (`chat.completion.chunk` objects in `data:` lines, `choices[0].delta`
//!   with `content` and `tool_calls[]` pieces keyed by `index`, a
//!   `finish_reason` on the last choice chunk, with `stream_options:
//!   {"include_usage": true}` a last chunk with empty `choices` and the
//!   `usage`, then `data: [DONE]`).
//! - The messages (user, assistant, tool calls and their results):
//!   `Dialect::messages` of `toolcall-provider`, with the `OpenAiChat`
//!   dialect (<https://platform.openai.com/docs/guides/function-calling>),
//!   after the instructions' `system` message, which the body writes first,
//!   as every client writes its instructions in its own place.

use eventsource_stream::Event;
use serde_json::{Value, json};
use toolcall_provider::{Content, Dialect, Finish, Reasoning};

use super::fields;
use super::{self as common, error_text, event_json, malformed, stream_ended, usage};
use crate::ModelError;
use crate::clients::body::{self, CHAT};
use crate::clients::http::Decode;
use crate::clients::{Client, Provider, Strict, response_id};
use crate::model::{ContentAssembler, ModelEvent, ModelRequest, ModelResponse, Usage};

/// A [`Model`](crate::Model) over OpenAI's Chat Completions API, or any
/// server that speaks it.
///
/// ```
/// use toolcall_agent::{ApiKey, Model, OpenAiChat};
///
/// // OpenAI itself, the key given (`OpenAiChat::new` reads OPENAI_API_KEY).
/// let openai = OpenAiChat::from_values("gpt-4.1-mini", Some(ApiKey::new("sk-...")), None).with_strict(true);
/// assert_eq!(openai.base_url(), "https://api.openai.com/v1");
/// // A local server: no key, no Authorization header.
/// let local = OpenAiChat::from_values("llama3.2", None, Some("http://localhost:11434/v1"));
/// assert_eq!((local.provider(), local.model()), ("openai", "llama3.2"));
/// assert!(!format!("{openai:?}").contains("sk-"));
/// ```
pub type OpenAiChat = Client<OpenAiChatApi>;

/// Chat Completions, as the [`OpenAiChat`] client speaks it: whether its
/// tools are strict.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiChatApi {
    strict: bool,
}

impl Strict for OpenAiChatApi {
    fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }
}

impl Provider for OpenAiChatApi {
    const NAME: &'static str = common::PROVIDER;
    const CLIENT: &'static str = "OpenAiChat";
    const KEY_VARIABLE: &'static str = common::KEY_VARIABLE;
    const BASE_URL_VARIABLE: &'static str = common::BASE_URL_VARIABLE;
    const DEFAULT_BASE_URL: &'static str = common::DEFAULT_BASE_URL;
    const KEY_HEADER: (&'static str, &'static str) = common::KEY_HEADER;
    type Events = ChatDecoder;

    fn dialect(&self) -> Dialect {
        if self.strict { Dialect::OpenAiChatStrict } else { Dialect::OpenAiChat }
    }

    /// `{base}/chat/completions`.
    fn url(&self, base_url: &str, _model: &str, _stream: bool) -> String {
        format!("{base_url}/chat/completions")
    }

    fn needs_key(&self, base_url: &str) -> bool {
        common::needs_key(base_url)
    }

    /// The request body: <https://platform.openai.com/docs/api-reference/chat/create>;
    /// the settings' fields from `fields::openai_chat`, the extra JSON last.
    fn body(&self, model: &str, request: &ModelRequest<'_>, stream: bool) -> Result<Value, ModelError> {
        let dialect = self.dialect();
        // The instructions are the first message, `system`: Chat Completions
        // has no field of its own for them.
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(instructions) = request.instructions {
            messages.push(json!({"role": "system", "content": instructions}));
        }
        messages.extend(dialect.messages(request.messages)?);
        let mut body = serde_json::Map::new();
        body.insert("model".into(), json!(model));
        body.insert("messages".into(), Value::Array(messages));
        body.extend(crate::clients::tool_fields(dialect, request)?);
        let settings = request.settings;
        fields::chat(settings, &mut body)?;
        body::unsupported(CHAT, settings)?;
        fields::cache(CHAT, &settings.cache, &mut body)?;
        if let Some(answer) = request.answer {
            fields::chat_answer(answer, &mut body)?;
        }
        if stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        body::merge_extra(CHAT, &mut body, settings.extra.as_ref())?;
        Ok(Value::Object(body))
    }

    /// The response: `choices[0].message` as content (reasoning, text or
    /// its `refusal`, calls: `Dialect::content` of `toolcall-provider`), the
    /// usage.
    fn read(&self, body: &Value) -> Result<ModelResponse, ModelError> {
        let Some(message) = body.pointer("/choices/0/message") else {
            return Err(malformed(body, "no `choices[0].message`"));
        };
        let refused = message.get("refusal").and_then(Value::as_str).is_some();
        let dialect = self.dialect();
        let content = dialect.content(message).map_err(|error| malformed(body, error))?;
        let reason = body.pointer("/choices/0/finish_reason").and_then(Value::as_str);
        let finish = match (refused, reason) {
            (true, _) => Finish::Refused { reason: "refusal".into() },
            (false, reason) => reason.map(|reason| dialect.finish(reason)).unwrap_or_default(),
        };
        Ok(ModelResponse {
            content,
            usage: usage(body.get("usage"), common::CHAT_USAGE),
            finish,
            model: None,
            id: response_id(body, "id"),
        })
    }

    fn events(&self) -> ChatDecoder {
        ChatDecoder::default()
    }
}

/// The pieces of one streamed response so far.
#[derive(Debug, Default)]
pub struct ChatDecoder {
    content: ContentAssembler,
    usage: Usage,
    /// How the choice ended, once a chunk said (`finish_reason`).
    finish: Option<Finish>,
    /// Whether the answer came as a `refusal`.
    refused: bool,
    /// Whether any event came at all.
    heard: bool,
    /// The completion's id, which every chunk repeats.
    id: Option<String>,
}

impl Decode for ChatDecoder {
    fn decode(
        &mut self,
        event: &Event,
        out: &mut Vec<ModelEvent>,
    ) -> Result<Option<ModelResponse>, ModelError> {
        self.heard = true;
        let data = event.data.trim();
        if data == "[DONE]" {
            let Some(mut finish) = self.finish.take() else {
                return Err(stream_ended("`data: [DONE]` came before a `finish_reason`"));
            };
            if self.refused {
                finish = Finish::Refused { reason: "refusal".into() };
            }
            // A compatible server that leaves an id out still gets one
            // (`call_{index}`), so that its result can answer it.
            let content = std::mem::take(&mut self.content).finish();
            let id = self.id.take();
            return Ok(Some(ModelResponse { content, usage: self.usage, finish, model: None, id }));
        }
        if data.is_empty() {
            return Ok(None);
        }
        let chunk = event_json(event)?;
        if let Some(error) = chunk.get("error") {
            return Err(stream_ended(format!("the server sent an error: {}", error_text(Some(error)))));
        }
        if self.id.is_none() {
            self.id = response_id(&chunk, "id");
        }
        if let Some(counts) = chunk.get("usage").filter(|counts| counts.is_object()) {
            self.usage = usage(Some(counts), common::CHAT_USAGE);
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(None);
        };
        if let Some(delta) = choice.get("delta") {
            // A refusal streams as `delta.refusal`, in place of the content.
            let refusal = delta.get("refusal").and_then(Value::as_str).filter(|text| !text.is_empty());
            self.refused |= refusal.is_some();
            // Compatible servers stream their reasoning before the answer.
            let reasoning = ["reasoning_content", "reasoning"]
                .iter()
                .find_map(|field| delta.get(*field).and_then(Value::as_str))
                .filter(|text| !text.is_empty());
            if let Some(piece) = reasoning {
                let start = || Content::Reasoning(Reasoning::ReasoningContent { text: String::new() });
                if let Content::Reasoning(Reasoning::ReasoningContent { text }) = self.content.piece(0, start)
                {
                    text.push_str(piece);
                }
                out.push(ModelEvent::ReasoningDelta(piece.to_owned()));
            }
            let text = delta.get("content").and_then(Value::as_str).filter(|text| !text.is_empty());
            if let Some(text) = text.or(refusal) {
                self.content.text(text);
                out.push(ModelEvent::TextDelta(text.to_owned()));
            }
            for (position, call) in
                delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate()
            {
                let index = call
                    .get("index")
                    .and_then(Value::as_u64)
                    .and_then(|index| usize::try_from(index).ok())
                    .unwrap_or(position);
                let id = call.get("id").and_then(Value::as_str);
                let name = call.pointer("/function/name").and_then(Value::as_str);
                let arguments =
                    call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or_default();
                self.content.call(index, id, name, arguments);
                out.push(ModelEvent::CallDelta {
                    index,
                    id: id.map(str::to_owned),
                    name: name.map(str::to_owned),
                    arguments: arguments.to_owned(),
                });
            }
        }
        if let Some(reason) = choice.get("finish_reason").filter(|reason| !reason.is_null()) {
            // The strict dialect's endings are the same.
            let finish = reason.as_str().map(|reason| Dialect::OpenAiChat.finish(reason));
            self.finish = Some(finish.unwrap_or_default());
        }
        Ok(None)
    }

    fn end(&mut self) -> Result<ModelResponse, ModelError> {
        Err(stream_ended(if !self.heard {
            // A server that fails after it has answered 200 can say why
            // only in its own log (llama-cpp-python, asked to stream an
            // automatic tool choice the model turns into a call).
            "the server closed the stream with no event: its log says why"
        } else if self.finish.is_some() {
            "no `data: [DONE]`"
        } else {
            "no `finish_reason` and no `data: [DONE]`"
        }))
    }
}
