//! What a tool's `run` returns, and how it becomes the content string the
//! model reads.

use std::borrow::Cow;

use serde::Serialize;

use crate::parts::Part;
use crate::{Output, ToolError};

/// A value a tool returns: it knows how to become the model's content string.
///
/// - `String`, `&str` and `Cow<str>` are the content as they are;
/// - numbers, `bool`, `serde_json::Value`, `Vec<T>` and `Option<T>` of
///   serializable values are compact JSON;
/// - any other `Serialize` type is compact JSON through [`Json`], or with
///   `#[derive(ToolOutput)]` from the `toolcall` crate;
/// - a type that should read differently implements this trait itself, or
///   wraps itself in [`Displayed`].
///
/// ```
/// use toolcall_core::{Json, ToolOutput};
///
/// #[derive(serde::Serialize)]
/// struct Weather { celsius: f32 }
///
/// assert_eq!(Json(Weather { celsius: 21.5 }).into_content().unwrap(), r#"{"celsius":21.5}"#);
/// assert_eq!("sunny".into_content().unwrap(), "sunny");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool output",
    label = "a tool returns a `ToolOutput` or a `Result<T, E>` whose `T` is one",
    note = "return `String`, `Json<T>` or `Displayed<T>`, or put `#[derive(ToolOutput)]` on `{Self}` (compact JSON of a `Serialize` type)"
)]
pub trait ToolOutput: Sized {
    /// The content string for the model. Fails only if serialization fails.
    ///
    /// # Errors
    ///
    /// An implementation returns [`ToolError::Failed`] when the value cannot become content
    /// (the built-in ones only when serialization fails); the model is shown that error.
    fn into_content(self) -> Result<String, ToolError>;

    /// The whole output: by default the content string alone; an
    /// [`Output`] gives its parts and artifact as well.
    ///
    /// # Errors
    ///
    /// What [`into_content`](Self::into_content) returns; an implementation that builds an
    /// [`Output`] of its own returns [`ToolError::Failed`] when it cannot.
    fn into_output(self) -> Result<Output, ToolError> {
        self.into_content().map(Output::text)
    }
}

impl ToolOutput for Output {
    /// The text, then each text and JSON part on a line of its own: what
    /// reads the output as text alone sees.
    fn into_content(self) -> Result<String, ToolError> {
        Ok(self.into_text())
    }

    fn into_output(self) -> Result<Output, ToolError> {
        Ok(self)
    }
}

/// Compact JSON of any serializable value, as the model's content.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// The value's `Display` text, as the model's content. (Not named `Display`,
/// which would shadow `std::fmt::Display` in a glob import of the crate.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Displayed<T>(pub T);

/// Compact JSON of `value`: the content of every serializable output.
///
/// # Errors
///
/// [`ToolError::Failed`] when `value` does not serialize: its `Serialize` impl fails, or it
/// is a map whose keys serde_json cannot write as strings.
pub fn to_json_content<T: Serialize + ?Sized>(value: &T) -> Result<String, ToolError> {
    serde_json::to_string(value)
        .map_err(|e| ToolError::failed(format!("the tool's output could not be serialized: {e}")))
}

impl<T: Serialize> ToolOutput for Json<T> {
    fn into_content(self) -> Result<String, ToolError> {
        to_json_content(&self.0)
    }
}

impl<T: std::fmt::Display> ToolOutput for Displayed<T> {
    fn into_content(self) -> Result<String, ToolError> {
        Ok(self.0.to_string())
    }
}

impl ToolOutput for String {
    fn into_content(self) -> Result<String, ToolError> {
        Ok(self)
    }
}

impl ToolOutput for &str {
    fn into_content(self) -> Result<String, ToolError> {
        Ok(self.to_owned())
    }
}

impl ToolOutput for Cow<'_, str> {
    fn into_content(self) -> Result<String, ToolError> {
        Ok(self.into_owned())
    }
}

/// What the model reads when a tool returns nothing: JSON's `null` reads
/// as a failure to produce a result.
const UNIT_CONTENT: &str = "done: the call succeeded and has no result to return";

impl ToolOutput for () {
    fn into_content(self) -> Result<String, ToolError> {
        Ok(UNIT_CONTENT.to_owned())
    }
}

macro_rules! json_output {
    ($($ty:ty),* $(,)?) => {$(
        impl ToolOutput for $ty {
            fn into_content(self) -> Result<String, ToolError> {
                to_json_content(&self)
            }
        }
    )*};
}

json_output!(
    serde_json::Value, serde_json::Map<String, serde_json::Value>, bool,
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64,
);

impl<T: Serialize> ToolOutput for Vec<T> {
    fn into_content(self) -> Result<String, ToolError> {
        to_json_content(&self)
    }
}

impl<T: Serialize> ToolOutput for Option<T> {
    fn into_content(self) -> Result<String, ToolError> {
        to_json_content(&self)
    }
}

impl Output {
    /// The output as text alone: the text, then each text and JSON part on a
    /// line of its own (images and files have no text).
    pub fn into_text(self) -> String {
        match self.to_text() {
            Cow::Owned(text) => text,
            Cow::Borrowed(_) => self.text,
        }
    }

    /// The output as text alone ([`Output::into_text`]), borrowed when it is
    /// the text and nothing more.
    pub fn to_text(&self) -> Cow<'_, str> {
        joined(&self.text, &self.parts)
    }
}

/// `text`, then each text and JSON part of `parts` on a line of its own
/// (images and files have no text): borrowed when there is nothing to add.
pub(crate) fn joined<'a>(text: &'a str, parts: &[Part]) -> Cow<'a, str> {
    if !parts.iter().any(|part| matches!(part, Part::Text { .. } | Part::Json { .. })) {
        return Cow::Borrowed(text);
    }
    let mut joined = text.to_owned();
    for part in parts {
        let piece = match part {
            Part::Text { text } => Cow::Borrowed(text.as_str()),
            Part::Json { value } => Cow::Owned(value.to_string()),
            _ => continue,
        };
        if !joined.is_empty() {
            joined.push('\n');
        }
        joined.push_str(&piece);
    }
    Cow::Owned(joined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn strings_are_content_as_they_are() {
        assert_eq!(String::from("a \"b\"").into_content().unwrap(), "a \"b\"");
        assert_eq!(Cow::Borrowed("x").into_content().unwrap(), "x");
    }

    #[test]
    fn values_are_compact_json() {
        let value = serde_json::json!({"a": [1, 2], "b": null});
        assert_eq!(value.into_content().unwrap(), r#"{"a":[1,2],"b":null}"#);
        assert_eq!(vec![1, 2].into_content().unwrap(), "[1,2]");
        assert_eq!(None::<u8>.into_content().unwrap(), "null");
        assert_eq!(Json(()).into_content().unwrap(), "null");
        assert_eq!(3.5f64.into_content().unwrap(), "3.5");
    }

    #[test]
    fn nothing_reads_as_done() {
        assert_eq!(().into_content().unwrap(), "done: the call succeeded and has no result to return");
    }

    #[test]
    fn display_renders_for_people() {
        assert_eq!(Displayed(std::net::Ipv4Addr::LOCALHOST).into_content().unwrap(), "127.0.0.1");
    }

    #[test]
    fn unserializable_output_is_a_failure_not_a_panic() {
        let mut map = BTreeMap::new();
        map.insert(vec![1u8], 1);
        let err = Json(map).into_content().unwrap_err();
        assert!(err.is_failure());
        assert!(err.to_string().contains("could not be serialized"), "{err}");
    }
}
