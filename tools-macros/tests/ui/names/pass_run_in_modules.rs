//! The design's shape: one tool per module, each `async fn run`; the types
//! are named after the tools, so both register in one toolset.
use toolcall::Toolset;

mod weather {
    use toolcall::{ToolContext, ToolError, tool};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct Request {
        pub city: String,
    }

    /// Current temperature for a city.
    #[tool(name = "get_weather")]
    pub async fn run(_ctx: &ToolContext, req: Request) -> Result<String, ToolError> {
        Ok(format!("21 in {}", req.city))
    }
}

mod time {
    use toolcall::{ToolContext, ToolError, tool};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    pub struct Request {
        pub zone: String,
    }

    /// The time in a time zone.
    #[tool(name = "get-time")]
    pub async fn run(_ctx: &ToolContext, req: Request) -> Result<String, ToolError> {
        Ok(format!("noon in {}", req.zone))
    }
}

fn main() {
    let tools = Toolset::builder().add(weather::GetWeather).add(time::GetTime).build().unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["get_weather", "get-time"]);
}
