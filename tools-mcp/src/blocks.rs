//! A call's [`Output`] as MCP content blocks, and MCP content blocks as an
//! [`Output`]: what the server sends for each part, and what a remote
//! tool's result becomes.
//!
//! | [`Output`] (server sends)            | MCP                                   |
//! |--------------------------------------|---------------------------------------|
//! | `text`, [`Part::Text`]               | `TextContent`                         |
//! | [`Part::Json`]                       | `TextContent` of its JSON, and `structuredContent` (below) |
//! | [`Part::Image`] with bytes           | `ImageContent` (base64, `mimeType`)   |
//! | an `audio/*` image or file, bytes    | `AudioContent`                        |
//! | [`Part::File`] with bytes            | `EmbeddedResource`: a text resource for UTF-8 text types, else a blob; `uri` `tool://<tool>/<name>` |
//! | an image or file at a URL            | `ResourceLink`                        |
//! | the artifact                         | not sent                              |
//!
//! | MCP (client reads)                   | [`Output`]                            |
//! |--------------------------------------|---------------------------------------|
//! | a first `TextContent`                | `text`                                |
//! | any later `TextContent`              | [`Part::Text`]                        |
//! | `ImageContent`                       | [`Part::Image`] with the decoded bytes |
//! | `AudioContent`                       | [`Part::File`] with the decoded bytes |
//! | `EmbeddedResource`, blob or text     | [`Part::File`], named by the uri's last segment |
//! | `ResourceLink`                       | [`Part::Image`] (`image/*`) or [`Part::File`] at the URL |
//! | `structuredContent`                  | [`Part::Json`], unless a text block says the same |

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{CallToolResult, ContentBlock, Resource, ResourceContents};
use serde_json::Value;

use tools_core::{Media, Output, Part, Source, ToolResult};

/// The media type of content whose type the server left unsaid.
const UNKNOWN_TYPE: &str = "application/octet-stream";

/// The reply to `tools/call` for one call's result. A failed call is its
/// error text, flagged `isError`; a successful one sends every part of its
/// output as its block (see the module's table), and its JSON as
/// `structuredContent` where `fits` says it may be (the tool's output
/// schema, when it has one). The artifact is the application's: it is not
/// sent, not even in `_meta`.
pub(crate) fn call_result(result: ToolResult, tool: &str, fits: &dyn Fn(&Value) -> bool) -> CallToolResult {
    if !result.outcome.is_success() {
        return CallToolResult::error(vec![ContentBlock::text(result.text().into_owned())]);
    }
    let ToolResult { content, parts, .. } = result;
    let (blocks, structured) = blocks_of(Output { text: content, parts, artifact: None }, tool, fits);
    let mut reply = CallToolResult::success(blocks);
    reply.structured_content = structured;
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
                let media = Media::url(link.uri.clone(), media_type).named(link.name.clone());
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

/// What a model reads of a remote result flagged `isError`: its text
/// blocks, else its structured content, else its blocks as JSON.
pub(crate) fn error_text(result: &CallToolResult) -> String {
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

/// The last segment of a URI's path, unescaped: the file name in
/// `tool://chart/week%201.png` or `https://example.com/a/report.pdf`.
fn last_segment(uri: &str) -> Option<String> {
    let uri = uri.split(['?', '#']).next().unwrap_or_default();
    let path = match uri.split_once("://") {
        Some((_, rest)) => &rest[rest.find('/')?..],
        None => uri.split_once(':').map_or(uri, |(_, rest)| rest),
    };
    let segment = path.rsplit('/').next().filter(|segment| !segment.is_empty())?;
    Some(unescape(segment))
}

/// `text` with every byte outside URI's unreserved characters
/// percent-encoded, to stand in a path segment.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            escaped.push(char::from(byte));
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    escaped
}

/// Percent-escapes decoded; a `%` that starts no escape is kept as it is.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes.get(at + 1..at + 3).and_then(|pair| std::str::from_utf8(pair).ok());
        match (bytes[at], hex.and_then(|hex| u8::from_str_radix(hex, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn any(_: &Value) -> bool {
        true
    }

    fn round_trip(output: Output) -> Output {
        let (blocks, structured) = blocks_of(output, "chart", &any);
        // Through the wire format, as a client reads it.
        let blocks: Vec<ContentBlock> =
            serde_json::from_value(serde_json::to_value(blocks).unwrap()).unwrap();
        output_of(blocks, structured)
    }

    #[test]
    fn every_part_survives_a_round_trip() {
        let output = Output::text("the week")
            .with_image(Media::bytes(vec![0x89, b'P', b'N', b'G', 0, 255], "image/png"))
            .with(Part::Text { text: "and the report".into() })
            .with_file(Media::bytes(b"%PDF-1.7 \xff\x00".to_vec(), "application/pdf").named("week 1.pdf"))
            .with_file(Media::bytes("a,b\n1,2\n", "text/csv").named("rows.csv"))
            .with_file(Media::url("https://example.com/a/big.zip", "application/zip").named("big.zip"))
            .with_image(Media::url("https://example.com/c.png", "image/png").named("c.png"))
            .with_file(Media::bytes(vec![1, 2, 3], "audio/wav"))
            .with_artifact(json!({"secret": 1}));
        let back = round_trip(output.clone());
        assert_eq!(back.text, output.text);
        assert_eq!(back.parts, output.parts);
        assert_eq!(back.artifact, None, "the artifact is never sent");
    }

    #[test]
    fn files_are_text_or_blob_resources_under_made_up_uris() {
        let output = Output::default()
            .with_file(Media::bytes("x = 1", "text/x-python").named("a b.py"))
            .with_file(Media::bytes(vec![0xff], "text/plain"))
            .with_file(Media::bytes(vec![1], "application/pdf"));
        let (blocks, _) = blocks_of(output, "run_code", &any);
        let uris: Vec<(String, bool)> = blocks
            .iter()
            .map(|block| match &block.as_resource().unwrap().resource {
                ResourceContents::TextResourceContents { uri, .. } => (uri.clone(), true),
                ResourceContents::BlobResourceContents { uri, .. } => (uri.clone(), false),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            uris,
            [
                ("tool://run_code/a%20b.py".to_owned(), true),
                ("tool://run_code/part-2".to_owned(), false),
                ("tool://run_code/part-3".to_owned(), false)
            ]
        );
    }

    #[test]
    fn json_is_text_and_structured_content_where_it_fits() {
        // JSON alone: a text block for text-only readers, and structured.
        let (blocks, structured) = blocks_of(Output::default().with_json(json!({"a": 1})), "t", &any);
        assert_eq!(blocks[0].as_text().unwrap().text, r#"{"a":1}"#);
        assert_eq!(structured, Some(json!({"a": 1})));
        // With text of its own, the JSON is structured content alone.
        let output = Output::text("one row").with_json(json!({"a": 1}));
        let (blocks, structured) = blocks_of(output.clone(), "t", &any);
        assert_eq!((blocks.len(), structured), (1, Some(json!({"a": 1}))));
        assert_eq!(round_trip(output.clone()), output);
        // Not an object, or not fitting the schema: text only.
        let (blocks, structured) = blocks_of(Output::text("rows").with_json(json!([1, 2])), "t", &any);
        assert_eq!((blocks.len(), structured), (2, None));
        let (blocks, structured) = blocks_of(output, "t", &|_| false);
        assert_eq!((blocks.len(), structured), (2, None));
        // A text that is a JSON object is structured content as well.
        let (blocks, structured) = blocks_of(Output::text(r#"{"b":2}"#), "t", &any);
        assert_eq!((blocks.len(), &structured), (1, &Some(json!({"b": 2}))));
        let back = output_of(blocks, structured);
        assert_eq!(back, Output::text(r#"{"b":2}"#), "structured content the text says is not repeated");
        // Nothing at all is one empty text block.
        assert_eq!(blocks_of(Output::default(), "t", &any).0, [ContentBlock::text("")]);
    }

    #[test]
    fn bad_base64_is_noted_and_the_rest_kept() {
        let blocks = vec![ContentBlock::text("hi"), ContentBlock::image("not base64!", "image/png")];
        let output = output_of(blocks, None);
        assert_eq!(output.text, "hi");
        let Part::Text { text } = &output.parts[0] else { panic!("{:?}", output.parts) };
        assert!(text.contains("not base64"), "{text}");
    }

    #[test]
    fn uris_name_files_by_their_last_segment() {
        assert_eq!(last_segment("tool://chart/week%201.png").as_deref(), Some("week 1.png"));
        assert_eq!(last_segment("https://example.com/a/b.pdf?x=1#y").as_deref(), Some("b.pdf"));
        assert_eq!(last_segment("file:///tmp/a.txt").as_deref(), Some("a.txt"));
        assert_eq!(last_segment("https://example.com"), None);
        assert_eq!(last_segment("https://example.com/dir/"), None);
        assert_eq!(last_segment("urn:isbn"), Some("isbn".to_owned()));
        assert_eq!(unescape("100%"), "100%");
        assert_eq!(unescape(&escape("ünï cödé/é")), "ünï cödé/é");
    }
}
