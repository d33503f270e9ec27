//! Size and nesting limits, checked on the raw text before serde sees it, so
//! that a hostile argument can neither exhaust memory nor the stack.

use crate::ToolError;

/// The limits one tool's arguments must stay within, checked by the
/// argument pipeline ([`Parameters::parse`](crate::Parameters::parse)).
///
/// ```
/// use toolcall_core::{ArgumentLimits, Parameters};
/// let limits = ArgumentLimits::default().with_max_bytes(4096).with_max_depth(8);
/// let params = Parameters::of::<serde_json::Value>();
/// assert!(params.parse::<serde_json::Value>("{\"a\":[1,2]}", &limits).is_ok());
/// let err = params.parse::<serde_json::Value>(&"[".repeat(9), &limits).unwrap_err();
/// assert_eq!(err.to_string(), "invalid arguments: the arguments are nested more than 8 levels deep");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgumentLimits {
    /// The most bytes an argument string may have (default 1 MiB).
    pub max_bytes: usize,
    /// The deepest nesting of objects and arrays (default 64). A tool whose
    /// request type cannot nest this deep (no `Value`, open map or
    /// recursive type in it) skips the scan: serde refuses deeper input by
    /// its types, and skips keys the type does not name without recursion.
    pub max_depth: usize,
}

impl ArgumentLimits {
    /// The defaults: 1 MiB and 64 levels.
    pub const DEFAULT: Self = Self { max_bytes: 1 << 20, max_depth: 64 };

    /// The same limits with another size bound.
    pub const fn with_max_bytes(self, max_bytes: usize) -> Self {
        Self { max_bytes, ..self }
    }

    /// The same limits with another depth bound.
    pub const fn with_max_depth(self, max_depth: usize) -> Self {
        Self { max_depth, ..self }
    }

    /// Check the size of the raw string a model sent.
    pub(super) fn check_size(&self, raw: &str) -> Result<(), ToolError> {
        if raw.len() > self.max_bytes {
            return Err(ToolError::invalid_arguments(format!(
                "the arguments are {} bytes, more than the limit of {} bytes",
                raw.len(),
                self.max_bytes
            )));
        }
        Ok(())
    }

    /// Check the nesting depth of JSON text, ignoring brackets inside strings.
    pub(super) fn check_depth(&self, json: &str) -> Result<(), ToolError> {
        match too_deep(json.as_bytes(), self.max_depth) {
            None => Ok(()),
            Some(under) => {
                let under = match under.and_then(|key| json.get(key)) {
                    Some(key) => format!(", under the key `{key}`"),
                    None => String::new(),
                };
                Err(ToolError::invalid_arguments(format!(
                    "the arguments are nested more than {} levels deep{under}",
                    self.max_depth
                )))
            }
        }
    }
}

impl Default for ArgumentLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Whether the bracket nesting in `bytes` goes deeper than `max`, and if
/// so, the byte range of the top-level key it happened under (when the
/// top level is an object). Iterative, so any depth costs no stack;
/// string bodies are skipped with memchr.
fn too_deep(bytes: &[u8], max: usize) -> Option<Option<std::ops::Range<usize>>> {
    // Nesting never goes deeper than the count of opening brackets, which
    // memchr counts in a fraction of the scan's time.
    if memchr::memchr2_iter(b'{', b'[', bytes).count() <= max {
        return None;
    }
    let mut depth = 0usize;
    let mut in_object = false;
    // The last string at the top level of an object: the key of the value
    // that follows it.
    let mut key = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // An unterminated string: the parser will report it.
                let end = string_end(bytes, i + 1)?;
                if depth == 1 && in_object {
                    key = Some(i + 1..end);
                }
                i = end;
            }
            open @ (b'{' | b'[') => {
                depth += 1;
                if depth == 1 {
                    in_object = open == b'{';
                }
                if depth > max {
                    return Some(key);
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote that closes the string whose body starts at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let i = from + memchr::memchr2(b'"', b'\\', &bytes[from..])?;
        if bytes[i] == b'"' {
            return Some(i);
        }
        from = i + 2;
        if from > bytes.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_objects_and_arrays_but_not_strings() {
        assert!(too_deep(br#"{"a":{"b":[1]}}"#, 3).is_none());
        assert!(too_deep(br#"{"a":{"b":[1]}}"#, 2).is_some());
        assert!(too_deep(br#"{"a":"[[[[[[[[{{{{"}"#, 1).is_none());
        assert!(too_deep(br#"{"a":"\"[[[["}"#, 1).is_none());
        assert!(too_deep(br#"[[]] [[]] [[]]"#, 2).is_none());
        assert!(too_deep(br#"{"a":"\\"}"#, 1).is_none());
    }

    #[test]
    fn the_message_names_the_top_level_key_the_nesting_is_under() {
        let limits = ArgumentLimits::default().with_max_depth(3);
        let deep = r#"{"city":"Oslo","tags":["a"],"junk":{"x":[[[1]]]}}"#;
        let err = limits.check_depth(deep).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: the arguments are nested more than 3 levels deep, under the key `junk`"
        );
        // A top-level array has no keys to name.
        let err = limits.check_depth(r#"["a",[[[1]]]]"#).unwrap_err();
        assert_eq!(err.to_string(), "invalid arguments: the arguments are nested more than 3 levels deep");
    }

    #[test]
    fn very_deep_input_is_refused_without_recursion() {
        let deep = "[".repeat(1_000_000);
        let err = ArgumentLimits::default().check_depth(&deep).unwrap_err();
        assert!(err.to_string().contains("64 levels"), "{err}");
    }

    #[test]
    fn size_is_checked_and_stated() {
        let err = ArgumentLimits::default().with_max_bytes(10).check_size(&"x".repeat(11)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: the arguments are 11 bytes, more than the limit of 10 bytes"
        );
    }

    #[test]
    fn unterminated_and_trailing_escapes_do_not_panic() {
        for input in [r#"{"a":"\"#, r#""\"#, "\\", "\"", "]]]]", "{\"a\":\"\\u"] {
            let _ = too_deep(input.as_bytes(), 2);
        }
    }
}
