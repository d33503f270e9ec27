//! Tool lists rendered for a prompt.

use std::fmt::Write as _;

use crate::Tool;

/// A Markdown list of the tools, one line each: the name in bold and the
/// first line of the description.
///
/// ```
/// use toolcall_core::{to_markdown, Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
/// # struct Named(ToolSpec);
/// # impl Tool for Named {
/// #     fn spec(&self) -> &ToolSpec { &self.0 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
/// # }
/// # fn tool(name: &'static str, description: &'static str) -> Named { Named(ToolSpec::from_parameters(name, description, Parameters::of::<()>())) }
/// let tools = [tool("get_weather", "Current temperature.\nIn Celsius."), tool("search", "")];
/// assert_eq!(
///     to_markdown(tools.iter().map(|t| t as &dyn Tool)),
///     "- **get_weather**: Current temperature.\n- **search**\n"
/// );
/// ```
pub fn to_markdown<'a>(tools: impl IntoIterator<Item = &'a dyn Tool>) -> String {
    let mut out = String::new();
    for tool in tools {
        let summary = tool.spec().description().lines().map(str::trim).find(|line| !line.is_empty());
        let _ = match summary {
            Some(line) => writeln!(out, "- **{}**: {line}", tool.spec().name()),
            None => writeln!(out, "- **{}**", tool.spec().name()),
        };
    }
    out
}
