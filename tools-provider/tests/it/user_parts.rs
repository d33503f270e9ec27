//! A user message of text, images and files: saved in the transcript (a
//! text-only one as it always was, so old transcripts load), written in
//! each provider's own blocks (the provider modules cite the pages), and a
//! part a provider cannot take refused, naming the dialect, the message and
//! the part.

use serde_json::{Value, json};
use toolcall_core::{Media, Part};
use toolcall_provider::{Dialect, Message, MessageError, PartOf, Transcript};

/// The start of a PNG file.
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
/// The start of a PDF file.
const PDF: &[u8] = b"%PDF-1.7\n";
const PNG_BASE64: &str = "iVBORw0KGgo=";
const PDF_BASE64: &str = "JVBERi0xLjcK";
const CHART_URL: &str = "https://example.com/chart.png";

/// Text, an image as bytes, a PDF as bytes and an image at a URL.
fn prompt() -> Message {
    Message::user_parts([
        Part::text("Compare the chart with the report."),
        Part::image(Media::bytes(PNG, "image/png")),
        Part::file(Media::bytes(PDF, "application/pdf").with_name("report.pdf")),
        Part::image(Media::url(CHART_URL, "image/png")),
    ])
}

/// The user message as `dialect`'s writer of a whole transcript sends it.
fn sent(dialect: Dialect, message: Message) -> Result<Value, MessageError> {
    let transcript = [message];
    let mut written = dialect.messages(&transcript)?;
    assert_eq!(written.len(), 1, "{written:?}");
    Ok(written.remove(0))
}

#[test]
fn a_text_only_user_message_is_saved_as_it_always_was_and_old_transcripts_load() {
    let saved = serde_json::to_value(Message::user("Weather in Paris?")).unwrap();
    assert_eq!(saved, json!({"role": "user", "text": "Weather in Paris?"}));
    // A transcript saved before user messages had parts.
    let old = r#"{"instructions":"Be brief.","messages":[{"role":"user","text":"Weather in Paris?"},
        {"role":"assistant","content":[{"type":"text","text":"Sunny."}]}]}"#;
    let loaded: Transcript = serde_json::from_str(old).unwrap();
    assert_eq!(loaded.messages[0], Message::user("Weather in Paris?"));
    assert_eq!(loaded.messages[0], Message::User { parts: vec![Part::text("Weather in Paris?")] });
}

#[test]
fn a_user_message_with_media_is_saved_with_its_parts_and_loads_back() {
    let mut transcript = Transcript::new();
    transcript.push(prompt());
    let saved = serde_json::to_value(&transcript).unwrap();
    assert_eq!(
        saved["messages"][0],
        json!({"role": "user", "parts": [
            {"type": "text", "text": "Compare the chart with the report."},
            {"type": "image", "media_type": "image/png", "data": PNG_BASE64},
            {"type": "file", "media_type": "application/pdf", "data": PDF_BASE64, "name": "report.pdf"},
            {"type": "image", "media_type": "image/png", "url": CHART_URL},
        ]})
    );
    let loaded: Transcript = serde_json::from_value(saved).unwrap();
    assert_eq!(loaded, transcript);
    // Two texts are parts too: joining them would change the message.
    let two = Message::user_parts([Part::text("a"), Part::text("b")]);
    let saved = serde_json::to_value(&two).unwrap();
    assert_eq!(
        saved,
        json!({"role": "user", "parts": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
    );
    assert_eq!(serde_json::from_value::<Message>(saved).unwrap(), two);
}

#[test]
fn a_user_message_with_both_text_and_parts_or_neither_does_not_load() {
    for (json, expected) in [
        (json!({"role": "user", "text": "a", "parts": []}), "a user message has `text` or `parts`, not both"),
        (json!({"role": "user"}), "a user message needs `text` or `parts`"),
    ] {
        let error = serde_json::from_value::<Message>(json).unwrap_err().to_string();
        assert!(error.contains(expected), "{error}");
    }
}

#[test]
fn a_text_only_user_message_is_sent_as_before() {
    let expected = [
        (Dialect::OpenAiChat, json!({"role": "user", "content": "Hi"})),
        (Dialect::OpenAiResponses, json!({"type": "message", "role": "user", "content": "Hi"})),
        (Dialect::Anthropic, json!({"role": "user", "content": "Hi"})),
        (Dialect::Gemini, json!({"role": "user", "parts": [{"text": "Hi"}]})),
    ];
    for (dialect, expected) in expected {
        assert_eq!(sent(dialect, Message::user("Hi")).unwrap(), expected, "{dialect}");
    }
}

#[test]
fn each_provider_writes_a_user_messages_images_and_files_as_it_documents() {
    let text = "Compare the chart with the report.";
    let png_data_url = format!("data:image/png;base64,{PNG_BASE64}");
    let pdf_data_url = format!("data:application/pdf;base64,{PDF_BASE64}");
    let expected = [
        // https://platform.openai.com/docs/api-reference/chat/create (user message content parts)
        (
            Dialect::OpenAiChat,
            json!({"role": "user", "content": [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": png_data_url}},
                {"type": "file", "file": {"filename": "report.pdf", "file_data": pdf_data_url}},
                {"type": "image_url", "image_url": {"url": CHART_URL}},
            ]}),
        ),
        // https://platform.openai.com/docs/api-reference/responses/create (input message content)
        (
            Dialect::OpenAiResponses,
            json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": text},
                {"type": "input_image", "image_url": png_data_url, "detail": "auto"},
                {"type": "input_file", "filename": "report.pdf", "file_data": pdf_data_url},
                {"type": "input_image", "image_url": CHART_URL, "detail": "auto"},
            ]}),
        ),
        // https://docs.anthropic.com/en/api/messages (image and document blocks)
        (
            Dialect::Anthropic,
            json!({"role": "user", "content": [
                {"type": "text", "text": text},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_BASE64}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_BASE64},
                 "title": "report.pdf"},
                {"type": "image", "source": {"type": "url", "url": CHART_URL}},
            ]}),
        ),
        // https://ai.google.dev/api/caching#Part (inlineData, fileData)
        (
            Dialect::Gemini,
            json!({"role": "user", "parts": [
                {"text": text},
                {"inlineData": {"mimeType": "image/png", "data": PNG_BASE64}},
                {"inlineData": {"mimeType": "application/pdf", "data": PDF_BASE64}},
                {"fileData": {"mimeType": "image/png", "fileUri": CHART_URL}},
            ]}),
        ),
    ];
    for (dialect, expected) in expected {
        assert_eq!(sent(dialect, prompt()).unwrap(), expected, "{dialect}");
    }
}

#[test]
fn a_part_a_provider_cannot_take_is_refused_naming_the_dialect_the_message_and_the_part() {
    let tiff = || Part::image(Media::bytes(vec![0x49, 0x49, 0x2a, 0x00], "image/tiff"));
    let audio = || Part::file(Media::bytes(vec![b'R', b'I', b'F', b'F'], "audio/wav"));
    let pdf_url = || Part::file(Media::url("https://example.com/report.pdf", "application/pdf"));
    let cases = [
        (Dialect::OpenAiChat, tiff(), "an image (image/tiff, bytes): OpenAI reads PNG, JPEG, WebP"),
        (Dialect::OpenAiChat, audio(), "a file (audio/wav, bytes): Chat Completions reads PDF files only"),
        (
            Dialect::OpenAiChat,
            pdf_url(),
            "a file (application/pdf, at a URL): Chat Completions takes a file's bytes",
        ),
        (Dialect::OpenAiResponses, tiff(), "an image (image/tiff, bytes): OpenAI reads PNG, JPEG, WebP"),
        (Dialect::Anthropic, tiff(), "an image (image/tiff, bytes): Anthropic reads JPEG, PNG, GIF and WebP"),
        (
            Dialect::Anthropic,
            audio(),
            "a file (audio/wav, bytes): Anthropic documents are PDFs or plain text",
        ),
        (
            Dialect::Gemini,
            tiff(),
            "an image (image/tiff, bytes): Gemini reads PNG, JPEG, WebP, HEIC and HEIF",
        ),
    ];
    for (dialect, part, expected) in cases {
        // The refused part comes after one the provider takes, in the
        // second user message of the transcript.
        let transcript = [Message::user("First."), Message::user_parts([Part::text("Look:"), part])];
        let error = dialect.messages(&transcript).unwrap_err();
        let refused = error.refused.as_deref().unwrap_or_else(|| panic!("{dialect}: {error}"));
        assert_eq!(
            (refused.dialect, &refused.of, refused.index),
            (dialect, &PartOf::UserMessage { message: 1 }, 1)
        );
        let text = error.to_string();
        let start = format!(
            "{dialect}: the user message at transcript messages[1] cannot be sent: parts[1], {expected}"
        );
        assert!(text.starts_with(&start), "{text}");
    }
    // A strict dialect names itself.
    let transcript = [Message::user_parts([tiff()])];
    let error = Dialect::OpenAiChatStrict.messages(&transcript).unwrap_err();
    assert!(
        error.to_string().starts_with("openai-strict: the user message at transcript messages[0]"),
        "{error}"
    );
}
