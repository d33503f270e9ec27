//! An agent loop against a scripted model: no network, the model's calls are
//! written out turn by turn. It shows the turn contract: every call of a
//! turn runs at once, results come back in call order, and whatever a tool
//! does (bad arguments, an error, a panic, an unknown name) becomes that
//! call's result while the others carry on.
//!
//! Run it with `cargo run --example agent_turns --features agent`.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use toolcall::agent::{RunBudget, RunLimits};
use toolcall::toolset::{Toolset, TurnOptions};
use toolcall::{Outcome, ToolCall, ToolContext, ToolError, ToolResult, ToolSpec, TypedTool};

#[derive(Deserialize, JsonSchema)]
struct WeatherRequest {
    /// City name, e.g. "Paris".
    city: String,
    /// Days ahead, 1 to 16; today if absent.
    #[schemars(range(min = 1, max = 16))]
    days: Option<u8>,
}

/// Pretends to ask a weather service, which takes a moment.
struct GetWeather;

impl TypedTool for GetWeather {
    type Request = WeatherRequest;
    type Output = String;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new::<WeatherRequest>(
                "get_weather",
                "Temperature for a city, today or some days ahead.",
            )
            .with_timeout(Duration::from_secs(2))
        });
        &SPEC
    }

    async fn run(&self, _ctx: &ToolContext, req: WeatherRequest) -> Result<String, ToolError> {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let celsius = 12 + req.city.len() as i32 % 10;
        Ok(format!("{celsius}°C in {} in {} day(s)", req.city, req.days.unwrap_or(0)))
    }
}

#[derive(Deserialize, JsonSchema)]
struct ConvertRequest {
    /// Degrees Celsius.
    celsius: f64,
}

/// Celsius to Fahrenheit.
struct ToFahrenheit;

impl TypedTool for ToFahrenheit {
    type Request = ConvertRequest;
    type Output = String;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new::<ConvertRequest>("to_fahrenheit", "Convert Celsius to Fahrenheit.")
        });
        &SPEC
    }

    async fn run(&self, _ctx: &ToolContext, req: ConvertRequest) -> Result<String, ToolError> {
        Ok(format!("{:.1}°F", req.celsius * 9.0 / 5.0 + 32.0))
    }
}

#[derive(Deserialize, JsonSchema)]
struct AlertsRequest {
    /// Region code.
    region: String,
}

/// An upstream that is down: its error reaches the model as `{"error": ...}`.
struct WeatherAlerts;

impl TypedTool for WeatherAlerts {
    type Request = AlertsRequest;
    type Output = String;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new::<AlertsRequest>("weather_alerts", "Active weather alerts for a region.")
        });
        &SPEC
    }

    async fn run(&self, _ctx: &ToolContext, req: AlertsRequest) -> Result<String, ToolError> {
        Err(ToolError::failed(format!("alerts service answered 503 for \"{}\"", req.region)))
    }
}

#[derive(Deserialize, JsonSchema)]
struct AirRequest {
    /// City name.
    city: String,
}

/// A tool with a bug: it panics, and only its own call fails.
struct AirQuality;

impl TypedTool for AirQuality {
    type Request = AirRequest;
    type Output = String;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<AirRequest>("air_quality", "Air quality index for a city."));
        &SPEC
    }

    async fn run(&self, _ctx: &ToolContext, req: AirRequest) -> Result<String, ToolError> {
        let readings: Vec<u32> = Vec::new();
        Ok(format!("AQI {} in {}", readings[req.city.len()], req.city))
    }
}

/// The scripted model: given the last turn's results, the next turn's calls
/// (or `None` when it has its answer).
fn model(turn: usize, last: &[ToolResult]) -> Option<Vec<ToolCall>> {
    let call = ToolCall::new;
    match turn {
        // Three cities at once; one argument wrapped in a code fence as models do.
        0 => Some(vec![
            call("t0_1", "get_weather", r#"{"city": "Paris"}"#),
            call("t0_2", "get_weather", "```json\n{\"city\": \"Tokyo\", \"days\": 2}\n```"),
            call("t0_3", "Get_Weather", r#"{"city": "Lima", "days": 1}"#),
        ]),
        // A wrong type, an unknown tool, a failing and a panicking tool.
        1 => Some(vec![
            call("t1_1", "to_fahrenheit", r#"{"celsius": "seventeen"}"#),
            call("t1_2", "get_forecast", r#"{"city": "Oslo"}"#),
            call("t1_3", "weather_alerts", r#"{"region": "FR-75"}"#),
            call("t1_4", "air_quality", r#"{"city": "Oslo"}"#),
        ]),
        // The model reads the invalid-arguments result and fixes the type.
        2 if last.first().is_some_and(|result| result.outcome == Outcome::InvalidArguments) => {
            Some(vec![call("t2_1", "to_fahrenheit", r#"{"celsius": 17}"#)])
        }
        _ => None,
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The toolset catches a tool's panic, but the panic hook runs first: keep
    // it to one line on stderr instead of a backtrace.
    std::panic::set_hook(Box::new(|info| eprintln!("(a tool panicked: {info})")));
    let tools = Toolset::builder()
        .add(GetWeather)
        .add(ToFahrenheit)
        .add(WeatherAlerts)
        .add(AirQuality)
        .build()?
        .with_options(TurnOptions::new().with_default_timeout(Duration::from_secs(5)));
    let ctx = ToolContext::new();
    let mut budget = RunBudget::new(RunLimits::default().with_max_tool_calls(20));

    let mut results = Vec::new();
    let mut turn = 0;
    while let Some(calls) = model(turn, &results) {
        budget.admit(&calls)?;
        let started = Instant::now();
        results = tools.run_turn(&ctx, &calls).await;
        println!("turn {turn}: {} call(s) in {:?}", calls.len(), started.elapsed());
        for result in &results {
            println!(
                "  {:<6} {:<15} {:<17} {}",
                result.id,
                result.name,
                result.outcome.as_str(),
                result.content
            );
        }
        if let Err(limit) = budget.record(&results) {
            println!("stopping: {limit}");
            break;
        }
        turn += 1;
    }

    println!("\ncounters:");
    for (name, counts) in tools.all_counts() {
        println!(
            "  {name:<15} calls {} failures {} invalid arguments {}",
            counts.calls, counts.failures, counts.invalid_arguments
        );
    }
    println!("  unknown names   {}", tools.not_found_count());
    Ok(())
}
