//! Results written as MCP content blocks: [`McpResult`], for tools that
//! speak MCP's own types. It is a way to build an [`Output`]: its blocks
//! become parts (the same mapping as a remote tool's), and reach an MCP
//! client, or a model, as any tool's parts do.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::blocks::output_of;
use toolcall_core::{Output, ToolError, ToolOutput};

/// A result written as MCP content blocks (text, image, audio, resource
/// link, embedded resource) and, optionally, structured content: what a
/// typed tool may return. It becomes an [`Output`] ([`McpResult::into_output`]).
///
/// ```
/// use toolcall_mcp::McpResult;
/// use toolcall_mcp::types::ContentBlock;
///
/// // The default for every tool: the content string as text, and as
/// // structured content when it is a JSON object.
/// let result = McpResult::from_content(r#"{"celsius":21}"#.to_owned());
/// assert_eq!(result.structured, Some(serde_json::json!({"celsius": 21})));
///
/// let chart = McpResult::text("a chart of the week").with(ContentBlock::image("iVBORw0KGgo=", "image/png"));
/// assert_eq!(chart.model_content(), "a chart of the week");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpResult {
    /// The content blocks, in order.
    pub content: Vec<ContentBlock>,
    /// The structured result (`structuredContent`), if any.
    pub structured: Option<Value>,
}

impl McpResult {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![ContentBlock::text(text)], structured: None }
    }

    /// The default result of a tool's content string: one text block, and
    /// the same value as structured content when it is a JSON object.
    pub fn from_content(content: String) -> Self {
        let structured = match serde_json::from_str::<Value>(&content) {
            Ok(value @ Value::Object(_)) => Some(value),
            _ => None,
        };
        Self { content: vec![ContentBlock::text(content)], structured }
    }

    /// This result with one more content block.
    pub fn with(mut self, block: ContentBlock) -> Self {
        self.content.push(block);
        self
    }

    /// This result with structured content.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// What a model reads of this result: [`McpResult::into_output`] as
    /// text alone (its text blocks, then the structured content when no
    /// text says the same, one per line).
    pub fn model_content(&self) -> String {
        self.clone().into_output().into_text()
    }

    /// This result as an [`Output`], read as a remote tool's result is:
    /// the first text block is the text; later text, images, audio and
    /// resources are parts; the structured content is a JSON part unless a
    /// text block says the same. Bytes that are not base64 become a text
    /// part saying so.
    pub fn into_output(self) -> Output {
        output_of(self.content, self.structured)
    }

    /// The MCP result, flagged as an error or not.
    pub fn into_call_result(self, is_error: bool) -> CallToolResult {
        let mut result = if is_error {
            CallToolResult::error(self.content)
        } else {
            CallToolResult::success(self.content)
        };
        result.structured_content = self.structured;
        result
    }
}

/// A typed tool may return an [`McpResult`] (`type Output = McpResult`):
/// the model reads its text ([`McpResult::model_content`]), and the whole
/// result is an [`Output`] ([`McpResult::into_output`]), which the MCP server
/// sends block by block like any tool's.
///
/// ```
/// use std::sync::LazyLock;
/// use toolcall_mcp::McpResult;
/// use toolcall_mcp::types::ContentBlock;
/// use toolcall_core::{Part, Tool, ToolContext, ToolError, ToolSpec, TypedTool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Request { city: String }
///
/// struct Map;
/// impl TypedTool for Map {
///     type Request = Request;
///     type Output = McpResult;
///     type Error = ToolError;
///     fn spec(&self) -> &ToolSpec {
///         static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec::new::<Request>("map", "A map of a city."));
///         &SPEC
///     }
///     async fn run(&self, _: &ToolContext, req: Request) -> Result<McpResult, ToolError> {
///         Ok(McpResult::text(format!("a map of {}", req.city)).with(ContentBlock::image("iVBORw0KGgo=", "image/png")))
///     }
/// }
///
/// let out = futures::executor::block_on(Map.call(&ToolContext::new(), r#"{"city":"Oslo"}"#)).unwrap();
/// assert_eq!(out.text, "a map of Oslo");
/// assert!(matches!(&out.parts[0], Part::Image(image) if image.data() == Some(&b"\x89PNG\r\n\x1a\n"[..])));
/// ```
impl ToolOutput for McpResult {
    fn into_content(self) -> Result<String, ToolError> {
        Ok(self.model_content())
    }

    fn into_output(self) -> Result<Output, ToolError> {
        Ok(McpResult::into_output(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_objects_become_structured_content() {
        assert!(McpResult::from_content("[1,2]".into()).structured.is_none());
        assert!(McpResult::from_content("sunny".into()).structured.is_none());
        assert!(McpResult::from_content("{\"a\":1}".into()).structured.is_some());
    }

    #[test]
    fn model_content_falls_back_to_structured() {
        let result = McpResult::default().with_structured(serde_json::json!({"a": 1}));
        assert_eq!(result.model_content(), r#"{"a":1}"#);
    }
}
