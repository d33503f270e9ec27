//! How much of one call's output a model reads: text past the cap keeps its
//! head and tail around a marker saying how much was cut; an image or file
//! past the cap is refused with an error the model reads. The artifact is
//! the application's and is never cut.

use std::borrow::Cow;

use super::{ToolOptions, TurnOptions};
use crate::{Output, Part, ToolError};

/// The most one call may show a model: characters of text (its text parts
/// and JSON counted with it) and bytes of each image or file.
///
/// ```
/// use toolcall_core::toolset::{OutputCap, TurnOptions, ToolOptions};
/// // Every tool of the toolset: 20,000 characters; one chatty tool: 2,000.
/// let options = TurnOptions::new().with_output_cap(OutputCap::chars(20_000));
/// let chatty = ToolOptions::new().with_output_cap(OutputCap::chars(2_000));
/// # let _ = (options, chatty);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputCap {
    /// Characters of text, all text and JSON parts of the call together.
    pub max_chars: usize,
    /// Bytes of each image or file.
    pub max_media_bytes: usize,
}

impl Default for OutputCap {
    /// 100,000 characters (some 25,000 tokens) and 20 MiB a file.
    fn default() -> Self {
        Self { max_chars: 100_000, max_media_bytes: 20 << 20 }
    }
}

impl OutputCap {
    /// No cap at all.
    pub const NONE: Self = Self { max_chars: usize::MAX, max_media_bytes: usize::MAX };

    /// At most `max_chars` characters, and the default for files.
    pub fn chars(max_chars: usize) -> Self {
        Self { max_chars, ..Self::default() }
    }

    /// The same cap with another limit for each image or file.
    pub fn with_media_bytes(mut self, max: usize) -> Self {
        self.max_media_bytes = max;
        self
    }

    /// The output as a model may read it: text cut to fit, an oversize
    /// image or file an error naming it.
    pub(super) fn apply(self, mut output: Output, tool: &str) -> Result<Output, ToolError> {
        for part in &output.parts {
            let (kind, media) = match part {
                Part::Image(media) => ("an image", media),
                Part::File(media) => ("a file", media),
                _ => continue,
            };
            if media.len() > self.max_media_bytes {
                let name = media.name.as_deref().map(|name| format!(" (`{name}`)")).unwrap_or_default();
                return Err(ToolError::failed(format!(
                    "tool `{tool}` returned {kind}{name} of {} bytes, more than the {} a call may show: \
                     it was not sent",
                    media.len(),
                    self.max_media_bytes
                )));
            }
        }
        // The common case costs a length check: bytes bound characters.
        let bytes: usize = output.text.len() + output.parts.iter().map(text_len).sum::<usize>();
        if bytes <= self.max_chars {
            return Ok(output);
        }
        let mut left = self.max_chars;
        output.text = fit(output.text, &mut left);
        let mut started = !output.text.is_empty();
        let parts = std::mem::take(&mut output.parts);
        for part in parts {
            let text = match part {
                Part::Text { text } => text,
                Part::Json { value } => match value.to_string() {
                    json if json.chars().count() + usize::from(started) <= left => {
                        left -= json.chars().count() + usize::from(started);
                        started = true;
                        output.parts.push(Part::Json { value });
                        continue;
                    }
                    json => json,
                },
                media => {
                    output.parts.push(media);
                    continue;
                }
            };
            // Text is read joined by newlines ([`Output::to_text`]): each
            // piece after the first costs one more character.
            left = left.saturating_sub(usize::from(started));
            let text = fit(text, &mut left);
            if !text.is_empty() {
                started = true;
                output.parts.push(Part::Text { text });
            }
        }
        Ok(output)
    }
}

/// The bytes of a part's text, or of its JSON (an upper bound, cheaply).
fn text_len(part: &Part) -> usize {
    match part {
        Part::Text { text } => text.len(),
        // Serialized only when the whole output may be over the cap.
        Part::Json { value } => value.to_string().len(),
        _ => 0,
    }
}

/// `text` cut to what is `left`, which it then uses up.
fn fit(text: String, left: &mut usize) -> String {
    let fitted = match truncate(&text, *left) {
        Cow::Borrowed(_) => text,
        Cow::Owned(cut) => cut,
    };
    *left = left.saturating_sub(fitted.chars().count());
    fitted
}

/// `text` in at most `max_chars` characters: itself when it fits, else its
/// head and tail around a line that says how many characters were cut. Cuts
/// fall between characters, never inside one.
///
/// ```
/// use toolcall_core::toolset::truncate;
/// let long = "a".repeat(50) + &"z".repeat(50);
/// let cut = truncate(&long, 40);
/// assert!(cut.chars().count() <= 40);
/// assert!(cut.starts_with("aaaa") && cut.ends_with("zzzz"));
/// assert!(cut.contains("characters cut"), "{cut}");
/// assert_eq!(truncate("short", 40), "short");
/// ```
pub fn truncate(text: &str, max_chars: usize) -> Cow<'_, str> {
    if text.len() <= max_chars {
        return Cow::Borrowed(text);
    }
    let total = text.chars().count();
    if total <= max_chars {
        return Cow::Borrowed(text);
    }
    let marker = |cut: usize| format!("\n[… {cut} characters cut …]\n");
    // The cut is at most the total, so its marker is no longer than this.
    let longest = marker(total).chars().count();
    if max_chars <= longest {
        return Cow::Owned(text.chars().take(max_chars).collect());
    }
    let keep = max_chars - longest;
    let (head, tail) = (keep.div_ceil(2), keep / 2);
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(at, _)| at);
    let tail_start = text.char_indices().nth_back(tail.saturating_sub(1)).map_or(text.len(), |(at, _)| at);
    let tail_text = if tail == 0 { "" } else { &text[tail_start..] };
    let mut out = String::with_capacity(head_end + longest * 4 + tail_text.len());
    out.push_str(&text[..head_end]);
    out.push_str(&marker(total - head - tail));
    out.push_str(tail_text);
    Cow::Owned(out)
}

impl TurnOptions {
    /// Cap what each call shows the model ([`OutputCap`]; by default
    /// 100,000 characters and 20 MiB a file).
    pub fn with_output_cap(mut self, cap: OutputCap) -> Self {
        self.output_cap = cap;
        self
    }
}

impl ToolOptions {
    /// Cap what each call of this tool shows the model, instead of the
    /// toolset's cap ([`TurnOptions::with_output_cap`]).
    pub fn with_output_cap(mut self, cap: OutputCap) -> Self {
        self.output_cap = Some(cap);
        self
    }
}
