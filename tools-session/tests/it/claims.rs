//! One conversation, many processes: two stores on one database (two
//! servers), each deciding about the same held call, or a run cut off
//! after its tool ran. A call runs at most once, whatever happens.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Message, Model, ModelError, ModelRequest, ModelResponse, StopReason};
use toolcall_core::{Outcome, ToolCall};
use toolcall_session::{ConversationKey, Session, SessionError, SessionStore, StoreError};

use crate::support::{self, Refunds, key};

/// Two stores on one database, as two servers have them.
type Pair = (Arc<dyn SessionStore>, Arc<dyn SessionStore>);

fn refund_call(id: &str, order: &str) -> ToolCall {
    ToolCall::new(id, "refund", format!(r#"{{"order": "{order}"}}"#))
}

/// A short lease, so that a run whose "process" is gone lets go soon.
const LEASE: Duration = Duration::from_millis(300);

/// A model that answers from its script, and from its `after`th request
/// on never answers: the process that asked it is about to die.
struct Hangs {
    script: ScriptedModel,
    after: usize,
    asked: AtomicUsize,
}

impl Model for Hangs {
    fn provider(&self) -> &str {
        self.script.provider()
    }

    fn model(&self) -> &str {
        self.script.model()
    }

    fn request<'a>(&'a self, request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        if self.asked.fetch_add(1, Ordering::SeqCst) >= self.after {
            return Box::pin(futures::future::pending());
        }
        self.script.request(request)
    }
}

/// A conversation of `pair`'s first store whose run paused on a refund.
async fn paused(store: &Arc<dyn SessionStore>, name: &str, refunds: &Refunds) -> ConversationKey {
    let key = key(name);
    let session = Session::new(store.clone(), key.clone());
    let model = ScriptedModel::new().then_calls([refund_call("call_1", "A-1")]);
    let held = session.run(&support::agent(model, refunds), "Refund A-1").await.unwrap();
    assert!(matches!(held.stop, StopReason::Paused(_)), "{:?}", held.stop);
    key
}

async fn a_held_call_approved_through_two_servers_at_once_runs_once((a, b): Pair) {
    for trial in 0..20 {
        let refunds = Refunds::default();
        let key = paused(&a, &format!("twice-{trial}"), &refunds).await;
        let (one, two) = (Session::new(a.clone(), key.clone()), Session::new(b.clone(), key.clone()));
        // Both servers read the held call before either decides.
        let (mut first, mut second) =
            (one.paused().await.unwrap().unwrap(), two.paused().await.unwrap().unwrap());
        first.approve("call_1").unwrap();
        second.approve("call_1").unwrap();
        let answer = || support::agent(ScriptedModel::new().then_text("Refunded."), &refunds);
        let (agent_one, agent_two) = (answer(), answer());
        let (ran_one, ran_two) = tokio::join!(one.run(&agent_one, first), two.run(&agent_two, second));
        let (won, lost) = match (ran_one, ran_two) {
            (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => (won, lost),
            other => panic!("trial {trial}: one run and one refusal, not {other:?}"),
        };
        assert_eq!(won.answer, "Refunded.");
        assert!(
            matches!(lost, SessionError::Store(StoreError::Busy { .. } | StoreError::Conflict { .. }))
                || matches!(lost, SessionError::NotPaused { .. }),
            "trial {trial}: {lost}"
        );
        assert_eq!(*refunds.0.lock().unwrap(), ["A-1"], "trial {trial}: the refund ran once");
    }
}

async fn a_run_whose_model_fails_after_the_tool_never_runs_it_again((a, b): Pair) {
    let refunds = Refunds::default();
    let key = paused(&a, "model-fails", &refunds).await;
    let mut state = Session::new(a.clone(), key.clone()).paused().await.unwrap().unwrap();
    state.approve("call_1").unwrap();
    let stale = state.clone();
    let failing = ScriptedModel::new().then(Err(ModelError::engine("test", "the provider is down")));
    let failed = Session::new(a.clone(), key.clone()).run(&support::agent(failing, &refunds), state).await;
    assert!(matches!(failed, Err(SessionError::Run(_))), "{failed:?}");
    // On the other server: the result was kept, nothing waits, and the same
    // approval again is refused.
    let other = Session::new(b.clone(), key.clone());
    let messages = other.messages().await.unwrap();
    let Some(Message::Tool { results }) = messages.last() else { panic!("{messages:?}") };
    assert_eq!((results[0].content.as_str(), results[0].outcome), ("refunded A-1", Outcome::Success));
    the_refund_stands_done(&other, stale, &refunds).await;
}

/// On `other`: nothing waits, the `stale` approval is refused, the next
/// question goes on with the refund's result, and the refund ran once.
async fn the_refund_stands_done(other: &Session, stale: toolcall_agent::RunState, refunds: &Refunds) {
    assert!(other.paused().await.unwrap().is_none());
    let again = other.run(&support::agent(ScriptedModel::new(), refunds), stale).await.unwrap_err();
    assert!(matches!(again, SessionError::NotPaused { .. }), "{again}");
    let model = Arc::new(ScriptedModel::new().then_text("It was refunded."));
    other.run(&support::shared_agent(model.clone(), refunds), "Was it refunded?").await.unwrap();
    let sent = &model.seen()[0].messages;
    assert!(
        matches!(&sent[sent.len() - 2], Message::Tool { results } if results[0].content == "refunded A-1")
    );
    assert_eq!(*refunds.0.lock().unwrap(), ["A-1"], "the refund ran once");
}

/// The process that runs the approved call dies (its task is dropped
/// mid-run) after the call ran, while the model is asked again.
async fn a_run_cut_off_after_the_tool_ran_never_runs_it_again((a, b): Pair) {
    let refunds = Refunds::default();
    let key = paused(&a, "killed", &refunds).await;
    let session = Session::new(a.clone(), key.clone()).with_lease(LEASE);
    let mut state = session.paused().await.unwrap().unwrap();
    state.approve("call_1").unwrap();
    let stale = state.clone();
    let hangs = Hangs { script: ScriptedModel::new(), after: 0, asked: AtomicUsize::new(0) };
    let tools = toolcall_core::Toolset::builder().add(support::Refund).build().unwrap();
    let agent = toolcall_agent::Agent::new(hangs, tools)
        .unwrap()
        .with_context(toolcall_core::ToolContext::new().with_extension(refunds.clone()));
    let run = session.begin(&agent, state).await.unwrap();
    let dying = tokio::spawn(run.run());
    // The refund ran; the model is being asked: the process dies.
    while refunds.0.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    dying.abort();
    // Another server: while the lease lasts the chat is busy; once it
    // lapses, the chat shows the refund done, and nothing waits.
    let other = Session::new(b.clone(), key.clone());
    let busy = other.run(&support::agent(ScriptedModel::new(), &refunds), "Hello?").await.unwrap_err();
    assert!(matches!(busy, SessionError::Store(StoreError::Busy { .. })), "{busy}");
    tokio::time::sleep(LEASE * 2).await;
    the_refund_stands_done(&other, stale, &refunds).await;
}

/// The process dies after the decision was taken and before the call's
/// result was kept: the call may have run; it is answered as cut off,
/// never run again, and never asked about again.
async fn a_run_cut_off_before_its_result_was_kept_answers_it_cut_off((a, b): Pair) {
    let refunds = Refunds::default();
    let key = paused(&a, "cut", &refunds).await;
    let session = Session::new(a.clone(), key.clone()).with_lease(LEASE);
    let mut state = session.paused().await.unwrap().unwrap();
    state.approve("call_1").unwrap();
    // Taken, and dropped before it ran: as if the process died there.
    let agent = support::agent(ScriptedModel::new(), &refunds);
    drop(session.begin(&agent, state).await.unwrap());
    tokio::time::sleep(LEASE * 2).await;
    let other = Session::new(b.clone(), key.clone());
    assert!(other.paused().await.unwrap().is_none(), "the decision is not asked again");
    let model = Arc::new(ScriptedModel::new().then_text("I could not tell."));
    other.run(&support::shared_agent(model.clone(), &refunds), "Did it work?").await.unwrap();
    let sent = &model.seen()[0].messages;
    let Message::Tool { results } = &sent[sent.len() - 2] else { panic!("{sent:?}") };
    assert_eq!(results[0].outcome, Outcome::Failed);
    assert!(results[0].content.contains("was cut off"), "{}", results[0].content);
    assert!(refunds.0.lock().unwrap().is_empty(), "nothing ran the refund");
}

async fn a_stop_through_another_server_stops_the_run((a, b): Pair) {
    let key = key("stopped");
    let session = Session::new(a.clone(), key.clone()).with_lease(LEASE);
    let hangs = Hangs { script: ScriptedModel::new(), after: 0, asked: AtomicUsize::new(0) };
    let agent = toolcall_agent::Agent::new(hangs, toolcall_core::Toolset::new()).unwrap();
    let running = tokio::spawn(async move { session.run(&agent, "Think for ever").await });
    let other = Session::new(b.clone(), key.clone());
    let mut asked = false;
    for _ in 0..100 {
        asked = b.stop(&key).await.unwrap();
        if asked {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(asked, "the run was never seen going");
    let stopped = tokio::time::timeout(Duration::from_secs(10), running).await.unwrap().unwrap().unwrap();
    assert_eq!(stopped.stop, StopReason::Cancelled);
    // Free again, its question kept.
    assert_eq!(other.messages().await.unwrap()[0].text(), "Think for ever");
    assert!(!b.stop(&key).await.unwrap());
}

async fn calls_have_idempotency_keys_of_their_conversation_and_turn((a, _): Pair) {
    let refunds = Refunds::default();
    let key = paused(&a, "keys", &refunds).await;
    let session = Session::new(a.clone(), key.clone());
    let mut state = session.paused().await.unwrap().unwrap();
    state.approve("call_1").unwrap();
    let keys = support::Keys::default();
    let agent = support::agent(ScriptedModel::new().then_text("Done."), &refunds).with_context(
        toolcall_core::ToolContext::new().with_extension(refunds.clone()).with_extension(keys.clone()),
    );
    session.run(&agent, state).await.unwrap();
    // The question is message 0, the response with the call message 1.
    assert_eq!(*keys.0.lock().unwrap(), [format!("{}/{}:1:call_1", key.owner, key.id)]);
}

macro_rules! suite {
    ($name:ident, $make:expr $(, #[$ignore:meta])?) => {
        mod $name {
            use super::*;

            macro_rules! case {
                ($case:ident) => {
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    $(#[$ignore])?
                    async fn $case() {
                        #[allow(unused_variables)]
                        let (pair, guard) = $make;
                        super::$case(pair).await;
                    }
                };
            }

            case!(a_held_call_approved_through_two_servers_at_once_runs_once);
            case!(a_run_whose_model_fails_after_the_tool_never_runs_it_again);
            case!(a_run_cut_off_after_the_tool_ran_never_runs_it_again);
            case!(a_run_cut_off_before_its_result_was_kept_answers_it_cut_off);
            case!(a_stop_through_another_server_stops_the_run);
            case!(calls_have_idempotency_keys_of_their_conversation_and_turn);
        }
    };
}

suite!(memory, {
    let store: Arc<dyn SessionStore> = Arc::new(toolcall_session::MemoryStore::default());
    ((store.clone(), store), ())
});
suite!(sqlite, {
    let (first, dir) = support::sqlite().await;
    let second = toolcall_session::SqlStore::sqlite(dir.path().join("sessions.db")).await.unwrap();
    let pair: Pair = (Arc::new(first), Arc::new(second));
    (pair, dir)
});
#[cfg(feature = "postgres")]
suite!(
    postgres,
    {
        let pair: Pair = (Arc::new(support::postgres().await), Arc::new(support::postgres().await));
        (pair, ())
    },
    #[ignore = "needs a PostgreSQL server: set TOOLS_TEST_POSTGRES_URL and pass --ignored (.ci/run does)"]
);
