//! A run that ends in a typed answer: a `WeatherReport`, read through the
//! same pipeline as a tool's arguments, with a tool used on the way.
//!
//! With `OPENAI_API_KEY` (or `OPENAI_BASE_URL`) set, the model is OpenAI's
//! (`MODEL`, default gpt-4.1-mini), which gives the answer natively
//! (`response_format`, strict); with neither, a scripted model, which gives
//! it as a call of the `final_answer` tool, first with a field missing:
//!
//! ```sh
//! cargo run --example typed_answer --features agent
//! ```

use std::sync::Arc;

use toolcall::agent::testing::ScriptedModel;
use toolcall::agent::{Agent, Model, OpenAiChat};
use toolcall::toolset::Toolset;
use toolcall::{ToolCall, ToolContext, ToolError, tool};

/// Current temperature for a city, in degrees Celsius.
#[tool(args, read_only)]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("{{\"city\":\"{city}\",\"celsius\":{}}}", 12 + city.len() % 10))
}

/// What the run gives back.
#[derive(Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct WeatherReport {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: f64,
    /// Whether a coat is needed.
    coat: bool,
}

fn model() -> Arc<dyn Model> {
    if ["OPENAI_API_KEY", "OPENAI_BASE_URL"].iter().any(|name| std::env::var_os(name).is_some()) {
        let name = std::env::var("MODEL").unwrap_or_else(|_| "gpt-4.1-mini".to_owned());
        return Arc::new(OpenAiChat::new(name));
    }
    Arc::new(
        ScriptedModel::new()
            .then_calls([ToolCall::new("call_1", "get_weather", r#"{"city":"Oslo"}"#)])
            .then_calls([ToolCall::new("call_2", "final_answer", r#"{"city":"Oslo","celsius":16}"#)])
            .then_calls([ToolCall::new(
                "call_3",
                "final_answer",
                r#"{"city":"Oslo","celsius":16,"coat":true}"#,
            )]),
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = model();
    println!("model: {} / {}", model.provider(), model.model());
    let tools = Toolset::builder().add(GetWeather).build()?;
    let agent =
        Agent::from_shared(model, tools)?.with_instructions("Report the weather with the tool's numbers.");
    let typed = agent.run_as::<WeatherReport>("Do I need a coat in Oslo?").await?;
    for result in typed.run.transcript.messages.iter().filter_map(|message| match message {
        toolcall::agent::Message::Tool { results } => Some(results),
        _ => None,
    }) {
        for result in result {
            println!("result  {} {:<17} {}", result.name, result.outcome.as_str(), result.content);
        }
    }
    println!("stop    {:?}", typed.run.stop);
    match typed.answer {
        Some(report) => println!("answer  {report:?}"),
        None => println!("no typed answer: {}", typed.run.answer),
    }
    Ok(())
}
