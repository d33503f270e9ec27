//! What the tests share: stores to run the suite on, and a small agent.

use std::sync::{Arc, Mutex};

use toolcall_agent::Agent;
use toolcall_agent::testing::ScriptedModel;
use toolcall_core::toolset::Toolset;
use toolcall_core::{ToolContext, ToolError};
use toolcall_macros::tool;
use toolcall_session::{ConversationKey, SqlStore};

/// The environment variable that names a PostgreSQL server for the tests
/// (`.ci/run` starts one on loopback).
#[cfg(feature = "postgres")]
pub(crate) const POSTGRES_URL: &str = "TOOLS_TEST_POSTGRES_URL";

/// A store on a new SQLite file, with the directory that holds it.
pub(crate) async fn sqlite() -> (SqlStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqlStore::sqlite(dir.path().join("sessions.db")).await.unwrap();
    (store, dir)
}

#[cfg(feature = "postgres")]
/// The PostgreSQL store of the server `.ci/run` started, or a plain
/// failure saying how to run these tests.
pub(crate) async fn postgres() -> SqlStore {
    let url = std::env::var(POSTGRES_URL).unwrap_or_else(|_| {
        panic!(
            "set {POSTGRES_URL} to a PostgreSQL server's URL to run the PostgreSQL tests (.ci/run starts one)"
        )
    });
    SqlStore::postgres(&url).await.unwrap()
}

/// A key of an owner no other test uses (the PostgreSQL database is shared
/// by every test and every run).
pub(crate) fn key(id: &str) -> ConversationKey {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    ConversationKey::new(format!("user-{nanos}-{n}"), id)
}

/// The refunds the tool made, shared through the context.
#[derive(Clone, Default)]
pub(crate) struct Refunds(pub(crate) Arc<Mutex<Vec<String>>>);

/// The idempotency keys the tool's calls had, shared through the context.
#[derive(Clone, Default)]
pub(crate) struct Keys(pub(crate) Arc<Mutex<Vec<String>>>);

/// Refund an order.
#[tool(args, destructive, needs_approval, crate = "toolcall_core")]
pub(crate) async fn refund(ctx: &ToolContext, order: String) -> Result<String, ToolError> {
    if let Some(refunds) = ctx.get::<Refunds>() {
        refunds.0.lock().unwrap().push(order.clone());
    }
    if let Some(keys) = ctx.get::<Keys>() {
        keys.0.lock().unwrap().push(ctx.idempotency_key().unwrap_or_default());
    }
    Ok(format!("refunded {order}"))
}

/// An agent on `model` with the refund tool (which waits for approval).
pub(crate) fn agent(model: ScriptedModel, refunds: &Refunds) -> Agent {
    shared_agent(Arc::new(model), refunds)
}

/// The same on a model the test keeps, to read what it was asked.
pub(crate) fn shared_agent(model: Arc<ScriptedModel>, refunds: &Refunds) -> Agent {
    let tools = Toolset::builder().add(Refund).build().unwrap();
    Agent::from_shared(model, tools)
        .unwrap()
        .with_instructions("You are a shop's assistant.")
        .with_context(ToolContext::new().with_extension(refunds.clone()))
}
