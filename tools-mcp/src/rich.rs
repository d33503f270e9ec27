//! Rich MCP results written as MCP content blocks: [`McpResult`],
//! [`McpTool`] and [`Rich`], for tools that speak MCP's own types. They
//! are a way to build an [`Output`]: a [`Rich`] tool's blocks become parts
//! (the same mapping as a remote tool's), and reach an MCP client, or a
//! model, as any tool's parts do.

use std::future::Future;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::blocks::{blocks_of, output_of};
use tools_core::{
    JsonObject, Output, OutputFuture, Tool, ToolContext, ToolError, ToolFuture, ToolOutput, TypedTool,
};

/// A result written as MCP content blocks (text, image, audio, resource
/// link, embedded resource) and, optionally, structured content: what a
/// [`McpTool`] returns. It becomes an [`Output`] ([`McpResult::into_output`]).
///
/// ```
/// use tools_mcp::McpResult;
/// use tools_mcp::rmcp::model::ContentBlock;
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

/// The typed hook for results written as MCP content blocks: a typed tool
/// that answers with an [`McpResult`] (images, resources, structured
/// content) rather than its `Output`.
///
/// New tools need none of this: a typed tool whose output is an
/// [`Output`] (text, JSON, images, files) is sent to an MCP client block by
/// block as it is. This remains for tools written against MCP's types.
///
/// The default `run_mcp` is `run`, its output as blocks, so an empty
/// `impl McpTool for MyTool {}` changes nothing; override it to return
/// blocks of your own. Register the tool wrapped in [`Rich`]: its result
/// becomes an [`Output`] ([`McpResult::into_output`]), which a model reads
/// and the MCP server sends like any other.
///
/// ```
/// use std::sync::LazyLock;
/// use tools_mcp::{McpResult, McpTool, Rich};
/// use tools_mcp::rmcp::model::ContentBlock;
/// use tools_core::{Part, Tool, ToolContext, ToolError, ToolSpec, TypedTool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Request { city: String }
///
/// struct Map;
/// impl TypedTool for Map {
///     type Request = Request;
///     type Output = String;
///     type Error = ToolError;
///     fn spec(&self) -> &ToolSpec {
///         static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec::new::<Request>("map", "A map of a city."));
///         &SPEC
///     }
///     async fn run(&self, _: &ToolContext, req: Request) -> Result<String, ToolError> {
///         Ok(format!("a map of {}", req.city))
///     }
/// }
/// impl McpTool for Map {
///     async fn run_mcp(&self, ctx: &ToolContext, req: Request) -> Result<McpResult, ToolError> {
///         let text = self.run(ctx, req).await?;
///         Ok(McpResult::text(text).with(ContentBlock::image("iVBORw0KGgo=", "image/png")))
///     }
/// }
///
/// let tool = Rich(Map);
/// let ctx = ToolContext::new();
/// let out = futures::executor::block_on(tool.call_output(&ctx, r#"{"city":"Oslo"}"#)).unwrap();
/// assert_eq!(out.text, "a map of Oslo");
/// assert!(matches!(&out.parts[0], Part::Image(image) if image.data() == Some(&b"\x89PNG\r\n\x1a\n"[..])));
/// ```
pub trait McpTool: TypedTool {
    /// Run the tool for an MCP client.
    fn run_mcp(
        &self,
        ctx: &ToolContext,
        req: Self::Request,
    ) -> impl Future<Output = Result<McpResult, ToolError>> + Send {
        async move {
            let output = self.run(ctx, req).await.map_err(Into::into)?.into_output()?;
            let (content, structured) = blocks_of(output, self.spec().name(), &|_| true);
            Ok(McpResult { content, structured })
        }
    }
}

/// A [`McpTool`] as a [`Tool`]: the same adapter as any typed tool, whose
/// output is the [`McpResult`] as an [`Output`].
pub struct Rich<T>(pub T);

impl<T: McpTool> Tool for Rich<T> {
    fn name(&self) -> &str {
        self.0.spec().name()
    }
    fn description(&self) -> &str {
        self.0.spec().description()
    }
    fn parameters(&self) -> &JsonObject {
        self.0.spec().parameters()
    }
    fn call<'a>(&'a self, ctx: &'a ToolContext, input: &'a str) -> ToolFuture<'a> {
        let output = self.call_output(ctx, input);
        Box::pin(async move { output.await.map(Output::into_text) })
    }
    fn call_output<'a>(&'a self, ctx: &'a ToolContext, input: &'a str) -> OutputFuture<'a> {
        Box::pin(async move {
            let req = <T::Request as tools_core::Arguments>::parse(self.0.spec(), input)?;
            Ok(self.0.run_mcp(ctx, req).await?.into_output())
        })
    }
    fn annotations(&self) -> &tools_core::Annotations {
        self.0.spec().annotations()
    }
    fn timeout(&self) -> Option<std::time::Duration> {
        self.0.spec().timeout()
    }
    fn needs_approval(&self) -> bool {
        self.0.spec().is_approval_needed()
    }
    fn output_schema(&self) -> Option<&JsonObject> {
        self.0.spec().output_schema()
    }
    fn examples(&self) -> &[serde_json::Value] {
        self.0.spec().examples()
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
