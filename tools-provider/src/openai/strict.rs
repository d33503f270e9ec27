//! The strict-mode transform; its rules are in the [`openai`](super) docs.

use serde_json::{Value, json};

use crate::transform::{self, Keyword, Refuse};
use crate::{Dialect, DialectError};
use tools_core::JsonObject;

const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

const STRICT_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

const STRICT_REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "prefixItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// The strict-mode form of a canonical schema (see the [module docs](super)).
///
/// ```
/// use tools_provider::{Dialect, openai};
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Weather { city: String, days: Option<u8> }
/// let schema = tools_core::Parameters::of::<Weather>();
/// let strict = openai::strict_schema("weather", schema.schema(), Dialect::OpenAiChatStrict).unwrap();
/// assert_eq!(strict["required"], serde_json::json!(["city", "days"]));
/// assert_eq!(strict["additionalProperties"], false);
/// ```
pub fn strict_schema(tool: &str, schema: &JsonObject, dialect: Dialect) -> Result<JsonObject, DialectError> {
    if schema.contains_key("anyOf") || schema.contains_key("oneOf") {
        return Err(DialectError::tool(
            tool,
            dialect,
            "anyOf",
            "the root of a strict schema must be an object, not a union",
        ));
    }
    let mut root = Value::Object(schema.clone());
    strict_node(&mut root, "", &|keyword, problem| DialectError::tool(tool, dialect, keyword, problem))?;
    match root {
        Value::Object(object) => Ok(object),
        _ => Err(DialectError::tool(tool, dialect, "type", "the root must be an object schema")),
    }
}

fn strict_node(node: &mut Value, path: &str, refuse: &Refuse<'_>) -> Result<(), DialectError> {
    let object = match node {
        Value::Bool(true) => {
            return Err(refuse(
                "true",
                format!("{}: a schema that accepts any value cannot be strict", transform::at(path)),
            ));
        }
        Value::Object(object) => object,
        _ => return Ok(()),
    };
    if object.is_empty() {
        return Err(refuse(
            "{}",
            format!("{}: a schema that accepts any value cannot be strict", transform::at(path)),
        ));
    }
    if let Some(keyword) = transform::first_present(object, STRICT_REFUSED) {
        return Err(refuse(keyword, format!("{}: not supported in strict mode", transform::at(path))));
    }
    transform::rename_key(object, "oneOf", "anyOf");
    if object.len() > 1
        && let Some(reference) = object.remove("$ref")
    {
        let rest = std::mem::take(object);
        object.insert("anyOf".into(), json!([{"$ref": reference}]));
        object.extend(rest);
    }
    let is_object = object.contains_key("properties")
        || match object.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
            _ => false,
        };
    if is_object {
        transform::refuse_open_map(object, path, refuse)?;
        let properties = object.entry("properties").or_insert_with(|| Value::Object(JsonObject::new()));
        let names: Vec<Value> = properties
            .as_object()
            .map(|p| p.keys().cloned().map(Value::String).collect())
            .unwrap_or_default();
        object.insert("required".into(), Value::Array(names));
        object.insert("additionalProperties".into(), Value::Bool(false));
    }
    transform::try_for_each_child(object, |child, segment| {
        strict_node(child, &transform::join(path, &segment), refuse)
    })?;
    transform::keep_or_note(object, Vec::new(), |key, value| match key {
        "format" => transform::format_rule(value, STRICT_FORMATS),
        other if STRICT_KEYWORDS.contains(&other) => Keyword::Keep,
        _ => Keyword::Note,
    });
    Ok(())
}
