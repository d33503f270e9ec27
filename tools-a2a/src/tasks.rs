//! A task as a session store keeps it, for every replica that shares the
//! store: its runs are one conversation, `(owner, task id)`, which holds
//! the transcript, the paused run while the task waits for input, and the
//! lease of the run going; what the A2A wire says that no run holds (the
//! task's context, the messages as the client sent them, the status each
//! run ended in, a cancel) is a log of records beside it,
//! `(owner, "a2a-task:{task id}")`. The wire [`Task`] is rebuilt from the
//! two: its state from the conversation, its words from the log.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolcall_agent::{Message as AgentMessage, RunState, Transcript};
use toolcall_core::ToolResult;
use toolcall_session::{Append, Conversation, ConversationKey, SessionStore, StoreError};

use crate::server::{a2a_part, answer_artifact, approval_message};
use crate::wire::{Artifact, Message, Part, Task, TaskState, TaskStatus};

/// The prefix of a task's record log's conversation id: no task id (a
/// UUID the server made) starts with it.
const RECORD_PREFIX: &str = "a2a-task:";

/// How many times a record is appended again after another writer
/// (a cancel, the run's end on another replica) appended first.
const RECORD_TRIES: usize = 8;

/// The conversation of the task's runs.
pub(crate) fn run_key(owner: &str, task_id: &str) -> ConversationKey {
    ConversationKey::new(owner, task_id)
}

/// The conversation of the task's record log.
fn record_key(owner: &str, task_id: &str) -> ConversationKey {
    ConversationKey::new(owner, format!("{RECORD_PREFIX}{task_id}"))
}

/// One entry of a task's log: what the wire shows that the task's runs do
/// not keep. Kept as a user message of one JSON part (the store keeps
/// messages); no model ever reads the log.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub(crate) enum Record {
    /// The task began, in this context.
    Task {
        /// The task's context id.
        context_id: String,
    },
    /// A message of the client's, as it sent it (its task and context
    /// filled in): the one that started the task, or one that decided its
    /// held calls.
    Message {
        /// The message.
        message: Message,
    },
    /// A run of the task ended in this status; its message (the answer,
    /// the question for input, what failed) joins the history.
    Status {
        /// The status, message and all.
        status: TaskStatus,
    },
    /// The client canceled the task: it stays canceled, whatever its run
    /// does after.
    Canceled,
}

impl Record {
    fn to_message(&self) -> AgentMessage {
        // A record always serializes: its fields are strings and JSON.
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        AgentMessage::user_parts([toolcall_core::Part::json(value)])
    }

    fn from_message(message: &AgentMessage) -> Option<Self> {
        let AgentMessage::User { parts } = message else { return None };
        match parts.as_slice() {
            [toolcall_core::Part::Json { value }] => serde_json::from_value(value.clone()).ok(),
            _ => None,
        }
    }
}

/// A task as loaded: its runs' conversation and its log.
#[derive(Clone, Debug)]
pub(crate) struct Stored {
    pub(crate) conversation: Conversation,
    pub(crate) records: Vec<Record>,
}

/// The task `task_id` of `owner`, or `None`: another owner's task is not
/// there (its keys name its owner), nor is an id no task has.
pub(crate) async fn load(
    store: &dyn SessionStore,
    owner: &str,
    task_id: &str,
) -> Result<Option<Stored>, StoreError> {
    let key = run_key(owner, task_id);
    if key.check().is_err() || task_id.starts_with(RECORD_PREFIX) {
        // No task could be stored under it.
        return Ok(None);
    }
    let Some(log) = store.load(&record_key(owner, task_id)).await? else { return Ok(None) };
    let Some(conversation) = store.load(&key).await? else { return Ok(None) };
    let records = log.messages.iter().filter_map(Record::from_message).collect();
    Ok(Some(Stored { conversation, records }))
}

/// Append `records` to the task's log, after whatever another writer
/// appended meanwhile; the records that were there before.
pub(crate) async fn record(
    store: &dyn SessionStore,
    owner: &str,
    task_id: &str,
    records: &[Record],
) -> Result<Vec<Record>, StoreError> {
    let key = record_key(owner, task_id);
    let messages: Vec<AgentMessage> = records.iter().map(Record::to_message).collect();
    let mut tries = 0;
    loop {
        let log = store.load(&key).await?;
        let after = log.as_ref().map_or(0, |log| log.revision);
        match store.append(&key, Append::new(after, messages.clone())).await {
            Ok(_) => {
                let before = log.map(|log| log.messages).unwrap_or_default();
                return Ok(before.iter().filter_map(Record::from_message).collect());
            }
            // Another writer came first: the log only grows, so append
            // after it (a bounded number of times: writers are few).
            Err(StoreError::Conflict { .. }) if tries < RECORD_TRIES => tries += 1,
            Err(error) => return Err(error),
        }
    }
}

/// Whether the log holds a cancel.
pub(crate) fn canceled(records: &[Record]) -> bool {
    records.iter().any(|record| matches!(record, Record::Canceled))
}

/// The id of the status message a run that ended with `stored` messages
/// in its conversation gives: the same in every process, so that a status
/// rebuilt from the conversation (its run's end not logged) and the one
/// the run logged are one message.
pub(crate) fn status_message_id(task_id: &str, stored: usize) -> String {
    format!("{task_id}:{stored}")
}

/// The wire task, rebuilt: its state from the conversation (a run going:
/// working; a paused run: input-required; an answer last: completed;
/// anything else, a run that failed or was cut off: failed; a cancel in
/// the log: canceled), the status message the run logged when it is the
/// run's end (else one made from the conversation), the history from the
/// log, the artifacts from the tools' results and the answer.
pub(crate) fn task(task_id: &str, stored: &Stored) -> Task {
    let context_id = stored
        .records
        .iter()
        .find_map(|record| match record {
            Record::Task { context_id } => Some(context_id.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let mut history: Vec<Message> = stored
        .records
        .iter()
        .filter_map(|record| match record {
            Record::Message { message } => Some(message.clone()),
            Record::Status { status } => status.message.clone(),
            _ => None,
        })
        .collect();
    let running = stored.conversation.running().is_some();
    let conversation = stored.conversation.clone().settled();
    let status = if canceled(&stored.records) {
        TaskStatus::new(TaskState::Canceled)
    } else if running {
        TaskStatus::new(TaskState::Working)
    } else {
        // The run's end as it logged it, if the log's last word is that
        // end and the conversation agrees whether it waits for input
        // (a decision taken by a run cut off before it logged anything
        // leaves the conversation settled, no longer waiting).
        let logged = match stored.records.last() {
            Some(Record::Status { status })
                if (status.state == TaskState::InputRequired) == conversation.paused.is_some() =>
            {
                Some(status.clone())
            }
            _ => None,
        };
        logged.unwrap_or_else(|| {
            let mut status = derived_status(task_id, &conversation);
            if let Some(message) = status.message.as_mut() {
                message.task_id = Some(task_id.to_owned());
                message.context_id = Some(context_id.clone());
                history.push(message.clone());
            }
            status
        })
    };
    let mut artifacts: Vec<Artifact> = conversation
        .messages
        .iter()
        .filter_map(|message| match message {
            AgentMessage::Tool { results } => Some(results.iter().filter_map(tool_artifact)),
            _ => None,
        })
        .flatten()
        .collect();
    if status.state == TaskState::Completed {
        let answer = status.message.as_ref().map(Message::text).unwrap_or_default();
        artifacts.push(answer_artifact(answer));
    }
    Task { id: task_id.to_owned(), context_id, status, artifacts, history, metadata: None }
}

/// The status a stopped run left, read from its (settled) conversation
/// alone: for a run whose end was not logged (its process stopped first).
fn derived_status(task_id: &str, conversation: &Conversation) -> TaskStatus {
    let id = status_message_id(task_id, conversation.messages.len());
    if let Some(turn) = &conversation.paused {
        let transcript = Transcript { instructions: None, messages: conversation.messages.clone() };
        let mut message = approval_message(&RunState::join(transcript, turn.clone()));
        message.message_id = id;
        return TaskStatus { state: TaskState::InputRequired, message: Some(message), timestamp: None };
    }
    let answered = conversation
        .messages
        .last()
        .filter(|last| matches!(last, AgentMessage::Assistant { .. }) && last.calls().next().is_none());
    let (state, text) = match answered {
        Some(answer) => (TaskState::Completed, answer.text()),
        None => (
            TaskState::Failed,
            "The agent's run stopped before its end (its server stopped, or the run failed); what it did \
             so far is kept"
                .to_owned(),
        ),
    };
    let mut message = Message::agent(vec![Part::text(text)]);
    message.message_id = id;
    TaskStatus { state, message: Some(message), timestamp: None }
}

/// A tool result's parts beyond its text (JSON, images, files) and its
/// artifact, as an artifact of the task; `None` when it has none.
pub(crate) fn tool_artifact(result: &ToolResult) -> Option<Artifact> {
    let mut parts: Vec<Part> = result.parts.iter().filter_map(a2a_part).collect();
    if let Some(artifact) = &result.artifact {
        parts.push(Part::data(artifact.clone()));
    }
    if parts.is_empty() {
        return None;
    }
    Some(Artifact {
        artifact_id: format!("tool-{}", result.id),
        name: Some(result.name.to_string()),
        description: Some(format!("What the tool `{}` gave besides its text", result.name)),
        parts,
        metadata: None,
    })
}
