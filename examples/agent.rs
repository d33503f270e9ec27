//! The get_weather tool in an agent loop.
//!
//! With `OPENAI_API_KEY` or `OPENAI_BASE_URL` set, it talks to that endpoint
//! (OpenAI, or any OpenAI-compatible server: Ollama, llama.cpp, vLLM...);
//! with neither, to a scripted model built in, so it runs offline:
//!
//! ```sh
//! cargo run --example agent --features agent
//! OPENAI_BASE_URL=http://localhost:11434/v1 MODEL=llama3.2 cargo run --example agent --features agent
//! ```

use std::sync::Arc;

use toolcall::agent::testing::ScriptedModel;
use toolcall::agent::{Agent, Message, Model, OpenAiChat, RunLimits};
use toolcall::toolset::Toolset;
use toolcall::{ToolCall, ToolContext, ToolError, tool};

/// Current temperature for a city, in degrees Celsius.
#[tool(args, read_only)]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    match city.as_str() {
        "Atlantis" => Err(ToolError::failed("no weather station near Atlantis")),
        _ => Ok(format!("{{\"city\":\"{city}\",\"celsius\":{}}}", 12 + city.len() % 10)),
    }
}

/// The model: a real endpoint when one is configured, else the script of a
/// model that makes a mistake, fixes it and answers.
fn model() -> Arc<dyn Model> {
    let configured =
        ["OPENAI_API_KEY", "OPENAI_BASE_URL"].iter().any(|name| std::env::var_os(name).is_some());
    if configured {
        let name = std::env::var("MODEL").unwrap_or_else(|_| "gpt-4.1-mini".to_owned());
        return Arc::new(OpenAiChat::new(name));
    }
    Arc::new(
        ScriptedModel::new()
            .then_calls([
                ToolCall::new("call_1", "get_weather", r#"{"city":"Paris"}"#),
                ToolCall::new("call_2", "get_weather", r#"{"town":"Oslo"}"#),
            ])
            .then_calls([ToolCall::new("call_3", "get_weather", "```json\n{\"city\":\"Oslo\"}\n```")])
            .then_text("Paris is at 17°C and Oslo at 16°C."),
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools = Toolset::builder().add(GetWeather).build()?;
    let model = model();
    println!("model: {} / {}", model.provider(), model.model());
    let agent = Agent::from_shared(model, tools)?
        .with_instructions("Answer weather questions with the get_weather tool.")
        .with_limits(RunLimits::default().with_max_turns(4));
    let result = match agent.run("What's the weather in Paris and Oslo?").await {
        Ok(result) => result,
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(1);
        }
    };
    for message in &result.transcript.messages {
        match message {
            Message::User { .. } => println!("user      {}", message.text()),
            Message::Assistant { .. } => {
                for call in message.calls() {
                    println!("call      {} {} {:?}", call.id, call.name, call.arguments);
                }
                let text = message.text();
                if !text.is_empty() {
                    println!("assistant {text}");
                }
            }
            Message::Tool { results } => {
                for result in results {
                    println!("result    {} {:<17} {}", result.id, result.outcome.as_str(), result.content);
                }
            }
            Message::Summary { text, covers } => println!("summary   of {covers} messages: {text}"),
        }
    }
    // A count the model did not report (a scripted model reports none) is `None`.
    let usage = result.total_usage();
    let count = |tokens: Option<u64>| tokens.map_or_else(|| "?".to_owned(), |tokens| tokens.to_string());
    println!(
        "stop: {:?}; tokens: {} in, {} out",
        result.stop,
        count(usage.input_tokens),
        count(usage.output_tokens)
    );
    Ok(())
}
