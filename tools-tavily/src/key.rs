//! The API key: kept out of `Debug`, errors and logs.

use std::fmt;

use reqwest::header::HeaderValue;

use crate::TavilyError;

/// What stands in for the key wherever text might show it.
pub(crate) const REDACTED: &str = "[redacted]";

/// A Tavily API key. Its `Debug` never shows it, and [`ApiKey::redact`]
/// scrubs it from text that came from elsewhere (a server may echo it).
#[derive(Clone)]
pub(crate) struct ApiKey {
    key: String,
    /// `Bearer <key>`, built once and marked sensitive so that reqwest and
    /// hyper never print it either.
    header: HeaderValue,
}

impl ApiKey {
    /// Check the key and build its header. The error never holds the key.
    pub(crate) fn new(key: String) -> Result<Self, TavilyError> {
        let key = key.trim().to_owned();
        if key.is_empty() {
            return Err(TavilyError::EmptyApiKey);
        }
        let mut header =
            HeaderValue::try_from(format!("Bearer {key}")).map_err(|_| TavilyError::MalformedApiKey)?;
        header.set_sensitive(true);
        Ok(Self { key, header })
    }

    /// The `Authorization` header value.
    pub(crate) fn header(&self) -> &HeaderValue {
        &self.header
    }

    /// `text` with every occurrence of the key replaced by [`REDACTED`].
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&self.key, REDACTED)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_shows() {
        let key = ApiKey::new("tvly-secret-123".into()).unwrap();
        assert_eq!(format!("{key:?}"), REDACTED);
        assert_eq!(key.redact("bad key tvly-secret-123!"), "bad key [redacted]!");
        assert!(key.header().is_sensitive());
        assert!(!format!("{:?}", key.header()).contains("secret"));
    }

    #[test]
    fn blank_and_unsendable_keys_are_refused_without_echo() {
        assert!(matches!(ApiKey::new("  ".into()), Err(TavilyError::EmptyApiKey)));
        let err = ApiKey::new("tvly-bad\nkey".into()).unwrap_err();
        assert!(matches!(err, TavilyError::MalformedApiKey));
        assert!(!err.to_string().contains("tvly-bad"));
    }
}
