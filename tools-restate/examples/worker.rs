//! A Restate worker serving a shop agent's runs: the durable agent of
//! `toolcall-restate`, with four tools that act through a shop's HTTP
//! backend: one that only reads (`check_stock`, run again freely after a
//! crash), one that orders under the call's idempotency key (`place_order`,
//! run again after a crash, applied once by the backend), one that writes
//! to the customer with no key (`notify`, at most once) and one that
//! refunds only with a person's approval (`issue_refund`).
//!
//! ```sh
//! # a worker on port 9080 of loopback, for a Restate server to call (0: a
//! # port the system picks; `serve 10.0.0.7:9080` for another interface);
//! # it prints `listening on 127.0.0.1:PORT`, and an address it cannot
//! # listen on is an error naming it
//! OPENAI_API_KEY=sk-... BACKEND_URL=http://127.0.0.1:7000 \
//!     cargo run -p toolcall-restate --example worker -- serve 9080
//! # the same agent run in this process, printed as JSON (no Restate)
//! cargo run -p toolcall-restate --example worker -- local "Order 2 lamps"
//! ```
//!
//! The model is OpenAI Chat Completions' (`OPENAI_BASE_URL` for another
//! server speaking it, `MODEL` for another model). Each tool posts
//! `{"call_id", "arguments"}` to `BACKEND_URL/<tool>` with the worker's
//! process id in `x-worker-pid` (and `place_order` its idempotency key in
//! `idempotency-key`), and gives back the backend's answer.

use std::net::SocketAddr;

use anyhow::{Context as _, bail};
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::json;
use tokio::net::TcpListener;
use toolcall_agent::{Agent, OpenAiChat, RunResult};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolContext, ToolError};
use toolcall_macros::tool;

/// The worker's process id, sent with every request: what a test kills.
fn pid() -> String {
    std::process::id().to_string()
}

/// Post one call to the backend, under `key` if given, and give back its answer.
async fn backend(
    ctx: &ToolContext,
    tool: &str,
    key: Option<String>,
    arguments: serde_json::Value,
) -> Result<String, ToolError> {
    let base = std::env::var("BACKEND_URL").map_err(|_| ToolError::failed("BACKEND_URL is not set"))?;
    let mut request = reqwest::Client::new().post(format!("{base}/{tool}")).header("x-worker-pid", pid());
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    let response = request
        .json(&json!({"call_id": ctx.call_id(), "arguments": arguments}))
        .send()
        .await
        .map_err(|error| ToolError::failed(format!("the shop's backend did not answer: {error}")))?;
    let status = response.status();
    let text = response.text().await.map_err(|error| ToolError::failed(error.to_string()))?;
    if !status.is_success() {
        return Err(ToolError::failed(format!("the shop's backend said {status}: {text}")));
    }
    Ok(text)
}

/// How many of an item are in stock.
#[tool(args, read_only, idempotent, crate = "toolcall_core")]
async fn check_stock(ctx: &ToolContext, item: String) -> Result<String, ToolError> {
    backend(ctx, "check_stock", None, json!({"item": item})).await
}

/// Order a quantity of an item; each call places a new order.
///
/// Idempotent through its key: the backend places one order per key and
/// answers a repeat with the first answer, so a durable run may run a cut
/// call again. (In-process, with no key, each call places an order.)
#[tool(args, idempotent, crate = "toolcall_core")]
async fn place_order(ctx: &ToolContext, item: String, quantity: u32) -> Result<String, ToolError> {
    backend(ctx, "place_order", ctx.idempotency_key(), json!({"item": item, "quantity": quantity})).await
}

/// Send the customer a message; each call sends one.
#[tool(args, crate = "toolcall_core")]
async fn notify(ctx: &ToolContext, customer: String, message: String) -> Result<String, ToolError> {
    backend(ctx, "notify", None, json!({"customer": customer, "message": message})).await
}

/// Refund an amount on an order; a person approves each refund.
#[tool(args, needs_approval, crate = "toolcall_core")]
async fn issue_refund(ctx: &ToolContext, order: String, amount: f64) -> Result<String, ToolError> {
    backend(ctx, "issue_refund", None, json!({"order": order, "amount": amount})).await
}

fn agent() -> anyhow::Result<Agent> {
    let tools = Toolset::builder().add(CheckStock).add(PlaceOrder).add(Notify).add(IssueRefund).build()?;
    let model = std::env::var("MODEL").unwrap_or_else(|_| "gpt-4.1-mini".into());
    let model = OpenAiChat::new(model)
        .with_header(HeaderName::from_static("x-worker-pid"), HeaderValue::from_str(&pid())?);
    Ok(Agent::new(model, tools)?.with_instructions("You run a shop's orders with the tools."))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["serve", at] => {
            // A port of loopback, or a whole address (another interface).
            let address = match at.parse::<u16>() {
                Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)),
                Err(_) => at.parse().context("serve PORT, or serve IP:PORT")?,
            };
            // Bound here, so the port the system picks for 0 is known
            // before serving: printed for whoever started the worker.
            let listener = TcpListener::bind(address)
                .await
                .map_err(|error| anyhow::anyhow!("the worker cannot listen on {address}: {error}"))?;
            println!("listening on {}", listener.local_addr()?);
            toolcall_restate::serve_on(agent()?, listener).await?;
        }
        ["local", prompt] => {
            // The value a durable run's `run` handler gives back.
            let finished: RunResult = agent()?.run(prompt).await?;
            println!("{}", serde_json::to_string(&finished)?);
        }
        _ => bail!("usage: worker serve PORT|IP:PORT | worker local PROMPT"),
    }
    Ok(())
}
