//! The transform from the canonical schema to Gemini's OpenAPI subset; its
//! rules are in the [`gemini`](super) docs.

use serde_json::{Value, json};

use crate::transform::{self, Keyword, Refuse};
use crate::{Dialect, DialectError};
use toolcall_core::JsonObject;

const KEPT: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "anyOf",
    "propertyOrdering",
];

const DROPPED: &[&str] =
    &["title", "$schema", "$defs", "definitions", "$id", "$comment", "additionalProperties"];

const REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "prefixItems",
    "dependentSchemas",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

const FORMATS: &[&str] = &["enum", "date-time"];

/// The Gemini form of a canonical schema (see the [module docs](super));
/// `None` for a tool without arguments.
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
/// let params = &Dialect::Gemini.function(&tool).unwrap()["parameters"];
/// assert_eq!(params["properties"]["days"], serde_json::json!({"type": "integer", "nullable": true, "minimum": 0, "maximum": 255}));
/// ```
///
/// # Errors
///
/// [`DialectError`], naming the keyword, for a recursive schema or a `$ref` that is not local,
/// a keyword Gemini refuses (`allOf`, `not`...), a schema that accepts any value, an enum of
/// non-strings, or a root that is not an object.
pub(crate) fn parameters(tool: &str, schema: &JsonObject) -> Result<Option<JsonObject>, DialectError> {
    let refuse = |keyword: &str, problem: String| DialectError::tool(tool, Dialect::Gemini, keyword, problem);
    if let Some(name) = transform::recursive_def(schema) {
        return Err(refuse(
            "$ref",
            format!("the schema is recursive (through `{name}`); Gemini has no references"),
        ));
    }
    let defs = schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut root = Value::Object(schema.clone());
    if let Value::Object(object) = &mut root {
        object.remove("$defs");
    }
    inline(&mut root, &defs, "", &refuse)?;
    convert(&mut root, "", &refuse)?;
    match root {
        Value::Object(object) if object.get("properties").is_some() => Ok(Some(object)),
        Value::Object(_) => Ok(None),
        _ => Err(refuse("type", "the root must be an object schema".into())),
    }
}

fn inline(node: &mut Value, defs: &JsonObject, path: &str, refuse: &Refuse<'_>) -> Result<(), DialectError> {
    let Value::Object(object) = node else { return Ok(()) };
    if let Some(reference) = object.remove("$ref") {
        let name = reference.as_str().and_then(transform::local_def);
        let Some(target) = name.and_then(|name| defs.get(name)) else {
            return Err(refuse(
                "$ref",
                format!("{}: `{reference}` is not a local definition", transform::at(path)),
            ));
        };
        let siblings = std::mem::take(object);
        *node = target.clone();
        if let Value::Object(inlined) = node {
            // The field's own description says more than the type's.
            inlined.extend(siblings);
        }
        return inline(node, defs, path, refuse);
    }
    transform::try_for_each_child(object, |child, segment| {
        inline(child, defs, &transform::join(path, &segment), refuse)
    })
}

fn convert(node: &mut Value, path: &str, refuse: &Refuse<'_>) -> Result<(), DialectError> {
    let any = || format!("{}: a schema that accepts any value has no Gemini type", transform::at(path));
    let object = match node {
        Value::Bool(true) => return Err(refuse("true", any())),
        Value::Object(object) if object.is_empty() => return Err(refuse("{}", any())),
        Value::Object(object) => object,
        _ => return Ok(()),
    };
    if let Some(keyword) = transform::first_present(object, REFUSED) {
        return Err(refuse(keyword, format!("{}: not supported by Gemini", transform::at(path))));
    }
    transform::rename_key(object, "oneOf", "anyOf");
    if let Some(Value::Array(branches)) = object.get_mut("anyOf") {
        let before = branches.len();
        branches.retain(|branch| branch.get("type").and_then(Value::as_str) != Some("null"));
        if branches.len() < before {
            object.insert("nullable".into(), Value::Bool(true));
        }
        let single = object.get("anyOf").and_then(Value::as_array).is_some_and(|b| b.len() == 1);
        if single && let Some(Value::Array(mut branches)) = object.remove("anyOf") {
            let mut merged = match branches.pop() {
                Some(Value::Object(branch)) => branch,
                _ => return Err(refuse("anyOf", any())),
            };
            merged.extend(std::mem::take(object));
            *node = Value::Object(merged);
            return convert(node, path, refuse);
        }
    }
    if let Some(Value::Array(types)) = object.get("type").cloned() {
        let kinds: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if kinds.len() < types.len() {
            object.insert("nullable".into(), Value::Bool(true));
        }
        match kinds.as_slice() {
            [one] => {
                object.insert("type".into(), one.clone());
            }
            _ => {
                object.remove("type");
                let branches: Vec<Value> = kinds.into_iter().map(|kind| json!({"type": kind})).collect();
                object.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    if let Some(value) = object.remove("const") {
        object.insert("enum".into(), Value::Array(vec![value]));
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        if values.iter().any(Value::is_null) {
            values.retain(|v| !v.is_null());
            object.insert("nullable".into(), Value::Bool(true));
        }
        if let Some(Value::Array(values)) = object.get("enum")
            && let Some(bad) = values.iter().find(|v| !v.is_string())
        {
            return Err(refuse(
                "enum",
                format!("{}: Gemini enums hold strings only, not {bad}", transform::at(path)),
            ));
        }
        object.entry("type").or_insert_with(|| Value::String("string".into()));
        object.insert("format".into(), Value::String("enum".into()));
    }
    transform::try_for_each_child(object, |child, segment| {
        convert(child, &transform::join(path, &segment), refuse)
    })?;
    if let Some(branches) = object.remove("anyOf") {
        // anyOf must stand alone: what applied to the union applies to each branch.
        let mut branches = match branches {
            Value::Array(branches) => branches,
            _ => Vec::new(),
        };
        for branch in branches.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(description) = object.get("description")
                && !branch.contains_key("description")
            {
                branch.insert("description".into(), description.clone());
            }
            if object.get("nullable") == Some(&Value::Bool(true)) {
                branch.insert("nullable".into(), Value::Bool(true));
            }
        }
        *object = JsonObject::new();
        object.insert("anyOf".into(), Value::Array(branches));
        return Ok(());
    }
    // A map's value schema is dropped with `additionalProperties` below, but
    // what the values must be still matters to the model.
    let mut notes = Vec::new();
    if let Some(map) = object.get("additionalProperties").filter(|v| v.is_object()).cloned() {
        notes.push(("additionalProperties".to_owned(), map));
    }
    let empty_properties =
        object.get("properties").and_then(Value::as_object).is_some_and(JsonObject::is_empty);
    if empty_properties && !path.is_empty() {
        object.remove("properties");
    }
    let names: Vec<String> = object
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(Value::Array(required)) = object.get_mut("required") {
        required.retain(|name| name.as_str().is_some_and(|name| names.iter().any(|n| n == name)));
        if required.is_empty() {
            object.remove("required");
        }
    }
    if empty_properties && path.is_empty() {
        object.remove("properties");
    }
    transform::keep_or_note(object, notes, |key, value| match key {
        "format" => transform::format_rule(value, FORMATS),
        other if DROPPED.contains(&other) => Keyword::Drop,
        other if KEPT.contains(&other) => Keyword::Keep,
        _ => Keyword::Note,
    });
    Ok(())
}
