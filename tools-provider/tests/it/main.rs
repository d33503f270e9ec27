//! The integration tests of `toolcall-provider`, one binary.

#[path = "support/corpus.rs"]
mod corpus;

mod dialects;
mod examples;
mod export;
mod messages;
mod parts;
mod tool_choice;
mod tool_search;
mod user_parts;
