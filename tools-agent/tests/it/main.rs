//! The integration tests of `toolcall-agent`, one binary.

mod support;

// The loop scenarios, written once and run against every client's mock,
// plainly and streamed.
mod scenarios;

// Each client's mock for the scenarios, and what only that provider does.
mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;

mod agent_loop;
mod agent_tool;
mod answer;
mod approval;
mod caching;
mod context;
mod continue_across;
mod dialect_check;
mod effects;
mod fallback;
mod handoff;
mod http_client;
mod native_context;
mod otel;
mod parts;
mod prompt_parts;
mod reasoning;
mod settings;
mod spans;
mod tool_choice;
mod tool_search;

// The public stand-in server (feature `scripted-server`) with the real client.
#[cfg(feature = "scripted-server")]
mod scripted_server;

// Every model request bounded by default: plain, and a stream's silences.
mod timeouts;
