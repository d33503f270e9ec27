//! Anthropic's strict tool use: the subset of JSON Schema it takes, and the
//! transform of a canonical schema into it (the rules and their source are
//! in the module above).

use serde_json::Value;

use crate::transform::{self, Keyword, Refuse};
use crate::{Dialect, DialectError};
use toolcall_core::JsonObject;

const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "description",
    "title",
    "format",
    "minItems",
];

const STRICT_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];

const STRICT_REFUSED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "patternProperties",
    "prefixItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// The strict form of a canonical schema: `oneOf` becomes `anyOf`, every
/// object gets `additionalProperties: false` (an open map is refused),
/// keywords outside the strict subset (numeric bounds, lengths, `pattern`,
/// `default`, `minItems` above 1, other formats) move into the description,
/// and a recursive schema is refused. `required` is left as it is: Anthropic
/// does not ask for every property, so `Option` fields stay optional.
///
/// # Errors
///
/// [`DialectError`], naming the keyword, for a recursive schema, a keyword strict tool use
/// refuses (`not`, `if`, `patternProperties`...), an open map (`additionalProperties`), or a
/// root that is not an object.
pub(crate) fn strict_schema(tool: &str, schema: &JsonObject) -> Result<JsonObject, DialectError> {
    let refuse =
        |keyword: &str, problem: String| DialectError::tool(tool, Dialect::AnthropicStrict, keyword, problem);
    if let Some(name) = transform::recursive_def(schema) {
        return Err(refuse(
            "$ref",
            format!("the schema is recursive (through `{name}`), which strict mode refuses"),
        ));
    }
    let mut root = Value::Object(schema.clone());
    strict_node(&mut root, "", &refuse)?;
    match root {
        Value::Object(object) => Ok(object),
        _ => Err(refuse("type", "the root must be an object schema".into())),
    }
}

fn strict_node(node: &mut Value, path: &str, refuse: &Refuse<'_>) -> Result<(), DialectError> {
    let Value::Object(object) = node else { return Ok(()) };
    if let Some(keyword) = transform::first_present(object, STRICT_REFUSED) {
        return Err(refuse(keyword, format!("{}: not supported by strict tool use", transform::at(path))));
    }
    transform::rename_key(object, "oneOf", "anyOf");
    let is_object =
        object.contains_key("properties") || object.get("type").and_then(Value::as_str) == Some("object");
    if is_object {
        transform::refuse_open_map(object, path, refuse)?;
        object.insert("additionalProperties".into(), Value::Bool(false));
    }
    transform::try_for_each_child(object, |child, segment| {
        strict_node(child, &transform::join(path, &segment), refuse)
    })?;
    transform::keep_or_note(object, Vec::new(), |key, value| match key {
        "format" => transform::format_rule(value, STRICT_FORMATS),
        "minItems" if value.as_u64().is_some_and(|n| n <= 1) => Keyword::Keep,
        "minItems" => Keyword::Note,
        other if STRICT_KEYWORDS.contains(&other) => Keyword::Keep,
        _ => Keyword::Note,
    });
    Ok(())
}
