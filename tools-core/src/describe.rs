//! Tool lists rendered for a prompt.

use std::fmt::Write as _;

use crate::Tool;

/// A Markdown list of the tools, one line each: the name in bold and the
/// first line of the description.
///
/// ```
/// use tools_core::{to_markdown, JsonObject, Tool, ToolContext, ToolFuture};
/// # struct T(&'static str, &'static str, JsonObject);
/// # impl Tool for T {
/// #     fn name(&self) -> &str { self.0 }
/// #     fn description(&self) -> &str { self.1 }
/// #     fn parameters(&self) -> &JsonObject { &self.2 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> ToolFuture<'a> { Box::pin(async { Ok(String::new()) }) }
/// # }
/// let tools = [T("get_weather", "Current temperature.\nIn Celsius.", JsonObject::new()), T("search", "", JsonObject::new())];
/// assert_eq!(
///     to_markdown(tools.iter().map(|t| t as &dyn Tool)),
///     "- **get_weather**: Current temperature.\n- **search**\n"
/// );
/// ```
pub fn to_markdown<'a>(tools: impl IntoIterator<Item = &'a dyn Tool>) -> String {
    let mut out = String::new();
    for tool in tools {
        let summary = tool.description().lines().map(str::trim).find(|line| !line.is_empty());
        let _ = match summary {
            Some(line) => writeln!(out, "- **{}**: {line}", tool.name()),
            None => writeln!(out, "- **{}**", tool.name()),
        };
    }
    out
}
