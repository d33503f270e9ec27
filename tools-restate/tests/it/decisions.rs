//! Decisions accumulate: a run that holds two calls takes a decision per
//! call, from `decide` requests sent call by call, at once or one after
//! the other, and goes on once both are decided; none is lost. The same
//! decision sent again is taken as sent (200), another one for a call
//! decided already is refused (409), and of two different decisions sent
//! for one call at the same moment, exactly one is taken.

use serde_json::{Value, json};
use toolcall_agent::{RunResult, StopReason};

use crate::approval::{results, waiting};
use crate::support::shop::{self, Running};
use crate::support::{Restate, Workers};

/// Runs of each kind.
const RUNS: usize = 5;

fn approve(call: &str) -> Value {
    json!({ call: {"decision": "approve"} })
}

fn deny(call: &str, reason: &str) -> Value {
    json!({ call: {"decision": "deny", "reason": reason} })
}

/// The result each refund of return run `n` gave: refund a's, then b's.
fn refunds(finished: &RunResult, n: usize) -> (String, String) {
    let results = results(&finished.transcript.messages);
    let of = |call: &str| {
        results
            .iter()
            .find(|(id, _)| id == &format!("call_{n}_{call}"))
            .map(|(_, content)| content.clone())
            .unwrap_or_else(|| panic!("run {n} has no result for {call}: {results:?}"))
    };
    (of("refund_a"), of("refund_b"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn decisions_sent_call_by_call_accumulate_and_none_is_lost() {
    let shop = Running::start().await;
    let restate = Restate::start().await;
    let workers = Workers::start(1, &shop.url).await;
    restate.register(workers.port).await;
    // Runs 0..5 decided at once, 5..10 one call after the other, 10..15
    // raced: two different decisions for refund a at the same moment.
    for n in 0..3 * RUNS {
        restate.send(&format!("return-{n}"), &shop::return_prompt(n)).await;
    }
    let (mut sent, mut repeats, mut conflicts, mut races, mut read_back) = (0, 0, 0, 0, 0);

    let at_once = futures::future::join_all((0..RUNS).map(|n| {
        let restate = &restate;
        async move {
            let id = format!("return-{n}");
            let held = waiting(restate, &id).await;
            assert_eq!(held["pending"].as_array().map(Vec::len), Some(2), "{held}");
            let (a, b) =
                (approve(&format!("call_{n}_refund_a")), deny(&format!("call_{n}_refund_b"), "no receipt"));
            let (a, b) = tokio::join!(restate.call(&id, "decide", &a), restate.call(&id, "decide", &b));
            assert_eq!((a.0, b.0), (200, 200), "run {n}: {a:?} {b:?}");
        }
    }));
    at_once.await;
    sent += 2 * RUNS;

    for n in RUNS..2 * RUNS {
        let id = format!("return-{n}");
        let (a, b) = (format!("call_{n}_refund_a"), format!("call_{n}_refund_b"));
        waiting(&restate, &id).await;
        let (status, body) = restate.call(&id, "decide", &approve(&a)).await;
        assert_eq!(status, 200, "run {n}, the first decision: {body}");
        // Refund a is decided, b is not: the run still waits, on both, and
        // shows the decision taken.
        let held = waiting(&restate, &id).await;
        assert_eq!(held["pending"][0]["decision"], json!({"decision": "approve"}), "{held}");
        assert_eq!(held["pending"][1].get("decision"), None, "{held}");
        let (status, body) = restate.call(&id, "decide", &approve(&a)).await;
        assert_eq!(status, 200, "run {n}, the same decision again: {body}");
        repeats += 1;
        let (status, body) = restate.call(&id, "decide", &deny(&a, "changed my mind")).await;
        assert_eq!(status, 409, "run {n}, another decision for a call decided: {body}");
        assert!(body.contains(&a), "{body}");
        conflicts += 1;
        let (status, body) = restate.call(&id, "decide", &deny(&b, "no receipt")).await;
        assert_eq!(status, 200, "run {n}, the second call's decision: {body}");
        sent += 2;
    }

    let mut winners = Vec::new();
    for n in 2 * RUNS..3 * RUNS {
        let id = format!("return-{n}");
        let a = format!("call_{n}_refund_a");
        waiting(&restate, &id).await;
        let approving = approve(&a);
        let denying = deny(&a, "raced");
        let (approved, denied) =
            tokio::join!(restate.call(&id, "decide", &approving), restate.call(&id, "decide", &denying));
        let statuses = (approved.0, denied.0);
        assert!(
            statuses == (200, 409) || statuses == (409, 200),
            "run {n}: exactly one of two different decisions is taken: {approved:?} {denied:?}"
        );
        winners.push(statuses.0 == 200);
        races += 1;
        // Refused by the peek before resolving, or by the read-back after
        // (both found the call undecided, Restate kept the first).
        let refused = if statuses.0 == 409 { &approved.1 } else { &denied.1 };
        assert!(refused.contains("decided already") || refused.contains("at the same moment"), "{refused}");
        read_back += usize::from(refused.contains("at the same moment"));
        let (status, body) = restate.call(&id, "decide", &approve(&format!("call_{n}_refund_b"))).await;
        assert_eq!(status, 200, "run {n}: {body}");
        sent += 2;
    }

    let finished = futures::future::join_all((0..3 * RUNS).map(|n| {
        let restate = &restate;
        async move { restate.output(&format!("return-{n}")).await }
    }))
    .await;
    let mut lost = 0;
    for (n, finished) in finished.iter().enumerate() {
        assert_eq!(finished.stop, StopReason::Answered, "run {n}");
        let (a, b) = refunds(finished, n);
        let a_approved = match n {
            _ if n < 2 * RUNS => true,
            _ => winners[n - 2 * RUNS],
        };
        let b_approved = n >= 2 * RUNS;
        lost += usize::from(a.starts_with("refunded") != a_approved);
        lost += usize::from(b.starts_with("refunded") != b_approved);
        match a_approved {
            true => assert_eq!(a, format!("refunded 10.0 on order \"o-{n}-a\""), "run {n}"),
            false => assert!(a.contains("raced"), "run {n}: {a}"),
        }
        match b_approved {
            true => assert_eq!(b, format!("refunded 20.0 on order \"o-{n}-b\""), "run {n}"),
            false => assert!(b.contains("no receipt"), "run {n}: {b}"),
        }
    }
    shop.seen(|seen| {
        for n in 0..3 * RUNS {
            let ran = |call: &str| {
                seen.calls.get(&("issue_refund".into(), format!("call_{n}_{call}"))).copied().unwrap_or(0)
            };
            let a_approved = n < 2 * RUNS || winners[n - 2 * RUNS];
            assert_eq!(ran("refund_a"), usize::from(a_approved), "run {n}");
            assert_eq!(ran("refund_b"), usize::from(n >= 2 * RUNS), "run {n}");
        }
    });
    assert_eq!(lost, 0);
    eprintln!(
        "decisions: {} runs of two held calls ({RUNS} decided at once, {RUNS} call by call, {RUNS} raced), \
         {sent} decisions taken, {lost} lost; {repeats} repeats answered 200, {conflicts} conflicts 409, \
         {races} races with one winner each ({} approvals won; {read_back} losers refused by the \
         read-back, the others by the first peek)",
        3 * RUNS,
        winners.iter().filter(|won| **won).count()
    );
    workers.stop();
}
