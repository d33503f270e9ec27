//! What the provider modules share to send the parts of a tool's result
//! or of a user message (text, JSON, images, files): how a part is named,
//! its media type as the providers compare it, a data URL, a file name, and
//! the refusal of a part a provider cannot take. Each provider's encoding
//! of a part, and its sources, are in its own module, one function for
//! both kinds of message where the provider takes the same blocks in both.
//!
//! The artifact of a result ([`ToolResult::artifact`]) is for the
//! application: no encoding reads it.

use serde_json::Value;
use toolcall_core::{Media, Part, Source, ToolResult};

use crate::{Dialect, MessageError, PartOf, RefusedPart};

/// What a part is, in words: "text", "JSON", "an image `chart.png`
/// (image/png, bytes)", "a file (application/pdf, at a URL)".
pub(crate) fn describe(part: &Part) -> String {
    match part {
        Part::Text { .. } => "text".to_owned(),
        Part::Json { .. } => "JSON".to_owned(),
        Part::Image(media) => format!("an image{}", describe_media(media)),
        Part::File(media) => format!("a file{}", describe_media(media)),
        _ => "a part of a kind this version cannot send".to_owned(),
    }
}

fn describe_media(media: &Media) -> String {
    let name = media.name.as_deref().map(|name| format!(" `{name}`")).unwrap_or_default();
    let source = match media.source {
        Source::Data(_) => "bytes",
        Source::Url(_) => "at a URL",
    };
    format!("{name} ({}, {source})", media_type(media))
}

/// The media type as providers compare it: lower case, without parameters
/// (`text/plain; charset=utf-8` is `text/plain`).
pub(crate) fn media_type(media: &Media) -> String {
    let essence = media.media_type.split(';').next().unwrap_or_default();
    essence.trim().to_ascii_lowercase()
}

/// Whether the media type is one of these.
pub(crate) fn is_one_of(media: &Media, types: &[&str]) -> bool {
    types.contains(&media_type(media).as_str())
}

/// The bytes as a data URL, `data:<media type>;base64,<bytes>`, the form
/// OpenAI takes for inline images and files; `None` for a URL.
pub(crate) fn data_url(media: &Media) -> Option<String> {
    media.base64().map(|base64| format!("data:{};base64,{base64}", media_type(media)))
}

/// The file's name, or one made from its position and media type
/// (`file-2.pdf`) for providers that want one.
pub(crate) fn file_name(media: &Media, index: usize) -> String {
    if let Some(name) = &media.name {
        return name.clone();
    }
    let extension = match media_type(media).as_str() {
        "application/pdf" => ".pdf",
        "text/plain" => ".txt",
        "text/markdown" => ".md",
        "text/csv" => ".csv",
        "text/html" => ".html",
        "application/json" => ".json",
        _ => "",
    };
    format!("file-{index}{extension}")
}

/// The lines that name a result's images and files in a text that cannot
/// carry them, each saying where they are instead.
pub(crate) fn media_notes(result: &ToolResult, where_they_are: &str) -> Vec<String> {
    result
        .parts
        .iter()
        .filter(|part| matches!(part, Part::Image(_) | Part::File(_)))
        .map(|part| format!("[{} {where_they_are}]", describe(part)))
        .collect()
}

/// Where a tool result's parts are, for their refusal.
pub(crate) fn of_result(result: &ToolResult) -> PartOf {
    PartOf::ToolResult { tool: result.name.to_string(), call_id: result.id.to_string() }
}

/// Each of `parts` through `encode` (`None` leaves a part out), or the
/// error for the first it cannot take (`encode`'s problem, with the
/// provider's rule), said of `of` in `dialect`: the one way tool results'
/// and user messages' parts are written and refused.
pub(crate) fn encode_all(
    dialect: Dialect,
    of: impl FnOnce() -> PartOf,
    parts: &[Part],
    mut encode: impl FnMut(usize, &Part) -> Result<Option<Value>, &'static str>,
) -> Result<Vec<Value>, MessageError> {
    let mut items = Vec::with_capacity(parts.len());
    for (index, part) in parts.iter().enumerate() {
        match encode(index, part) {
            Ok(item) => items.extend(item),
            Err(problem) => return Err(refuse(dialect, of(), parts, index, problem)),
        }
    }
    Ok(items)
}

/// What a provider module says of a part of a kind this version does not know.
pub(crate) const UNKNOWN_KIND: &str = "this version of tools-provider does not know how to send it";

/// The error for part `index` of `parts`, held by `of`, which `dialect`
/// cannot send, and why (`problem`, with the provider's rule).
pub(crate) fn refuse(
    dialect: Dialect,
    of: PartOf,
    parts: &[Part],
    index: usize,
    problem: &str,
) -> MessageError {
    let part = parts.get(index).map(describe).unwrap_or_else(|| "a part".to_owned());
    MessageError {
        what: dialect.name(),
        problem: format!("{of} cannot be sent: parts[{index}], {part}: {problem}"),
        refused: Some(Box::new(RefusedPart { dialect, of, index, part })),
    }
}
