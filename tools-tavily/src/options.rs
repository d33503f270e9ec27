//! The search options a [`Tavily`](crate::Tavily) sends with every query:
//! set by the program, never by the model.

use serde::{Serialize, Serializer};

use crate::TavilyError;

/// Most results one search may return (the API's own limit).
pub const MAX_RESULTS: u8 = 20;
/// Most domains `include_domains` may list.
pub const MAX_INCLUDE_DOMAINS: usize = 300;
/// Most domains `exclude_domains` may list.
pub const MAX_EXCLUDE_DOMAINS: usize = 150;

/// How hard Tavily searches: a trade of latency (and credits) for relevance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum SearchDepth {
    /// Lowest latency; a summary of each page.
    UltraFast,
    /// Low latency; the page's chunks most relevant to the query.
    Fast,
    /// Balanced; a summary of each page (1 credit).
    #[default]
    Basic,
    /// Most relevant; the best chunks of each page (2 credits).
    Advanced,
}

/// The kind of sources searched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Topic {
    /// Any source.
    #[default]
    General,
    /// News media; results carry a `published_date`.
    News,
    /// Financial sources.
    Finance,
}

/// How far back results may have been published or updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeRange {
    /// The last day.
    Day,
    /// The last week.
    Week,
    /// The last month.
    Month,
    /// The last year.
    Year,
}

/// Whether Tavily also writes an answer to the query from the results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Answer {
    /// No answer.
    None,
    /// A quick answer.
    #[default]
    Basic,
    /// A more detailed answer.
    Advanced,
}

impl Serialize for Answer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::None => serializer.serialize_bool(false),
            Self::Basic => serializer.serialize_str("basic"),
            Self::Advanced => serializer.serialize_str("advanced"),
        }
    }
}

/// Whether each result also carries the page's full cleaned text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RawContent {
    /// Only the summary or chunks in `content`.
    #[default]
    None,
    /// The page as Markdown.
    Markdown,
    /// The page as plain text.
    Text,
}

impl RawContent {
    fn is_none(&self) -> bool {
        *self == Self::None
    }
}

impl Serialize for RawContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::None => serializer.serialize_bool(false),
            Self::Markdown => serializer.serialize_str("markdown"),
            Self::Text => serializer.serialize_str("text"),
        }
    }
}

/// The options of every search, serialized as the body of `POST /search`
/// (beside the query). Defaults: basic depth, general topic, a basic answer,
/// 5 results; everything else left to the API.
///
/// The setters only record; [`Tavily::with_search_opts`](crate::Tavily::with_search_opts)
/// checks the whole set against the API's limits.
///
/// ```
/// use toolcall_tavily::{Answer, SearchDepth, SearchOptions, TimeRange, Topic};
///
/// let opts = SearchOptions::new()
///     .with_search_depth(SearchDepth::Advanced)
///     .with_topic(Topic::News)
///     .with_time_range(TimeRange::Week)
///     .with_include_answer(Answer::None)
///     .with_max_results(10)
///     .with_include_domains(["reuters.com", "apnews.com"]);
/// let body = serde_json::to_value(&opts).unwrap();
/// assert_eq!(body["search_depth"], "advanced");
/// assert_eq!(body["include_answer"], false);
/// assert_eq!(body["include_domains"][1], "apnews.com");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SearchOptions {
    search_depth: SearchDepth,
    topic: Topic,
    include_answer: Answer,
    max_results: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    chunks_per_source: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time_range: Option<TimeRange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    days: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_date: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_date: Option<String>,
    #[serde(skip_serializing_if = "RawContent::is_none")]
    include_raw_content: RawContent,
    #[serde(skip_serializing_if = "is_false")]
    include_images: bool,
    #[serde(skip_serializing_if = "is_false")]
    include_image_descriptions: bool,
    #[serde(skip_serializing_if = "is_false")]
    include_favicon: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include_domains: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    exclude_domains: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    country: Option<String>,
    #[serde(skip_serializing_if = "is_false")]
    auto_parameters: bool,
    #[serde(skip_serializing_if = "is_false")]
    exact_match: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            search_depth: SearchDepth::Basic,
            topic: Topic::General,
            include_answer: Answer::Basic,
            max_results: 5,
            chunks_per_source: None,
            time_range: None,
            days: None,
            start_date: None,
            end_date: None,
            include_raw_content: RawContent::None,
            include_images: false,
            include_image_descriptions: false,
            include_favicon: false,
            include_domains: Vec::new(),
            exclude_domains: Vec::new(),
            country: None,
            auto_parameters: false,
            exact_match: false,
        }
    }
}

impl SearchOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// How hard to search.
    pub fn with_search_depth(mut self, depth: SearchDepth) -> Self {
        self.search_depth = depth;
        self
    }

    /// Which kind of sources to search.
    pub fn with_topic(mut self, topic: Topic) -> Self {
        self.topic = topic;
        self
    }

    /// Whether to ask for an answer written from the results.
    pub fn with_include_answer(mut self, answer: Answer) -> Self {
        self.include_answer = answer;
        self
    }

    /// How many results, 0 to [`MAX_RESULTS`].
    pub fn with_max_results(mut self, max_results: u8) -> Self {
        self.max_results = max_results;
        self
    }

    /// How many chunks of each page (1 to 3) the `fast` and `advanced`
    /// depths put in `content`.
    pub fn with_chunks_per_source(mut self, chunks: u8) -> Self {
        self.chunks_per_source = Some(chunks);
        self
    }

    /// Only results published or updated within this range.
    pub fn with_time_range(mut self, range: TimeRange) -> Self {
        self.time_range = Some(range);
        self
    }

    /// Only news of the last `days` days (at least 1; [`Topic::News`] only).
    pub fn with_days(mut self, days: u32) -> Self {
        self.days = Some(days);
        self
    }

    /// Only results published on or after this date, `YYYY-MM-DD`.
    pub fn with_start_date(mut self, date: impl Into<String>) -> Self {
        self.start_date = Some(date.into());
        self
    }

    /// Only results published on or before this date, `YYYY-MM-DD`.
    pub fn with_end_date(mut self, date: impl Into<String>) -> Self {
        self.end_date = Some(date.into());
        self
    }

    /// Whether each result also carries the page's full text, and in which form.
    pub fn with_include_raw_content(mut self, raw: RawContent) -> Self {
        self.include_raw_content = raw;
        self
    }

    /// Also search for images related to the query.
    pub fn with_include_images(mut self, yes: bool) -> Self {
        self.include_images = yes;
        self
    }

    /// Describe each image (with [`SearchOptions::with_include_images`]).
    pub fn with_include_image_descriptions(mut self, yes: bool) -> Self {
        self.include_image_descriptions = yes;
        self
    }

    /// Give each result its site's favicon URL.
    pub fn with_include_favicon(mut self, yes: bool) -> Self {
        self.include_favicon = yes;
        self
    }

    /// Only results from these domains (at most [`MAX_INCLUDE_DOMAINS`]).
    pub fn with_include_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.include_domains = domains.into_iter().map(Into::into).collect();
        self
    }

    /// Never results from these domains (at most [`MAX_EXCLUDE_DOMAINS`]).
    pub fn with_exclude_domains<S: Into<String>>(mut self, domains: impl IntoIterator<Item = S>) -> Self {
        self.exclude_domains = domains.into_iter().map(Into::into).collect();
        self
    }

    /// Boost results from this country, named in English as the API spells
    /// it (`"united states"`, `"france"`; sent lower-cased; [`Topic::General`] only).
    pub fn with_country(mut self, country: impl Into<String>) -> Self {
        self.country = Some(country.into().trim().to_lowercase());
        self
    }

    /// Let Tavily choose the other parameters from the query (a beta of the
    /// API; it may pick the advanced depth, which costs 2 credits).
    pub fn with_auto_parameters(mut self, yes: bool) -> Self {
        self.auto_parameters = yes;
        self
    }

    /// Only results that contain the query's quoted phrases word for word
    /// (`"John Smith" CEO`): for names and exact wording.
    pub fn with_exact_match(mut self, yes: bool) -> Self {
        self.exact_match = yes;
        self
    }

    /// Check the options against the API's limits, naming the first one
    /// that is out of them.
    ///
    /// # Errors
    ///
    /// [`TavilyError::InvalidOption`], naming the option and the accepted range, for the first
    /// option out of the API's limits (`max_results`, `days`, the dates, the domain lists...).
    pub fn validate(&self) -> Result<(), TavilyError> {
        let invalid = |option, reason: String| Err(TavilyError::InvalidOption { option, reason });
        if self.max_results > MAX_RESULTS {
            return invalid("max_results", format!("must be 0 to {MAX_RESULTS}, not {}", self.max_results));
        }
        if let Some(chunks) = self.chunks_per_source
            && !(1..=3).contains(&chunks)
        {
            return invalid("chunks_per_source", format!("must be 1 to 3, not {chunks}"));
        }
        if self.days == Some(0) {
            return invalid("days", "must be at least 1".into());
        }
        for (option, date) in [("start_date", &self.start_date), ("end_date", &self.end_date)] {
            if let Some(date) = date
                && !is_iso_date(date)
            {
                return invalid(option, format!("must be a date as YYYY-MM-DD, not {date:?}"));
            }
        }
        if let (Some(start), Some(end)) = (&self.start_date, &self.end_date)
            && start > end
        {
            return invalid("start_date", format!("{start} is after end_date {end}"));
        }
        let lists = [
            ("include_domains", &self.include_domains, MAX_INCLUDE_DOMAINS),
            ("exclude_domains", &self.exclude_domains, MAX_EXCLUDE_DOMAINS),
        ];
        for (option, domains, max) in lists {
            if domains.len() > max {
                return invalid(option, format!("may list at most {max} domains, not {}", domains.len()));
            }
            if domains.iter().any(|domain| domain.trim().is_empty()) {
                return invalid(option, "holds an empty domain".into());
            }
        }
        if self.country.as_deref() == Some("") {
            return invalid("country", "is empty".into());
        }
        Ok(())
    }
}

/// `YYYY-MM-DD` with a plausible month and day; the API checks the calendar.
fn is_iso_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' || !digits(0..4) || !digits(5..7) {
        return false;
    }
    if !digits(8..10) {
        return false;
    }
    let month = (bytes[5] - b'0') * 10 + (bytes[6] - b'0');
    let day = (bytes[8] - b'0') * 10 + (bytes[9] - b'0');
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(opts: SearchOptions) -> String {
        opts.validate().unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_basic_general_answered_five() {
        let body = serde_json::to_value(SearchOptions::new()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "search_depth": "basic", "topic": "general", "include_answer": "basic", "max_results": 5
            })
        );
    }

    #[test]
    fn every_enum_maps_to_the_api_spelling() {
        let spell = |value: serde_json::Value| value.to_string();
        assert_eq!(spell(serde_json::to_value(SearchDepth::UltraFast).unwrap()), r#""ultra-fast""#);
        assert_eq!(spell(serde_json::to_value(SearchDepth::Fast).unwrap()), r#""fast""#);
        assert_eq!(spell(serde_json::to_value(Topic::Finance).unwrap()), r#""finance""#);
        assert_eq!(spell(serde_json::to_value(TimeRange::Month).unwrap()), r#""month""#);
        assert_eq!(spell(serde_json::to_value(Answer::Advanced).unwrap()), r#""advanced""#);
        assert_eq!(spell(serde_json::to_value(RawContent::Text).unwrap()), r#""text""#);
        assert_eq!(spell(serde_json::to_value(RawContent::Markdown).unwrap()), r#""markdown""#);
    }

    #[test]
    fn limits_are_checked_and_named() {
        assert!(SearchOptions::new().with_max_results(0).validate().is_ok());
        assert!(SearchOptions::new().with_max_results(20).validate().is_ok());
        assert!(
            reason(SearchOptions::new().with_max_results(21))
                .contains("`max_results`: must be 0 to 20, not 21")
        );
        assert!(reason(SearchOptions::new().with_chunks_per_source(0)).contains("chunks_per_source"));
        assert!(reason(SearchOptions::new().with_chunks_per_source(4)).contains("1 to 3, not 4"));
        assert!(reason(SearchOptions::new().with_days(0)).contains("`days`"));
        assert!(reason(SearchOptions::new().with_start_date("2025-1-01")).contains("YYYY-MM-DD"));
        assert!(reason(SearchOptions::new().with_end_date("2025-13-01")).contains("end_date"));
        assert!(
            reason(SearchOptions::new().with_start_date("2025-03-01").with_end_date("2025-02-01"))
                .contains("after")
        );
        assert!(reason(SearchOptions::new().with_include_domains([" "])).contains("empty domain"));
        assert!(
            reason(SearchOptions::new().with_exclude_domains(vec!["a.com"; 151])).contains("at most 150")
        );
        assert!(
            reason(SearchOptions::new().with_include_domains(vec!["a.com"; 301])).contains("at most 300")
        );
        assert!(reason(SearchOptions::new().with_country("  ")).contains("country"));
        let fine = SearchOptions::new()
            .with_start_date("2025-01-01")
            .with_end_date("2025-03-31")
            .with_country("France");
        assert!(fine.validate().is_ok());
        assert_eq!(serde_json::to_value(&fine).unwrap()["country"], "france");
    }
}
