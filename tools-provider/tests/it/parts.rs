//! The parts of a tool's result (text, JSON, images, files) in each
//! dialect's messages, as each provider documents them (the provider
//! modules cite the pages): snapshots of every dialect with messages times
//! every kind of part, the user message that carries Chat Completions'
//! images and files, the parts a provider cannot take refused by name, and
//! the artifact, which no dialect sends.

use serde_json::{Value, json};
use toolcall_core::{Media, Outcome, Part, ToolResult};
use toolcall_provider::{Dialect, PartOf};

/// The start of a PNG file.
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
/// The start of a PDF file.
const PDF: &[u8] = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n";
/// In every result's artifact, and in no message.
const ARTIFACT_MARK: &str = "ARTIFACT-FOR-THE-APPLICATION-ONLY";

/// The dialects with messages, one per message format (the strict
/// variants' messages are the same: checked below).
const FORMATS: [Dialect; 4] =
    [Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Anthropic, Dialect::Gemini];

fn artifact() -> Value {
    json!({"rows": [1, 2, 3], "note": ARTIFACT_MARK})
}

/// A successful result of `tool` with some text, this part and an artifact.
fn result_with(tool: &str, part: Part) -> ToolResult {
    let mut result = ToolResult::new("call_1", tool, "Here it is.", Outcome::Success);
    result.parts.push(part);
    result.artifact = Some(artifact());
    result
}

/// One result per kind of part, named for its snapshot.
fn cases() -> Vec<(&'static str, ToolResult)> {
    vec![
        ("text", result_with("notes", Part::Text { text: "A second paragraph.".into() })),
        ("json", result_with("stats", Part::Json { value: json!({"max": 3, "unit": "°C"}) })),
        (
            "image_bytes",
            result_with("chart", Part::Image(Media::bytes(PNG, "image/png").with_name("chart.png"))),
        ),
        (
            "image_url",
            result_with("chart", Part::Image(Media::url("https://example.com/chart.png", "image/png"))),
        ),
        (
            "file_pdf",
            result_with("report", Part::File(Media::bytes(PDF, "application/pdf").with_name("report.pdf"))),
        ),
    ]
}

#[test]
fn snapshots_of_every_dialect_times_every_kind_of_part() {
    for dialect in FORMATS {
        for (case, result) in cases() {
            let formatted = dialect.format_results(std::slice::from_ref(&result));
            match formatted {
                Ok(messages) => insta::assert_json_snapshot!(format!("{dialect}__{case}"), messages),
                // A provider may refuse a kind (Gemini takes no URL): the
                // refusal is the snapshot then.
                Err(error) => insta::assert_snapshot!(format!("{dialect}__{case}"), error.to_string()),
            }
        }
    }
}

#[test]
fn the_strict_dialects_send_parts_as_the_others_do() {
    let pairs = [
        (Dialect::OpenAiChat, Dialect::OpenAiChatStrict),
        (Dialect::OpenAiResponses, Dialect::OpenAiResponsesStrict),
        (Dialect::Anthropic, Dialect::AnthropicStrict),
    ];
    for (plain, strict) in pairs {
        for (case, result) in cases() {
            let results = [result];
            let (plain, strict) = (plain.format_results(&results), strict.format_results(&results));
            assert_eq!(plain.unwrap(), strict.unwrap(), "{case}");
        }
    }
}

#[test]
fn chat_completions_sends_images_and_files_in_one_user_message_after_the_tool_messages() {
    let mut chart = ToolResult::new("call_1", "chart", "The chart of the week:", Outcome::Success);
    chart.parts = vec![
        Part::Json { value: json!({"max": 3}) },
        Part::Image(Media::bytes(PNG, "image/png").with_name("chart.png")),
        Part::Image(Media::url("https://example.com/legend.webp", "image/webp")),
    ];
    let weather = ToolResult::new("call_2", "get_weather", "12°C in Oslo", Outcome::Success);
    let mut report = ToolResult::new("call_3", "report", "", Outcome::Success);
    report.parts = vec![Part::File(Media::bytes(PDF, "application/pdf"))];
    let messages = Dialect::OpenAiChat.format_results(&[chart, weather, report]).unwrap();

    // The tool messages first, in call order, each with its text and a line
    // naming what went to the user message.
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["tool", "tool", "tool", "user"]);
    assert_eq!(
        messages[0],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "The chart of the week:\n{\"max\":3}\n\
            [an image `chart.png` (image/png, bytes) follows in a user message]\n\
            [an image (image/webp, at a URL) follows in a user message]"})
    );
    // A result without parts is what it always was.
    assert_eq!(messages[1], json!({"role": "tool", "tool_call_id": "call_2", "content": "12°C in Oslo"}));
    assert_eq!(messages[2]["content"], "[a file (application/pdf, bytes) follows in a user message]");
    // Then one user message: each result's images and files after a line
    // naming the tool and the call.
    let png = format!("data:image/png;base64,{}", Media::bytes(PNG, "image/png").base64().unwrap());
    let pdf =
        format!("data:application/pdf;base64,{}", Media::bytes(PDF, "application/pdf").base64().unwrap());
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": [
            {"type": "text", "text": "The images and files of the result of tool `chart` (call `call_1`):"},
            {"type": "image_url", "image_url": {"url": png}},
            {"type": "image_url", "image_url": {"url": "https://example.com/legend.webp"}},
            {"type": "text", "text": "The images and files of the result of tool `report` (call `call_3`):"},
            {"type": "file", "file": {"filename": "file-0.pdf", "file_data": pdf}},
        ]})
    );
    // Text and JSON parts alone need no user message.
    let mut stats = ToolResult::new("call_4", "stats", "Stats:", Outcome::Success);
    stats.parts = vec![Part::Text { text: "n = 3".into() }, Part::Json { value: json!([1, 2]) }];
    assert_eq!(
        Dialect::OpenAiChatStrict.format_results(&[stats]).unwrap(),
        [json!({"role": "tool", "tool_call_id": "call_4", "content": "Stats:\nn = 3\n[1,2]"})]
    );
}

/// A part each dialect cannot take, and why, in the refusal's words.
fn refusals() -> Vec<(Dialect, &'static str, Part)> {
    let tiff = || Part::Image(Media::bytes(vec![0x49, 0x49, 0x2a, 0x00], "image/tiff"));
    let docx = || {
        Part::File(
            Media::bytes(
                vec![0x50, 0x4b, 0x03, 0x04],
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            )
            .with_name("notes.docx"),
        )
    };
    vec![
        (Dialect::OpenAiChat, "image type", tiff()),
        (Dialect::OpenAiChat, "file type", docx()),
        (
            Dialect::OpenAiChat,
            "file URL",
            Part::File(Media::url("https://example.com/report.pdf", "application/pdf")),
        ),
        (Dialect::OpenAiResponses, "image type", tiff()),
        (
            Dialect::OpenAiResponses,
            "image URL type",
            Part::Image(Media::url("https://example.com/logo.svg", "image/svg+xml")),
        ),
        (Dialect::Anthropic, "image type", tiff()),
        (Dialect::Anthropic, "file type", docx()),
        (
            Dialect::Anthropic,
            "text file URL",
            Part::File(Media::url("https://example.com/notes.txt", "text/plain")),
        ),
        (
            Dialect::Anthropic,
            "text file not UTF-8",
            Part::File(Media::bytes(vec![0xff, 0xfe, 0x41], "text/plain")),
        ),
        (Dialect::Gemini, "image URL", Part::Image(Media::url("https://example.com/chart.png", "image/png"))),
        (Dialect::Gemini, "image type", Part::Image(Media::bytes(b"GIF89a".to_vec(), "image/gif"))),
        (Dialect::Gemini, "file type", docx()),
    ]
}

#[test]
fn a_part_a_provider_cannot_take_is_refused_naming_the_dialect_the_tool_and_the_part() {
    let mut report = Vec::new();
    for (dialect, case, part) in refusals() {
        // The refused part comes after one the provider takes.
        let mut result = ToolResult::new("call_9", "render", "Done.", Outcome::Success);
        result.parts = vec![Part::Text { text: "fine".into() }, part];
        let error = dialect.format_results(&[result]).unwrap_err();
        let refused = error.refused.clone().unwrap_or_else(|| panic!("{dialect} {case}: {error}"));
        let of = PartOf::ToolResult { tool: "render".into(), call_id: "call_9".into() };
        assert_eq!((refused.dialect, &refused.of, refused.index), (dialect, &of, 1), "{case}");
        assert_eq!(error.what, dialect.name());
        let text = error.to_string();
        assert!(
            text.starts_with(&format!(
                "{dialect}: the result of tool `render` (call `call_9`) cannot be sent: parts[1], "
            )),
            "{text}"
        );
        report.push(format!("{dialect} / {case}:\n  {text}"));
    }
    insta::assert_snapshot!("refusals", report.join("\n"));
    // A strict dialect names itself.
    let mut result = ToolResult::new("call_9", "render", "Done.", Outcome::Success);
    result.parts = vec![Part::Image(Media::bytes(vec![1], "image/bmp"))];
    for dialect in [Dialect::OpenAiChatStrict, Dialect::OpenAiResponsesStrict, Dialect::AnthropicStrict] {
        let error = dialect.format_results(std::slice::from_ref(&result)).unwrap_err();
        assert_eq!(error.refused.as_ref().map(|refused| refused.dialect), Some(dialect));
        assert!(error.to_string().starts_with(&format!("{}: the result of tool `render`", dialect.name())));
    }
    // MCP has no messages at all, parts or not.
    let error = Dialect::Mcp.format_results(&[result]).unwrap_err();
    assert_eq!((error.what, error.refused), ("mcp", None));
}

#[test]
fn the_artifact_is_in_no_dialects_messages() {
    // Parts every provider takes, with an artifact, and a result of text
    // alone with an artifact.
    let mut rich = ToolResult::new("call_1", "chart", "The chart:", Outcome::Success);
    rich.parts = vec![
        Part::Text { text: "more".into() },
        Part::Json { value: json!({"max": 3}) },
        Part::Image(Media::bytes(PNG, "image/png").with_name("chart.png")),
        Part::File(Media::bytes(PDF, "application/pdf").with_name("report.pdf")),
    ];
    rich.artifact = Some(artifact());
    let mut plain = ToolResult::new("call_2", "count", "3", Outcome::Success);
    plain.artifact = Some(artifact());
    let mut failed = ToolResult::new("call_3", "count", r#"{"error":"no"}"#, Outcome::Failed);
    failed.artifact = Some(artifact());
    let results = [rich, plain.clone(), failed];
    for dialect in Dialect::ALL.into_iter().filter(|dialect| dialect.has_messages()) {
        let messages = dialect.format_results(&results).unwrap_or_else(|error| panic!("{dialect}: {error}"));
        let sent = serde_json::to_string(&messages).unwrap();
        assert!(!sent.contains(ARTIFACT_MARK) && !sent.contains("\"rows\""), "{dialect}: {sent}");
        // The artifact changes nothing in what is sent.
        let without = results.iter().cloned().map(|mut result| {
            result.artifact = None;
            result
        });
        assert_eq!(messages, dialect.format_results(&without.collect::<Vec<_>>()).unwrap(), "{dialect}");
        // A result of text alone with an artifact is the text alone.
        let alone = ToolResult::new("call_2", "count", "3", Outcome::Success);
        assert_eq!(
            dialect.format_results(std::slice::from_ref(&plain)).unwrap(),
            dialect.format_results(&[alone]).unwrap(),
            "{dialect}"
        );
    }
}

#[test]
fn gemini_sends_json_parts_as_values_and_names_each_media_part_once() {
    let mut result = ToolResult::new("gemini-call-0-chart", "chart", r#"{"points":2}"#, Outcome::Success);
    result.parts = vec![
        Part::Json { value: json!([1, 2]) },
        Part::Image(Media::bytes(PNG, "image/png")),
        Part::Image(Media::bytes(PNG, "image/png").with_name("a.png")),
        Part::File(Media::bytes(b"plain".to_vec(), "text/plain; charset=utf-8").with_name("a.png")),
    ];
    let contents = Dialect::Gemini.format_results(&[result]).unwrap();
    let response = &contents[0]["parts"][0]["functionResponse"];
    // A synthetic id stays out, as for every result.
    assert_eq!(response.get("id"), None);
    assert_eq!(
        response["response"],
        json!({"content": [{"points": 2}, [1, 2], {"$ref": "image_1"}, {"$ref": "a.png"}, {"$ref": "a.png_3"}]})
    );
    let names: Vec<&Value> =
        response["parts"].as_array().unwrap().iter().map(|p| &p["inlineData"]["displayName"]).collect();
    assert_eq!(names, [&json!("image_1"), &json!("a.png"), &json!("a.png_3")]);
    assert_eq!(response["parts"][2]["inlineData"]["mimeType"], "text/plain");
}
