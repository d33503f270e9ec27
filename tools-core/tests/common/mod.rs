//! Tools for the integration tests, built from closures.
#![allow(dead_code)]

use std::sync::LazyLock;
use std::time::Duration;

use futures::future::BoxFuture;
use tools_core::{JsonObject, Tool, ToolContext, ToolError, ToolFuture, ToolSpec, TypedTool};

type Body = Box<dyn Fn(ToolContext, String) -> BoxFuture<'static, Result<String, ToolError>> + Send + Sync>;

/// A tool whose call is a closure over an owned context and the raw arguments.
pub struct FnTool {
    name: String,
    parameters: JsonObject,
    timeout: Option<Duration>,
    body: Body,
}

impl FnTool {
    pub fn new<F, Fut>(name: &str, body: F) -> Self
    where
        F: Fn(ToolContext, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, ToolError>> + Send + 'static,
    {
        Self {
            name: name.to_owned(),
            parameters: serde_json::json!({"type": "object", "properties": {}}).as_object().unwrap().clone(),
            timeout: None,
            body: Box::new(move |ctx, input| Box::pin(body(ctx, input))),
        }
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

impl Tool for FnTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "A test tool."
    }
    fn parameters(&self) -> &JsonObject {
        &self.parameters
    }
    fn call<'a>(&'a self, ctx: &'a ToolContext, input: &'a str) -> ToolFuture<'a> {
        (self.body)(ctx.clone(), input.to_owned())
    }
    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
}

/// A tool that returns its arguments.
pub fn echo(name: &str) -> FnTool {
    FnTool::new(name, |_, input| async move { Ok(input) })
}

/// A tool that sleeps for the number of milliseconds it is given, then
/// returns that number.
pub fn sleeper(name: &str) -> FnTool {
    FnTool::new(name, |_, input| async move {
        let ms: u64 =
            input.trim().parse().map_err(|_| ToolError::invalid_arguments("expected milliseconds"))?;
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(ms.to_string())
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct WeatherRequest {
    /// City name.
    pub city: String,
    /// Days ahead.
    pub days: Option<u8>,
}

/// A typed tool, so arguments go through the real JSON adapter.
pub struct Weather;

impl TypedTool for Weather {
    type Request = WeatherRequest;
    type Output = String;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new::<WeatherRequest>("get_weather", "Current temperature for a city.")
        });
        &SPEC
    }

    async fn run(&self, _ctx: &ToolContext, req: WeatherRequest) -> Result<String, ToolError> {
        Ok(format!("21°C in {} for {} days", req.city, req.days.unwrap_or(1)))
    }
}
