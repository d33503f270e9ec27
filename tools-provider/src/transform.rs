//! The steps every dialect's schema transform shares: walking the
//! subschemas of a node, refusing what a dialect cannot express, and keeping
//! a keyword the dialect cannot carry for the model, in the description.

use serde_json::Value;

use super::DialectError;
use toolcall_core::JsonObject;

/// How a transform reports a keyword it cannot express: the keyword, and
/// the problem with where it is. Each dialect builds one naming the tool and
/// itself.
pub(crate) type Refuse<'a> = dyn Fn(&str, String) -> DialectError + 'a;

/// Keywords whose value is one subschema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Keywords whose value is an array of subschemas.
const SCHEMA_LIST_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Keywords whose value maps names to subschemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &["properties", "$defs", "patternProperties", "dependentSchemas"];

/// Integer and float widths schemars writes as `format`: a Rust detail that
/// the bounds already carry, and that no provider understands.
const NUMERIC_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int128", "int", "uint8", "uint16", "uint32", "uint64", "uint128",
    "uint", "float", "double",
];

/// What a dialect does with one keyword of a schema node.
pub(crate) enum Keyword {
    /// The provider accepts it: it stays.
    Keep,
    /// It means nothing to the model either (schemars' numeric widths,
    /// `title`...): it is removed.
    Drop,
    /// The provider would refuse it but it says something to the model (a
    /// bound, a default): it is removed and noted in the description.
    Note,
}

/// The rule for `format` shared by the dialects: schemars' numeric widths
/// are dropped, a format the dialect lists in `supported` is kept, and any
/// other (or a `format` that is not a string) is noted.
pub(crate) fn format_rule(format: &Value, supported: &[&str]) -> Keyword {
    match format.as_str() {
        Some(format) if NUMERIC_FORMATS.contains(&format) => Keyword::Drop,
        Some(format) if supported.contains(&format) => Keyword::Keep,
        _ => Keyword::Note,
    }
}

/// Apply a dialect's `rule` to every keyword of `node`, in order: kept
/// keywords stay, dropped ones are removed, and noted ones are removed and
/// appended to the description as `key: value`, after the `notes` the
/// caller already holds, so a constraint the provider cannot enforce still
/// reaches the model: `"City name. (minLength: 1, maxLength: 100)"`.
pub(crate) fn keep_or_note(
    node: &mut JsonObject,
    mut notes: Vec<(String, Value)>,
    rule: impl Fn(&str, &Value) -> Keyword,
) {
    let keys: Vec<String> = node.keys().cloned().collect();
    for key in keys {
        let Some(value) = node.get(&key) else { continue };
        match rule(&key, value) {
            Keyword::Keep => {}
            // `shift_remove`: the keywords left keep their order, which is
            // the schema's order (`remove` would move the last one here).
            Keyword::Drop => {
                node.shift_remove(&key);
            }
            Keyword::Note => {
                if let Some(value) = node.shift_remove(&key) {
                    notes.push((key, value));
                }
            }
        }
    }
    append(node, &notes);
}

/// The first of `keywords` that `node` has: what a dialect refuses outright.
pub(crate) fn first_present<'k>(node: &JsonObject, keywords: &[&'k str]) -> Option<&'k str> {
    keywords.iter().copied().find(|keyword| node.contains_key(*keyword))
}

/// Refuse an open map: strict modes close every object with
/// `additionalProperties: false`, so one that allows other keys (a
/// `HashMap` field) cannot be expressed.
pub(crate) fn refuse_open_map(
    node: &JsonObject,
    path: &str,
    refuse: &Refuse<'_>,
) -> Result<(), DialectError> {
    match node.get("additionalProperties") {
        None | Some(Value::Bool(false)) => Ok(()),
        Some(_) => Err(refuse(
            "additionalProperties",
            format!("{}: an open map (additionalProperties) cannot be expressed in strict mode", at(path)),
        )),
    }
}

/// Append `key: value` notes to the schema's description.
fn append(schema: &mut JsonObject, moved: &[(String, Value)]) {
    if moved.is_empty() {
        return;
    }
    let notes: Vec<String> = moved.iter().map(|(key, value)| format!("{key}: {value}")).collect();
    let notes = notes.join(", ");
    let text = match schema.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.is_empty() => format!("{existing} ({notes})"),
        _ => notes,
    };
    schema.insert("description".into(), Value::String(text));
}

/// The `#/$defs/Name` a `$ref` points to, if it is local.
pub(crate) fn local_def(reference: &str) -> Option<&str> {
    reference.strip_prefix("#/$defs/").or_else(|| reference.strip_prefix("#/definitions/"))
}

/// Call `f` on every direct subschema of `node`, with its location
/// (`properties.city`, `anyOf[1]`, `items`).
pub(crate) fn try_for_each_child<E>(
    node: &mut JsonObject,
    mut f: impl FnMut(&mut Value, String) -> Result<(), E>,
) -> Result<(), E> {
    for (key, value) in node.iter_mut() {
        let key = key.as_str();
        let list = SCHEMA_LIST_KEYWORDS.contains(&key) || (key == "items" && value.is_array());
        if list {
            if let Some(items) = value.as_array_mut() {
                for (index, item) in items.iter_mut().enumerate() {
                    f(item, format!("{key}[{index}]"))?;
                }
            }
        } else if SCHEMA_KEYWORDS.contains(&key) {
            f(value, key.to_owned())?;
        } else if SCHEMA_MAP_KEYWORDS.contains(&key)
            && let Some(map) = value.as_object_mut()
        {
            for (name, item) in map.iter_mut() {
                f(item, format!("{key}.{name}"))?;
            }
        }
    }
    Ok(())
}

/// `parent.child`, or `child` at the root.
pub(crate) fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() { child.to_owned() } else { format!("{parent}.{child}") }
}

/// Where in the schema, for error messages: "at `properties.tags`" or "at the root".
pub(crate) fn at(path: &str) -> String {
    if path.is_empty() { "at the root".to_owned() } else { format!("at `{path}`") }
}

/// Rename a key in place, keeping its position (key order is schema order,
/// which providers keep in their output).
pub(crate) fn rename_key(node: &mut JsonObject, from: &str, to: &str) {
    if !node.contains_key(from) {
        return;
    }
    let entries = std::mem::take(node);
    *node = entries
        .into_iter()
        .map(|(key, value)| if key == from { (to.to_owned(), value) } else { (key, value) })
        .collect();
}

/// The name of a definition that reaches itself through `$ref`s (a
/// recursive type), or `#` for a schema that refers to its own root; `None`
/// if the schema is not recursive. Dialects without recursion refuse it,
/// naming the definition.
pub(crate) fn recursive_def(root: &JsonObject) -> Option<String> {
    if root.values().any(root_refs) {
        // `"$ref": "#"`: the root refers to itself.
        return Some("#".to_owned());
    }
    let defs = root.get("$defs").and_then(Value::as_object)?;
    fn refs(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                if let Some(name) = object.get("$ref").and_then(Value::as_str).and_then(local_def) {
                    out.push(name.to_owned());
                }
                object.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    fn reaches(defs: &JsonObject, from: &str, target: &str, seen: &mut Vec<String>) -> bool {
        let mut next = Vec::new();
        if let Some(schema) = defs.get(from) {
            refs(schema, &mut next);
        }
        next.into_iter().any(|name| {
            if name == target {
                return true;
            }
            if seen.contains(&name) {
                return false;
            }
            seen.push(name.clone());
            reaches(defs, &name, target, seen)
        })
    }
    defs.keys().find(|name| reaches(defs, name, name, &mut Vec::new())).cloned()
}

fn root_refs(value: &Value) -> bool {
    match value {
        Value::Object(object) => {
            object.get("$ref").and_then(Value::as_str) == Some("#") || object.values().any(root_refs)
        }
        Value::Array(items) => items.iter().any(root_refs),
        _ => false,
    }
}
