//! A tool's example arguments ([`ToolSpec::examples`](toolcall_core::ToolSpec::examples)): checked against its
//! schema when the definitions are built, then shown to the model as each
//! provider takes them. Anthropic has a field for them, `input_examples`
//! (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-use-examples>);
//! the other formats have none, so the examples follow the description.

use std::borrow::Cow;

use serde_json::Value;

use crate::{Dialect, DialectError};
use toolcall_core::Tool;

/// Refuse an example that the tool itself would refuse: one that does not
/// fit its schema, or is not an object.
pub(crate) fn check(dialect: Dialect, tool: &dyn Tool) -> Result<(), DialectError> {
    let examples = tool.spec().examples();
    if examples.is_empty() {
        return Ok(());
    }
    let refuse = |problem: String| DialectError::tool(tool.spec().name(), dialect, "examples", problem);
    let schema = Value::Object(tool.spec().parameters().clone());
    let validator = jsonschema::options()
        .should_validate_formats(false)
        .build(&schema)
        .map_err(|error| refuse(format!("the schema cannot check the examples: {error}")))?;
    for (at, example) in examples.iter().enumerate() {
        let number = at + 1;
        if !example.is_object() {
            return Err(refuse(format!("example {number} is not a JSON object of arguments: {example}")));
        }
        if let Err(error) = validator.validate(example) {
            let path = error.instance_path().to_string();
            let place = if path.is_empty() { String::new() } else { format!(" at `{path}`") };
            return Err(refuse(format!("example {number} does not fit the schema{place}: {error}")));
        }
    }
    Ok(())
}

/// The description, followed by the examples for a format with no field
/// for them: one compact JSON object a line.
pub(crate) fn in_description(tool: &dyn Tool) -> Cow<'_, str> {
    let examples = tool.spec().examples();
    if examples.is_empty() {
        return Cow::Borrowed(tool.spec().description());
    }
    let mut text = tool.spec().description().trim_end().to_owned();
    text.push_str(if text.is_empty() { "Example arguments:" } else { "\n\nExample arguments:" });
    for example in examples {
        text.push('\n');
        text.push_str(&example.to_string());
    }
    Cow::Owned(text)
}
