//! An agent's runs in a session: remembered, paused and resumed from the
//! store by another process's store, refused when they would interleave,
//! and kept only when they end.

use std::sync::Arc;

use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Message, ModelError, StopReason};
use toolcall_core::{Outcome, ToolCall};
use toolcall_session::{Session, SessionError, SessionStore, SqlStore, StoreError};

use crate::support::{self, Refunds, key};

fn refund_call(id: &str, order: &str) -> ToolCall {
    ToolCall::new(id, "refund", format!(r#"{{"order": "{order}"}}"#))
}

#[tokio::test]
async fn the_second_question_is_sent_with_the_first() {
    let (store, _dir) = support::sqlite().await;
    let session = Session::new(Arc::new(store), key("remember"));
    let model = Arc::new(ScriptedModel::new().then_text("Noted: you are Ada.").then_text("You are Ada."));
    let agent = support::shared_agent(model.clone(), &Refunds::default());
    session.run(&agent, "My name is Ada.").await.unwrap();
    let second = session.run(&agent, "What is my name?").await.unwrap();
    assert_eq!(second.answer, "You are Ada.");
    let sent = &model.seen()[1].messages;
    let texts: Vec<String> = sent.iter().map(Message::text).collect();
    assert_eq!(texts, ["My name is Ada.", "Noted: you are Ada.", "What is my name?"]);
    assert_eq!(session.messages().await.unwrap().len(), 4);
    // The system prompt is the agent's, never stored as a message.
    assert_eq!(second.transcript.instructions.as_deref(), Some("You are a shop's assistant."));
}

#[tokio::test]
async fn a_paused_run_resumes_from_the_file_in_a_new_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let key = key("refund");
    let refunds = Refunds::default();
    {
        // The first process: the run pauses on the refund, and ends.
        let store = SqlStore::sqlite(&path).await.unwrap();
        let session = Session::new(Arc::new(store.clone()), key.clone());
        let model = ScriptedModel::new().then_calls([refund_call("call_1", "A-1")]);
        let paused = session.run(&support::agent(model, &refunds), "Refund order A-1").await.unwrap();
        assert!(matches!(paused.stop, StopReason::Paused(_)), "{:?}", paused.stop);
        store.close().await;
    }
    // Another process: a new store on the same file finds the held call.
    let store = SqlStore::sqlite(&path).await.unwrap();
    let session = Session::new(Arc::new(store), key.clone());
    let mut state = session.paused().await.unwrap().expect("the paused run was kept");
    assert_eq!(state.pending().iter().map(|p| p.call.id.as_str()).collect::<Vec<_>>(), ["call_1"]);
    assert!(refunds.0.lock().unwrap().is_empty(), "nothing ran without a decision");
    state.approve("call_1").unwrap();
    let twice = state.clone();
    let model = Arc::new(ScriptedModel::new().then_text("Refunded A-1."));
    let agent = support::shared_agent(model.clone(), &refunds);
    let done = session.run(&agent, state).await.unwrap();
    assert_eq!((done.answer.as_str(), &done.stop), ("Refunded A-1.", &StopReason::Answered));
    assert_eq!(*refunds.0.lock().unwrap(), ["A-1"]);
    // The resumed request carried the whole conversation and the result.
    let sent = &model.seen()[0].messages;
    assert_eq!(sent.len(), 3);
    let Message::Tool { results } = &sent[2] else { panic!("{sent:?}") };
    assert_eq!((results[0].content.as_str(), results[0].outcome), ("refunded A-1", Outcome::Success));
    let stored = session.store().load(&key).await.unwrap().unwrap();
    // Each run took the conversation (1, 4), kept the turn whose calls ran
    // or waited (2, 5) and let go at its end (3, 6).
    assert_eq!((stored.messages.len(), stored.paused, stored.revision), (4, None, 6));
    // The same decision sent again is refused: the run was resumed.
    let again = session.run(&agent, twice).await.unwrap_err();
    assert!(matches!(again, SessionError::NotPaused { .. }), "{again}");
    assert_eq!(*refunds.0.lock().unwrap(), ["A-1"]);
}

#[tokio::test]
async fn a_new_question_while_calls_wait_is_refused_and_a_stale_pause_too() {
    let (store, _dir) = support::sqlite().await;
    let session = Session::new(Arc::new(store), key("waiting"));
    let refunds = Refunds::default();
    let model = ScriptedModel::new().then_calls([refund_call("call_1", "A-1")]);
    session.run(&support::agent(model, &refunds), "Refund A-1").await.unwrap();
    let refused =
        session.run(&support::agent(ScriptedModel::new(), &refunds), "Anything else?").await.unwrap_err();
    assert!(matches!(&refused, SessionError::Waiting { pending, .. } if pending == &["call_1"]), "{refused}");
    assert!(refused.to_string().ends_with("waits for approval of calls call_1: decide about them first"));
    // A paused state from another conversation is not this one's.
    let mut foreign = done_state_of_other(&session).await;
    foreign.approve("call_9").unwrap();
    let refused = session.run(&support::agent(ScriptedModel::new(), &refunds), foreign).await.unwrap_err();
    assert!(matches!(refused, SessionError::NotPaused { .. }), "{refused}");
    assert!(refunds.0.lock().unwrap().is_empty());
}

async fn done_state_of_other(session: &Session) -> toolcall_agent::RunState {
    let model = ScriptedModel::new().then_calls([refund_call("call_9", "B-2")]);
    let other = Session::new(session.store().clone(), key("other"));
    let paused = other.run(&support::agent(model, &Refunds::default()), "Refund B-2").await.unwrap();
    let StopReason::Paused(state) = paused.stop else { panic!() };
    *state
}

#[tokio::test]
async fn a_failed_run_keeps_its_question_and_lets_go() {
    let (store, _dir) = support::sqlite().await;
    let session = Session::new(Arc::new(store), key("failed"));
    let refunds = Refunds::default();
    session.run(&support::agent(ScriptedModel::new().then_text("Hello."), &refunds), "Hi").await.unwrap();
    let failing = ScriptedModel::new().then(Err(ModelError::engine("test", "the provider is down")));
    let failed = session.run(&support::agent(failing, &refunds), "And now?").await.unwrap_err();
    assert!(matches!(failed, SessionError::Run(_)), "{failed}");
    let messages = session.messages().await.unwrap();
    assert_eq!(messages.iter().map(Message::text).collect::<Vec<_>>(), ["Hi", "Hello.", "And now?"]);
    // The conversation is free: the next question goes on from it.
    let model = Arc::new(ScriptedModel::new().then_text("Now it works."));
    session.run(&support::shared_agent(model.clone(), &refunds), "Again?").await.unwrap();
    let sent: Vec<String> = model.seen()[0].messages.iter().map(Message::text).collect();
    assert_eq!(sent, ["Hi", "Hello.", "And now?", "Again?"]);
}

#[tokio::test]
async fn of_two_runs_at_once_the_second_is_refused_before_it_runs() {
    let (store, _dir) = support::sqlite().await;
    let store: Arc<dyn SessionStore> = Arc::new(store);
    let session = Session::new(store, key("two"));
    let refunds = Refunds::default();
    let (first, second) = (
        support::agent(ScriptedModel::new().then_text("First answer."), &refunds),
        support::agent(ScriptedModel::new().then_text("Second answer."), &refunds),
    );
    // The first takes the conversation as it begins: the second is refused
    // then, before its model is asked.
    let one = session.begin(&first, "Question one").await.unwrap();
    let refused = session.begin(&second, "Question two").await.unwrap_err();
    assert!(matches!(refused, SessionError::Store(StoreError::Busy { .. })), "{refused}");
    one.run().await.unwrap();
    let messages = session.messages().await.unwrap();
    assert_eq!(messages.iter().map(Message::text).collect::<Vec<_>>(), ["Question one", "First answer."]);
}

#[tokio::test]
async fn a_streamed_run_is_kept_before_its_end_is_told() {
    use futures::StreamExt;
    let (store, _dir) = support::sqlite().await;
    let session = Session::new(Arc::new(store), key("streamed"));
    let agent = support::agent(ScriptedModel::new().then_text("Streamed."), &Refunds::default());
    let events: Vec<_> = session.begin(&agent, "Hi").await.unwrap().stream().collect().await;
    let Some(toolcall_agent::AgentEvent::Finished(Ok(result))) = events.last() else { panic!("{events:?}") };
    assert_eq!(result.answer, "Streamed.");
    assert_eq!(session.messages().await.unwrap().len(), 2);
}

/// The `gen_ai.conversation.id` of every span made while `run` runs.
fn conversation_ids<T>(run: impl FnOnce() -> T) -> (T, Vec<(String, String)>) {
    use std::sync::Mutex;
    use tracing_subscriber::layer::{Context, SubscriberExt};

    #[derive(Default, Clone)]
    struct Seen(Arc<Mutex<Vec<(String, String)>>>);

    struct Field<'a>(&'a mut Option<String>);

    impl tracing::field::Visit for Field<'_> {
        fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
            if field.name() == "gen_ai.conversation.id" {
                *self.0 = Some(value.to_owned());
            }
        }
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            if field.name() == "gen_ai.conversation.id" {
                *self.0 = Some(format!("{value:?}"));
            }
        }
    }

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Seen {
        fn on_new_span(&self, attrs: &tracing::span::Attributes<'_>, _: &tracing::Id, _: Context<'_, S>) {
            let mut id = None;
            attrs.record(&mut Field(&mut id));
            if let Some(id) = id {
                self.0.lock().unwrap().push((attrs.metadata().name().to_owned(), id));
            }
        }
    }

    // A global subscriber that wants every span, so that a test thread with
    // none cannot have a span's callsite cached as unwanted before this one
    // catches it (the anchor tools-core's span tests use too).
    static ANCHOR: std::sync::Once = std::sync::Once::new();
    ANCHOR.call_once(|| {
        let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry());
    });
    let seen = Seen::default();
    let subscriber = tracing_subscriber::registry().with(seen.clone());
    let out = tracing::subscriber::with_default(subscriber, run);
    let seen = seen.0.lock().unwrap().clone();
    (out, seen)
}

#[test]
fn a_sessions_runs_are_traced_as_its_conversation() {
    let (_, seen) = conversation_ids(|| {
        futures::executor::block_on(async {
            let session = Session::new(Arc::new(toolcall_session::MemoryStore::default()), key("traced"));
            let agent = support::agent(ScriptedModel::new().then_text("Hi."), &Refunds::default());
            session.run(&agent, "Hello").await.unwrap();
        })
    });
    assert_eq!(
        seen,
        [("agent_run".to_owned(), "traced".to_owned()), ("model_request".to_owned(), "traced".to_owned())]
    );
}
