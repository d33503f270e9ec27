//! The same app as ../toolcall on rig (rig-core 0.44 and, with the feature
//! `agent`, rig-agent): one tool with rig's `#[rig_tool]` and one agent run
//! on OpenAI Chat Completions. It compiles; it needs `OPENAI_API_KEY` only
//! to be run.

use rig_core::rig_tool;
use rig_core::tool::ToolExecutionError;

/// Current temperature for a city, in degrees Celsius.
#[rig_tool(params(city = "City name."))]
async fn get_weather(city: String) -> Result<String, ToolExecutionError> {
    Ok(format!("{{\"city\":\"{city}\",\"celsius\":{}}}", 12 + city.len() % 10))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("{}", get_weather("Oslo".to_owned()).await?);
    #[cfg(feature = "agent")]
    agent().await?;
    Ok(())
}

#[cfg(feature = "agent")]
async fn agent() -> Result<(), Box<dyn std::error::Error>> {
    use rig_agent::AgentBuilder;
    use rig_core::providers::openai::OpenAI;

    let model = OpenAI::from_env()?.chat("gpt-4.1-mini"); // OPENAI_API_KEY
    let agent = AgentBuilder::new(model)
        .preamble("Answer weather questions with the get_weather tool.")
        .temperature(0.2)
        .max_tokens(512)
        .tool(GetWeather)
        .build();
    let response = agent.prompt("Weather in Oslo?").max_turns(6).await?;
    println!("{} ({:?})", response.output(), response.usage);
    Ok(())
}
