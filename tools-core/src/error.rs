//! The error contract: what a tool call can fail with, and what the model is
//! shown for each kind.

use std::fmt;

use crate::Outcome;

/// The boxed error inside [`ToolError::Failed`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a tool call did not produce content.
///
/// | variant | a failure? | the model is shown |
/// |---|---|---|
/// | [`ToolError::InvalidArguments`] | no | the reason, and an instruction to fix the arguments against the schema and call again |
/// | [`ToolError::Retry`] | no | the tool's own message, as it is |
/// | [`ToolError::Failed`] | yes | `{"error": "<message>"}`, always valid JSON |
///
/// Neither of the first two counts as a failure: the model made a mistake it
/// can correct, and the agent loop simply goes on. A failure is still not
/// fatal: the run continues and the model reads the error object.
///
/// Any [`std::error::Error`] and any `anyhow::Error` converts into
/// [`ToolError::Failed`] by `?`. For that reason `ToolError` itself does not
/// implement `std::error::Error` (the same trade-off `anyhow::Error` makes).
///
/// ```
/// use toolcall_core::ToolError;
///
/// fn parse_days(raw: &str) -> Result<u8, ToolError> {
///     let days: u8 = raw.parse()?; // any std error becomes ToolError::Failed
///     if days == 0 {
///         return Err(ToolError::retry("`days` must be at least 1: ask again with days >= 1"));
///     }
///     Ok(days)
/// }
/// assert!(parse_days("x").unwrap_err().is_failure());
/// assert!(!parse_days("0").unwrap_err().is_failure());
/// ```
#[non_exhaustive]
pub enum ToolError {
    /// The arguments do not match the schema. The reason names the field
    /// path and what was expected, e.g. ``at `days`: invalid type: string "three", expected u8``.
    InvalidArguments(String),
    /// The tool asks the model to try again, with this message (pydantic-ai's
    /// `ModelRetry`).
    Retry(String),
    /// Anything else went wrong while running the tool.
    Failed(BoxError),
    /// The call needs a person's approval and did not get it: it did not
    /// run. The message says why (denied, with the person's reason, or no
    /// one was asked).
    Denied(String),
}

impl ToolError {
    /// An invalid-arguments error with this reason.
    pub fn invalid_arguments(reason: impl Into<String>) -> Self {
        Self::InvalidArguments(reason.into())
    }

    /// Ask the model to retry, showing it this message.
    pub fn retry(message: impl Into<String>) -> Self {
        Self::Retry(message.into())
    }

    /// A failure with a plain message.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into().into())
    }

    /// A failure that may pass if the call is simply made again (an
    /// upstream timeout, a 503): [`ToolError::Failed`] to the model, and what
    /// [`layers::Rerun`](crate::layers::Rerun) runs again.
    ///
    /// ```
    /// use toolcall_core::ToolError;
    /// let err = ToolError::transient("the weather service answered 503");
    /// assert!(err.is_transient() && err.is_failure());
    /// assert_eq!(err.model_content(), r#"{"error":"the weather service answered 503"}"#);
    /// assert!(!ToolError::failed("no such city").is_transient());
    /// ```
    pub fn transient(error: impl Into<BoxError>) -> Self {
        Self::Failed(Box::new(Transient(error.into())))
    }

    /// Whether the tool marked this failure [transient](Self::transient).
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Failed(error) if error.is::<Transient>())
    }

    /// How a call that failed with this error ended: the [`Outcome`] of the
    /// same name.
    pub fn outcome(&self) -> Outcome {
        match self {
            Self::InvalidArguments(_) => Outcome::InvalidArguments,
            Self::Retry(_) => Outcome::Retry,
            Self::Failed(_) => Outcome::Failed,
            Self::Denied(_) => Outcome::Denied,
        }
    }

    /// Whether this counts as a failure of the tool (only [`ToolError::Failed`]):
    /// [`Outcome::is_failure`] of its [outcome](Self::outcome).
    pub fn is_failure(&self) -> bool {
        self.outcome().is_failure()
    }

    /// The content string the model is shown for this error.
    ///
    /// ```
    /// use toolcall_core::ToolError;
    /// assert_eq!(ToolError::failed("bad \"quote\"").model_content(), r#"{"error":"bad \"quote\""}"#);
    /// ```
    pub fn model_content(&self) -> String {
        match self {
            Self::InvalidArguments(reason) => invalid_arguments_content(reason),
            Self::Retry(message) => message.clone(),
            Self::Failed(error) => error_object(&error_chain(error.as_ref())),
            Self::Denied(message) => error_object(message),
        }
    }

    /// The error a call that ended with `outcome` and showed the model
    /// `content` failed with: the inverse of
    /// [`model_content`](Self::model_content), for a result that crossed a
    /// process (a remote MCP tool's), so that it reads the same here and
    /// is not wrapped twice. An outcome that is no error of a tool's (not
    /// found, timed out, cancelled, panicked) is [`ToolError::Failed`] with
    /// its message.
    ///
    /// ```
    /// use toolcall_core::{Outcome, ToolError};
    /// let error = ToolError::invalid_arguments("at `days`: expected u8");
    /// let again = ToolError::from_model_content(error.outcome(), &error.model_content());
    /// assert_eq!((again.outcome(), again.model_content()), (error.outcome(), error.model_content()));
    /// let timed_out = ToolError::from_model_content(Outcome::TimedOut, r#"{"error":"too slow"}"#);
    /// assert_eq!(timed_out.model_content(), r#"{"error":"too slow"}"#);
    /// ```
    pub fn from_model_content(outcome: Outcome, content: &str) -> Self {
        match outcome {
            Outcome::InvalidArguments => {
                let (before, after) = INVALID_ARGUMENTS;
                let reason = content.strip_prefix(before).and_then(|rest| rest.strip_suffix(after));
                Self::InvalidArguments(reason.unwrap_or(content).to_owned())
            }
            Outcome::Retry => Self::Retry(content.to_owned()),
            Outcome::Denied => Self::Denied(error_message(content)),
            _ => Self::failed(error_message(content)),
        }
    }
}

/// What the model reads before and after the reason when its arguments
/// were rejected.
const INVALID_ARGUMENTS: (&str, &str) =
    ("Invalid arguments: ", ". Fix the arguments to match the tool's JSON schema and call the tool again.");

/// What the model reads when its arguments were rejected.
fn invalid_arguments_content(reason: &str) -> String {
    let (before, after) = INVALID_ARGUMENTS;
    format!("{before}{reason}{after}")
}

/// The message of an `{"error": message}` content, or the content itself.
fn error_message(content: &str) -> String {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ErrorObject {
        error: String,
    }
    match serde_json::from_str::<ErrorObject>(content) {
        Ok(object) => object.error,
        Err(_) => content.to_owned(),
    }
}

/// `{"error": message}` as compact JSON; valid whatever the message holds.
/// The content of every ending that is not the tool's own answer.
pub(crate) fn error_object(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

/// The error and its sources, joined with `": "` as anyhow's `{:#}` does.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

/// The mark of a transient failure: shows and chains as the error it holds.
#[derive(Debug)]
struct Transient(BoxError);

impl fmt::Display for Transient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Transient {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArguments(reason) => write!(f, "invalid arguments: {reason}"),
            Self::Retry(message) => write!(f, "retry requested: {message}"),
            Self::Failed(error) => f.write_str(&error_chain(error.as_ref())),
            Self::Denied(message) => write!(f, "denied: {message}"),
        }
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArguments(reason) => f.debug_tuple("InvalidArguments").field(reason).finish(),
            Self::Retry(message) => f.debug_tuple("Retry").field(message).finish(),
            Self::Failed(error) => f.debug_tuple("Failed").field(error).finish(),
            Self::Denied(message) => f.debug_tuple("Denied").field(message).finish(),
        }
    }
}

/// Any error converts by `?`: std errors, `anyhow::Error` (its context chain
/// is kept as the source chain), `Box<dyn Error>`, and plain `String`/`&str`
/// messages.
impl<E: Into<BoxError>> From<E> for ToolError {
    fn from(error: E) -> Self {
        Self::Failed(error.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("reading the cache")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn failures_show_their_source_chain_as_json() {
        let err: ToolError = Outer(std::io::Error::other("disk \"full\"\nnow")).into();
        let content = err.model_content();
        let parsed: serde_json::Value = serde_json::from_str(&content).unwrap();
        assert_eq!(parsed["error"], "reading the cache: disk \"full\"\nnow");
        assert!(err.is_failure());
    }

    #[test]
    fn anyhow_context_is_kept() {
        let err: ToolError = anyhow::anyhow!("timeout").context("calling the API").into();
        assert_eq!(err.model_content(), r#"{"error":"calling the API: timeout"}"#);
    }

    #[test]
    fn invalid_arguments_and_retry_are_not_failures() {
        let invalid = ToolError::invalid_arguments("at `days`: expected u8");
        assert!(!invalid.is_failure());
        assert!(invalid.model_content().contains("at `days`: expected u8"));
        assert!(invalid.model_content().contains("schema"));
        let retry = ToolError::retry("try a bigger city");
        assert!(!retry.is_failure());
        assert_eq!(retry.model_content(), "try a bigger city");
    }

    #[test]
    fn non_ascii_messages_stay_valid_json() {
        let content = ToolError::failed("Zürich — 東京 \u{0}").model_content();
        let parsed: serde_json::Value = serde_json::from_str(&content).unwrap();
        assert_eq!(parsed["error"], "Zürich — 東京 \u{0}");
    }

    #[test]
    fn an_error_comes_back_whole_from_its_outcome_and_content() {
        let errors = [
            ToolError::invalid_arguments("at `days`: expected u8"),
            ToolError::retry("ask again with days >= 1"),
            ToolError::failed("bad \"quote\""),
            ToolError::Denied("no one was asked".into()),
        ];
        for error in errors {
            let again = ToolError::from_model_content(error.outcome(), &error.model_content());
            assert_eq!((again.outcome(), again.model_content()), (error.outcome(), error.model_content()));
        }
        // A text that is not this SDK's error object is the message, said once.
        let plain = ToolError::from_model_content(Outcome::Failed, "upstream said no");
        assert_eq!(plain.model_content(), r#"{"error":"upstream said no"}"#);
        let object = ToolError::from_model_content(Outcome::Failed, r#"{"error":"x","code":3}"#);
        assert_eq!(object.model_content(), r#"{"error":"{\"error\":\"x\",\"code\":3}"}"#);
    }
}
