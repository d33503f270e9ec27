//! Serve the example tools over MCP: on stdio by default, or as streamable
//! HTTP. With `TAVILY_API_KEY` set, Tavily web search joins them.
//! `cancel_alert` needs a person's approval, which the server asks the
//! client for. `weather_chart` answers with a PNG it draws itself, which a
//! client receives as an MCP image.
//!
//! ```sh
//! cargo run --example mcp_server --features mcp                         # stdio
//! cargo run --example mcp_server --features mcp -- --http 127.0.0.1:8000 # http://127.0.0.1:8000/mcp
//! ```
//!
//! Flags: `--http ADDR` serves HTTP (port 0 picks one; the URL is printed on
//! stderr), `--token TOKEN` requires a bearer token, `--stateless` keeps no
//! sessions.

use std::sync::LazyLock;
use std::time::Duration;

use toolcall::mcp::{HttpOptions, McpServer};
use toolcall::{Json, Media, Output, ToolContext, ToolError, ToolSpec, Toolset, TypedTool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct WeatherRequest {
    /// City name, e.g. "Paris".
    city: String,
    /// Days ahead to forecast, 1 to 16 (default 1).
    #[schemars(range(min = 1, max = 16))]
    days: Option<u8>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    city: String,
    days: u8,
    celsius: Vec<f32>,
}

/// A forecast made up from the city's name: a stand-in for a weather API.
struct GetWeather;

impl TypedTool for GetWeather {
    type Request = WeatherRequest;
    type Output = Json<Forecast>;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new::<WeatherRequest>("get_weather", "Daily temperatures in °C for a city.")
                .with_title("Weather forecast")
                .with_read_only(true)
                .with_output::<Forecast>()
        });
        &SPEC
    }

    async fn run(&self, _ctx: &ToolContext, req: WeatherRequest) -> Result<Json<Forecast>, ToolError> {
        if req.city.trim().is_empty() {
            return Err(ToolError::retry("`city` is empty: ask again with a city name"));
        }
        let days = req.days.unwrap_or(1);
        let celsius = forecast(&req.city, days);
        Ok(Json(Forecast { city: req.city, days, celsius }))
    }
}

/// Made-up daily temperatures for a city: the same city, the same numbers.
fn forecast(city: &str, days: u8) -> Vec<f32> {
    let seed = city.bytes().map(u32::from).sum::<u32>() % 15;
    (0..days).map(|day| 10.0 + seed as f32 + f32::from(day % 4)).collect()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ChartRequest {
    /// City name, e.g. "Paris".
    city: String,
    /// Days to chart, 1 to 16 (default 7).
    #[schemars(range(min = 1, max = 16))]
    days: Option<u8>,
}

/// The forecast as a bar chart: a PNG drawn in memory, the numbers as text,
/// and the numbers again as the artifact, for the application (never sent
/// to the client).
struct WeatherChart;

impl TypedTool for WeatherChart {
    type Request = ChartRequest;
    type Output = Output;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new::<ChartRequest>(
                "weather_chart",
                "A bar chart (PNG) of the daily temperatures in °C for a city.",
            )
            .with_title("Weather chart")
            .with_read_only(true)
        });
        &SPEC
    }

    async fn run(&self, _ctx: &ToolContext, req: ChartRequest) -> Result<Output, ToolError> {
        if req.city.trim().is_empty() {
            return Err(ToolError::retry("`city` is empty: ask again with a city name"));
        }
        let days = req.days.unwrap_or(7);
        let celsius = forecast(&req.city, days);
        let png =
            bar_chart(&celsius).map_err(|e| ToolError::failed(format!("drawing the chart failed: {e}")))?;
        let numbers: Vec<String> = celsius.iter().map(|c| format!("{c:.0}")).collect();
        Ok(Output::text(format!("Daily temperatures in {}, °C: {}", req.city, numbers.join(", ")))
            .with_image(Media::bytes(png, "image/png").with_name("chart.png"))
            .with_artifact(serde_json::json!({ "city": req.city, "celsius": celsius })))
    }
}

/// One bar per value, 3 pixels a degree, on a white background: a PNG.
fn bar_chart(values: &[f32]) -> Result<Vec<u8>, png::EncodingError> {
    const BAR: usize = 16;
    const GAP: usize = 6;
    const HEIGHT: usize = 100;
    const PER_DEGREE: f32 = 3.0;
    let width = GAP + values.len() * (BAR + GAP);
    let mut pixels = vec![255u8; width * HEIGHT * 3];
    for (index, value) in values.iter().enumerate() {
        let bar = ((value.max(0.0) * PER_DEGREE) as usize).min(HEIGHT - 2);
        let left = GAP + index * (BAR + GAP);
        for y in HEIGHT - 1 - bar..HEIGHT - 1 {
            for x in left..left + BAR {
                let at = (y * width + x) * 3;
                pixels[at..at + 3].copy_from_slice(&[230, 120, 40]);
            }
        }
    }
    // The axis: the bottom row, grey.
    for x in 0..width {
        let at = ((HEIGHT - 1) * width + x) * 3;
        pixels[at..at + 3].copy_from_slice(&[90, 90, 90]);
    }
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width as u32, HEIGHT as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(png)
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CountRequest {
    /// How far to count, 1 to 100.
    #[schemars(range(min = 1, max = 100))]
    to: u32,
    /// Pause between steps, in milliseconds (at most 1000).
    #[schemars(range(max = 1000))]
    #[serde(default)]
    step_ms: u64,
}

/// Counts up, reporting each step as progress: shows progress and cancellation.
struct CountSlowly;

impl TypedTool for CountSlowly {
    type Request = CountRequest;
    type Output = String;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new::<CountRequest>("count_slowly", "Count from 1 to `to`, reporting progress.")
                .with_idempotent(true)
        });
        &SPEC
    }

    async fn run(&self, ctx: &ToolContext, req: CountRequest) -> Result<String, ToolError> {
        for step in 1..=req.to {
            if ctx.is_cancelled() {
                return Err(ToolError::failed("cancelled"));
            }
            tokio::time::sleep(Duration::from_millis(req.step_ms)).await;
            ctx.report_progress(f64::from(step), Some(f64::from(req.to)), Some(&format!("counted {step}")));
        }
        Ok(format!("counted to {}", req.to))
    }
}

/// Cancel the severe-weather alert for a city. Destructive, so it runs only
/// once a person approves: the server asks the client (MCP elicitation), and
/// a client that cannot ask gets an error saying approval is required.
#[toolcall::tool(args, destructive, needs_approval)]
async fn cancel_alert(_ctx: &ToolContext, city: String) -> String {
    format!("cancelled the alert for {city}")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut tools =
        Toolset::builder().add(GetWeather).add(CountSlowly).add(CancelAlert).add(WeatherChart).build()?;
    match toolcall_tavily::Tavily::new() {
        Ok(tavily) => {
            tools.add(tavily)?;
        }
        // stdout may be the protocol channel: say it on stderr.
        Err(reason) => eprintln!("Tavily web search is off: {reason}"),
    }
    let server = McpServer::new(tools).with_server_info("tools-example", env!("CARGO_PKG_VERSION"));

    let mut args = std::env::args().skip(1);
    let (mut http, mut options) = (None, HttpOptions::new());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => http = Some(args.next().ok_or("--http needs an address, e.g. 127.0.0.1:8000")?),
            "--token" => options = options.with_bearer_token(args.next().ok_or("--token needs a value")?),
            "--stateless" => options = options.with_stateless(true),
            other => return Err(format!("unknown argument `{other}`; try --http ADDR").into()),
        }
    }
    match http {
        // stdout is the protocol channel on stdio: say nothing on it.
        None => server.serve_stdio().await?,
        Some(addr) => {
            let bound = options.bind(server, addr.parse()?).await?;
            eprintln!("listening on {}", bound.url());
            bound.serve().await?;
        }
    }
    Ok(())
}
