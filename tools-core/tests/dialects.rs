//! Every dialect's definitions over the corpus, pinned; and what each
//! dialect refuses.

#[path = "support/corpus.rs"]
mod corpus;

use serde_json::{Value, json};
use tools_core::provider::Dialect;

/// Each corpus tool's definition in `dialect`, or the error it is refused with.
fn dialect_output(dialect: Dialect) -> String {
    let mut out = serde_json::Map::new();
    for tool in corpus::tools() {
        let value = match dialect.function(&tool) {
            Ok(value) => value,
            Err(error) => json!({"refused": error.to_string()}),
        };
        out.insert(tool.name.to_owned(), value);
    }
    serde_json::to_string_pretty(&Value::Object(out)).unwrap()
}

#[test]
fn openai_chat() {
    insta::assert_snapshot!(dialect_output(Dialect::OpenAiChat));
}

#[test]
fn openai_chat_strict() {
    insta::assert_snapshot!(dialect_output(Dialect::OpenAiChatStrict));
}

#[test]
fn openai_responses() {
    insta::assert_snapshot!(dialect_output(Dialect::OpenAiResponses));
}

#[test]
fn openai_responses_strict() {
    insta::assert_snapshot!(dialect_output(Dialect::OpenAiResponsesStrict));
}

#[test]
fn anthropic() {
    insta::assert_snapshot!(dialect_output(Dialect::Anthropic));
}

#[test]
fn anthropic_strict() {
    insta::assert_snapshot!(dialect_output(Dialect::AnthropicStrict));
}

#[test]
fn gemini() {
    insta::assert_snapshot!(dialect_output(Dialect::Gemini));
}

#[test]
fn mcp() {
    insta::assert_snapshot!(dialect_output(Dialect::Mcp));
}
