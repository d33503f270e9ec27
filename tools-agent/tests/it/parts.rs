//! A tool that returns an image (and an artifact): the image reaches the
//! next request as each provider documents it, the artifact does not, and
//! the saved transcript keeps both. Against a mock of the Anthropic
//! Messages API (<https://docs.anthropic.com/en/api/messages>: the image is
//! a block of the `tool_result`'s content) and of Chat Completions
//! (<https://platform.openai.com/docs/api-reference/chat/create>: a tool
//! message is text, so the image follows in a user message). An image the
//! provider cannot read stops the run before the request, naming it.

use crate::support::replies;

use std::sync::{Arc, LazyLock};

use replies::{mock, received};
use serde_json::{Value, json};
use toolcall_agent::{
    Agent, Anthropic, ApiKey, Message, Model, ModelError, OpenAiChat, RunResult, StopReason, Transcript,
};
use toolcall_core::toolset::Toolset;
use toolcall_core::{Media, Output, Part, ToolContext, ToolError, ToolSpec, TypedTool};
use wiremock::MockServer;

/// The start of a PNG file: the chart's bytes.
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
/// In the artifact only.
const ARTIFACT_MARK: &str = "rows-for-the-application";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ChartRequest {
    /// What to chart.
    metric: String,
}

/// Draws a chart: text, the PNG, and the rows it was drawn from as the
/// artifact.
struct Chart;

impl TypedTool for Chart {
    type Request = ChartRequest;
    type Output = Output;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<ChartRequest>("chart", "Draw a chart of a metric."));
        &SPEC
    }

    async fn run(&self, _: &ToolContext, req: ChartRequest) -> Result<Output, ToolError> {
        Ok(Output::text(format!("The chart of {}:", req.metric))
            .with_image(Media::bytes(PNG, "image/png").with_name("chart.png"))
            .with_artifact(json!({"source": ARTIFACT_MARK, "rows": [3, 1, 2]})))
    }
}

/// Scans a page: a TIFF, which no provider here reads.
struct Scan;

impl TypedTool for Scan {
    type Request = ChartRequest;
    type Output = Output;
    type Error = ToolError;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> =
            LazyLock::new(|| ToolSpec::new::<ChartRequest>("scan", "Scan a page."));
        &SPEC
    }

    async fn run(&self, _: &ToolContext, _: ChartRequest) -> Result<Output, ToolError> {
        Ok(Output::text("The scan:").with_image(Media::bytes(vec![0x49, 0x49, 0x2a, 0x00], "image/tiff")))
    }
}

fn png_base64() -> String {
    Media::bytes(PNG, "image/png").base64().unwrap()
}

#[derive(Clone, Copy, Debug)]
enum Provider {
    Chat,
    Anthropic,
}

impl Provider {
    /// A turn calling `tool`, then the answer, as the provider's bodies.
    fn script(self, tool: &str) -> Vec<Value> {
        match self {
            Self::Chat => vec![
                json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1741569952, "model": "gpt-4.1",
                    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                        "tool_calls": [{"id": "call_c1", "type": "function",
                            "function": {"name": tool, "arguments": "{\"metric\":\"sales\"}"}}]}}],
                    "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}}),
                json!({"id": "chatcmpl-2", "object": "chat.completion", "created": 1741569953, "model": "gpt-4.1",
                    "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "Sales went up."}}],
                    "usage": {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}}),
            ],
            Self::Anthropic => vec![
                json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [{"type": "tool_use", "id": "call_c1", "name": tool, "input": {"metric": "sales"}}],
                    "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 7}}),
                json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": "Sales went up."}],
                    "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 40, "output_tokens": 5}}),
            ],
        }
    }

    fn model(self, server: &MockServer) -> Arc<dyn Model> {
        match self {
            Self::Chat => Arc::new(OpenAiChat::from_values(
                "gpt-4.1",
                Some(ApiKey::new("sk-test")),
                Some(&format!("{}/v1", server.uri())),
            )),
            Self::Anthropic => Arc::new(
                Anthropic::new("claude-sonnet-4-5")
                    .with_api_key(ApiKey::new("sk-ant-test"))
                    .with_base_url(server.uri()),
            ),
        }
    }

    /// The messages of the request after the tool ran that answer the call.
    fn answer_to_the_call(self, request: &Value) -> Vec<Value> {
        let messages = request["messages"].as_array().unwrap();
        match self {
            // The tool message, and the user message after it.
            Self::Chat => {
                let at = messages.iter().position(|m| m["role"] == "tool").unwrap();
                messages[at..].to_vec()
            }
            // The user message that holds the tool_result.
            Self::Anthropic => messages
                .iter()
                .filter(|m| m["role"] == "user" && m["content"][0]["type"] == "tool_result")
                .cloned()
                .collect(),
        }
    }
}

async fn run(provider: Provider) -> (RunResult, Vec<Value>) {
    let server = mock(provider.script("chart")).await;
    let tools = Toolset::builder().add(Chart).build().unwrap();
    let agent = Agent::from_shared(provider.model(&server), tools).unwrap();
    let result = agent.run("Chart the sales").await.unwrap_or_else(|error| panic!("{provider:?}: {error}"));
    assert_eq!(
        (result.answer.as_str(), &result.stop),
        ("Sales went up.", &StopReason::Answered),
        "{provider:?}"
    );
    (result, received(&server).await)
}

#[tokio::test]
async fn an_image_a_tool_returns_reaches_the_next_request_as_the_provider_documents_it() {
    for provider in [Provider::Anthropic, Provider::Chat] {
        let (_, requests) = run(provider).await;
        assert_eq!(requests.len(), 2, "{provider:?}");
        let sent = provider.answer_to_the_call(&requests[1]);
        let expected = match provider {
            Provider::Anthropic => vec![json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_c1", "content": [
                    {"type": "text", "text": "The chart of sales:"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_base64()}}
                ], "cache_control": {"type": "ephemeral"}}
            ]})],
            Provider::Chat => vec![
                json!({"role": "tool", "tool_call_id": "call_c1",
                    "content": "The chart of sales:\n[an image `chart.png` (image/png, bytes) follows in a user message]"}),
                json!({"role": "user", "content": [
                    {"type": "text", "text": "The images and files of the result of tool `chart` (call `call_c1`):"},
                    {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", png_base64())}}
                ]}),
            ],
        };
        assert_eq!(sent, expected, "{provider:?}");
        // The artifact is for the application: in no request.
        for request in &requests {
            assert!(!request.to_string().contains(ARTIFACT_MARK), "{provider:?}: {request}");
        }
    }
}

#[tokio::test]
async fn the_saved_transcript_keeps_the_parts_and_the_artifact() {
    for provider in [Provider::Anthropic, Provider::Chat] {
        let (result, _) = run(provider).await;
        let saved = serde_json::to_string(&result.transcript).unwrap();
        let loaded: Transcript = serde_json::from_str(&saved).unwrap();
        assert_eq!(loaded, result.transcript, "{provider:?}");
        let chart = loaded
            .messages
            .iter()
            .find_map(|message| match message {
                Message::Tool { results } => results.first().cloned(),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{provider:?}: no tool message in {saved}"));
        assert_eq!(chart.content, "The chart of sales:", "{provider:?}");
        assert_eq!(
            chart.parts,
            [Part::Image(Media::bytes(PNG, "image/png").with_name("chart.png"))],
            "{provider:?}"
        );
        assert_eq!(chart.artifact, Some(json!({"source": ARTIFACT_MARK, "rows": [3, 1, 2]})), "{provider:?}");
    }
}

#[tokio::test]
async fn an_image_the_provider_cannot_read_stops_the_run_before_the_request_naming_it() {
    for provider in [Provider::Anthropic, Provider::Chat] {
        let server = mock(provider.script("scan")).await;
        let tools = Toolset::builder().add(Scan).build().unwrap();
        let error =
            Agent::from_shared(provider.model(&server), tools).unwrap().run("Scan it").await.unwrap_err();
        let dialect = match provider {
            Provider::Anthropic => "anthropic",
            Provider::Chat => "openai",
        };
        let ModelError::Message(refused) = &error.error else { panic!("{provider:?}: {error}") };
        let message = refused.to_string();
        assert!(
            message.starts_with(&format!(
                "{dialect}: the result of tool `scan` (call `call_c1`) cannot be sent: parts[0], an image (image/tiff, bytes):"
            )),
            "{provider:?}: {message}"
        );
        // Nothing was sent after the tool ran; the transcript keeps its result.
        assert_eq!(received(&server).await.len(), 1, "{provider:?}");
        assert!(matches!(error.transcript.messages.last(), Some(Message::Tool { .. })), "{provider:?}");
    }
}
