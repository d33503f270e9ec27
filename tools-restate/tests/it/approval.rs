//! Approval across restarts: a run waits on a person's decision, the
//! server and the worker are killed and started again, and the decision,
//! sent to the ingress, resumes the run where it stopped.

use std::time::Duration;

use serde_json::{Value, json};
use toolcall_agent::{Content, Message, StopReason};

use crate::support::shop::{self, Running};
use crate::support::{PATIENCE, Restate, Workers};

/// The calls run `id` waits on, once it waits.
pub(crate) async fn waiting(restate: &Restate, id: &str) -> Value {
    tokio::time::timeout(PATIENCE, async {
        loop {
            let (status, body) = restate.call(id, "waiting", &Value::Null).await;
            let body: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{status} {body}"));
            if status == 200 && !body.is_null() {
                return body;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("run {id} never waited on a decision"))
}

/// The results the run's tools gave, by call id.
pub(crate) fn results(messages: &[Message]) -> Vec<(String, String)> {
    messages
        .iter()
        .flat_map(|message| match message {
            Message::Tool { results } => {
                results.iter().map(|r| (r.id.to_string(), r.content.clone())).collect()
            }
            _ => Vec::new(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn a_decision_sent_after_everything_restarted_resumes_the_run() {
    let shop = Running::start().await;
    let mut restate = Restate::start().await;
    let workers = Workers::start(1, &shop.url).await;
    restate.register(workers.port).await;
    restate.send("refund-7", &shop::refund_prompt(7)).await;
    restate.send("refund-8", &shop::refund_prompt(8)).await;
    let held = waiting(&restate, "refund-7").await;
    assert_eq!(held["pending"][0]["call"]["id"], "call_7_refund", "{held}");
    assert_eq!(held["pending"].as_array().map(Vec::len), Some(1), "{held}");
    waiting(&restate, "refund-8").await;

    // Everything dies between the pause and the decision: the worker
    // (started again at the deployment's address) and the server (started
    // again on its base dir, where the journal and the deployment are).
    restate.kill().await;
    let first = workers.pids();
    workers.kill_all();
    restate.restart().await;
    workers.ready().await;
    assert!(workers.pids().iter().all(|pid| !first.contains(pid)), "the workers are new processes");

    assert_eq!(waiting(&restate, "refund-7").await, held);
    let (status, body) =
        restate.call("refund-7", "decide", &json!({"call_9": {"decision": "approve"}})).await;
    assert!(status >= 400 && body.contains("call_7_refund"), "{status} {body}");
    let edit = json!({"call_7_refund": {"decision": "approve_with", "arguments": "{\"order\": \"o-7\", \"amount\": 10.0}"}});
    let (status, body) = restate.call("refund-7", "decide", &edit).await;
    assert_eq!(status, 200, "{body}");
    let deny = json!({"call_8_refund": {"decision": "deny", "reason": "not under warranty"}});
    assert_eq!(restate.call("refund-8", "decide", &deny).await.0, 200);

    let approved = restate.output("refund-7").await;
    let denied = restate.output("refund-8").await;
    assert_eq!((&approved.stop, approved.answer.as_str()), (&StopReason::Answered, "Done for customer 7."));
    assert_eq!(
        results(&approved.transcript.messages),
        [
            ("call_7_stock".to_owned(), "7 of \"lamp\" in stock".to_owned()),
            ("call_7_refund".to_owned(), "refunded 10.0 on order \"o-7\"".to_owned())
        ]
    );
    // The transcript records the call with the arguments it ran with.
    let Some(Message::Assistant { content }) = approved.transcript.messages.get(1) else { panic!() };
    assert!(
        content.iter().any(|piece| matches!(piece, Content::Call(call) if call.arguments.contains("10.0")))
    );
    let refused = &results(&denied.transcript.messages)[1];
    assert!(refused.1.contains("not under warranty"), "{refused:?}");
    shop.seen(|seen| {
        assert_eq!(seen.calls.get(&("issue_refund".into(), "call_7_refund".into())), Some(&1));
        assert_eq!(seen.calls.get(&("issue_refund".into(), "call_8_refund".into())), None);
        // Each model request once: the pause and the restart asked nothing again.
        let mut requests = seen.requests.clone();
        requests.sort();
        let expected: Vec<(String, usize)> =
            [("7", 0), ("7", 1), ("8", 0), ("8", 1)].map(|(r, s)| (r.into(), s)).into();
        assert_eq!(requests, expected);
    });
    workers.stop();
}
