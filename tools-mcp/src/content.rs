//! Rich MCP results: content blocks and structured content, with the
//! default every tool gets from its content string.

use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use tools_core::{JsonObject, Tool, ToolContext, ToolError, ToolFuture, ToolOutput, TypedTool};

/// What a tool returns to an MCP client: content blocks (text, image, audio,
/// resource link, embedded resource) and, optionally, structured content.
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

    /// What a model reads of this result: its text blocks, one per line; the
    /// structured content as JSON when there is no text.
    pub fn model_content(&self) -> String {
        let texts: Vec<&str> =
            self.content.iter().filter_map(|b| b.as_text()).map(|t| t.text.as_str()).collect();
        if let (true, Some(value)) = (texts.is_empty(), &self.structured) {
            return value.to_string();
        }
        texts.join("\n")
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

/// The typed hook for rich results: a typed tool that can answer an MCP
/// client with more than its content string (images, resources, structured
/// content), while a model outside MCP still reads one string.
///
/// The default `run_mcp` is `run` and [`McpResult::from_content`], so an
/// empty `impl McpTool for MyTool {}` changes nothing; override it to return
/// images, resources or structured content. Register the tool wrapped in
/// [`Rich`] so the bridge finds the hook; a model (outside MCP) reads
/// [`McpResult::model_content`].
///
/// ```
/// use std::sync::LazyLock;
/// use tools_mcp::{McpResult, McpTool, Rich};
/// use tools_mcp::rmcp::model::ContentBlock;
/// use tools_core::{Tool, ToolContext, ToolError, ToolSpec, TypedTool};
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
/// let out = futures::executor::block_on(tool.call(&ToolContext::new(), r#"{"city":"Oslo"}"#)).unwrap();
/// assert_eq!(out, "a map of Oslo");
/// ```
pub trait McpTool: TypedTool {
    /// Run the tool for an MCP client.
    fn run_mcp(
        &self,
        ctx: &ToolContext,
        req: Self::Request,
    ) -> impl Future<Output = Result<McpResult, ToolError>> + Send {
        async move {
            let output = self.run(ctx, req).await.map_err(Into::into)?;
            Ok(McpResult::from_content(output.into_content()?))
        }
    }
}

/// A [`McpTool`] as a [`Tool`]: the same adapter as any typed tool, with the
/// rich result handed to the MCP bridge when one serves the call.
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
        Box::pin(async move {
            let req = <T::Request as tools_core::Arguments>::parse(self.0.spec(), input)?;
            let result = self.0.run_mcp(ctx, req).await?;
            let content = result.model_content();
            if let Some(slot) = ctx.get::<ResultSlot>() {
                slot.put(result);
            }
            Ok(content)
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

/// Where a [`Rich`] tool leaves its result for the bridge that serves the
/// call: a context extension, so the call itself still goes through
/// [`Toolset::call`](tools_core::Toolset::call) and its contract.
#[derive(Clone, Default)]
pub(crate) struct ResultSlot(Arc<Mutex<Option<McpResult>>>);

impl ResultSlot {
    fn put(&self, result: McpResult) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(result);
        }
    }

    pub(crate) fn take(&self) -> Option<McpResult> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}

/// A reply to `tools/call` from a call's outcome: the rich result when the
/// tool left one, the content string otherwise.
pub(crate) fn call_result(result: tools_core::ToolResult, rich: Option<McpResult>) -> CallToolResult {
    let is_error = !result.outcome.is_success();
    match rich {
        Some(rich) if !is_error => rich.into_call_result(false),
        _ if is_error => CallToolResult::error(vec![ContentBlock::text(result.content)]),
        _ => McpResult::from_content(result.content).into_call_result(false),
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
