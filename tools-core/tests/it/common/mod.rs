//! Tools for the integration tests, built from closures.
#![allow(dead_code)]

use std::sync::LazyLock;
use std::time::Duration;

use futures::future::BoxFuture;
use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolError, ToolSpec, TypedTool};

type Body = Box<dyn Fn(ToolContext, String) -> BoxFuture<'static, Result<String, ToolError>> + Send + Sync>;

/// A tool whose call is a closure over an owned context and the raw arguments.
pub(crate) struct FnTool {
    spec: ToolSpec,
    body: Body,
}

impl FnTool {
    pub(crate) fn new<F, Fut>(name: &str, body: F) -> Self
    where
        F: Fn(ToolContext, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, ToolError>> + Send + 'static,
    {
        let parameters = serde_json::json!({"type": "object", "properties": {}}).as_object().unwrap().clone();
        Self {
            spec: ToolSpec::from_parameters(
                name.to_owned(),
                "A test tool.",
                Parameters::from_schema(parameters),
            ),
            body: Box::new(move |ctx, input| Box::pin(body(ctx, input))),
        }
    }

    pub(crate) fn with_timeout(mut self, timeout: Duration) -> Self {
        self.spec = self.spec.with_timeout(timeout);
        self
    }
}

impl Tool for FnTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        let body = (self.body)(ctx.clone(), arguments.to_owned());
        Box::pin(async move { body.await.map(Output::text) })
    }
}

/// A tool that returns its arguments.
pub(crate) fn echo(name: &str) -> FnTool {
    FnTool::new(name, |_, input| async move { Ok(input) })
}

/// A tool that sleeps for the number of milliseconds it is given, then
/// returns that number.
pub(crate) fn sleeper(name: &str) -> FnTool {
    FnTool::new(name, |_, input| async move {
        let ms: u64 =
            input.trim().parse().map_err(|_| ToolError::invalid_arguments("expected milliseconds"))?;
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(ms.to_string())
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct WeatherRequest {
    /// City name.
    pub city: String,
    /// Days ahead.
    pub days: Option<u8>,
}

/// A typed tool, so arguments go through the real JSON adapter.
pub(crate) struct Weather;

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
