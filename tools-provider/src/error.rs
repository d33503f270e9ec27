//! Why a toolset cannot be sent in a dialect, why a provider's message
//! could not be read, why a tool choice cannot be sent, and why a name is
//! no dialect's.

use super::Dialect;

/// A tool (or the whole toolset) that a dialect cannot express: found when
/// the definitions are built or exported, never at request time.
///
/// It names the tool, the dialect and the keyword or limit at fault:
///
/// ```
/// use toolcall_provider::{Dialect, DialectError};
/// let err = DialectError::tool("walk", Dialect::Gemini, "$ref", "the schema is recursive");
/// assert_eq!(err.to_string(), "tool `walk` cannot be sent as gemini: the schema is recursive (`$ref`)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} cannot be sent as {dialect}: {problem} (`{keyword}`)", subject(.tool))]
pub struct DialectError {
    /// The tool at fault; `None` when the toolset as a whole breaks a limit.
    pub tool: Option<String>,
    /// The dialect that cannot express it.
    pub dialect: Dialect,
    /// The schema keyword or the provider limit at fault.
    pub keyword: String,
    /// What is wrong, in words.
    pub problem: String,
}

fn subject(tool: &Option<String>) -> String {
    match tool {
        Some(name) => format!("tool `{name}`"),
        None => "the toolset".to_owned(),
    }
}

impl DialectError {
    /// A problem with one tool.
    pub fn tool(
        tool: impl Into<String>,
        dialect: Dialect,
        keyword: impl Into<String>,
        problem: impl Into<String>,
    ) -> Self {
        Self { tool: Some(tool.into()), dialect, keyword: keyword.into(), problem: problem.into() }
    }

    /// A problem with the toolset as a whole (too many tools).
    pub fn toolset(dialect: Dialect, keyword: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { tool: None, dialect, keyword: keyword.into(), problem: problem.into() }
    }
}

/// A provider response that is not shaped as the provider documents it, a
/// part of a tool's result or of a user message that a dialect cannot send
/// ([`Self::refused`]),
/// or a message asked of [`Dialect::Mcp`], which has none.
///
/// ```
/// use toolcall_provider::Dialect;
/// let err = Dialect::OpenAiChat.parse_calls(&serde_json::json!({"choices": 3})).unwrap_err();
/// assert!(err.to_string().starts_with("openai chat response: at `choices`"), "{err}");
/// ```
///
/// A refused part names the dialect, the tool and the part:
///
/// ```
/// use toolcall_core::{Media, Outcome, Part, ToolResult};
/// use toolcall_provider::{Dialect, PartOf};
/// let mut result = ToolResult::new("toolu_01", "scan", "The scan:", Outcome::Success);
/// result.parts.push(Part::Image(Media::bytes(vec![0x49, 0x49], "image/tiff")));
/// let err = Dialect::AnthropicStrict.format_results(&[result]).unwrap_err();
/// let refused = err.refused.as_ref().unwrap();
/// assert_eq!((refused.dialect, refused.index), (Dialect::AnthropicStrict, 0));
/// assert_eq!(refused.of, PartOf::ToolResult { tool: "scan".into(), call_id: "toolu_01".into() });
/// assert!(err.to_string().starts_with(
///     "anthropic-strict: the result of tool `scan` (call `toolu_01`) cannot be sent: parts[0], an image (image/tiff, bytes):"
/// ), "{err}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {problem}")]
pub struct MessageError {
    /// Which message was being read ("openai chat response"...), the
    /// dialect whose results could not be written, or `mcp`.
    pub what: &'static str,
    /// What did not fit, with the JSON path where there is one.
    pub problem: String,
    /// The part of a tool's result or of a user message that the dialect
    /// cannot send, when that is what went wrong (boxed: the error stays small for the `Ok` path).
    pub refused: Option<Box<RefusedPart>>,
}

impl MessageError {
    /// A message error with this context.
    pub fn new(what: &'static str, problem: impl Into<String>) -> Self {
        Self { what, problem: problem.into(), refused: None }
    }

    /// The same error, said of `dialect`: a provider module names its
    /// non-strict dialect, [`Dialect::format_results`] the one asked for.
    pub(crate) fn in_dialect(mut self, dialect: Dialect) -> Self {
        if let Some(refused) = &mut self.refused {
            refused.dialect = dialect;
            self.what = dialect.name();
        }
        self
    }
}

/// Which part of which message a dialect cannot send: the detail of a
/// [`MessageError`] from [`Dialect::format_results`] or from a provider
/// module's writer of a whole transcript. A part is never dropped
/// silently: an image type the provider does not read, a URL where it
/// takes only bytes, a file where it takes none is refused, naming it and
/// where it is ([`PartOf`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedPart {
    /// The dialect that cannot send it.
    pub dialect: Dialect,
    /// The message that holds it: a tool's result or a user message.
    pub of: PartOf,
    /// Its position in that message's parts.
    pub index: usize,
    /// What it is, in words: "an image (image/tiff, bytes)", "a file
    /// `notes.docx` (application/vnd...., at a URL)".
    pub part: String,
}

/// Where a [`RefusedPart`] is.
///
/// ```
/// use toolcall_provider::PartOf;
/// let of = PartOf::ToolResult { tool: "scan".into(), call_id: "toolu_01".into() };
/// assert_eq!(of.to_string(), "the result of tool `scan` (call `toolu_01`)");
/// assert_eq!(PartOf::UserMessage { message: 0 }.to_string(), "the user message at transcript messages[0]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PartOf {
    /// A tool's result ([`parts`](toolcall_core::ToolResult::parts)).
    ToolResult {
        /// The tool whose result holds it.
        tool: String,
        /// The id of the call the result answers.
        call_id: String,
    },
    /// A user message ([`Message::User`](crate::Message::User)'s parts).
    UserMessage {
        /// The message's position in the transcript's messages.
        message: usize,
    },
}

impl std::fmt::Display for PartOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ToolResult { tool, call_id } => write!(f, "the result of tool `{tool}` (call `{call_id}`)"),
            Self::UserMessage { message } => write!(f, "the user message at transcript messages[{message}]"),
        }
    }
}

/// A name that is no [`Dialect`]'s [name](Dialect::name): the error of
/// `"cohere".parse::<Dialect>()`, listing the names there are.
///
/// ```
/// use toolcall_provider::Dialect;
/// let err = "cohere".parse::<Dialect>().unwrap_err();
/// assert_eq!(err.name, "cohere");
/// assert!(err.to_string().starts_with("unknown dialect `cohere`; expected one of openai, openai-strict,"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect `{name}`; expected one of {}", known_names())]
pub struct UnknownDialect {
    /// The name that was given.
    pub name: String,
}

fn known_names() -> String {
    let known: Vec<&str> = Dialect::ALL.iter().map(|dialect| dialect.name()).collect();
    known.join(", ")
}

/// A [tool choice](crate::ToolChoice) or parallel setting that a dialect
/// cannot express, or a choice naming a tool the request does not offer:
/// the error of [`Dialect::tool_choice`], found before a request is sent.
///
/// It names what was asked and the dialect:
///
/// ```
/// use toolcall_core::Toolset;
/// use toolcall_provider::{Dialect, ToolChoice};
/// let err = Dialect::Mcp.tool_choice(&Toolset::new(), &ToolChoice::Required, None).unwrap_err();
/// assert_eq!(err.dialect, Dialect::Mcp);
/// assert_eq!(err.setting, "tool choice `required`");
/// assert!(err.to_string().starts_with("tool choice `required` cannot be sent as mcp: MCP has no tool choice"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{setting} cannot be sent as {dialect}: {problem}")]
pub struct ToolChoiceError {
    /// The dialect that cannot send it.
    pub dialect: Dialect,
    /// What was asked: "tool choice `allowed tools [a, b]`", "`parallel_tool_calls: false`".
    pub setting: String,
    /// Why it cannot be sent, in words.
    pub problem: String,
}
