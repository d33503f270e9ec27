//! Reading a provider's response: the steps every dialect's call parser
//! shares.

use serde_json::Value;

use super::MessageError;

/// Deserialize a provider payload into `T`, naming the JSON path of the
/// first thing that does not fit.
pub(crate) fn read<T: serde::de::DeserializeOwned>(
    what: &'static str,
    value: &Value,
) -> Result<T, MessageError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner().to_string();
        if path == "." {
            MessageError::new(what, inner)
        } else {
            MessageError::new(what, format!("at `{path}`: {inner}"))
        }
    })
}

/// The list a caller passed: either the array itself (the Responses
/// `output`, a message's `content`, a content's `parts`) or the object that
/// holds it under `field`, so a whole response and the part a client kept
/// both parse. `expected` says what else was accepted, for the error.
pub(crate) fn list<'a>(
    what: &'static str,
    value: &'a Value,
    field: &str,
    expected: &str,
) -> Result<&'a [Value], MessageError> {
    match value {
        Value::Array(items) => Ok(items),
        Value::Object(object) => match object.get(field) {
            Some(Value::Array(items)) => Ok(items),
            Some(_) => Err(MessageError::new(what, format!("`{field}` is not an array"))),
            None => Err(MessageError::new(what, format!("no `{field}` array"))),
        },
        _ => Err(MessageError::new(what, expected.to_owned())),
    }
}
