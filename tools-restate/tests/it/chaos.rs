//! The chaos test: 50 runs on two workers, each turn's two calls run at
//! once, the worker that sends a request killed (SIGKILL) at random
//! before or after its answer, and started again. Every run ends with the in-process run's transcript, but for a
//! call of the tool with no idempotency key (`notify`) cut mid-flight,
//! which the model reads as unknown; each such call ran at most once,
//! every other notify exactly once; each order, run again after a cut
//! under the same key, was placed exactly once; and no model request came
//! again once a later step had started.

use std::collections::HashMap;

use crate::support::shop::{self, Running};
use crate::support::{Restate, Workers, local_run, unknown_notifies};

const RUNS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn runs_killed_at_random_end_as_in_process_and_run_each_side_effect_once() {
    let (reference, shop) = (Running::start().await, Running::start().await);
    let expected = futures::future::join_all((0..RUNS).map(|n| {
        let url = &reference.url;
        async move { local_run(url, &shop::order_prompt(n)).await }
    }))
    .await;
    let restate = Restate::start().await;
    let workers = Workers::start(2, &shop.url).await;
    restate.register(workers.port).await;
    shop.chaos(workers.killer(), 40, 0x5eed);

    for n in 0..RUNS {
        restate.send(&format!("run-{n}"), &shop::order_prompt(n)).await;
    }
    let finished = futures::future::join_all((0..RUNS).map(|n| {
        let restate = &restate;
        async move { restate.output(&format!("run-{n}")).await }
    }))
    .await;
    shop.calm();

    let (struck, calls, applied, requests, wrong, cut, overlapped) = shop.seen(|seen| {
        (
            seen.struck.clone(),
            seen.calls.clone(),
            seen.applied.clone(),
            seen.requests.clone(),
            seen.wrong.clone(),
            seen.cut_calls.clone(),
            seen.overlapped.len(),
        )
    });
    assert!(wrong.is_empty(), "{wrong:?}");
    let killed: usize = struck.values().sum();
    assert!(killed >= 10, "too few kills to show anything: {struck:?}");
    let ran = |tool: &str, id: &str| calls.get(&(tool.to_owned(), id.to_owned())).copied().unwrap_or(0);
    let (mut unknown, mut unknown_ran, mut exact) = (Vec::new(), 0, 0);
    for (n, (got, mut want)) in finished.into_iter().zip(expected).enumerate() {
        // A notify call cut mid-flight answers that its result is unknown;
        // every other result is the in-process one.
        let cut = unknown_notifies(&got, &mut want);
        for id in &cut {
            let ran = ran("notify", id);
            assert!(ran <= 1, "{id} ran {ran} times");
            unknown_ran += ran;
        }
        assert_eq!(got, want, "run {n}");
        exact += usize::from(cut.is_empty());
        unknown.extend(cut);
    }
    // Every call cut at the backend was then answered as unknown, but an
    // order: its call ran again, under the same key.
    for id in cut.iter().filter(|id| id.contains("notify")) {
        assert!(unknown.contains(id), "{id} was cut at the backend, yet its result is known");
    }
    let orders_cut: Vec<_> = cut.iter().filter(|id| id.contains("order")).collect();
    for id in &orders_cut {
        assert!(ran("place_order", id) >= 2, "{id} was cut at the backend, yet not run again");
    }
    let mut invoked = 0;
    for n in 0..RUNS {
        assert!(ran("check_stock", &format!("call_{n}_stock")) >= 1, "run {n}");
        for (turn, order) in [(1, "order_1"), (2, "order_2")] {
            let (id, key) = (format!("call_{n}_{order}"), format!("run-{n}:{turn}:call_{n}_{order}"));
            assert_eq!(applied.get(&key), Some(&1), "run {n}'s {order}: placed once under {key}");
            assert!(ran("place_order", &id) >= 1, "run {n}");
            invoked += ran("place_order", &id);
        }
        let id = format!("call_{n}_notify");
        match (unknown.contains(&id), ran("notify", &id)) {
            (true, ran) => assert!(ran <= 1, "run {n}'s notify ran {ran} times"),
            (false, ran) => assert_eq!(ran, 1, "run {n}'s notify, its result known, ran {ran} times"),
        }
    }
    assert_eq!(applied.values().sum::<usize>(), 2 * RUNS, "no order placed under another key: {applied:?}");
    // A model request is asked again only if it was cut before its
    // response was journaled: never once the run has gone past it.
    let mut reached: HashMap<&str, usize> = HashMap::new();
    let mut repeated = 0;
    for (run, step) in &requests {
        let last = reached.entry(run).or_insert(0);
        assert!(*step >= *last, "run {run} asked step {step} again after step {last}");
        repeated += usize::from(*step == *last && *step > 0);
        *last = *step;
    }
    // A turn's calls run at once: in a run whose turn no kill struck, its
    // two calls are at the backend together. (A turn an earlier attempt
    // had begun runs its calls again one by one.)
    assert!(overlapped * 2 >= RUNS, "only {overlapped} of {RUNS} runs had two calls in flight at once");
    let served: Vec<usize> =
        workers.served.iter().map(|n| n.load(std::sync::atomic::Ordering::Relaxed)).collect();
    assert!(served.iter().all(|n| *n > 0), "both workers served runs: {served:?}");
    eprintln!(
        "chaos: {RUNS} runs ({exact} with the in-process transcript exactly), {killed} kills {struck:?}, \
         {} orders placed of {invoked} place_order calls run ({} cut at the backend and run again), {} notify calls unknown ({unknown_ran} of them had \
         run), {} model requests ({repeated} asked again), {overlapped} runs with calls at once, worker requests \
         {served:?}",
        2 * RUNS,
        orders_cut.len(),
        unknown.len(),
        requests.len()
    );
    workers.stop();
}
