//! What journaling costs: one run of five steps (three model requests, a
//! call of a tool that is not idempotent and one of a tool that is) in
//! this process, as a durable run on a Restate server, and as a bare
//! Restate handler making the same requests and calls as journaled steps
//! without the agent loop. The model answers from this process at once,
//! so the times are the loop's and the journal's. Then runs per second
//! through 1, 2 and 4 worker processes (the `worker` example, against the
//! shop of the tests: its model over HTTP, its tools' backend).
//!
//! ```sh
//! npm ci --prefix tests/restate --ignore-scripts
//! cargo bench -p toolcall-restate --bench durable
//! ```
// The service macro makes a public trait of `Bare`'s handlers, undocumented.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use restate_sdk::prelude::*;
use toolcall_agent::{Agent, Message, Model, ModelError, ModelRequest, ModelResponse};
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolCall, ToolContext, ToolError};
use toolcall_macros::tool;
use toolcall_restate::AgentRun;

#[path = "../tests/it/support/mod.rs"]
#[allow(unreachable_pub, reason = "the tests' support, shared")]
mod support;

/// Place an order (not idempotent).
#[tool(args, crate = "toolcall_core")]
async fn order(_ctx: &ToolContext, item: String) -> Result<String, ToolError> {
    Ok(format!("ordered {item}"))
}

/// Look up the stock (idempotent).
#[tool(args, read_only, idempotent, crate = "toolcall_core")]
async fn stock(_ctx: &ToolContext, item: String) -> Result<String, ToolError> {
    Ok(format!("7 of {item}"))
}

/// Wait a fifth of a second: a tool that takes its time.
#[tool(args, read_only, idempotent, crate = "toolcall_core")]
async fn wait(_ctx: &ToolContext, n: u32) -> Result<String, ToolError> {
    tokio::time::sleep(FIFTH).await;
    Ok(format!("waited {n}"))
}

/// How long each call of `wait` takes.
const FIFTH: Duration = Duration::from_millis(200);

/// Five calls of `wait` in one turn, then the answer.
struct FiveCalls;

impl Model for FiveCalls {
    fn provider(&self) -> &str {
        "script"
    }
    fn model(&self) -> &str {
        "five-calls"
    }
    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let answered = request.messages.iter().any(|m| matches!(m, Message::Tool { .. }));
        let response = if answered {
            ModelResponse::new("Waited five times.", [])
        } else {
            let calls = (0..5).map(|n| ToolCall::new(format!("w{n}"), "wait", format!(r#"{{"n":{n}}}"#)));
            ModelResponse::new("", calls)
        };
        Box::pin(async move { Ok(response) })
    }
}

fn toolset() -> Toolset {
    Toolset::builder().add(Order).add(Stock).build().unwrap_or_default()
}

/// Answers by the step: an order, a look at the stock, then the answer.
struct Script;

impl Script {
    fn answer(step: usize) -> ModelResponse {
        match step {
            0 => ModelResponse::new("", [ToolCall::new("c1", "order", r#"{"item":"lamp"}"#)]),
            1 => ModelResponse::new("", [ToolCall::new("c2", "stock", r#"{"item":"lamp"}"#)]),
            _ => ModelResponse::new("Ordered one lamp; 7 left.", []),
        }
    }
}

impl Model for Script {
    fn provider(&self) -> &str {
        "script"
    }
    fn model(&self) -> &str {
        "script"
    }
    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let step = request.messages.iter().filter(|m| matches!(m, Message::Assistant { .. })).count();
        Box::pin(async move { Ok(Self::answer(step)) })
    }
}

/// The same steps as a durable run's, journaled by hand.
struct Bare {
    tools: Toolset,
}

#[restate_sdk::service(name = "Bare")]
impl Bare {
    #[handler]
    async fn steps(&self, ctx: Context<'_>) -> Result<String, HandlerError> {
        let context = ToolContext::new();
        for step in 0..3 {
            let response =
                ctx.run(|| async move { Ok(Json(Script::answer(step))) }).name("model request").await?;
            let Some(call) = response.into_inner().calls().next().cloned() else { break };
            // Each turn's calls start after a `begin` step, as a durable
            // run's do (so that they can run at once).
            ctx.run(|| async { Ok(()) }).name("begin").await?;
            let (tools, context, call) = (&self.tools, &context, &call);
            ctx.run(|| async move { Ok(Json(tools.run_turn(context, std::slice::from_ref(call)).await)) })
                .name("call")
                .await?;
        }
        Ok("Ordered one lamp; 7 left.".into())
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[tokio::main]
async fn main() {
    let restate = support::Restate::start().await;
    let agent = Agent::new(Script, toolset()).unwrap_or_else(|error| panic!("{error}"));
    // Bound before serving, on a port the system picks: no port race.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let five = Agent::new(FiveCalls, Toolset::builder().add(Wait).build().unwrap_or_default())
        .unwrap_or_else(|error| panic!("{error}"));
    let five_calls = AgentRun::named("FiveCalls", five.clone()).unwrap_or_else(|error| panic!("{error}"));
    let endpoint = Endpoint::builder()
        .bind(AgentRun::new(agent.clone()))
        .bind(five_calls)
        .bind(Bare { tools: toolset() })
        .build();
    tokio::spawn(HttpServer::new(endpoint).serve(listener));
    restate.register(port).await;
    let client = reqwest::Client::new();
    let ingress = restate.ingress();

    // Each round times the three, one after the other; the medians.
    let (warm_up, rounds) = (20, 200);
    let (mut local, mut journaled, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    let mut followed = Vec::new();
    // The same run as `Remote` starts it: from its transcript, its steps
    // written for a reader.
    let start = serde_json::json!({
        "transcript": {"messages": [{"role": "user", "text": "Order a lamp."}]},
        "follow": true,
    });
    for round in 0..warm_up + rounds {
        let started = Instant::now();
        let result = agent.run("Order a lamp.").await.unwrap_or_else(|error| panic!("{error}"));
        let local_time = started.elapsed();
        assert_eq!(result.answer, "Ordered one lamp; 7 left.");
        let started = Instant::now();
        let response = client
            .post(format!("{ingress}/AgentRun/bench-{round}/run"))
            .json(&"Order a lamp.")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status);
        let finished: toolcall_agent::RunResult = response.unwrap().json().await.unwrap();
        let journaled_time = started.elapsed();
        assert_eq!(finished.transcript, result.transcript);
        let started = Instant::now();
        let response = client
            .post(format!("{ingress}/AgentRun/followed-{round}/run"))
            .json(&start)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status);
        let finished: toolcall_agent::RunResult = response.unwrap().json().await.unwrap();
        let followed_time = started.elapsed();
        assert_eq!(finished.transcript.messages, result.transcript.messages);
        let started = Instant::now();
        let response = client.post(format!("{ingress}/Bare/steps")).send().await.unwrap();
        assert!(response.status().is_success());
        let bare_time = started.elapsed();
        if round >= warm_up {
            local.push(local_time);
            journaled.push(journaled_time);
            followed.push(followed_time);
            bare.push(bare_time);
        }
    }
    let (local, journaled, bare) = (median(local), median(journaled), median(bare));
    let followed = median(followed);
    let per_step = |time: Duration| time / 5;
    println!(
        "per step (median of {rounds} runs of 5 steps): in-process {:?}, journaled {:?}, bare Restate handler {:?}",
        per_step(local),
        per_step(journaled),
        per_step(bare)
    );
    println!(
        "journaled / in-process: {:.0}x; journaled / bare handler: {:.2}x",
        journaled.as_secs_f64() / local.as_secs_f64(),
        journaled.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "followed (its steps written for a reader) {:?} per step: {:.2}x the bare handler, {:.2}x journaled",
        per_step(followed),
        followed.as_secs_f64() / bare.as_secs_f64(),
        followed.as_secs_f64() / journaled.as_secs_f64()
    );

    // A turn of five calls of 200 ms, at once in-process and durable (the
    // durable run journals a `begin` step and each result around them).
    let (mut local, mut journaled) = (Vec::new(), Vec::new());
    for round in 0..12 {
        let started = Instant::now();
        let result = five.run("Wait.").await.unwrap_or_else(|error| panic!("{error}"));
        local.push(started.elapsed());
        assert_eq!(result.answer, "Waited five times.");
        let started = Instant::now();
        let response = client
            .post(format!("{ingress}/FiveCalls/five-{round}/run"))
            .json(&"Wait.")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status);
        let finished: toolcall_agent::RunResult = response.unwrap().json().await.unwrap();
        journaled.push(started.elapsed());
        assert_eq!(finished.answer, "Waited five times.");
    }
    let (local, journaled) = (median(local[2..].to_vec()), median(journaled[2..].to_vec()));
    println!(
        "a turn of five {FIFTH:?} calls (median of 10 runs): in-process {local:.2?}, durable {journaled:.2?}: {:.2}x",
        journaled.as_secs_f64() / local.as_secs_f64()
    );

    // Runs per second through the worker processes.
    let shop = support::shop::Running::start().await;
    for count in [1, 2, 4] {
        let workers = support::Workers::start(count, &shop.url).await;
        restate.register(workers.port).await;
        let (runs, at_once) = (200, 32);
        let started = Instant::now();
        let ids: Vec<String> = (0..runs).map(|n| format!("w{count}-{n}")).collect();
        for chunk in ids.chunks(at_once) {
            let ingress = &ingress;
            let client = &client;
            futures::future::join_all(chunk.iter().enumerate().map(|(n, id)| async move {
                let prompt = support::shop::order_prompt(n);
                let response = client.post(format!("{ingress}/AgentRun/{id}/run")).json(&prompt).send().await;
                assert!(response.is_ok_and(|r| r.status().is_success()), "run {id}");
            }))
            .await;
        }
        let elapsed = started.elapsed();
        let served: Vec<usize> =
            workers.served.iter().map(|n| n.load(std::sync::atomic::Ordering::Relaxed)).collect();
        println!(
            "{count} worker(s): {runs} runs ({at_once} at once) in {elapsed:.2?}: {:.0} runs/s; requests per worker {served:?}",
            runs as f64 / elapsed.as_secs_f64()
        );
        workers.stop();
    }
}
