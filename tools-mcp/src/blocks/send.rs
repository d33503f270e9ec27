//! An output as the blocks the server sends, and its structured content.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{CallToolResult, ContentBlock, MetaObject, Resource, ResourceContents};
use serde_json::Value;

use super::OUTCOME;
use super::uri::{escape, last_segment};
use toolcall_core::{Media, Outcome, Output, Part, Source, ToolResult};

/// The reply to `tools/call` for one call's result. A failed call is its
/// error text, flagged `isError`; a successful one sends every part of its
/// output as its block (see the module's table), and its JSON as
/// `structuredContent` where `fits` says it may be (the tool's output
/// schema, when it has one). The artifact is the application's: it is not
/// sent, not even in `_meta`.
pub(crate) fn call_result(result: ToolResult, tool: &str, fits: &dyn Fn(&Value) -> bool) -> CallToolResult {
    if !result.outcome.is_success() {
        return error_result(result.outcome, result.text().into_owned());
    }
    let ToolResult { content, parts, .. } = result;
    let (blocks, structured) = blocks_of(Output { text: content, parts, artifact: None }, tool, fits);
    let mut reply = CallToolResult::success(blocks);
    reply.structured_content = structured;
    reply
}

/// A result flagged `isError`: the text the model reads, and how the call
/// ended in `_meta` ([`OUTCOME`]), so that a client of this SDK tells bad
/// arguments from a failure as a local call does.
pub(crate) fn error_result(outcome: Outcome, text: String) -> CallToolResult {
    let mut reply = CallToolResult::error(vec![ContentBlock::text(text)]);
    let meta = serde_json::Map::from_iter([(OUTCOME.to_owned(), Value::from(outcome.as_str()))]);
    reply.meta = Some(MetaObject(meta));
    reply
}

/// An output as content blocks and structured content.
///
/// The structured content is the first JSON part that `fits`, else the
/// text when it is JSON that fits (what a tool returning a serializable
/// type gives). That JSON part is also sent as a text block, as MCP asks
/// for clients that read only text, unless the output has text of its own:
/// then that text is what a text-only reader gets, and the JSON is not
/// said twice.
pub(crate) fn blocks_of(
    output: Output,
    tool: &str,
    fits: &dyn Fn(&Value) -> bool,
) -> (Vec<ContentBlock>, Option<Value>) {
    let Output { text, parts, artifact: _ } = output;
    let chosen = parts
        .iter()
        .position(|part| matches!(part, Part::Json { value } if value.is_object() && fits(value)));
    let has_text = !text.is_empty()
        || parts.iter().enumerate().any(|(index, part)| match part {
            Part::Text { .. } => true,
            Part::Json { .. } => Some(index) != chosen,
            _ => false,
        });
    let mut structured = None;
    let mut blocks = Vec::with_capacity(parts.len() + 1);
    if chosen.is_none() && text.starts_with('{') {
        structured =
            serde_json::from_str::<Value>(&text).ok().filter(|value| value.is_object() && fits(value));
    }
    if !text.is_empty() {
        blocks.push(ContentBlock::text(text));
    }
    for (index, part) in parts.into_iter().enumerate() {
        let block = match part {
            Part::Text { text } => ContentBlock::text(text),
            Part::Json { value } if Some(index) == chosen => {
                let block = (!has_text).then(|| ContentBlock::text(value.to_string()));
                structured = Some(value);
                match block {
                    Some(block) => block,
                    None => continue,
                }
            }
            Part::Json { value } => ContentBlock::text(value.to_string()),
            Part::Image(media) => media_block(media, true, tool, index),
            Part::File(media) => media_block(media, false, tool, index),
            // A kind of part this bridge does not know yet: what a model
            // reading text alone would see of it, which is nothing.
            _ => continue,
        };
        blocks.push(block);
    }
    if blocks.is_empty() {
        // Every result has content, if only an empty text.
        blocks.push(ContentBlock::text(String::new()));
    }
    (blocks, structured)
}

/// The block of an image (`image`) or a file: audio as audio, bytes of an
/// image as an image, bytes of a file as an embedded resource, a URL as a
/// resource link.
fn media_block(media: Media, image: bool, tool: &str, index: usize) -> ContentBlock {
    let Media { media_type, source, name, .. } = media;
    match source {
        Source::Url(url) => {
            let name = name.or_else(|| last_segment(&url)).unwrap_or_else(|| default_name(index));
            ContentBlock::resource_link(Resource::new(url, name).with_mime_type(media_type))
        }
        Source::Data(bytes) if media_type.starts_with("audio/") => {
            ContentBlock::audio(STANDARD.encode(&bytes), media_type)
        }
        Source::Data(bytes) if image => ContentBlock::image(STANDARD.encode(&bytes), media_type),
        Source::Data(bytes) => {
            let name = name.unwrap_or_else(|| default_name(index));
            let uri = format!("tool://{}/{}", escape(tool), escape(&name));
            let contents = match String::from_utf8(bytes) {
                Ok(text) if is_textual(&media_type) => ResourceContents::text(text, uri),
                Ok(text) => ResourceContents::blob(STANDARD.encode(text.as_bytes()), uri),
                Err(error) => ResourceContents::blob(STANDARD.encode(error.as_bytes()), uri),
            };
            ContentBlock::resource(contents.with_mime_type(media_type))
        }
    }
}

/// The name of the `index`th part when the tool gave it none.
fn default_name(index: usize) -> String {
    format!("part-{}", index + 1)
}

/// Whether content of this type is text, sent as a text resource when it
/// is UTF-8.
fn is_textual(media_type: &str) -> bool {
    let essence = media_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/sql"
        )
}
