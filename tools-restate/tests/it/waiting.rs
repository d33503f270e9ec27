//! What the runs wait on, listed with no worker up: read from the
//! workflows' state through the admin API, while the `waiting` handler,
//! code a worker runs, answers nothing until one is.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use toolcall_agent::StopReason;
use toolcall_restate::{Admin, Waiting};

use crate::support::shop::{self, Running};
use crate::support::{PATIENCE, Restate, Workers};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn what_the_runs_wait_on_is_listed_with_no_worker_up() {
    let shop = Running::start().await;
    let restate = Restate::start().await;
    let admin = Admin::new(restate.admin());
    let workers = Workers::start(1, &shop.url).await;
    restate.register(workers.port).await;
    // A server just started refuses queries until its partitions are up.
    let none = tokio::time::timeout(PATIENCE, async {
        loop {
            match admin.all_waiting().await {
                Ok(listed) => return listed,
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    });
    assert_eq!(none.await.expect("the admin API never answered"), BTreeMap::new());

    restate.send("refund-3", &shop::refund_prompt(3)).await;
    restate.send("refund-4", &shop::refund_prompt(4)).await;
    restate.send("order-5", &shop::order_prompt(5)).await;
    assert_eq!(restate.output("order-5").await.stop, StopReason::Answered);
    let listed = tokio::time::timeout(PATIENCE, async {
        loop {
            let listed = admin.all_waiting().await.unwrap();
            if listed.len() == 2 {
                return listed;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the two refunds never waited");
    assert_eq!(listed.keys().collect::<Vec<_>>(), ["refund-3", "refund-4"]);
    assert_eq!(listed["refund-3"].pending.len(), 1);
    assert_eq!(listed["refund-3"].pending[0].call.id, "call_3_refund");
    assert_eq!(listed["refund-4"].pending[0].call.id, "call_4_refund");
    // What the handler gives through a worker, the same.
    let (status, body) = restate.call("refund-3", "waiting", &Value::Null).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Waiting>(&body).unwrap(), listed["refund-3"]);

    workers.stop();
    // No worker: Restate holds the handler's call (and retries it)...
    let held =
        tokio::time::timeout(Duration::from_secs(3), restate.call("refund-4", "waiting", &Value::Null));
    assert!(held.await.is_err(), "the waiting handler answered with no worker up");
    // ...and the admin API lists what waits all the same.
    assert_eq!(admin.all_waiting().await.unwrap(), listed);
    assert_eq!(admin.waiting("refund-4").await.unwrap().as_ref(), Some(&listed["refund-4"]));
    assert_eq!(admin.waiting("order-5").await.unwrap(), None);
    assert_eq!(admin.waiting("no 'such' run").await.unwrap(), None);
}
