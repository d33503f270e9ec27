//! One door for decisions: the `decide` handler. What a run waits on
//! shows no awakeable, nor does its state: there is no id to resolve
//! through Restate's own `/restate/awakeables/{id}/resolve`, where a bad
//! payload used to reach the run. A decision for a call the run does not
//! hold is refused (409) and leaves it waiting; a good one then ends it.

use std::time::Duration;

use serde_json::{Value, json};
use toolcall_agent::StopReason;

use crate::approval::{results, waiting};
use crate::support::shop::{self, Running};
use crate::support::{Restate, Workers};

/// Every string in `value`, at any depth.
fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(text) => vec![text.clone()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(fields) => fields.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// What looks like an id Restate resolves from outside (an awakeable's,
/// `sign_1...`, `prom_1...` in older servers) in `text`.
fn signal_ids(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|word| word.starts_with("sign_") || word.starts_with("prom_"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn decisions_come_in_through_decide_only() {
    let shop = Running::start().await;
    let restate = Restate::start().await;
    let workers = Workers::start(1, &shop.url).await;
    restate.register(workers.port).await;
    restate.send("refund-21", &shop::refund_prompt(21)).await;
    let held = waiting(&restate, "refund-21").await;

    let Value::Object(fields) = &held else { panic!("{held}") };
    let mut keys: Vec<_> = fields.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["pending", "wait"], "{held}");
    // No id anywhere: not in what `waiting` shows, nor in the run's state
    // as the server keeps it.
    let mut ids: Vec<String> = strings(&held).iter().flat_map(|text| signal_ids(text)).collect();
    let query = json!({"query": "SELECT key, value_utf8 FROM state WHERE service_name = 'AgentRun' AND service_key = 'refund-21'"});
    let state = tokio::time::timeout(crate::support::PATIENCE, async {
        loop {
            let response = reqwest::Client::new()
                .post(format!("{}/query", restate.admin()))
                .header("accept", "application/json")
                .json(&query)
                .send()
                .await
                .unwrap();
            if response.status().is_success() {
                return response.text().await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the admin API never answered");
    assert!(state.contains("waiting"), "{state}");
    ids.extend(signal_ids(&state));
    // The old door, for any id that would show: a payload that is not
    // decisions, through Restate's awakeable API.
    for id in &ids {
        let _ = reqwest::Client::new()
            .post(format!("{}/restate/awakeables/{id}/resolve", restate.ingress()))
            .json(&"hello")
            .send()
            .await;
    }
    assert_eq!(ids, Vec::<String>::new(), "an id to resolve from outside: {held} {state}");

    let (status, body) =
        restate.call("refund-21", "decide", &json!({"call_9": {"decision": "approve"}})).await;
    assert_eq!(status, 409, "a call the run does not hold: {body}");
    assert!(body.contains("call_21_refund"), "{body}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(waiting(&restate, "refund-21").await, held, "the run still waits, as it did");

    let approve = json!({"call_21_refund": {"decision": "approve"}});
    let (status, body) = restate.call("refund-21", "decide", &approve).await;
    assert_eq!(status, 200, "{body}");
    let finished = restate.output("refund-21").await;
    assert_eq!(finished.stop, StopReason::Answered);
    assert_eq!(results(&finished.transcript.messages)[1].1, "refunded 12.5 on order \"o-21\"");
    workers.stop();
}
