use rmcp::model::{ContentBlock, ResourceContents};
use serde_json::{Value, json};

use super::output_of;
use super::send::blocks_of;
use super::uri::{escape, last_segment, unescape};
use toolcall_core::{Media, Output, Part};

fn any(_: &Value) -> bool {
    true
}

fn round_trip(output: Output) -> Output {
    let (blocks, structured) = blocks_of(output, "chart", &any);
    // Through the wire format, as a client reads it.
    let blocks: Vec<ContentBlock> = serde_json::from_value(serde_json::to_value(blocks).unwrap()).unwrap();
    output_of(blocks, structured)
}

#[test]
fn every_part_survives_a_round_trip() {
    let output = Output::text("the week")
        .with_image(Media::bytes(vec![0x89, b'P', b'N', b'G', 0, 255], "image/png"))
        .with(Part::Text { text: "and the report".into() })
        .with_file(Media::bytes(b"%PDF-1.7 \xff\x00".to_vec(), "application/pdf").with_name("week 1.pdf"))
        .with_file(Media::bytes("a,b\n1,2\n", "text/csv").with_name("rows.csv"))
        .with_file(Media::url("https://example.com/a/big.zip", "application/zip").with_name("big.zip"))
        .with_image(Media::url("https://example.com/c.png", "image/png").with_name("c.png"))
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
        .with_file(Media::bytes("x = 1", "text/x-python").with_name("a b.py"))
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
