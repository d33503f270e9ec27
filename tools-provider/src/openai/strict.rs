//! The strict-mode transform; its rules are in the [`openai`](super) docs.

use serde_json::{Value, json};

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

/// The strict-mode form of a canonical schema (see the [module docs](super)),
/// as a strict dialect's function sends it.
///
/// ```
/// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
/// # struct Spec(ToolSpec);
/// # impl Tool for Spec {
/// #     fn spec(&self) -> &ToolSpec { &self.0 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
/// # }
/// use toolcall_provider::Dialect;
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Weather { city: String, days: Option<u8> }
/// let tool = Spec(ToolSpec::from_parameters("weather", "Weather.", Parameters::of::<Weather>()));
/// let sent = Dialect::OpenAiChatStrict.function(&tool).unwrap();
/// let strict = &sent["function"]["parameters"];
/// assert_eq!(strict["required"], serde_json::json!(["city", "days"]));
/// assert_eq!(strict["additionalProperties"], false);
/// ```
///
/// # Errors
///
/// [`DialectError`], naming the keyword, for a union at the root, a schema that accepts any
/// value, a keyword strict mode refuses (`allOf`, `not`...), or an open map
/// (`additionalProperties`).
pub(crate) fn strict_schema(
    tool: &str,
    schema: &JsonObject,
    dialect: Dialect,
) -> Result<JsonObject, DialectError> {
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
        let optional: Vec<String> = match (object.get("properties"), object.get("required")) {
            (Some(Value::Object(properties)), required) => properties
                .keys()
                .filter(|name| {
                    !required.and_then(Value::as_array).is_some_and(|r| r.iter().any(|n| n == *name))
                })
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        let properties = object.entry("properties").or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(properties) = properties {
            for name in &optional {
                properties.get_mut(name).map(nullable);
            }
        }
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

/// Make a field strict mode requires take `null` too, if it does not: it
/// was optional, and `null` is how the model says "not given".
fn nullable(field: &mut Value) {
    let Value::Object(schema) = field else { return };
    let listed = |key: &str| schema.get(key).and_then(Value::as_array);
    let takes_null = listed("anyOf").is_some_and(|branches| branches.iter().any(|b| b["type"] == "null"))
        || match schema.get("type") {
            Some(Value::String(name)) => name == "null",
            Some(Value::Array(names)) => names.iter().any(|name| name == "null"),
            _ => false,
        };
    if takes_null {
        return;
    }
    let typed = match schema.get("type") {
        Some(Value::String(name)) => Some(json!([name, "null"])),
        Some(Value::Array(names)) => {
            Some(Value::Array(names.iter().cloned().chain([json!("null")]).collect()))
        }
        _ => None,
    };
    match typed {
        // An enum lists its values, so null joins them too.
        Some(types) if !schema.contains_key("const") => {
            schema.insert("type".into(), types);
            if let Some(Value::Array(values)) = schema.get_mut("enum") {
                values.push(Value::Null);
            }
        }
        // A `$ref`, a union or a const: null becomes another branch; the
        // description stays outside, where the model reads it.
        _ => {
            let description = schema.remove("description");
            let branch = std::mem::take(schema);
            schema.insert("anyOf".into(), json!([branch, {"type": "null"}]));
            if let Some(description) = description {
                schema.insert("description".into(), description);
            }
        }
    }
}
