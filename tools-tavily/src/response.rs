//! What a search returns: compact JSON for the model, plain text for people.

use std::fmt;

use serde::{Deserialize, Serialize};
use toolcall_core::{Json, ToolError, ToolOutput};

/// The results of one search, parsed from the API's response. Fields the
/// API adds that the model has no use for (timings, request ids) are dropped;
/// fields that are absent are left out of the model's JSON too.
///
/// ```
/// use toolcall_tavily::{SearchResponse, SearchResult};
/// use toolcall_core::ToolOutput;
///
/// let response = SearchResponse {
///     answer: Some("Paris.".into()),
///     results: vec![SearchResult::new("France", "https://en.wikipedia.org/wiki/France", "Its capital is Paris.", 0.9)],
///     images: vec![],
/// };
/// let text = response.to_string();
/// assert!(text.starts_with("ANSWER: Paris.\n\nURL: https://en.wikipedia.org/wiki/France\nTITLE: France\n"));
/// assert_eq!(
///     response.into_content().unwrap(),
///     r#"{"answer":"Paris.","results":[{"title":"France","url":"https://en.wikipedia.org/wiki/France","content":"Its capital is Paris.","score":0.9}]}"#
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchResponse {
    /// The answer Tavily wrote from the results, when one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The results, most relevant first.
    pub results: Vec<SearchResult>,
    /// Images related to the query, when asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// One page found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchResult {
    /// The page's title.
    #[serde(default)]
    pub title: String,
    /// The page's URL.
    pub url: String,
    /// A summary of the page or its chunks most relevant to the query.
    #[serde(default)]
    pub content: String,
    /// How relevant the page is to the query, 0 to 1.
    #[serde(default)]
    pub score: f64,
    /// The page's full text, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_content: Option<String>,
    /// When the page was published (news results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_date: Option<String>,
    /// The site's favicon, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub favicon: Option<String>,
}

impl SearchResult {
    /// A result with a title, URL, content and score, and nothing else.
    pub fn new(
        title: impl Into<String>,
        url: impl Into<String>,
        content: impl Into<String>,
        score: f64,
    ) -> Self {
        Self { title: title.into(), url: url.into(), content: content.into(), score, ..Self::default() }
    }
}

/// An image related to the query. The API sends a bare URL, or an object
/// when descriptions were asked for; both parse.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "ImageWire")]
pub struct Image {
    /// The image's URL.
    pub url: String,
    /// What the image shows, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ImageWire {
    Url(String),
    Described {
        url: String,
        #[serde(default)]
        description: Option<String>,
    },
}

impl From<ImageWire> for Image {
    fn from(wire: ImageWire) -> Self {
        match wire {
            ImageWire::Url(url) => Self { url, description: None },
            ImageWire::Described { url, description } => Self { url, description },
        }
    }
}

/// Compact JSON: what the model reads.
impl ToolOutput for SearchResponse {
    fn into_content(self) -> Result<String, ToolError> {
        Json(&self).into_content()
    }
}

/// For people: the answer, then URL, title, score and content of each result.
impl fmt::Display for SearchResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        if let Some(answer) = &self.answer {
            writeln!(f, "ANSWER: {answer}")?;
            first = false;
        }
        for result in &self.results {
            if !std::mem::take(&mut first) {
                writeln!(f)?;
            }
            writeln!(f, "URL: {}", result.url)?;
            writeln!(f, "TITLE: {}", result.title)?;
            writeln!(f, "SCORE: {:.2}", result.score)?;
            writeln!(f, "CONTENT: {}", result.content)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_api_response_and_drops_what_the_model_does_not_need() {
        let body = serde_json::json!({
            "query": "q", "response_time": 1.2, "request_id": "r1", "usage": {"credits": 1},
            "answer": null,
            "images": ["https://i/1.png", {"url": "https://i/2.png", "description": "a cat"}],
            "results": [{
                "title": "T", "url": "https://u", "content": "C", "score": 0.5,
                "raw_content": null, "published_date": "Mon, 01 Dec 2025", "favicon": "https://u/f.ico"
            }]
        });
        let parsed: SearchResponse = serde_json::from_value(body).unwrap();
        assert_eq!(parsed.answer, None);
        assert_eq!(parsed.images[0], Image { url: "https://i/1.png".into(), description: None });
        assert_eq!(parsed.images[1].description.as_deref(), Some("a cat"));
        assert_eq!(parsed.results[0].published_date.as_deref(), Some("Mon, 01 Dec 2025"));
        let content = parsed.into_content().unwrap();
        assert!(
            !content.contains("request_id")
                && !content.contains("raw_content")
                && !content.contains("answer")
        );
        assert!(content.contains(
            r#""images":[{"url":"https://i/1.png"},{"url":"https://i/2.png","description":"a cat"}]"#
        ));
    }

    #[test]
    fn display_without_answer_or_results() {
        assert_eq!(SearchResponse::default().to_string(), "");
        let one = SearchResponse {
            results: vec![SearchResult::new("T", "https://u", "C", 0.456)],
            ..Default::default()
        };
        assert_eq!(one.to_string(), "URL: https://u\nTITLE: T\nSCORE: 0.46\nCONTENT: C\n");
    }
}
