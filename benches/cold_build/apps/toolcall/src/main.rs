//! The app the cold-build benchmark compiles (../../run.sh): one tool with
//! `#[tool]` and, with the feature `agent`, one agent run on OpenAI Chat
//! Completions. It compiles; it needs `OPENAI_API_KEY` only to be run.

use toolcall::{Tool, ToolContext, ToolError, Toolset, tool};

/// Current temperature for a city, in degrees Celsius.
#[tool(args, read_only)]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("{{\"city\":\"{city}\",\"celsius\":{}}}", 12 + city.len() % 10))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools = Toolset::builder().add(GetWeather).build()?;
    let ctx = ToolContext::new();
    let answer = GetWeather.call_text(&ctx, r#"{"city":"Oslo"}"#).await.map_err(|error| error.to_string())?;
    println!("{answer}");
    #[cfg(feature = "agent")]
    agent(tools).await?;
    #[cfg(not(feature = "agent"))]
    drop(tools);
    Ok(())
}

#[cfg(feature = "agent")]
async fn agent(tools: Toolset) -> Result<(), Box<dyn std::error::Error>> {
    use toolcall::agent::{Agent, ModelSettings, OpenAiChat, RunLimits};

    let agent = Agent::new(OpenAiChat::new("gpt-4.1-mini"), tools)? // OPENAI_API_KEY
        .with_instructions("Answer weather questions with the get_weather tool.")
        .with_settings(ModelSettings::default().with_temperature(0.2).with_max_tokens(512))
        .with_limits(RunLimits::default().with_max_turns(6));
    let result = agent.run("Weather in Oslo?").await?;
    println!("{} ({:?}, {:?})", result.answer, result.stop, result.total_usage());
    Ok(())
}
