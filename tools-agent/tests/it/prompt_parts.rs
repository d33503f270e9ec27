//! A prompt of text, an image and a PDF, for every client, plain and
//! streamed: every request carries the user message in the provider's own
//! blocks (asserted on what the mock received, against each provider's
//! documentation), the transcript keeps the parts; a part the provider
//! cannot take stops the run before anything is sent, naming the provider
//! and the part.

use serde_json::{Value, json};
use toolcall_agent::{Agent, Message, Model, ModelError, StopReason};
use toolcall_core::{Media, Part};
use toolcall_provider::{PartOf, RefusedPart};

use crate::scenarios::{ProviderMock, Turn, bodies, client, mock, received};
use crate::support::openai::{run, tools};

/// The start of a PNG file.
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
const PNG_BASE64: &str = "iVBORw0KGgo=";
/// The start of a PDF file.
const PDF: &[u8] = b"%PDF-1.7\n";
const PDF_BASE64: &str = "JVBERi0xLjcK";
const QUESTION: &str = "What does the chart show, and does the report agree?";

fn prompt() -> Vec<Part> {
    vec![
        Part::text(QUESTION),
        Part::image(Media::bytes(PNG, "image/png")),
        Part::file(Media::bytes(PDF, "application/pdf").with_name("report.pdf")),
    ]
}

/// Where each provider's request carries the user's message, and how.
pub(crate) trait PromptMock: ProviderMock {
    /// The first user message of a request body.
    fn first_user(body: &Value) -> Value;
    /// [`prompt`] as the provider documents a user message of text, an
    /// image and a PDF.
    fn expected() -> Value;
}

fn first_with_role<'a>(items: &'a Value, role: &str) -> &'a Value {
    let items = items.as_array().expect("a list of messages");
    items.iter().find(|item| item["role"] == role).expect("a user message")
}

impl PromptMock for crate::openai_chat::Mock {
    fn first_user(body: &Value) -> Value {
        first_with_role(&body["messages"], "user").clone()
    }

    /// The user message's content parts, `text`, `image_url` (a data URL)
    /// and `file` (`file_data` a data URL, with its `filename`):
    /// <https://platform.openai.com/docs/api-reference/chat/create>,
    /// <https://platform.openai.com/docs/guides/pdf-files?api-mode=chat>.
    fn expected() -> Value {
        json!({"role": "user", "content": [
            {"type": "text", "text": QUESTION},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_BASE64}")}},
            {"type": "file", "file": {"filename": "report.pdf",
                                      "file_data": format!("data:application/pdf;base64,{PDF_BASE64}")}},
        ]})
    }
}

impl PromptMock for crate::openai_responses::Mock {
    fn first_user(body: &Value) -> Value {
        first_with_role(&body["input"], "user").clone()
    }

    /// A `message` input item of `input_text`, `input_image` and
    /// `input_file` items:
    /// <https://platform.openai.com/docs/api-reference/responses/create>,
    /// <https://platform.openai.com/docs/guides/pdf-files>.
    fn expected() -> Value {
        json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": QUESTION},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG_BASE64}"), "detail": "auto"},
            {"type": "input_file", "filename": "report.pdf",
             "file_data": format!("data:application/pdf;base64,{PDF_BASE64}")},
        ]})
    }
}

impl PromptMock for crate::anthropic::Mock {
    /// Without the cache breakpoint the last user message's last block
    /// carries (`caching.rs` tests where they go).
    fn first_user(body: &Value) -> Value {
        let mut first = first_with_role(&body["messages"], "user").clone();
        for block in first["content"].as_array_mut().into_iter().flatten() {
            block.as_object_mut().map(|fields| fields.remove("cache_control"));
        }
        first
    }

    /// `text`, `image` and `document` blocks with base64 sources:
    /// <https://docs.anthropic.com/en/docs/build-with-claude/vision>,
    /// <https://docs.anthropic.com/en/docs/build-with-claude/pdf-support>.
    fn expected() -> Value {
        json!({"role": "user", "content": [
            {"type": "text", "text": QUESTION},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_BASE64}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_BASE64},
             "title": "report.pdf"},
        ]})
    }
}

impl PromptMock for crate::gemini::Mock {
    fn first_user(body: &Value) -> Value {
        first_with_role(&body["contents"], "user").clone()
    }

    /// `text` and `inlineData` parts:
    /// <https://ai.google.dev/gemini-api/docs/file-input-methods>,
    /// <https://ai.google.dev/api/caching#Part>.
    fn expected() -> Value {
        json!({"role": "user", "parts": [
            {"text": QUESTION},
            {"inlineData": {"mimeType": "image/png", "data": PNG_BASE64}},
            {"inlineData": {"mimeType": "application/pdf", "data": PDF_BASE64}},
        ]})
    }
}

fn agent<P: ProviderMock>(server: &wiremock::MockServer) -> Agent {
    Agent::new(client::<P>(server, 1), tools()).unwrap().with_instructions("Be brief.")
}

/// A tool call, then the answer: both requests carry the prompt's parts
/// in the provider's blocks, and the transcript keeps them.
pub(crate) async fn a_prompt_with_an_image_and_a_pdf<P: PromptMock>(streamed: bool) {
    let call = Turn::calls(&[("call_a", "get_weather", r#"{"city":"Oslo"}"#)]);
    let answer = Turn::text("The chart shows rain; the report agrees.");
    let server = mock(vec![P::reply(&call, streamed), P::reply(&answer, streamed)]).await;
    let (result, _) = run(&agent::<P>(&server), prompt(), streamed).await;
    let result = result.expect("the run answers");
    assert_eq!((result.answer.as_str(), &result.stop), (answer.text.as_str(), &StopReason::Answered));
    assert_eq!(result.transcript.messages[0], Message::user_parts(prompt()));

    let bodies = bodies(&received::<P>(&server, streamed).await);
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_eq!(P::first_user(body), P::expected(), "{body}");
    }
}

/// An image the provider does not read (a TIFF): the run stops before the
/// first request, with the error naming the provider's dialect, the user
/// message and the part.
pub(crate) async fn a_part_the_provider_cannot_take_is_refused_before_sending<P: PromptMock>(streamed: bool) {
    let server = mock(vec![P::reply(&Turn::text("unused"), streamed)]).await;
    let tiff = Part::image(Media::bytes(vec![0x49, 0x49, 0x2a, 0x00], "image/tiff"));
    let (result, _) = run(&agent::<P>(&server), vec![Part::text(QUESTION), tiff], streamed).await;
    let error = result.expect_err("the TIFF is refused");
    let ModelError::Message(refused) = &error.error else { panic!("{error}") };
    let dialect = P::client("http://unused", None, 1).dialect().expect("a client has a dialect");
    let part = "an image (image/tiff, bytes)".to_owned();
    let expected = RefusedPart { dialect, of: PartOf::UserMessage { message: 0 }, index: 1, part };
    assert_eq!(refused.refused.as_deref(), Some(&expected));
    let start = format!(
        "{dialect}: the user message at transcript messages[0] cannot be sent: parts[1], an image (image/tiff, bytes): "
    );
    assert!(refused.to_string().starts_with(&start), "{refused}");
    assert!(received::<P>(&server, streamed).await.is_empty(), "nothing was sent");
    assert_eq!(error.transcript.messages.len(), 1, "the transcript keeps the prompt");
}

crate::support::per_client!(
    [a_prompt_with_an_image_and_a_pdf, a_part_the_provider_cannot_take_is_refused_before_sending]
    openai_chat: crate::openai_chat::Mock;
    openai_responses: crate::openai_responses::Mock;
    anthropic: crate::anthropic::Mock;
    gemini: crate::gemini::Mock;
);
