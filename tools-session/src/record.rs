//! How a message or a paused turn is written down: JSON, under a format
//! number, beside the version of this crate that wrote it, so a record
//! from a newer version is refused by name rather than misread.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{ConversationKey, StoreError};

/// The format this version writes and the newest it reads.
pub(crate) const FORMAT: i64 = 1;

/// Who writes: this crate and its version.
pub(crate) const WRITER: &str = env!("CARGO_PKG_VERSION");

/// A value as a record's JSON text.
pub(crate) fn write(value: &impl Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|error| StoreError::Database(Box::new(error)))
}

/// A record's value, or why it cannot be read.
pub(crate) fn read<T: DeserializeOwned>(
    key: &ConversationKey,
    record: impl FnOnce() -> String,
    (format, written_by): (i64, &str),
    text: &str,
) -> Result<T, StoreError> {
    if format > FORMAT {
        return Err(StoreError::NewerFormat {
            key: key.clone(),
            found: format,
            known: FORMAT,
            written_by: written_by.to_owned(),
            this: WRITER,
        });
    }
    serde_json::from_str(text).map_err(|source| StoreError::Unreadable {
        key: key.clone(),
        record: record(),
        written_by: written_by.to_owned(),
        source,
    })
}
