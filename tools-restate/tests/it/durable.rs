//! One durable run, no crash: the transcript of the same run in-process,
//! each model request and each call made once, each order under its
//! call's idempotency key.

use toolcall_agent::StopReason;

use crate::support::shop::{self, Running};
use crate::support::{Restate, Workers, local_run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn a_durable_run_has_the_in_process_transcript_and_asks_each_step_once() {
    let (reference, shop) = (Running::start().await, Running::start().await);
    let expected = local_run(&reference.url, &shop::order_prompt(1)).await;
    let restate = Restate::start().await;
    let workers = Workers::start(1, &shop.url).await;
    restate.register(workers.port).await;

    restate.send("run-1", &shop::order_prompt(1)).await;
    let finished = restate.output("run-1").await;

    assert_eq!(finished, expected);
    assert_eq!(finished.stop, StopReason::Answered);
    assert_eq!(finished.answer, "Done for customer 1.");
    shop.seen(|seen| {
        assert!(seen.wrong.is_empty(), "{:?}", seen.wrong);
        let steps: Vec<usize> = seen.requests.iter().map(|(_, step)| *step).collect();
        assert_eq!(steps, [0, 1, 2]);
        let mut calls: Vec<_> =
            seen.calls.iter().map(|((tool, id), n)| (tool.as_str(), id.as_str(), *n)).collect();
        calls.sort();
        assert_eq!(
            calls,
            [
                ("check_stock", "call_1_stock", 1),
                ("notify", "call_1_notify", 1),
                ("place_order", "call_1_order_1", 1),
                ("place_order", "call_1_order_2", 1),
            ]
        );
        // `{run id}:{turn}:{call id}`, the turn counting the model's responses.
        let mut applied: Vec<_> = seen.applied.iter().map(|(key, n)| (key.as_str(), *n)).collect();
        applied.sort();
        assert_eq!(applied, [("run-1:1:call_1_order_1", 1), ("run-1:2:call_1_order_2", 1)]);
    });
    workers.stop();
}
