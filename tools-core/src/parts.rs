//! What a tool gives back beyond its text: JSON, images and files for the
//! model, and an artifact for the application that the model never sees.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One part of what a tool shows the model.
///
/// ```
/// use toolcall_core::{Media, Part};
/// let chart = Part::Image(Media::bytes(vec![0x89, b'P', b'N', b'G'], "image/png"));
/// let json = serde_json::to_value(&chart).unwrap();
/// assert_eq!(json, serde_json::json!({"type": "image", "media_type": "image/png", "data": "iVBORw=="}));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Part {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// A JSON value, sent as JSON text where a provider takes only text.
    Json {
        /// The value.
        value: Value,
    },
    /// An image (PNG, JPEG, GIF, WebP...).
    Image(Media),
    /// A file or document (a PDF, a text file...).
    File(Media),
}

impl Part {
    /// A text part.
    ///
    /// ```
    /// use toolcall_core::{Media, Part};
    /// let prompt = [Part::text("What is on this chart?"), Part::image(Media::bytes(vec![1, 2], "image/png"))];
    /// assert_eq!(prompt[0], Part::Text { text: "What is on this chart?".into() });
    /// ```
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image part.
    pub fn image(image: Media) -> Self {
        Self::Image(image)
    }

    /// A file part (a PDF, a text file...).
    pub fn file(file: Media) -> Self {
        Self::File(file)
    }

    /// A JSON part.
    pub fn json(value: Value) -> Self {
        Self::Json { value }
    }

    /// The text of a text part; `None` for other parts.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// An image's or a file's content: its bytes or where to fetch it, its
/// media type, and a name for files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    /// The IANA media type: `image/png`, `application/pdf`...
    pub media_type: String,
    /// The bytes, or a URL.
    #[serde(flatten)]
    pub source: Source,
    /// A file name, for files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Where a [`Media`]'s content is: with it, or at a URL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The bytes themselves (base64 in JSON).
    Data(#[serde(with = "base64_text")] Vec<u8>),
    /// A URL the provider fetches.
    Url(String),
}

impl Media {
    /// Content given as bytes.
    pub fn bytes(bytes: impl Into<Vec<u8>>, media_type: impl Into<String>) -> Self {
        Self { media_type: media_type.into(), source: Source::Data(bytes.into()), name: None }
    }

    /// Content at a URL.
    pub fn url(url: impl Into<String>, media_type: impl Into<String>) -> Self {
        Self { media_type: media_type.into(), source: Source::Url(url.into()), name: None }
    }

    /// The same content under a file name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The bytes, when the content is given as bytes.
    pub fn data(&self) -> Option<&[u8]> {
        match &self.source {
            Source::Data(bytes) => Some(bytes),
            Source::Url(_) => None,
        }
    }

    /// The bytes as base64, as most providers take them.
    pub fn base64(&self) -> Option<String> {
        self.data().map(|bytes| STANDARD.encode(bytes))
    }

    /// The URL, when the content is at one.
    pub fn url_text(&self) -> Option<&str> {
        match &self.source {
            Source::Url(url) => Some(url),
            Source::Data(_) => None,
        }
    }

    /// How many bytes the content holds (0 for a URL).
    pub fn len(&self) -> usize {
        self.data().map_or(0, <[u8]>::len)
    }

    /// Whether there are no bytes (a URL, or empty content).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Base64 text for bytes in JSON, as providers and MCP carry them.
mod base64_text {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text.as_bytes()).map_err(serde::de::Error::custom)
    }
}

/// What one call gives back: the text the model reads, the parts that
/// follow it (JSON, images, files, more text), and an artifact for the
/// application, which no model sees and no cap cuts.
///
/// A tool that returns `String` (or any other [`ToolOutput`](crate::ToolOutput))
/// gives only text; return an `Output` for more.
///
/// ```
/// use toolcall_core::{Media, Output, Part};
///
/// let out = Output::text("The chart of the week:")
///     .with_image(Media::bytes(vec![1, 2, 3], "image/png"))
///     .with_artifact(serde_json::json!({"rows": 1200}));
/// assert_eq!(out.text, "The chart of the week:");
/// assert!(matches!(out.parts[0], Part::Image(_)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// The text the model reads first: the content of text-only formats.
    pub text: String,
    /// What follows the text, in order.
    pub parts: Vec<Part>,
    /// Data for the application: in the call's result, never in a request.
    pub artifact: Option<Value>,
}

impl Output {
    /// Text alone.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: text.into(), parts: Vec::new(), artifact: None }
    }

    /// This output with one more part.
    pub fn with(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }

    /// This output with an image.
    pub fn with_image(self, image: Media) -> Self {
        self.with(Part::Image(image))
    }

    /// This output with a file.
    pub fn with_file(self, file: Media) -> Self {
        self.with(Part::File(file))
    }

    /// This output with a JSON value.
    pub fn with_json(self, value: Value) -> Self {
        self.with(Part::Json { value })
    }

    /// This output with data for the application.
    pub fn with_artifact(mut self, artifact: Value) -> Self {
        self.artifact = Some(artifact);
        self
    }

    /// Whether it is text and nothing else.
    pub fn is_text_only(&self) -> bool {
        self.parts.is_empty() && self.artifact.is_none()
    }
}

impl From<String> for Output {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for Output {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}
