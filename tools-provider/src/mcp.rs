//! The Model Context Protocol's tool definition.
//!
//! Rules, from the specification
//! (<https://modelcontextprotocol.io/specification/2025-06-18/server/tools>,
//! <https://modelcontextprotocol.io/specification/2025-11-25/server/tools>):
//! a tool is `{"name", "title"?, "description", "inputSchema",
//! "outputSchema"?, "annotations"?}`; `inputSchema` is a JSON Schema object whose root has
//! `type: "object"`, read as JSON Schema 2020-12 when it has no `$schema`,
//! which is the canonical schema (`$defs` and all) with one change: a
//! `format` 2020-12 does not define is not sent, since clients validate
//! with standard validators that warn about every unknown one (the
//! TypeScript SDK's Ajv prints a warning per `uint8` on each `tools/list`).
//! schemars' numeric widths (`uint8`, `int64`...) are dropped, as the bounds
//! beside them say the same; any other unknown format is noted in the
//! description, as the dialects note what they cannot carry.
//! Names SHOULD be 1 to 128 characters of `[A-Za-z0-9_.-]` (SEP-986).
//! Annotations are the hints `title`, `readOnlyHint`, `destructiveHint`,
//! `idempotentHint` and `openWorldHint`. MCP has no native web search, so
//! the `web_search` fallback function is listed like any other tool.
//!
//! This is the one definition, [`Dialect::Mcp`](crate::Dialect::Mcp)'s
//! [`function`](crate::Dialect::function) (which also checks the tool's
//! examples against its schema): the MCP bridge's `tools/list` is built from
//! it, as are exported schemas, the definitions the agent's local tool
//! search answers with, and what clients that speak MCP by hand send.
//! `outputSchema` is there when the tool's content is a JSON object of a
//! known shape.
//!
//! Definitions are all this module has: MCP has no model response to read
//! calls from. A client sends each call as a `tools/call` request and reads
//! the result from the answer, which the MCP bridge (`toolcall-mcp`) serves, so
//! [`Dialect`](crate::Dialect)'s message methods
//! ([`parse_calls`](crate::Dialect::parse_calls),
//! [`format_results`](crate::Dialect::format_results),
//! [`messages`](crate::Dialect::messages),
//! [`content`](crate::Dialect::content)) refuse
//! [`Dialect::Mcp`](crate::Dialect::Mcp).

use serde_json::{Value, json};

use super::limits::ProviderLimits;
use super::transform::{self, Keyword};
use toolcall_core::{JsonObject, Tool};

/// The formats JSON Schema 2020-12 defines (Validation, section 7.3).
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Names of up to 128 characters; no tool count limit.
pub const LIMITS: ProviderLimits = ProviderLimits { max_name_len: 128, ..ProviderLimits::NONE };

/// One tool as `tools/list` lists it.
///
/// ```
/// # use toolcall_core::{JsonObject, Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
/// # struct Spec(ToolSpec);
/// # impl Tool for Spec {
/// #     fn spec(&self) -> &ToolSpec { &self.0 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
/// # }
/// # #[allow(non_snake_case)]
/// # fn Echo(schema: JsonObject) -> Spec { Spec(ToolSpec::from_parameters("echo", "Repeat.", Parameters::from_schema(schema))) }
/// let schema = serde_json::json!({"type": "object", "properties": {}});
/// let tool = Echo(schema.as_object().unwrap().clone());
/// assert_eq!(toolcall_provider::Dialect::Mcp.function(&tool).unwrap()["inputSchema"], schema);
/// ```
pub(crate) fn tool(tool: &dyn Tool) -> Value {
    let mut definition = json!({"name": tool.spec().name()});
    let annotations = tool.spec().annotations();
    if let Some(title) = &annotations.title {
        definition["title"] = json!(title);
    }
    definition["description"] = json!(crate::examples::in_description(tool));
    definition["inputSchema"] = Value::Object(standard_formats(tool.spec().parameters()));
    if let Some(output) = tool.spec().output_schema() {
        definition["outputSchema"] = Value::Object(standard_formats(output));
    }
    let hints = [
        ("title", annotations.title.as_ref().map(|t| json!(t))),
        ("readOnlyHint", annotations.read_only.map(Value::Bool)),
        ("destructiveHint", annotations.destructive.map(Value::Bool)),
        ("idempotentHint", annotations.idempotent.map(Value::Bool)),
        ("openWorldHint", annotations.open_world.map(Value::Bool)),
    ];
    let hints: serde_json::Map<String, Value> =
        hints.into_iter().filter_map(|(key, value)| value.map(|v| (key.to_owned(), v))).collect();
    if !hints.is_empty() {
        definition["annotations"] = Value::Object(hints);
    }
    definition
}

/// The schema with only the formats 2020-12 defines.
fn standard_formats(schema: &JsonObject) -> JsonObject {
    fn walk(node: &mut JsonObject) {
        if node.contains_key("format") {
            transform::keep_or_note(node, Vec::new(), |key, value| match key {
                "format" => transform::format_rule(value, STANDARD_FORMATS),
                _ => Keyword::Keep,
            });
        }
        let _ = transform::try_for_each_child(node, |child, _| {
            if let Some(child) = child.as_object_mut() {
                walk(child);
            }
            Ok::<(), std::convert::Infallible>(())
        });
    }
    let mut schema = schema.clone();
    walk(&mut schema);
    schema
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn only_standard_formats_are_sent() {
        let schema = json!({"type": "object", "properties": {
            "when": {"type": "string", "format": "date-time"},
            "days": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
            "code": {"type": "string", "format": "iso-3166", "description": "Country."},
            "list": {"type": "array", "items": {"type": "number", "format": "double"}}
        }});
        let formatted = super::standard_formats(schema.as_object().unwrap());
        assert_eq!(
            serde_json::Value::Object(formatted),
            json!({"type": "object", "properties": {
                "when": {"type": "string", "format": "date-time"},
                "days": {"type": "integer", "minimum": 0, "maximum": 255},
                "code": {"type": "string", "description": "Country. (format: \"iso-3166\")"},
                "list": {"type": "array", "items": {"type": "number"}}
            }})
        );
    }
}
