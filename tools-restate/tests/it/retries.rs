//! A model that fails transiently: the durable run tries its request as
//! many times as its `ModelRetry` says, waiting between attempts, then
//! ends (not paused, not hanging) with an error naming the model, the
//! provider, the attempts and the cause. Two stand-ins, counting the
//! requests they get: one that takes the request and never answers (the
//! client gives up after its 300 ms request timeout), one that answers
//! 503. And a refused request (400) is not tried again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use toolcall_agent::{Agent, ApiKey, OpenAiChat, ResendPolicy};
use toolcall_core::toolset::Toolset;
use toolcall_restate::{AgentRun, ModelRetry};

use crate::support::Restate;

/// Requests each stand-in got, by its name.
#[derive(Clone, Default)]
struct Counts(Arc<[AtomicUsize; 3]>);

const STANDINS: [&str; 3] = ["silent", "unavailable", "refusing"];

async fn completion(State(counts): State<Counts>, Path(standin): Path<String>) -> (StatusCode, Json<Value>) {
    let Some(index) = STANDINS.iter().position(|name| *name == standin) else {
        return (StatusCode::NOT_FOUND, Json(json!({"error": {"message": "no such stand-in"}})));
    };
    counts.0[index].fetch_add(1, Ordering::SeqCst);
    match standin.as_str() {
        "silent" => std::future::pending().await,
        "unavailable" => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": {"message": "overloaded", "type": "server_error"}})),
        ),
        _ => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": "bad request", "type": "invalid_request_error"}})),
        ),
    }
}

/// The agent whose model is the stand-in `standin`: one HTTP request per
/// attempt (no resend by the client), given up after 300 ms.
fn agent(base: &str, standin: &str) -> Agent {
    let model = OpenAiChat::from_values(
        format!("gpt-{standin}"),
        Some(ApiKey::new("sk-test")),
        Some(&format!("{base}/{standin}/v1")),
    )
    .with_resend(ResendPolicy::none())
    .with_request_timeout(Some(Duration::from_millis(300)));
    Agent::new(model, Toolset::new()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn a_model_failing_transiently_is_tried_as_the_policy_says_then_ends_the_run() {
    let counts = Counts::default();
    let app = axum::Router::new()
        .route("/{standin}/v1/chat/completions", post(completion))
        .with_state(counts.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let retry = ModelRetry {
        max_attempts: 3,
        initial_delay: Duration::from_millis(200),
        factor: 2.0,
        max_delay: Duration::from_secs(1),
    };
    let runs: Vec<AgentRun> = STANDINS
        .iter()
        .map(|standin| {
            AgentRun::named(*standin, agent(&base, standin)).unwrap().with_model_retry(retry.clone())
        })
        .collect();
    let worker = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = worker.local_addr().unwrap().port();
    let serving = tokio::spawn(toolcall_restate::serve_runs_on(runs, worker));
    let restate = Restate::start().await;
    restate.register_serving(port, &STANDINS).await;

    let mut report = Vec::new();
    for standin in STANDINS {
        let started = Instant::now();
        restate.send_to(standin, "run-1", "Hello?").await;
        let (status, body) = restate.ended(standin, "run-1").await;
        let took = started.elapsed();
        let requests =
            counts.0[STANDINS.iter().position(|name| *name == standin).unwrap()].load(Ordering::SeqCst);
        assert!(status >= 400, "{standin}: the run failed: {status} {body}");
        assert!(body.contains(&format!("`gpt-{standin}` (openai)")), "{standin}: {body}");
        match standin {
            "refusing" => {
                assert_eq!(requests, 1, "{standin}: a refused request is not tried again");
                assert!(body.contains("HTTP 400") && body.contains("bad request"), "{body}");
            }
            _ => {
                assert_eq!(requests, 3, "{standin}: one request per attempt");
                assert!(body.contains("failed 3 times in a row"), "{body}");
                let cause = if standin == "silent" { "timed out after 300ms" } else { "HTTP 503" };
                assert!(body.contains(cause), "{standin}: {body}");
                // Three attempts of at most 300 ms, 200 ms then 400 ms apart.
                assert!(took >= Duration::from_millis(600), "{standin}: no wait between attempts: {took:?}");
            }
        }
        assert!(took < Duration::from_secs(30), "{standin}: {took:?}");
        report.push(format!("{standin}: {requests} requests, ended in {took:?} with {status} {body}"));
    }
    eprintln!("retries: {}", report.join("; "));
    serving.abort();
}
