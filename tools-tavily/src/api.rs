//! One `POST /search`: the request, a size-capped read of the answer, and
//! the mapping of every way it can go wrong onto the error contract. All text
//! that came from the server or the network passes through [`ApiKey::redact`]
//! before it is put in an error.

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, RETRY_AFTER};
use reqwest::{Client, Response, StatusCode, Url};
use serde::Serialize;
use toolcall_core::ToolError;

use crate::key::ApiKey;
use crate::{SearchOptions, SearchResponse};

/// The largest answer read: raw content of 20 pages fits many times over,
/// a runaway body does not fill the memory.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// How much of an unexpected body an error shows.
const EXCERPT_CHARS: usize = 200;

/// The JSON body: the query beside the options.
#[derive(Serialize)]
struct Body<'a> {
    query: &'a str,
    #[serde(flatten)]
    options: &'a SearchOptions,
}

/// Everything one search needs, borrowed from the tool.
pub(crate) struct Search<'a> {
    pub(crate) client: &'a Client,
    pub(crate) endpoint: &'a Url,
    pub(crate) key: &'a ApiKey,
    pub(crate) options: &'a SearchOptions,
    pub(crate) timeout: Duration,
}

impl Search<'_> {
    /// Run the search for `query` (already checked to be non-blank).
    pub(crate) async fn run(&self, query: &str) -> Result<SearchResponse, ToolError> {
        let result = self.send(query).await;
        if let Err(error) = &result {
            tracing::warn!(error = %error, "Tavily search failed");
        }
        result
    }

    async fn send(&self, query: &str) -> Result<SearchResponse, ToolError> {
        tracing::debug!(endpoint = %self.endpoint, query, "Tavily search");
        let mut response = self
            .client
            .post(self.endpoint.clone())
            .header(AUTHORIZATION, self.key.header().clone())
            .timeout(self.timeout)
            .json(&Body { query, options: self.options })
            .send()
            .await
            .map_err(|error| self.transport_error(&error))?;
        let status = response.status();
        let retry_after = retry_after(&response);
        let body = read_capped(&mut response).await.map_err(|error| self.transport_error(&error))?;
        let Some(body) = body else {
            return Err(ToolError::failed(format!(
                "Tavily's answer (HTTP {}) is larger than {} MiB",
                status_text(status),
                MAX_BODY_BYTES / (1024 * 1024)
            )));
        };
        if !status.is_success() {
            return Err(self.status_error(status, retry_after, &body));
        }
        let parsed: SearchResponse = serde_json::from_slice(&body).map_err(|error| {
            ToolError::failed(self.key.redact(&format!(
                "Tavily's answer (HTTP {}) is not the expected JSON ({error}): {}",
                status_text(status),
                excerpt(&self.redacted(&body))
            )))
        })?;
        tracing::debug!(
            results = parsed.results.len(),
            answer = parsed.answer.is_some(),
            "Tavily search done"
        );
        Ok(parsed)
    }

    fn status_error(&self, status: StatusCode, retry_after: Option<u64>, body: &[u8]) -> ToolError {
        let status_text = status_text(status);
        let detail = detail(&self.redacted(body));
        match status.as_u16() {
            401 | 403 => ToolError::failed(format!(
                "Tavily rejected the API key (HTTP {status_text}): check the key in TAVILY_API_KEY ({detail})"
            )),
            429 => {
                let wait = retry_after.map_or(String::new(), |secs| format!(" for {secs} s"));
                ToolError::retry(format!(
                    "Tavily's rate limit was reached (HTTP 429): wait{wait}, then search again ({detail})"
                ))
            }
            // Tavily's codes for a key whose plan or spending limit is used up.
            432 | 433 => ToolError::failed(format!(
                "Tavily refused the search for this key (HTTP {status_text}): {detail}"
            )),
            _ if status.is_server_error() => {
                ToolError::failed(format!("Tavily failed (HTTP {status_text}): {detail}"))
            }
            _ => ToolError::failed(format!("Tavily rejected the search (HTTP {status_text}): {detail}")),
        }
    }

    /// The body as text without the key, before anything cuts it: a key
    /// echoed across the excerpt's end would otherwise leave a prefix behind.
    fn redacted(&self, body: &[u8]) -> String {
        self.key.redact(&String::from_utf8_lossy(body))
    }

    fn transport_error(&self, error: &reqwest::Error) -> ToolError {
        let message = if error.is_timeout() {
            format!("Tavily did not answer within {} s", self.timeout.as_secs_f32())
        } else if error.is_connect() {
            format!("could not connect to Tavily at {}: {}", self.endpoint, chain(error))
        } else {
            format!("the request to Tavily failed: {}", chain(error))
        };
        ToolError::failed(self.key.redact(&message))
    }
}

/// The body, or `None` if it is larger than [`MAX_BODY_BYTES`].
async fn read_capped(response: &mut Response) -> Result<Option<Vec<u8>>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// `Retry-After` in seconds, when the server sent it as a number.
fn retry_after(response: &Response) -> Option<u64> {
    response.headers().get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()
}

/// `429 Too Many Requests`, or just `432` for codes without a standard reason.
fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// Tavily's own error message (`{"detail": {"error": "..."}}`), or else an
/// excerpt of the body.
fn detail(body: &str) -> String {
    let message = serde_json::from_str::<serde_json::Value>(body).ok().and_then(|value| {
        let detail = value.get("detail")?;
        let text = detail.get("error").unwrap_or(detail);
        text.as_str().map(str::to_owned)
    });
    match message {
        Some(message) => excerpt(&message),
        None => excerpt(body),
    }
}

/// The first [`EXCERPT_CHARS`] characters of `body` on one line.
fn excerpt(body: &str) -> String {
    let mut out: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.is_empty() {
        return "empty body".into();
    }
    if let Some((cut, _)) = out.char_indices().nth(EXCERPT_CHARS) {
        out.truncate(cut);
        out.push('…');
    }
    out
}

/// The error and its causes, as anyhow's `{:#}` shows them.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_short_single_lines() {
        assert_eq!(excerpt(""), "empty body");
        assert_eq!(excerpt("<html>\n  <b>oops</b>\n</html>"), "<html> <b>oops</b> </html>");
        let long = "é".repeat(500);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn tavily_error_details_are_preferred() {
        assert_eq!(detail(r#"{"detail":{"error":"Query is too long."}}"#), "Query is too long.");
        assert_eq!(detail(r#"{"detail":"Not found"}"#), "Not found");
        assert_eq!(detail(r#"{"detail":[{"loc":["query"]}]}"#), r#"{"detail":[{"loc":["query"]}]}"#);
    }

    #[test]
    fn unknown_status_codes_show_their_number() {
        assert_eq!(status_text(StatusCode::from_u16(432).unwrap()), "432");
        assert_eq!(status_text(StatusCode::BAD_GATEWAY), "502 Bad Gateway");
    }
}
