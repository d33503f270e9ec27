//! The shop: on one loopback port, the model's stand-in (OpenAI Chat
//! Completions, its bodies shaped as OpenAI documents them:
//! <https://platform.openai.com/docs/api-reference/chat/object>) and the
//! tools' backend, which places one order per idempotency key. Each
//! counts what reaches it, outside the workers; with
//! chaos on, it kills the worker that sent a request (by the process id
//! the worker sends), before answering or just after.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::post;
use serde_json::{Value, json};

/// The key the workers send; the stand-in checks it.
pub(crate) const KEY: &str = "sk-restate-test";

/// Kills the worker with this process id; `false` if none has it.
pub(crate) type Killer = Arc<dyn Fn(u32) -> bool + Send + Sync>;

/// Where the chaos struck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Struck {
    /// The worker was killed while it waited for this model response.
    ModelBefore,
    /// Killed just after the model response was sent.
    ModelAfter,
    /// Killed while it waited for this tool call's backend.
    ToolBefore,
    /// Killed just after the backend answered.
    ToolAfter,
}

/// What the shop saw.
#[derive(Default)]
pub(crate) struct Seen {
    /// Each model request, in order: its run and its step (the assistant
    /// messages before it).
    pub(crate) requests: Vec<(String, usize)>,
    /// How many times each call id reached the backend, by tool.
    pub(crate) calls: HashMap<(String, String), usize>,
    /// How many orders were placed under each idempotency key.
    pub(crate) applied: HashMap<String, usize>,
    /// The answer given under each idempotency key, to give again.
    answers: HashMap<String, String>,
    /// The call ids the backend was cut on (the worker killed before it answered).
    pub(crate) cut_calls: Vec<String>,
    /// The kills, by where they struck.
    pub(crate) struck: HashMap<Struck, usize>,
    /// A request that broke the rules (a wrong key, an unknown prompt).
    pub(crate) wrong: Vec<String>,
    /// The calls at the backend now, by run.
    in_flight: HashMap<String, usize>,
    /// The runs two of whose calls were at the backend at once.
    pub(crate) overlapped: std::collections::HashSet<String>,
}

struct Chaos {
    killer: Killer,
    /// Kills per thousand requests, before answering and again after.
    per_mille: u64,
    state: u64,
}

#[derive(Clone, Default)]
struct Shop {
    seen: Arc<Mutex<Seen>>,
    chaos: Arc<Mutex<Option<Chaos>>>,
    /// Held for writing, the model's stand-in answers nothing until it is
    /// let go: a run that has started and waits on no decision.
    gate: Arc<tokio::sync::RwLock<()>>,
}

/// The shop, served; dropped with the test's runtime.
pub(crate) struct Running {
    pub(crate) url: String,
    shop: Shop,
}

impl Running {
    pub(crate) async fn start() -> Self {
        let shop = Shop::default();
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(completion))
            .route("/{tool}", post(backend))
            .with_state(shop.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { url, shop }
    }

    /// Kill the worker of a request with this chance in a thousand before
    /// answering it, and the same after; the draws from `seed`.
    pub(crate) fn chaos(&self, killer: Killer, per_mille: u64, seed: u64) {
        *self.shop.chaos.lock().unwrap() = Some(Chaos { killer, per_mille, state: seed.max(1) });
    }

    /// No more kills.
    pub(crate) fn calm(&self) {
        *self.shop.chaos.lock().unwrap() = None;
    }

    /// Hold every model answer until the guard is dropped.
    pub(crate) async fn hold(&self) -> tokio::sync::OwnedRwLockWriteGuard<()> {
        Arc::clone(&self.shop.gate).write_owned().await
    }

    pub(crate) fn seen<T>(&self, read: impl FnOnce(&Seen) -> T) -> T {
        read(&self.shop.seen.lock().unwrap())
    }
}

impl Shop {
    /// Whether to kill the request's worker before answering (`Some(true)`),
    /// after (`Some(false)`), or not.
    fn draw(&self) -> Option<bool> {
        let mut chaos = self.chaos.lock().unwrap();
        let chaos = chaos.as_mut()?;
        // xorshift64: the same kills for the same seed and order.
        chaos.state ^= chaos.state << 13;
        chaos.state ^= chaos.state >> 7;
        chaos.state ^= chaos.state << 17;
        let draw = chaos.state % 1000;
        (draw < 2 * chaos.per_mille).then_some(draw < chaos.per_mille)
    }

    fn kill(&self, headers: &HeaderMap, struck: Struck) -> bool {
        let pid = headers.get("x-worker-pid").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
        let killer = self.chaos.lock().unwrap().as_ref().map(|chaos| Arc::clone(&chaos.killer));
        let killed = matches!((pid, killer), (Some(pid), Some(killer)) if killer(pid));
        if killed {
            *self.seen.lock().unwrap().struck.entry(struck).or_default() += 1;
        }
        killed
    }

    /// Kill the worker after the answer is on its way.
    fn kill_after(&self, headers: HeaderMap, struck: Struck) {
        let shop = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            shop.kill(&headers, struck);
        });
    }
}

/// The run a prompt is for, and what it asks: `order N` or `refund N`.
fn read_prompt(prompt: &str) -> Option<(&'static str, String)> {
    let mut words = prompt.split_whitespace();
    let kind = match words.next()? {
        "Order" => "order",
        "Refund" => "refund",
        "Return" => "return",
        _ => return None,
    };
    Some((kind, words.last()?.trim_end_matches('.').to_owned()))
}

/// The prompt of run `n`.
pub(crate) fn order_prompt(n: usize) -> String {
    format!("Order lamps for customer {n}.")
}

/// The prompt of refund run `n`.
pub(crate) fn refund_prompt(n: usize) -> String {
    format!("Refund the broken lamp of customer {n}.")
}

/// The prompt of return run `n`: one turn of two refunds, each held for
/// a person (`call_{n}_refund_a` of 10.0, `call_{n}_refund_b` of 20.0).
pub(crate) fn return_prompt(n: usize) -> String {
    format!("Return both broken lamps of customer {n}.")
}

fn call(id: String, name: &str, arguments: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}})
}

/// The script: what the model answers at each step of a run.
fn answer(kind: &str, run: &str, step: usize) -> Value {
    let n: usize = run.parse().unwrap_or(0);
    let calls = match (kind, step) {
        ("order", 0) => vec![
            call(format!("call_{run}_stock"), "check_stock", json!({"item": "lamp"})),
            call(format!("call_{run}_order_1"), "place_order", json!({"item": "lamp", "quantity": 2})),
        ],
        ("order", 1) => vec![
            call(
                format!("call_{run}_order_2"),
                "place_order",
                json!({"item": "bulb", "quantity": n % 3 + 1}),
            ),
            call(
                format!("call_{run}_notify"),
                "notify",
                json!({"customer": run, "message": "Your lamps are on their way."}),
            ),
        ],
        ("refund", 0) => vec![
            call(format!("call_{run}_stock"), "check_stock", json!({"item": "lamp"})),
            call(
                format!("call_{run}_refund"),
                "issue_refund",
                json!({"order": format!("o-{run}"), "amount": 12.5}),
            ),
        ],
        ("return", 0) => vec![
            call(
                format!("call_{run}_refund_a"),
                "issue_refund",
                json!({"order": format!("o-{run}-a"), "amount": 10.0}),
            ),
            call(
                format!("call_{run}_refund_b"),
                "issue_refund",
                json!({"order": format!("o-{run}-b"), "amount": 20.0}),
            ),
        ],
        _ => vec![],
    };
    let (message, finish) = if calls.is_empty() {
        (
            json!({"role": "assistant", "content": format!("Done for customer {run}."), "refusal": null}),
            "stop",
        )
    } else {
        (json!({"role": "assistant", "content": null, "tool_calls": calls, "refusal": null}), "tool_calls")
    };
    json!({
        "id": format!("chatcmpl-{run}-{step}"), "object": "chat.completion", "created": 1741569952,
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
        "usage": {"prompt_tokens": 50 + step, "completion_tokens": 10, "total_tokens": 60 + step},
    })
}

async fn completion(State(shop): State<Shop>, headers: HeaderMap, Json(body): Json<Value>) -> Json<Value> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let prompt =
        messages.iter().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or("");
    let step = messages.iter().filter(|m| m["role"] == "assistant").count();
    let authorized =
        headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {KEY}"));
    let Some((kind, run)) = read_prompt(prompt).filter(|_| authorized) else {
        shop.seen.lock().unwrap().wrong.push(body.to_string());
        return Json(json!({"error": {"message": "not in the script", "type": "invalid_request_error"}}));
    };
    shop.seen.lock().unwrap().requests.push((run.clone(), step));
    match shop.draw() {
        Some(true) if shop.kill(&headers, Struck::ModelBefore) => {
            // The worker is dead: no one reads an answer.
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Some(false) => shop.kill_after(headers, Struck::ModelAfter),
        _ => {}
    }
    drop(shop.gate.read().await);
    Json(answer(kind, &run, step))
}

async fn backend(
    State(shop): State<Shop>,
    Path(tool): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> String {
    let id = body["call_id"].as_str().unwrap_or("").to_owned();
    let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let arguments = &body["arguments"];
    let answer = match tool.as_str() {
        "check_stock" => format!("7 of {} in stock", arguments["item"]),
        "place_order" => format!("order {id} placed: {} x {}", arguments["quantity"], arguments["item"]),
        "notify" => format!("sent to customer {}", arguments["customer"]),
        "issue_refund" => format!("refunded {} on order {}", arguments["amount"], arguments["order"]),
        other => format!("no tool {other}"),
    };
    // Each call stays a moment, for calls of one turn run at once to meet.
    let run = id.split('_').nth(1).unwrap_or("").to_owned();
    {
        let mut seen = shop.seen.lock().unwrap();
        let now = seen.in_flight.entry(run.clone()).or_default();
        *now += 1;
        if *now > 1 {
            seen.overlapped.insert(run.clone());
        }
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let answer = {
        let mut seen = shop.seen.lock().unwrap();
        *seen.in_flight.entry(run).or_default() -= 1;
        *seen.calls.entry((tool.clone(), id.clone())).or_default() += 1;
        // An order is placed once per key; a repeat gets the first answer.
        match key {
            Some(key) if tool == "place_order" => match seen.answers.get(&key) {
                Some(first) => first.clone(),
                None => {
                    *seen.applied.entry(key.clone()).or_default() += 1;
                    seen.answers.insert(key, answer.clone());
                    answer
                }
            },
            _ => answer,
        }
    };
    match shop.draw() {
        Some(true) if shop.kill(&headers, Struck::ToolBefore) => {
            shop.seen.lock().unwrap().cut_calls.push(id);
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Some(false) => shop.kill_after(headers, Struck::ToolAfter),
        _ => {}
    }
    answer
}
