//! A real Tavily search, through the same path a model's call takes.
//!
//! ```sh
//! TAVILY_API_KEY=tvly-... cargo run -p toolcall-tavily --example search -- "your query"
//! ```
//!
//! Without the key it says what to set and exits successfully.
//! `TAVILY_BASE_URL` (optional) sends the search to another server that
//! speaks the Tavily API, such as a proxy.

use std::process::ExitCode;

use toolcall_core::{ToolContext, ToolOutput, TypedTool};
use toolcall_tavily::{API_KEY_VAR, Request, SearchOptions, Tavily, TavilyError};

#[tokio::main]
async fn main() -> ExitCode {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let query =
        if words.is_empty() { "What is the Model Context Protocol?".to_owned() } else { words.join(" ") };

    let built =
        Tavily::new().and_then(|tavily| tavily.with_search_opts(SearchOptions::new().with_max_results(3)));
    let built = match std::env::var("TAVILY_BASE_URL") {
        Ok(base_url) => built.and_then(|tavily| tavily.with_base_url(&base_url)),
        Err(_) => built,
    };
    let tavily = match built {
        Ok(tavily) => tavily,
        Err(TavilyError::MissingApiKey { .. }) => {
            println!("This example searches the web for real, so it needs a Tavily API key.");
            println!("Get one at https://app.tavily.com, then run:");
            println!(
                "  {API_KEY_VAR}=tvly-... cargo run -p toolcall-tavily --example search -- \"your query\""
            );
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("{} ({}): {}\n", tavily.spec().name(), tavily.endpoint(), tavily.spec().description());

    // Typed, as a program calls it: the response renders for people.
    let ctx = ToolContext::new();
    let response = match tavily.run(&ctx, Request { query: query.clone() }).await {
        Ok(response) => response,
        Err(error) => {
            // What the model would read for this error.
            eprintln!("search failed: {}", error.model_content());
            return ExitCode::FAILURE;
        }
    };
    println!("{response}");

    // As a model calls it: JSON arguments in, compact JSON content out.
    let content = response.into_content().unwrap_or_else(|error| error.model_content());
    let arguments = serde_json::json!({ "query": query }).to_string();
    println!(
        "a model calling `{}` with {arguments} reads {} bytes of JSON:",
        tavily.spec().name(),
        content.len()
    );
    let shown: String = content.chars().take(300).collect();
    println!("{shown}{}", if shown.len() < content.len() { "…" } else { "" });
    ExitCode::SUCCESS
}
