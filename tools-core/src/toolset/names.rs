//! The rules a tool name must follow.

/// The name providers reserve for their own web search tool.
pub const RESERVED_WEB_SEARCH: &str = "web_search";

/// The name of the tool search entry ([`ToolSearch`](super::ToolSearch)).
pub const RESERVED_TOOL_SEARCH: &str = "tool_search";

/// Whether no tool may be registered under this name (ignoring case).
pub(super) fn is_reserved(name: &str) -> bool {
    [RESERVED_WEB_SEARCH, RESERVED_TOOL_SEARCH].iter().any(|reserved| name.eq_ignore_ascii_case(reserved))
}

/// Why a name was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The name is empty or longer than 64 characters.
    #[error("tool name `{name}` is {len} characters long; names must have 1 to 64")]
    Length {
        /// The refused name.
        name: String,
        /// Its length in characters.
        len: usize,
    },
    /// The name holds a character outside `[a-zA-Z0-9_-]`.
    #[error("tool name `{name}` contains {found:?}; names may only contain a-z, A-Z, 0-9, `_` and `-`")]
    Character {
        /// The refused name.
        name: String,
        /// The first character that is not allowed.
        found: char,
    },
}

/// Check a name against `^[a-zA-Z0-9_-]{1,64}$`, the set every provider
/// (OpenAI, Anthropic, Gemini, MCP) accepts.
///
/// ```
/// use toolcall_core::toolset::validate_name;
/// assert!(validate_name("get_weather").is_ok());
/// assert!(validate_name("get.weather").is_err());
/// ```
///
/// # Errors
///
/// [`NameError::Length`] when the name is empty or over 64 characters;
/// [`NameError::Character`] when it holds a character outside `[a-zA-Z0-9_-]`.
pub fn validate_name(name: &str) -> Result<(), NameError> {
    let len = name.chars().count();
    if len == 0 || len > 64 {
        return Err(NameError::Length { name: name.to_owned(), len });
    }
    match name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        Some(found) => Err(NameError::Character { name: name.to_owned(), found }),
        None => Ok(()),
    }
}
