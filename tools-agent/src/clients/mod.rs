//! The built-in model clients, one module per provider API, each over the
//! shared HTTP side (`crate::http`) and its provider's dialect.

mod anthropic;
mod gemini;

pub use anthropic::Anthropic;
pub use gemini::Gemini;
