//! What holding a conversation costs, side by side in one run:
//!
//! - **a decision**: one approved call resumed and answered. The baseline
//!   is what a session did before a decision claimed its conversation: the
//!   agent's run, then one append of what it added. Against it, the
//!   session's run: the claim (an append that takes the lease), the turn's
//!   results kept before the model is asked again, the last append that
//!   lets go. In the memory store, in SQLite, and in PostgreSQL when
//!   `TOOLS_TEST_POSTGRES_URL` names a server (feature `postgres`).
//! - **a frame**: one chunk of a stream made readable from any server,
//!   written to the store in batches of 10 as the chat server does, against
//!   a chunk kept in memory (a `Vec` push, what a server alone keeps).
//!
//! ```sh
//! cargo bench -p toolcall-session --bench claims
//! url=$(scripts/postgres.sh start /tmp/pgbench | tail -n1)
//! TOOLS_TEST_POSTGRES_URL=$url cargo bench -p toolcall-session --bench claims --features postgres
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Agent, StopReason};
use toolcall_core::{ToolCall, ToolContext, ToolError, Toolset};
use toolcall_macros::tool;
use toolcall_session::{Append, ConversationKey, Frame, MemoryStore, Session, SessionStore, SqlStore};

/// Refund an order.
#[tool(args, needs_approval, crate = "toolcall_core")]
async fn refund(_ctx: &ToolContext, order: String) -> Result<String, ToolError> {
    Ok(format!("refunded {order}"))
}

fn agent(model: ScriptedModel) -> Agent {
    Agent::new(model, Toolset::builder().add(Refund).build().unwrap()).unwrap()
}

/// A new conversation whose run paused on a refund.
async fn paused(store: &Arc<dyn SessionStore>, n: usize) -> Session {
    let session =
        Session::new(store.clone(), ConversationKey::new("bench", format!("c{n}-{}", std::process::id())));
    let model = ScriptedModel::new().then_calls([ToolCall::new("call_1", "refund", r#"{"order":"A-1"}"#)]);
    let held = session.run(&agent(model), "Refund A-1").await.unwrap();
    assert!(matches!(held.stop, StopReason::Paused(_)));
    session
}

/// The time of `iters` decisions, each on a new paused conversation;
/// `claimed`: through the session, else the agent then one append.
async fn decisions(store: &Arc<dyn SessionStore>, iters: u64, claimed: bool, next: &mut usize) -> Duration {
    let mut spent = Duration::ZERO;
    for _ in 0..iters {
        *next += 1;
        let session = paused(store, *next).await;
        let conversation = store.load(session.key()).await.unwrap().unwrap();
        let mut state = session.paused().await.unwrap().unwrap();
        state.approve("call_1").unwrap();
        let agent = agent(ScriptedModel::new().then_text("Refunded."));
        let started = Instant::now();
        if claimed {
            session.run(&agent, state).await.unwrap();
        } else {
            let stored = conversation.messages.len();
            let result = agent.run(state).await.unwrap();
            let added = result.transcript.messages[stored..].to_vec();
            store.append(session.key(), Append::new(conversation.revision, added)).await.unwrap();
        }
        spent += started.elapsed();
    }
    spent
}

/// The time of `iters` chunks written as a stream's are, in batches of 10.
async fn frames(store: &Arc<dyn SessionStore>, iters: u64, run: usize) -> Duration {
    let key = ConversationKey::new("bench", format!("frames-{run}-{}", std::process::id()));
    store.append(&key, Append::new(0, Vec::new())).await.unwrap();
    let chunk = chunk();
    let started = Instant::now();
    let mut written = 0;
    while written < iters {
        let batch = (iters - written).min(10);
        let frames = (0..batch).map(|_| Frame::Data(chunk.clone())).collect();
        store.write_frames(&key, "run", written, frames).await.unwrap();
        written += batch;
    }
    started.elapsed()
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<(&str, Arc<dyn SessionStore>)> = [
        ("memory", Arc::new(MemoryStore::new(100_000)) as Arc<dyn SessionStore>),
        ("sqlite", Arc::new(runtime.block_on(SqlStore::sqlite(dir.path().join("bench.db"))).unwrap())),
    ]
    .into_iter()
    .chain(postgres(&runtime))
    .collect();
    let mut criterion = Criterion::default().configure_from_args().sample_size(20);
    let mut next = 0;
    let mut runs = 0;
    {
        let mut group = criterion.benchmark_group("decision");
        for (name, store) in &stores {
            for (label, claimed) in [("agent then append", false), ("session (claim)", true)] {
                group.bench_function(format!("{name}/{label}"), |b| {
                    b.iter_custom(|iters| runtime.block_on(decisions(store, iters, claimed, &mut next)))
                });
            }
        }
        group.finish();
    }
    {
        let mut group = criterion.benchmark_group("frame");
        group.bench_function("in memory (Vec push)", |b| {
            b.iter_custom(|iters| {
                let chunk = chunk();
                let started = Instant::now();
                let mut kept = Vec::new();
                for _ in 0..iters {
                    kept.push(std::hint::black_box(chunk.clone()));
                }
                started.elapsed()
            })
        });
        for (name, store) in &stores {
            group.bench_function(format!("{name} store, batches of 10"), |b| {
                b.iter_custom(|iters| {
                    runs += 1;
                    runtime.block_on(frames(store, iters, runs))
                })
            });
        }
        group.finish();
    }
    criterion.final_summary();
}

/// The PostgreSQL store `TOOLS_TEST_POSTGRES_URL` names, if the bench has
/// the feature and the variable is set; otherwise a line says why not.
fn postgres(runtime: &tokio::runtime::Runtime) -> Option<(&'static str, Arc<dyn SessionStore>)> {
    #[cfg(feature = "postgres")]
    match std::env::var("TOOLS_TEST_POSTGRES_URL") {
        Ok(url) => return Some(("postgres", Arc::new(runtime.block_on(SqlStore::postgres(&url)).unwrap()))),
        Err(_) => println!("postgres: not run (set TOOLS_TEST_POSTGRES_URL)"),
    }
    #[cfg(not(feature = "postgres"))]
    {
        let _ = runtime;
        println!("postgres: not run (build with --features postgres and set TOOLS_TEST_POSTGRES_URL)");
    }
    None
}

/// One chunk of a UI message stream, as framed.
fn chunk() -> String {
    r#"data: {"type":"text-delta","id":"t1","delta":"the next few words "}"#.to_owned() + "\n\n"
}
