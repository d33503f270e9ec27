//! Tavily web search as a tool for toolcall, and the reference for
//! writing a tool with state, options and a real HTTP API.
//!
//! - [`Tavily`]: the tool (key, [`SearchOptions`], HTTP client) and its `run`;
//! - [`Request`]: what the model sends (`{"query": "..."}`);
//! - [`SearchResponse`]: what it gets back, as compact JSON; `Display` is for people;
//! - [`TavilyError`]: why the tool could not be built. A search's own errors
//!   follow the SDK's contract: a blank query is invalid arguments, a rate
//!   limit asks to retry, anything else is a failure the model reads.
//!
//! The API key never appears in `Debug` output, errors or logs.
#![deny(missing_docs)]

mod api;
mod error;
mod key;
mod options;
mod response;
mod tool;

pub use error::TavilyError;
pub use options::{
    Answer, MAX_EXCLUDE_DOMAINS, MAX_INCLUDE_DOMAINS, MAX_RESULTS, RawContent, SearchDepth, SearchOptions,
    TimeRange, Topic,
};
pub use response::{Image, SearchResponse, SearchResult};
pub use tool::{API_KEY_VAR, DEFAULT_BASE_URL, DEFAULT_NAME, DEFAULT_TIMEOUT, Request, Tavily};
