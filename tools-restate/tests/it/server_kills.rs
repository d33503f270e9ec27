//! The Restate server killed (SIGKILL) and started again on its base dir
//! 40 times in a row while 50 runs are in flight on two workers (which
//! live on), the model held between kills so that the runs last: every
//! run ends with the in-process run's result, each order is placed once,
//! and a model request is asked again only if the server died while it was
//! in flight (asked of that server, its answer not journaled): at most one
//! a run in flight at each kill. Prints how many were asked again.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::shop::{self, Running};
use crate::support::{Restate, Workers, local_run, unknown_notifies};

const RUNS: usize = 50;
const KILLS: usize = 40;

/// The runs the server says have ended (`None` if it did not answer in time).
async fn ended(restate: &Restate) -> Option<HashSet<String>> {
    let query = json!({"query": "SELECT target_service_key, status FROM sys_invocation \
        WHERE target_service_name = 'AgentRun' AND target_handler_name = 'run'"});
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        let response = client
            .post(format!("{}/query", restate.admin()))
            .header("accept", "application/json")
            .json(&query)
            .send()
            .await;
        if let Ok(response) = response
            && response.status().is_success()
            && let Ok(rows) = response.json::<Value>().await
        {
            let rows = rows["rows"].as_array().cloned().unwrap_or_default();
            return Some(
                rows.iter()
                    .filter(|row| row["status"] == "completed")
                    .filter_map(|row| row["target_service_key"].as_str().map(str::to_owned))
                    .collect(),
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn a_model_request_is_asked_again_only_if_the_server_died_while_it_was_in_flight() {
    let started = Instant::now();
    let (reference, shop) = (Running::start().await, Running::start().await);
    let expected = futures::future::join_all((0..RUNS).map(|n| {
        let url = &reference.url;
        async move { local_run(url, &shop::order_prompt(n)).await }
    }))
    .await;
    let mut restate = Restate::start().await;
    let workers = Workers::start(2, &shop.url).await;
    restate.register(workers.port).await;

    // The model answers nothing while the gate is held: the runs start and
    // wait on their first step.
    let mut gate = Some(shop.hold().await);
    for n in 0..RUNS {
        restate.send(&format!("run-{n}"), &shop::order_prompt(n)).await;
    }
    let mut state: u64 = 0x5eed;
    let mut draw = move |below: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % below
    };
    // Each round: the server up, the model held 100-300 ms (the runs come
    // back to the request they were on), then let go, and the server killed
    // 0-30 ms later, as the model's answers reach the runs; the model held
    // again until the next round. At each kill: the runs not known to have
    // ended (not `completed` in the server's `sys_invocation`, asked just
    // before), and how many model requests the shop had seen when the next
    // server was up (its partitions lead, and so invoke, a second or so
    // later): the requests of the server killed include those its runs'
    // workers sent after it died.
    let mut kills: Vec<(Vec<String>, usize)> = Vec::new();
    let (mut done, mut unanswered) = (HashSet::new(), 0);
    let mut restarts = Duration::ZERO;
    // For each kill, the requests that came after it, and when the last did.
    let mut late = Vec::new();
    while kills.len() < KILLS {
        tokio::time::sleep(Duration::from_millis(100 + draw(200))).await;
        match ended(&restate).await {
            Some(ended) => done.extend(ended),
            None => unanswered += 1,
        }
        let in_flight: Vec<String> =
            (0..RUNS).map(|n| format!("run-{n}")).filter(|id| !done.contains(id)).collect();
        if in_flight.is_empty() {
            break;
        }
        drop(gate.take());
        tokio::time::sleep(Duration::from_millis(draw(30))).await;
        let killed = Instant::now();
        restate.kill().await;
        gate = Some(shop.hold().await);
        let count = || shop.seen(|seen| seen.requests.len());
        let at_kill = count();
        let (mut last, mut came) = (at_kill, Duration::ZERO);
        // None for 100 ms, then the next server.
        let mut quiet = Instant::now();
        while quiet.elapsed() < Duration::from_millis(100) {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let now = count();
            if now != last {
                (last, quiet, came) = (now, Instant::now(), killed.elapsed());
            }
        }
        restate.restart().await;
        restarts += killed.elapsed();
        let up = count();
        if up != last {
            came = killed.elapsed();
        }
        late.push((up - at_kill, came.as_millis()));
        kills.push((in_flight, up));
    }
    drop(gate);
    let finished = futures::future::join_all((0..RUNS).map(|n| {
        let restate = &restate;
        async move { restate.output(&format!("run-{n}")).await }
    }))
    .await;

    let (calls, applied, requests, wrong) = shop
        .seen(|seen| (seen.calls.clone(), seen.applied.clone(), seen.requests.clone(), seen.wrong.clone()));
    assert!(wrong.is_empty(), "{wrong:?}");
    assert_eq!(kills.len(), KILLS, "every kill landed while runs were in flight");
    let ran = |tool: &str, id: &str| calls.get(&(tool.to_owned(), id.to_owned())).copied().unwrap_or(0);
    for (n, (got, mut want)) in finished.into_iter().zip(expected).enumerate() {
        // A notify call cut mid-flight answers that its result is unknown;
        // every other result is the in-process one.
        for id in unknown_notifies(&got, &mut want) {
            assert!(ran("notify", &id) <= 1, "{id}");
        }
        assert_eq!(got, want, "run {n}");
    }
    for n in 0..RUNS {
        for (turn, order) in [(1, "order_1"), (2, "order_2")] {
            let key = format!("run-{n}:{turn}:call_{n}_{order}");
            assert_eq!(applied.get(&key), Some(&1), "run {n}'s {order}: placed once under {key}");
        }
    }
    assert_eq!(applied.values().sum::<usize>(), 2 * RUNS, "no order placed under another key: {applied:?}");

    // Asked again: a request for a (run, step) the shop had seen before.
    // No run asks a step again once it has gone past it, nor twice of one
    // server: a kill lies between the two asks, and it cut the first (the
    // first kill after it), at most one request a run.
    let life = |index: usize| kills.iter().take_while(|(_, at)| *at <= index).count();
    let mut asked: HashMap<(&str, usize), usize> = HashMap::new();
    let mut reached: HashMap<&str, usize> = HashMap::new();
    let mut again_by_run: HashMap<String, usize> = HashMap::new();
    let mut cut: Vec<HashSet<&str>> = vec![HashSet::new(); kills.len()];
    let mut asking: Vec<HashSet<&str>> = vec![HashSet::new(); kills.len() + 1];
    let mut twice = Vec::new();
    for (index, (run, step)) in requests.iter().enumerate() {
        let last = reached.entry(run).or_insert(0);
        assert!(*step >= *last, "run {run} asked step {step} again after step {last}");
        *last = *step;
        asking[life(index)].insert(run);
        if let Some(before) = asked.insert((run, *step), index) {
            *again_by_run.entry(format!("run-{run}")).or_default() += 1;
            let kill = life(before);
            if kill >= life(index) {
                twice.push(format!("run {run} step {step}: requests {before} and {index}, of server {kill}"));
            } else {
                assert!(cut[kill].insert(run), "run {run}: two requests cut by kill {}", kill + 1);
            }
        }
    }
    let again: usize = again_by_run.values().sum();
    assert_eq!(requests.len() - again, 3 * RUNS, "each run's three steps were asked");
    let cut: Vec<usize> = cut.iter().map(HashSet::len).collect();
    let in_flight: Vec<usize> = kills.iter().map(|(runs, _)| runs.len()).collect();
    // The runs in flight at a kill that asked the model of that server
    // (since it started, or after it died): those that could have had a
    // request in flight when it died.
    let may: Vec<usize> = kills
        .iter()
        .zip(&asking)
        .map(|((runs, _), asking)| runs.iter().filter(|run| asking.contains(&run["run-".len()..])).count())
        .collect();
    let (sent_late, latest) =
        (late.iter().map(|(n, _)| n).sum::<usize>(), late.iter().map(|(_, ms)| *ms).max().unwrap_or(0));
    eprintln!(
        "server kills: {RUNS} runs, {} steps, {} kills, {} model requests, {again} asked again ({:.2} a kill, at \
         most {} for one kill), {sent_late} of the requests sent after a kill (the last {latest} ms after it); \
         by kill: runs in flight {in_flight:?} (sum {}), of them asked the model of that server {may:?} (sum {}), \
         requests cut and asked again {cut:?}, sent after the kill {:?}; the server's runs unknown at \
         {unanswered} kills; {:.1} s in all, {:.1} s of it from the kills to the next server up",
        3 * RUNS,
        kills.len(),
        requests.len(),
        again as f64 / kills.len() as f64,
        cut.iter().max().unwrap_or(&0),
        in_flight.iter().sum::<usize>(),
        may.iter().sum::<usize>(),
        late.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        started.elapsed().as_secs_f64(),
        restarts.as_secs_f64(),
    );
    // The bound: a kill cuts at most one model request a run in flight (a
    // run asks one at a time, and goes on only once the server has
    // journaled the answer), and only a cut request is asked again: per
    // run, no more than the kills it was in flight at; per kill, no more
    // than the runs that asked the model of that server.
    let bounds: Vec<usize> = kills.iter().map(|(_, at)| *at).collect();
    assert!(twice.is_empty(), "asked twice of one server: {twice:?}; servers' last requests {bounds:?}");
    for (run, again) in &again_by_run {
        let at = kills.iter().filter(|(runs, _)| runs.contains(run)).count();
        assert!(*again <= at, "{run} asked {again} requests again, in flight at {at} kills");
    }
    for (k, (cut, may)) in cut.iter().zip(&may).enumerate() {
        assert!(cut <= may, "kill {}: {cut} requests cut, {may} runs could have had one in flight", k + 1);
    }
    assert!(again <= in_flight.iter().sum(), "asked again {again}, in flight at the kills {in_flight:?}");
    workers.stop();
}
