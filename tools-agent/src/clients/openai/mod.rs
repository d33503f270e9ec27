//! OpenAI's two APIs, Chat Completions ([`chat`]) and Responses
//! ([`responses`]), each a client with its request body and its response and
//! stream readers, and their settings fields ([`fields`]); what the tools,
//! messages and results look like is in `toolcall_provider::openai`.
//!
//! What the two share, here: the key
//! and the base URL (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, or given), the
//! bearer header (none for a keyless local server), and the errors a
//! response body or a streamed event turns into.
//!
//! Authentication is `Authorization: Bearer <key>`:
//! <https://platform.openai.com/docs/api-reference/authentication>.

mod chat;
pub(super) mod fields;
mod responses;

pub use chat::OpenAiChat;
pub use responses::OpenAiResponses;

use eventsource_stream::Event;
use serde_json::Value;

use crate::ModelError;
use crate::clients::http::excerpt;
use crate::model::Usage;

/// The provider's name, in errors and spans.
pub(crate) const PROVIDER: &str = "openai";
/// Where the key is read from.
pub(crate) const KEY_VARIABLE: &str = "OPENAI_API_KEY";
/// Where another base URL (a local or compatible server) is read from.
pub(crate) const BASE_URL_VARIABLE: &str = "OPENAI_BASE_URL";
/// OpenAI's own API.
pub(crate) const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The bearer header.
pub(crate) const KEY_HEADER: (&str, &str) = ("authorization", "Bearer ");

/// A key is needed for OpenAI's own API only: Ollama, llama.cpp, vLLM and
/// LM Studio at another base URL need none.
pub(crate) fn needs_key(base_url: &str) -> bool {
    base_url == DEFAULT_BASE_URL
}

/// A successful body that is not shaped as documented.
pub(crate) fn malformed(body: &Value, problem: impl std::fmt::Display) -> ModelError {
    crate::clients::http::malformed(PROVIDER, &body.to_string(), problem)
}

/// A stream that stopped before its end, with what the provider said.
pub(crate) fn stream_ended(message: impl Into<String>) -> ModelError {
    ModelError::StreamEnded { provider: PROVIDER.into(), message: message.into() }
}

/// The `{"code", "message"}` of an error object, as one line.
pub(crate) fn error_text(error: Option<&Value>) -> String {
    let field = |name: &str| error.and_then(|error| error.get(name)).and_then(Value::as_str);
    match (field("code"), field("message")) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (None, Some(message)) => message.to_owned(),
        (Some(code), None) => code.to_owned(),
        (None, None) => error.map_or_else(|| "no details".to_owned(), |error| excerpt(&error.to_string())),
    }
}

/// Where Chat Completions keeps its counts in `usage`: input, output,
/// cached input, input written to the cache, reasoning.
pub(crate) const CHAT_USAGE: [&str; 5] = [
    "/prompt_tokens",
    "/completion_tokens",
    "/prompt_tokens_details/cached_tokens",
    "/prompt_tokens_details/cache_write_tokens",
    "/completion_tokens_details/reasoning_tokens",
];

/// The same in a Responses `usage`.
pub(crate) const RESPONSES_USAGE: [&str; 5] = [
    "/input_tokens",
    "/output_tokens",
    "/input_tokens_details/cached_tokens",
    "/input_tokens_details/cache_write_tokens",
    "/output_tokens_details/reasoning_tokens",
];

/// Token counts from a `usage` object, at the API's places
/// ([`CHAT_USAGE`], [`RESPONSES_USAGE`]); `None` where a (compatible)
/// server leaves them out ([`Usage`] cites the pages).
pub(crate) fn usage(usage: Option<&Value>, [input, output, cached, written, reasoning]: [&str; 5]) -> Usage {
    let count = |pointer: &str| usage.and_then(|usage| usage.pointer(pointer)).and_then(Value::as_u64);
    Usage {
        input_tokens: count(input),
        output_tokens: count(output),
        cache_read_tokens: count(cached),
        cache_write_tokens: count(written),
        reasoning_tokens: count(reasoning),
    }
}

/// The JSON of one event's data; not JSON is `Malformed`.
pub(crate) fn event_json(event: &Event) -> Result<Value, ModelError> {
    serde_json::from_str(&event.data).map_err(|error| {
        crate::clients::http::malformed(
            PROVIDER,
            &event.data,
            format!("a streamed event is not JSON ({error})"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::OpenAiChat;
    use crate::{ApiKey, Model, ModelRequest, ModelSettings};

    #[test]
    fn the_environment_values_choose_the_base_url_and_the_key() {
        let openai = OpenAiChat::from_values("m", Some(ApiKey::new("sk-1")), None);
        assert_eq!(openai.url(false), "https://api.openai.com/v1/chat/completions");
        assert!(openai.request_headers().unwrap().get("authorization").is_some());

        // A local server: no key, no header.
        let local =
            crate::clients::OpenAiResponses::from_values("llama", None, Some(" http://localhost:11434/v1/ "));
        assert_eq!(local.url(true), "http://localhost:11434/v1/responses");
        assert!(local.request_headers().unwrap().is_empty());

        // OpenAI itself without a key: refused before any request, naming the variable.
        let blank = OpenAiChat::from_values("m", None, Some("  "));
        assert_eq!(blank.base_url(), DEFAULT_BASE_URL);
        let error = blank.request_headers().unwrap_err();
        assert!(matches!(&error, ModelError::MissingKey { variable: KEY_VARIABLE, .. }), "{error}");
        let settings = ModelSettings::default();
        let request = ModelRequest {
            instructions: None,
            messages: &[],
            tools: None,
            settings: &settings,
            answer: None,
        };
        let error = futures::executor::block_on(blank.request(request)).unwrap_err();
        assert!(error.to_string().contains(KEY_VARIABLE), "{error}");
    }

    #[test]
    fn usage_reads_cache_writes_where_each_api_has_them() {
        let chat = serde_json::json!({"prompt_tokens": 2048, "completion_tokens": 300,
            "prompt_tokens_details": {"cached_tokens": 1536, "cache_write_tokens": 256},
            "completion_tokens_details": {"reasoning_tokens": 200}});
        let responses = serde_json::json!({"input_tokens": 2048, "output_tokens": 300,
            "input_tokens_details": {"cached_tokens": 1536, "cache_write_tokens": 256},
            "output_tokens_details": {"reasoning_tokens": 200}});
        let expected = Usage {
            input_tokens: Some(2048),
            output_tokens: Some(300),
            cache_read_tokens: Some(1536),
            cache_write_tokens: Some(256),
            reasoning_tokens: Some(200),
        };
        assert_eq!(usage(Some(&chat), CHAT_USAGE), expected);
        assert_eq!(usage(Some(&responses), RESPONSES_USAGE), expected);
        // A compatible server's bare counts: the rest is not said.
        let bare = serde_json::json!({"prompt_tokens": 9, "completion_tokens": 2});
        let read = usage(Some(&bare), CHAT_USAGE);
        assert_eq!((read.cache_write_tokens, read.reasoning_tokens), (None, None));
    }

    #[test]
    fn error_objects_read_as_one_line() {
        let error = serde_json::json!({"code": "server_error", "message": "boom"});
        assert_eq!(error_text(Some(&error)), "server_error: boom");
        assert_eq!(error_text(None), "no details");
    }
}
