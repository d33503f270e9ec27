//! The `decide` handler's refusals through the ingress, each with a status
//! that says whose fault it is: 404 for a run that does not exist, 409 for
//! decisions that do not fit the run's state, 400 for a body that is not
//! decisions; the same decision sent twice is taken as sent (200).

use std::time::Duration;

use serde_json::{Value, json};
use toolcall_agent::StopReason;

use crate::approval::waiting;
use crate::support::shop::{self, Running};
use crate::support::{PATIENCE, Restate, Workers};

/// `decide` on run `id` once the run has started (its answer is 404
/// until then): the status and the body.
async fn decide_once_started(restate: &Restate, id: &str, decisions: &Value) -> (u16, String) {
    tokio::time::timeout(PATIENCE, async {
        loop {
            let (status, body) = restate.call(id, "decide", decisions).await;
            if status != 404 {
                return (status, body);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("run {id} never started"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn each_refused_decision_says_whose_fault_it_is() {
    let shop = Running::start().await;
    let restate = Restate::start().await;
    let workers = Workers::start(1, &shop.url).await;
    restate.register(workers.port).await;
    let approve = json!({"call_1_refund": {"decision": "approve"}});

    let (status, body) = restate.call("no-such-run", "decide", &approve).await;
    assert_eq!(status, 404, "an unknown run: {body}");
    assert!(body.contains("no run `no-such-run`"), "{body}");

    // Started, its model answering nothing yet: it waits on no decision.
    let held = shop.hold().await;
    restate.send("refund-1", &shop::refund_prompt(1)).await;
    let (status, body) = decide_once_started(&restate, "refund-1", &approve).await;
    assert_eq!(status, 409, "a run that does not wait yet: {body}");
    assert!(body.contains("waits on no decision now"), "{body}");
    drop(held);

    let held = waiting(&restate, "refund-1").await;
    assert_eq!(held["pending"][0]["call"]["id"], "call_1_refund", "{held}");
    let (status, body) =
        restate.call("refund-1", "decide", &json!({"call_1_refund": {"decision": "maybe"}})).await;
    assert_eq!(status, 400, "a decision that does not read: {body}");
    let (status, body) = restate.call("refund-1", "decide", &json!("approve")).await;
    assert_eq!(status, 400, "a body that is not decisions: {body}");
    let (status, body) =
        restate.call("refund-1", "decide", &json!({"call_9": {"decision": "approve"}})).await;
    assert_eq!(status, 409, "a call the run does not hold: {body}");
    assert!(body.contains("call_1_refund"), "{body}");

    let (status, body) = restate.call("refund-1", "decide", &json!({})).await;
    assert_eq!(status, 400, "decisions that name no call: {body}");

    // Held again, so that the run cannot end between the decisions: each
    // answer is the same whether or not the run has taken the first.
    let model = shop.hold().await;
    assert_eq!(restate.call("refund-1", "decide", &approve).await.0, 200);
    let (status, body) = restate.call("refund-1", "decide", &approve).await;
    assert_eq!(status, 200, "the same decision again, taken as sent: {body}");
    let deny = json!({"call_1_refund": {"decision": "deny", "reason": "changed my mind"}});
    let (status, body) = restate.call("refund-1", "decide", &deny).await;
    assert_eq!(status, 409, "another decision for a call decided: {body}");
    assert!(body.contains("decided already") || body.contains("waits on no decision now"), "{body}");
    drop(model);

    assert_eq!(restate.output("refund-1").await.stop, StopReason::Answered);
    let (status, body) = restate.call("refund-1", "decide", &approve).await;
    assert_eq!(status, 409, "a run that has ended: {body}");
    assert!(body.contains("has ended"), "{body}");
    shop.seen(|seen| {
        assert_eq!(seen.calls.get(&("issue_refund".into(), "call_1_refund".into())), Some(&1));
    });
    workers.stop();
}
