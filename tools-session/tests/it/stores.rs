//! The promises of [`SessionStore`], checked the same way on every store.

use futures::future::join_all;
use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{Content, Message, Reasoning, StopReason};
use toolcall_core::ToolCall;
use toolcall_session::{Append, ConversationKey, MemoryStore, SessionStore, SqlStore, StoreError};

use crate::support::{self, Refunds, key};

/// A run's messages, with the kinds a provider's reasoning leaves.
fn turn(question: &str) -> Vec<Message> {
    let answer = Message::Assistant {
        content: vec![
            Content::Reasoning(Reasoning::Thinking {
                thinking: "The user asks.".into(),
                signature: "sig==".into(),
            }),
            Content::Text { text: format!("About {question}: yes.") },
        ],
    };
    vec![Message::user(question), answer]
}

fn append(after: u64, messages: Vec<Message>) -> Append {
    Append::new(after, messages)
}

/// Appends land in order; a load gives every message back as it was.
async fn appends_load_back_whole(store: &dyn SessionStore) {
    let key = key("whole");
    assert!(store.load(&key).await.unwrap().is_none());
    assert_eq!(store.append(&key, append(0, turn("one"))).await.unwrap(), 1);
    assert_eq!(store.append(&key, append(1, turn("two"))).await.unwrap(), 2);
    let loaded = store.load(&key).await.unwrap().unwrap();
    assert_eq!(loaded.revision, 2);
    assert_eq!(loaded.messages, [turn("one"), turn("two")].concat());
    assert_eq!(loaded.paused, None);
}

/// An owner sees only its own: the same id under another owner is another
/// conversation, and neither lists, loads nor deletes the other.
async fn owners_see_only_their_own(store: &dyn SessionStore) {
    let alice = key("shared-id");
    let bob = ConversationKey::new(format!("{}-bob", alice.owner), "shared-id");
    store.append(&alice, append(0, turn("alice's"))).await.unwrap();
    assert!(store.load(&bob).await.unwrap().is_none());
    assert!(store.list(&bob.owner).await.unwrap().is_empty());
    assert!(!store.delete(&bob).await.unwrap());
    store.append(&bob, append(0, turn("bob's"))).await.unwrap();
    assert_eq!(store.load(&alice).await.unwrap().unwrap().messages, turn("alice's"));
    assert_eq!(store.load(&bob).await.unwrap().unwrap().messages, turn("bob's"));
    let listed = store.list(&alice.owner).await.unwrap();
    assert_eq!(
        listed.iter().map(|info| (info.id.as_str(), info.messages)).collect::<Vec<_>>(),
        [("shared-id", 2)]
    );
    assert!(store.delete(&alice).await.unwrap());
    assert!(store.load(&alice).await.unwrap().is_none());
    assert!(store.load(&bob).await.unwrap().is_some());
}

/// An append that names a revision another append moved past is refused,
/// and the conversation is as the first left it.
async fn a_stale_append_is_refused_and_keeps_nothing(store: &dyn SessionStore) {
    let key = key("stale");
    store.append(&key, append(0, turn("one"))).await.unwrap();
    store.append(&key, append(1, turn("two"))).await.unwrap();
    let refused = store.append(&key, append(1, turn("late"))).await.unwrap_err();
    assert!(matches!(refused, StoreError::Conflict { after: 1, .. }), "{refused}");
    assert!(refused.to_string().contains("another run changed it first"), "{refused}");
    // A new conversation that someone else created meanwhile, too.
    let refused = store.append(&key, append(0, turn("also late"))).await.unwrap_err();
    assert!(matches!(refused, StoreError::Conflict { after: 0, .. }), "{refused}");
    assert_eq!(store.load(&key).await.unwrap().unwrap().messages, [turn("one"), turn("two")].concat());
}

/// Appends started together from one revision: exactly one lands, whole.
async fn appends_at_once_do_not_interleave(store: &dyn SessionStore) {
    let key = key("race");
    store.append(&key, append(0, turn("start"))).await.unwrap();
    let racers = (0..8).map(|n| {
        let messages: Vec<Message> =
            (0..50).map(|i| Message::user(format!("racer {n} message {i}"))).collect();
        store.append(&key, append(1, messages))
    });
    let outcomes = join_all(racers).await;
    let landed: Vec<usize> = outcomes.iter().enumerate().filter(|(_, o)| o.is_ok()).map(|(n, _)| n).collect();
    assert_eq!(landed.len(), 1, "{outcomes:?}");
    for outcome in &outcomes {
        if let Err(error) = outcome {
            assert!(matches!(error, StoreError::Conflict { .. }), "{error}");
        }
    }
    let messages = store.load(&key).await.unwrap().unwrap().messages;
    assert_eq!(messages.len(), 52);
    let winner = format!("racer {} ", landed[0]);
    assert!(messages[2..].iter().all(|message| message.text().starts_with(&winner)));
}

/// A paused run's turn lands with the messages before it, and a later
/// append clears it.
async fn a_paused_turn_lands_with_its_messages(store: &dyn SessionStore) {
    let key = key("paused");
    let refunds = Refunds::default();
    let model = ScriptedModel::new().then_calls([ToolCall::new("call_1", "refund", r#"{"order": "A-1"}"#)]);
    let result = support::agent(model, &refunds).run("Refund A-1").await.unwrap();
    let StopReason::Paused(state) = result.stop else { panic!("{:?}", result.stop) };
    let (transcript, turn) = state.split();
    store
        .append(&key, Append { paused: Some(turn.clone()), ..Append::new(0, transcript.messages.clone()) })
        .await
        .unwrap();
    let loaded = store.load(&key).await.unwrap().unwrap();
    assert_eq!((loaded.messages, loaded.paused), (transcript.messages, Some(turn)));
    assert!(store.list(&key.owner).await.unwrap()[0].paused);
    store.append(&key, append(1, vec![Message::user("later")])).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap().unwrap().paused, None);
}

/// An append that keeps fewer messages replaces the last ones.
async fn an_append_can_replace_the_last_messages(store: &dyn SessionStore) {
    let key = key("regenerate");
    store.append(&key, append(0, [turn("one"), turn("two")].concat())).await.unwrap();
    let again = Append { keep: Some(2), ..Append::new(1, turn("two, again")) };
    store.append(&key, again).await.unwrap();
    assert_eq!(store.load(&key).await.unwrap().unwrap().messages, [turn("one"), turn("two, again")].concat());
    store.append(&key, append(2, turn("three"))).await.unwrap();
    let loaded = store.load(&key).await.unwrap().unwrap();
    assert_eq!(loaded.messages, [turn("one"), turn("two, again"), turn("three")].concat());
}

/// Keys a store does not take are refused with the reason.
async fn bad_keys_are_refused(store: &dyn SessionStore) {
    for (key, reason) in [
        (ConversationKey::new("", "x"), "the conversation's owner is empty"),
        (ConversationKey::new("u", "a".repeat(257)), "the conversation's id is longer than 256 bytes"),
        (ConversationKey::new("u", "a\nb"), "the conversation's id has a control character"),
    ] {
        let refused = store.append(&key, append(0, turn("x"))).await.unwrap_err();
        assert_eq!(refused.to_string(), reason);
    }
}

macro_rules! suite {
    ($store:ident, $make:expr $(, #[$ignore:meta])?) => {
        mod $store {
            use super::*;

            macro_rules! case {
                ($name:ident) => {
                    #[tokio::test]
                    $(#[$ignore])?
                    async fn $name() {
                        #[allow(unused_variables)]
                        let (store, guard) = $make;
                        super::$name(&store).await;
                    }
                };
            }

            case!(appends_load_back_whole);
            case!(owners_see_only_their_own);
            case!(a_stale_append_is_refused_and_keeps_nothing);
            case!(appends_at_once_do_not_interleave);
            case!(a_paused_turn_lands_with_its_messages);
            case!(bad_keys_are_refused);
            case!(an_append_can_replace_the_last_messages);
        }
    };
}

suite!(memory, (MemoryStore::default(), ()));
suite!(sqlite, support::sqlite().await);
#[cfg(feature = "postgres")]
suite!(
    postgres,
    (support::postgres().await, ()),
    #[ignore = "needs a PostgreSQL server: set TOOLS_TEST_POSTGRES_URL and pass --ignored (.ci/run does)"]
);

#[test]
fn the_memory_store_forgets_the_least_recently_used() {
    futures::executor::block_on(async {
        let store = MemoryStore::new(2);
        let (a, b, c) = (key("a"), key("b"), key("c"));
        store.append(&a, append(0, turn("a"))).await.unwrap();
        store.append(&b, append(0, turn("b"))).await.unwrap();
        // `a` is used, so `b` is the least recently used when `c` comes.
        store.load(&a).await.unwrap();
        store.append(&c, append(0, turn("c"))).await.unwrap();
        assert_eq!(store.len(), 2);
        assert!(store.load(&a).await.unwrap().is_some());
        assert!(store.load(&b).await.unwrap().is_none());
        assert!(store.load(&c).await.unwrap().is_some());
    });
}

#[tokio::test]
async fn a_store_that_cannot_be_opened_names_the_path_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("s.db");
    let error = SqlStore::sqlite(&missing).await.unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("the session store at {} could not be opened: ", missing.display())),
        "{error}"
    );
    let not_a_database = dir.path().join("notes.txt");
    std::fs::write(&not_a_database, "these are not the tables you are looking for".repeat(100)).unwrap();
    let error = SqlStore::sqlite(&not_a_database).await.unwrap_err().to_string();
    assert!(
        error.contains(&not_a_database.display().to_string()) && error.contains("not a database"),
        "{error}"
    );
}

#[tokio::test]
async fn a_record_of_a_newer_format_is_refused_by_name() {
    let (store, dir) = support::sqlite().await;
    let key = key("future");
    store.append(&key, append(0, turn("now"))).await.unwrap();
    store.close().await;
    // A later version wrote the next message in a format this one lacks.
    let raw = sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("sessions.db").display()))
        .await
        .unwrap();
    sqlx::query("UPDATE tools_messages SET format = 2 WHERE seq = 1").execute(&raw).await.unwrap();
    sqlx::query("UPDATE tools_conversations SET written_by = '9.0.0'").execute(&raw).await.unwrap();
    raw.close().await;
    let store = SqlStore::sqlite(dir.path().join("sessions.db")).await.unwrap();
    let error = store.load(&key).await.unwrap_err().to_string();
    assert!(
        error.contains("holds a record of format 2, written by toolcall-session 9.0.0")
            && error.contains("reads formats up to 1: upgrade it"),
        "{error}"
    );
}

#[tokio::test]
async fn a_record_that_does_not_read_says_which_and_who_wrote_it() {
    let (store, dir) = support::sqlite().await;
    let key = key("garbled");
    store.append(&key, append(0, turn("now"))).await.unwrap();
    store.close().await;
    let raw = sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("sessions.db").display()))
        .await
        .unwrap();
    sqlx::query("UPDATE tools_messages SET body = '{\"role\": \"narrator\"}' WHERE seq = 1")
        .execute(&raw)
        .await
        .unwrap();
    raw.close().await;
    let store = SqlStore::sqlite(dir.path().join("sessions.db")).await.unwrap();
    let error = store.load(&key).await.unwrap_err().to_string();
    let this = env!("CARGO_PKG_VERSION");
    assert!(
        error.contains(&format!("message 1, written by toolcall-session {this}, does not read")),
        "{error}"
    );
}
