//! The blocks of a remote tool's result as an output, or, flagged
//! `isError`, as the text a model reads.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use serde::Deserialize;

use super::OUTCOME;
use super::uri::last_segment;
use toolcall_core::{Media, Outcome, Output, Part, ToolError};

/// The media type of content whose type the server left unsaid.
const UNKNOWN_TYPE: &str = "application/octet-stream";
/// What a remote tool's successful result is as an [`Output`] (see the
/// module's table). A block whose bytes do not decode becomes a text part
/// saying so, and the others are kept. Annotations and `_meta` are dropped.
pub(crate) fn output_of(content: Vec<ContentBlock>, structured: Option<Value>) -> Output {
    let mut output = Output::default();
    for (index, block) in content.into_iter().enumerate() {
        let part = match block {
            ContentBlock::Text(text) if index == 0 => {
                output.text = text.text;
                continue;
            }
            ContentBlock::Text(text) => Part::Text { text: text.text },
            ContentBlock::Image(image) => match decode(&image.data, "an image") {
                Ok(bytes) => Part::Image(Media::bytes(bytes, image.mime_type)),
                Err(note) => note,
            },
            ContentBlock::Audio(audio) => match decode(&audio.data, "audio") {
                Ok(bytes) => Part::File(Media::bytes(bytes, audio.mime_type)),
                Err(note) => note,
            },
            ContentBlock::Resource(embedded) => match embedded.resource {
                ResourceContents::TextResourceContents { uri, mime_type, text, .. } => {
                    let media_type = mime_type.unwrap_or_else(|| "text/plain".to_owned());
                    Part::File(Media { name: last_segment(&uri), ..Media::bytes(text, media_type) })
                }
                ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
                    match decode(&blob, "a file") {
                        Ok(bytes) => {
                            let media_type = mime_type.unwrap_or_else(|| UNKNOWN_TYPE.to_owned());
                            Part::File(Media { name: last_segment(&uri), ..Media::bytes(bytes, media_type) })
                        }
                        Err(note) => note,
                    }
                }
                other => unknown(&other),
            },
            ContentBlock::ResourceLink(link) => {
                let media_type = link.mime_type.clone().unwrap_or_else(|| UNKNOWN_TYPE.to_owned());
                let image = media_type.starts_with("image/");
                let media = Media::url(link.uri.clone(), media_type).with_name(link.name.clone());
                if image { Part::Image(media) } else { Part::File(media) }
            }
            other => unknown(&other),
        };
        output.parts.push(part);
    }
    if let Some(value) = structured.filter(|value| !value.is_null()) {
        let said = std::iter::once(output.text.as_str())
            .chain(output.parts.iter().filter_map(|part| match part {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            }))
            .any(|text| serde_json::from_str::<Value>(text).is_ok_and(|parsed| parsed == value));
        if !said {
            output.parts.push(Part::Json { value });
        }
    }
    output
}

/// The error of a remote result flagged `isError`: the one the server's
/// call ended with where it says so ([`OUTCOME`], this SDK's servers),
/// else a failure; either way the model reads the server's text, once
/// (an `{"error": ...}` text is not wrapped again).
pub(crate) fn remote_error(result: &CallToolResult) -> ToolError {
    let outcome = result
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(OUTCOME))
        .and_then(|outcome| Outcome::deserialize(outcome).ok())
        .unwrap_or(Outcome::Failed);
    ToolError::from_model_content(outcome, &error_text(result))
}

/// What a model reads of a remote result flagged `isError`: its text
/// blocks, else its structured content, else its blocks as JSON.
fn error_text(result: &CallToolResult) -> String {
    let texts: Vec<&str> =
        result.content.iter().filter_map(|block| block.as_text()).map(|text| text.text.as_str()).collect();
    if !texts.is_empty() {
        texts.join("\n")
    } else if let Some(structured) = &result.structured_content {
        structured.to_string()
    } else if result.content.is_empty() {
        String::new()
    } else {
        serde_json::to_string(&result.content).unwrap_or_default()
    }
}

/// Bytes a server sent as base64, or a text part saying they were not.
fn decode(data: &str, what: &str) -> Result<Vec<u8>, Part> {
    STANDARD.decode(data.trim()).map_err(|error| Part::Text {
        text: format!("[the MCP server sent {what} whose data is not base64 ({error}): it was left out]"),
    })
}

/// A block or resource of a kind this bridge does not know: its JSON, as text.
fn unknown(block: &impl serde::Serialize) -> Part {
    Part::Text { text: serde_json::to_string(block).unwrap_or_default() }
}
