//! The built-in model clients, one module per provider API, each over the
//! shared HTTP side (`crate::http`) and its provider's dialect.

mod anthropic;
mod gemini;
pub(crate) mod openai_chat;
mod openai_common;
pub(crate) mod openai_responses;

pub use anthropic::Anthropic;
pub use gemini::Gemini;
pub use openai_chat::OpenAiChat;
pub use openai_responses::OpenAiResponses;
