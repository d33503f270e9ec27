//! A chat page for an agent whose weather tool needs a person's approval:
//! the page (React and the AI SDK's `useChat`, in this folder) talks to
//! [`ChatServer`] over the UI message stream protocol; the run pauses on
//! the call, the page asks, and the answer resumes the run.
//!
//! ```sh
//! cargo run --example chat_ui --features ui            # on a free port
//! PORT=3000 cargo run --example chat_ui --features ui  # on 3000
//! CHAT_DB=/tmp/chats.db cargo run --example chat_ui --features ui
//! ```
//!
//! The chats live in a SQLite file (`CHAT_DB`, by default
//! `target/chat_ui.db`): stop the example while a call waits for approval,
//! start it again, and the page's Approve still finishes the run. The
//! page keeps its chat's id in its address (`?chat=...`): reloaded, it
//! shows the chat again and reattaches to a run still going.
//!
//! With the feature `postgres` too, `CHAT_DATABASE_URL` puts the chats in
//! PostgreSQL instead, for several copies of the example behind one load
//! balancer, as tests/replicas/run.mjs runs three (without the feature,
//! the variable set is an error):
//!
//! ```sh
//! CHAT_DATABASE_URL=postgres://user@127.0.0.1:5432/chats \
//!     cargo run --example chat_ui --features ui,postgres
//! ```
//!
//! It prints `listening on http://127.0.0.1:PORT` once it listens, then
//! `get_weather ran: KEY` each time the tool runs, the call's idempotency
//! key (`{user}/{chat}:{message}:{call id}`, so a test counts the runs of a
//! call across copies), and
//! serves `GET /` (index.html), `GET /app.js` (dist/app.js, the bundled
//! page), the chat routes of [`ChatServer`] (`POST /api/chat`, `GET
//! /api/chat/{id}` and `/api/chat/{id}/stream`, `POST
//! /api/chat/{id}/stop`) and, for AG-UI clients, `POST /api/agui`
//! ([`AguiServer`]: the same agent, each thread a conversation in the same
//! store, a run paused on the call resumed by the client's `resume`). Offline, the model is a [`ScriptedServer`]
//! on loopback, reached through the real OpenAI client, streamed: asked
//! anything, it calls `get_weather {"city":"Paris"}` (the arguments in
//! several pieces; the call's id is its place in the conversation, the
//! number of messages the request holds, `call_weather_N`, so copies
//! sharing a store never give two calls of a chat one id); given the weather it says it, told the person declined
//! it says so, and either way it ends with its typed answer, a
//! [`Forecast`] (the `final_answer` tool: [`AnswerMode::Tool`]). With
//! `OPENAI_API_KEY` set, the model is OpenAI's (`OPENAI_MODEL`, default
//! gpt-4o-mini).
//!
//! What the page shows of a run beyond text: `get_weather` gives back the
//! weather now as JSON (the model reads it; the page gets it as the call's
//! `output` object), a PNG chart of the day's temperatures (a `file` part,
//! as a data URL) and the hourly forecast for the page alone, its artifact
//! (the `data-get_weather` part); the run's [`Forecast`] comes as the
//! `data-answer` part.
//!
//! In front of durable runs (with the feature `restate` too, and a Restate
//! server running):
//!
//! ```sh
//! RESTATE_INGRESS=http://127.0.0.1:8080 cargo run --example chat_ui --features ui,restate
//! ```
//!
//! With `RESTATE_INGRESS` set, the page's runs (and the AG-UI endpoint's)
//! are Restate workflow runs (`toolcall::restate::Remote`): each model
//! request and call journaled, the steps streamed to the page as they are
//! made, a call held for approval ending the run paused, the page's answer
//! resuming it as a new durable run. The worker that makes them is this
//! process: the same agent (the same model, offline the same scripted
//! server, and the same tool) served as the `AgentRun` workflow on
//! loopback (`WORKER_PORT`, by default a free port), and registered with
//! the server's admin API (`RESTATE_ADMIN`, by default
//! `http://127.0.0.1:9070`) before the page listens; it prints `worker on
//! http://127.0.0.1:PORT` first. A durable run's call reaches the page
//! whole, not as its arguments stream: the workers record whole steps.

use std::error::Error;
use std::future::IntoFuture;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use toolcall::agent::testing::{Reply, ScriptedServer};
use toolcall::agent::{Agent, AnswerMode, AnswerType, OpenAiChat, Runner};
#[cfg(feature = "restate")]
use toolcall::restate::Remote;
use toolcall::session::SqlStore;
use toolcall::toolset::Toolset;
use toolcall::ui::{AguiServer, ChatServer};
use toolcall::{Media, Output, ToolCall, ToolContext, ToolError, tool};

/// The answer the agent ends with: the page shows it as a card.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// Degrees Celsius now; none when the weather was not looked up.
    celsius: Option<f64>,
    /// The sky now (sunny, cloudy...); none when the weather was not looked up.
    sky: Option<String>,
    /// One sentence for the person.
    summary: String,
}

/// A made-up station's day, the example runs offline: (hour, °C, sky).
const HOURS: [(&str, u8, &str); 4] =
    [("09:00", 14, "cloudy"), ("12:00", 17, "sunny"), ("15:00", 18, "sunny"), ("18:00", 16, "sunny")];

/// The current weather in a city.
#[tool(args, needs_approval)]
async fn get_weather(ctx: &ToolContext, city: String) -> Result<Output, ToolError> {
    // One line a run, for a test that counts the runs of a call across
    // copies of the example sharing a store; a reader that left is no error.
    let key = ctx.idempotency_key().unwrap_or_else(|| ctx.call_id().to_owned());
    let _ = writeln!(std::io::stdout(), "get_weather ran: {key}");
    let (_, celsius, sky) = HOURS[2];
    let chart =
        day_chart().map_err(|error| ToolError::failed(format!("drawing the chart failed: {error}")))?;
    let hours: Vec<Value> = HOURS
        .iter()
        .map(|(hour, celsius, sky)| json!({"hour": hour, "celsius": celsius, "sky": sky}))
        .collect();
    // The model reads the JSON; the page gets it as JSON, the chart as an
    // image, and the hours, which the model never sees, as the artifact.
    Ok(Output::text(json!({"city": city, "celsius": celsius, "sky": sky}).to_string())
        .with_image(Media::bytes(chart, "image/png").with_name("today.png"))
        .with_artifact(json!({"city": city, "hours": hours})))
}

/// The day's temperatures as bars, 4 pixels a degree, on white: a PNG.
fn day_chart() -> Result<Vec<u8>, png::EncodingError> {
    const BAR: usize = 28;
    const GAP: usize = 10;
    const HEIGHT: usize = 90;
    let width = GAP + HOURS.len() * (BAR + GAP);
    let mut pixels = vec![255u8; width * HEIGHT * 3];
    for (index, (_, celsius, _)) in HOURS.iter().enumerate() {
        let bar = (usize::from(*celsius) * 4).min(HEIGHT - 2);
        let left = GAP + index * (BAR + GAP);
        for y in HEIGHT - 1 - bar..HEIGHT - 1 {
            for x in left..left + BAR {
                let at = (y * width + x) * 3;
                pixels[at..at + 3].copy_from_slice(&[230, 120, 40]);
            }
        }
    }
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

/// The offline model's next turn, from the request OpenAI's client sent:
/// a user's question calls the tool (call ids are the number of messages
/// the request holds, so each is new in the chat, whichever copy of the
/// example sharing the store made it); the tool's result is answered, in
/// text and with the typed answer (`final_answer`, which ends the run).
fn scripted_turn(request: &Value) -> Option<Reply> {
    let messages = request["messages"].as_array()?;
    let count = messages.len();
    let Some(result) = tool_result(messages) else {
        let id = format!("call_weather_{count}");
        return Some(Reply::calls([ToolCall::new(id.as_str(), "get_weather", r#"{"city":"Paris"}"#)]));
    };
    // The weather as JSON on the first line (a line naming the chart,
    // which follows in a user message, comes after it); a denied call's
    // result says so (`ToolError::Denied`).
    let weather: Option<Value> = serde_json::from_str(result.lines().next().unwrap_or("")).ok();
    let (text, forecast) = match weather {
        Some(now) if !result.contains("denied") => {
            let (city, celsius, sky) =
                (now["city"].as_str()?, now["celsius"].as_f64()?, now["sky"].as_str()?);
            let text = format!("Right now it is {celsius}°C and {sky} in {city}.");
            (text.clone(), json!({"city": city, "celsius": celsius, "sky": sky, "summary": text}))
        }
        _ => {
            let text = "You declined the weather lookup, so I did not check the weather in Paris.";
            let summary = "Not checked: you declined the weather lookup.";
            (text.to_owned(), json!({"city": "Paris", "celsius": null, "sky": null, "summary": summary}))
        }
    };
    let answer = ToolCall::new(format!("call_answer_{count}"), "final_answer", forecast.to_string());
    Some(Reply { text, calls: vec![answer], ..Reply::default() })
}

/// The content of the tool result the request ends with, if it does: the
/// last message is the tool message, or the user message after it that
/// carries the result's images (OpenAI's tool messages take only text).
fn tool_result(messages: &[Value]) -> Option<&str> {
    let [.., before, last] = messages else { return None };
    let tool = if last["role"] == "user" && last["content"].is_array() { before } else { last };
    (tool["role"] == "tool").then(|| tool["content"].as_str()).flatten()
}

/// A file of the page, or a 404 that says which is missing.
async fn page_file(relative: &str, content_type: &'static str) -> Response {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/chat_ui").join(relative);
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, content_type)], bytes).into_response(),
        Err(error) => (StatusCode::NOT_FOUND, format!("{}: {error}", path.display())).into_response(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let port: u16 = match std::env::var("PORT") {
        Ok(port) => port.parse().map_err(|_| format!("PORT is not a port number: {port}"))?,
        Err(_) => 0,
    };
    // Kept alive for as long as the example serves.
    let mut _offline = None;
    let model = if std::env::var_os("OPENAI_API_KEY").is_some() {
        OpenAiChat::new(std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into()))
    } else {
        let server = ScriptedServer::answering(scripted_turn).await?;
        let model = OpenAiChat::from_values("scripted", None, Some(server.base_url()));
        _offline = Some(server);
        model
    };
    let tools = Toolset::builder().add(GetWeather).build()?;
    let agent = Agent::new(model, tools)?
        .with_instructions(
            "You tell people the weather. Use get_weather; if a call is declined, say so. Say the weather \
             in one sentence, then give your answer with final_answer.",
        )
        .with_answer_type(AnswerType::of::<Forecast>().with_mode(AnswerMode::Tool))?;
    let store = match std::env::var("CHAT_DATABASE_URL") {
        Ok(url) => Arc::new(postgres_store(&url).await?),
        Err(_) => {
            let path = std::env::var_os("CHAT_DB").map_or_else(
                || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/chat_ui.db"),
                PathBuf::from,
            );
            Arc::new(SqlStore::sqlite(&path).await?)
        }
    };
    let mut agui = AguiServer::new(agent.clone()).with_store(store.clone());
    let mut chat = ChatServer::new(agent.clone()).with_store(store);
    // Durable runs: made by the worker this process serves, through Restate.
    let mut worker = None;
    if let Ok(ingress) = std::env::var("RESTATE_INGRESS") {
        let (runner, serving) = durable_runs(agent, &ingress).await?;
        agui = agui.with_runner(runner.clone());
        chat = chat.with_runner(runner);
        worker = Some(serving);
    }
    let app = Router::new()
        .route("/", get(|| page_file("index.html", "text/html; charset=utf-8")))
        .route("/app.js", get(|| page_file("dist/app.js", "text/javascript; charset=utf-8")))
        .merge(agui.router())
        .merge(chat.router());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}", listener.local_addr()?);
    // Not axum::serve: toolcall::ui::serve closes the connections clients leave
    // idle or half-sent, and makes room past its cap.
    let serving = toolcall::ui::serve(listener, app).into_future();
    match worker {
        // The worker ends at Ctrl-C (it takes the signal), and the page
        // with it.
        Some(worker) => tokio::select! {
            served = serving => served?,
            _ = worker => {}
        },
        None => serving.await?,
    }
    Ok(())
}

/// The chats' store in the PostgreSQL database at `url` (`CHAT_DATABASE_URL`).
#[cfg(feature = "postgres")]
async fn postgres_store(url: &str) -> Result<SqlStore, Box<dyn Error>> {
    Ok(SqlStore::postgres(url).await?)
}

/// Without the feature `postgres`, no PostgreSQL store.
#[cfg(not(feature = "postgres"))]
async fn postgres_store(url: &str) -> Result<SqlStore, Box<dyn Error>> {
    let _ = url;
    Err("CHAT_DATABASE_URL is set: a PostgreSQL store needs the feature postgres too \
         (cargo run --example chat_ui --features ui,postgres)"
        .into())
}

/// What the example's worker serving durable runs is: its task.
type Worker = tokio::task::JoinHandle<()>;

/// Durable runs through the Restate ingress at `ingress`, and the worker
/// that makes them: `agent` served as the `AgentRun` workflow on loopback
/// (`WORKER_PORT`, by default a free port), registered with the server's
/// admin API (`RESTATE_ADMIN`, by default `http://127.0.0.1:9070`).
#[cfg(feature = "restate")]
async fn durable_runs(agent: Agent, ingress: &str) -> Result<(Arc<dyn Runner>, Worker), Box<dyn Error>> {
    let port: u16 = match std::env::var("WORKER_PORT") {
        Ok(port) => port.parse().map_err(|_| format!("WORKER_PORT is not a port number: {port}"))?,
        Err(_) => 0,
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let uri = format!("http://{}", listener.local_addr()?);
    // Until Ctrl-C, at once: restate-sdk's own end at Ctrl-C waits up to
    // 10 s for the server's connections, and a run cut here is the
    // server's to retry.
    let serving = tokio::spawn(async move {
        tokio::select! {
            served = toolcall::restate::serve_on(agent, listener) => {
                if let Err(error) = served {
                    eprintln!("{error}");
                }
            }
            _ = tokio::signal::ctrl_c() => {}
        }
    });
    // Registered once it accepts connections (the listener is bound): the
    // server asks the worker what it serves. `force`: a worker started
    // again on the same port replaces the one registered there.
    let admin = std::env::var("RESTATE_ADMIN").unwrap_or_else(|_| "http://127.0.0.1:9070".into());
    let admin = admin.trim_end_matches('/');
    let response = reqwest::Client::new()
        .post(format!("{admin}/deployments"))
        .json(&json!({"uri": uri, "force": true}))
        .send()
        .await
        .map_err(|error| format!("the Restate admin API at {admin} did not answer: {error}"))?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        return Err(format!("registering the worker {uri} at {admin} failed: {status} {body}").into());
    }
    println!("worker on {uri}, registered at {admin}; the runs go through {ingress}");
    Ok((Arc::new(Remote::new(ingress)), serving))
}

/// Without the feature `restate`, no durable runs.
#[cfg(not(feature = "restate"))]
async fn durable_runs(agent: Agent, ingress: &str) -> Result<(Arc<dyn Runner>, Worker), Box<dyn Error>> {
    let _ = (agent, ingress);
    Err("RESTATE_INGRESS is set: durable runs need the feature restate too \
         (cargo run --example chat_ui --features ui,restate)"
        .into())
}
