//! Size and nesting limits, checked on the raw text before serde sees it, so
//! that a hostile argument can neither exhaust memory nor the stack.

use serde_json::Value;

use crate::{JsonObject, ToolError};

/// The limits one tool's arguments must stay within.
///
/// ```
/// use tools_core::ArgumentLimits;
/// let limits = ArgumentLimits::default().with_max_bytes(4096).with_max_depth(8);
/// assert!(limits.check("{\"a\":[1,2]}").is_ok());
/// assert!(limits.check(&"[".repeat(9)).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgumentLimits {
    /// The most bytes an argument string may have (default 1 MiB).
    pub max_bytes: usize,
    /// The deepest nesting of objects and arrays (default 64). A tool whose
    /// request type cannot nest this deep (no `Value`, open map or
    /// recursive type in it) skips the scan: serde refuses deeper input by
    /// its types, and skips keys the type does not name without recursion.
    pub max_depth: usize,
}

impl ArgumentLimits {
    /// The defaults: 1 MiB and 64 levels.
    pub const DEFAULT: Self = Self { max_bytes: 1 << 20, max_depth: 64 };

    /// The same limits with another size bound.
    pub const fn with_max_bytes(self, max_bytes: usize) -> Self {
        Self { max_bytes, ..self }
    }

    /// The same limits with another depth bound.
    pub const fn with_max_depth(self, max_depth: usize) -> Self {
        Self { max_depth, ..self }
    }

    /// Check the size of the raw string a model sent.
    pub fn check_size(&self, raw: &str) -> Result<(), ToolError> {
        if raw.len() > self.max_bytes {
            return Err(ToolError::invalid_arguments(format!(
                "the arguments are {} bytes, more than the limit of {} bytes",
                raw.len(),
                self.max_bytes
            )));
        }
        Ok(())
    }

    /// Check the nesting depth of JSON text, ignoring brackets inside strings.
    pub fn check_depth(&self, json: &str) -> Result<(), ToolError> {
        if nesting_depth_exceeds(json.as_bytes(), self.max_depth) {
            return Err(ToolError::invalid_arguments(format!(
                "the arguments are nested more than {} levels deep",
                self.max_depth
            )));
        }
        Ok(())
    }

    /// Both checks, as the JSON adapter runs them.
    pub fn check(&self, json: &str) -> Result<(), ToolError> {
        self.check_size(json)?;
        self.check_depth(json)
    }
}

impl Default for ArgumentLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Whether the bracket nesting in `bytes` goes deeper than `max`. Iterative,
/// so any depth costs no stack; string bodies are skipped with memchr.
fn nesting_depth_exceeds(bytes: &[u8], max: usize) -> bool {
    // Nesting never goes deeper than the count of opening brackets, which
    // memchr counts in a fraction of the scan's time.
    if memchr::memchr2_iter(b'{', b'[', bytes).count() <= max {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => match string_end(bytes, i + 1) {
                Some(end) => i = end,
                // An unterminated string: the parser will report it.
                None => return false,
            },
            b'{' | b'[' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// The deepest nesting of objects and arrays a request of this schema can
/// have, or `None` when nothing bounds it: any value, an open map, a
/// recursive type. Keys a struct does not name count for nothing: serde
/// skips them without recursion, and the size limit bounds their memory.
///
/// A request type whose bound is within the limit cannot be nested too
/// deeply: a deeper argument fails serde's type check, so the parse needs
/// no scan of the text first.
pub(crate) fn schema_depth(schema: &Value) -> Option<usize> {
    let defs = schema.get("$defs").and_then(Value::as_object);
    depth_of(schema, defs, &mut Vec::new())
}

fn depth_of<'s>(schema: &'s Value, defs: Option<&'s JsonObject>, refs: &mut Vec<&'s str>) -> Option<usize> {
    let schema = match schema {
        Value::Object(schema) => schema,
        Value::Bool(true) => return None,
        _ => return Some(0),
    };
    let mut depth = 0;
    let mut described = false;
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.strip_prefix("#/$defs/")?;
        if refs.contains(&name) {
            return None;
        }
        refs.push(name);
        depth = depth_of(defs?.get(name)?, defs, refs)?;
        refs.pop();
        described = true;
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(schemas)) = schema.get(combinator) {
            depth = depth.max(deepest(schemas, defs, refs)?);
            described = true;
        }
    }
    for literal in ["enum", "const"] {
        if let Some(value) = schema.get(literal) {
            let values = value.as_array().map_or(std::slice::from_ref(value), Vec::as_slice);
            if values.iter().any(|v| v.is_array() || v.is_object()) {
                return None;
            }
            described = true;
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(one)) => vec![one],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let object = types.contains(&"object") || schema.contains_key("properties");
    let array = types.contains(&"array") || schema.contains_key("items");
    if object {
        let properties = schema.get("properties").and_then(Value::as_object);
        let patterns = schema.get("patternProperties").and_then(Value::as_object);
        // A struct's unnamed keys are skipped; an object that names no keys
        // is an open map, which keeps whatever it is sent.
        let rest = match schema.get("additionalProperties") {
            Some(rest) => Some(rest),
            None if properties.is_none() && patterns.is_none() => return None,
            None => None,
        };
        let children = properties.into_iter().chain(patterns).flat_map(|map| map.values()).chain(rest);
        depth = depth.max(1 + deepest(children, defs, refs)?);
    }
    if array {
        let prefix = schema.get("prefixItems").and_then(Value::as_array);
        // Without `items`, an array holds anything, but a tuple only its
        // own items: serde refuses more.
        let rest = match schema.get("items") {
            None if prefix.is_none() => return None,
            rest => rest,
        };
        let children = prefix.into_iter().flatten().chain(rest);
        depth = depth.max(1 + deepest(children, defs, refs)?);
    }
    if types.is_empty() && !object && !array && !described {
        // No type and nothing else that says what it is: any value.
        return None;
    }
    Some(depth)
}

/// The deepest of `schemas`, or `None` if any is unbounded.
fn deepest<'s>(
    schemas: impl IntoIterator<Item = &'s Value>,
    defs: Option<&'s JsonObject>,
    refs: &mut Vec<&'s str>,
) -> Option<usize> {
    schemas.into_iter().try_fold(0, |deepest, schema| Some(deepest.max(depth_of(schema, defs, refs)?)))
}

/// The index of the quote that closes the string whose body starts at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let i = from + memchr::memchr2(b'"', b'\\', &bytes[from..])?;
        if bytes[i] == b'"' {
            return Some(i);
        }
        from = i + 2;
        if from > bytes.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_objects_and_arrays_but_not_strings() {
        assert!(!nesting_depth_exceeds(br#"{"a":{"b":[1]}}"#, 3));
        assert!(nesting_depth_exceeds(br#"{"a":{"b":[1]}}"#, 2));
        assert!(!nesting_depth_exceeds(br#"{"a":"[[[[[[[[{{{{"}"#, 1));
        assert!(!nesting_depth_exceeds(br#"{"a":"\"[[[["}"#, 1));
        assert!(!nesting_depth_exceeds(br#"[[]] [[]] [[]]"#, 2));
        assert!(!nesting_depth_exceeds(br#"{"a":"\\"}"#, 1));
    }

    fn depth<T: schemars::JsonSchema>() -> Option<usize> {
        schema_depth(&schemars::schema_for!(T).to_value())
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        tags: Vec<String>,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        inner: Option<Inner>,
        many: Vec<Inner>,
        map: std::collections::HashMap<String, u8>,
        tuple: (u8, Vec<u8>),
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        children: Vec<Tree>,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Shape {
        Circle { radius: f64 },
        Polygon { points: Vec<(f64, f64)> },
        Empty,
    }

    #[test]
    fn schema_depth_follows_the_types() {
        assert_eq!(depth::<u8>(), Some(0));
        assert_eq!(depth::<Inner>(), Some(2));
        // many: [ { tags: [ ] } ] inside the root object.
        assert_eq!(depth::<Outer>(), Some(4));
        // { Polygon: { points: [ [x, y] ] } }
        assert_eq!(depth::<Shape>(), Some(4));
        assert_eq!(depth::<Option<Inner>>(), Some(2));
    }

    #[test]
    fn schema_depth_is_unbounded_for_open_and_recursive_types() {
        assert_eq!(depth::<serde_json::Value>(), None);
        assert_eq!(depth::<Tree>(), None);
        assert_eq!(depth::<std::collections::HashMap<String, serde_json::Value>>(), None);
        assert_eq!(depth::<Vec<serde_json::Value>>(), None);
        assert_eq!(schema_depth(&serde_json::json!({"type": "object"})), None);
        assert_eq!(schema_depth(&serde_json::json!({"type": "array"})), None);
        assert_eq!(schema_depth(&serde_json::json!({"$ref": "#/$defs/Missing"})), None);
        assert_eq!(schema_depth(&serde_json::json!({"description": "anything"})), None);
    }

    #[test]
    fn very_deep_input_is_refused_without_recursion() {
        let deep = "[".repeat(1_000_000);
        let err = ArgumentLimits::default().check(&deep).unwrap_err();
        assert!(err.to_string().contains("64 levels"), "{err}");
    }

    #[test]
    fn size_is_checked_and_stated() {
        let err = ArgumentLimits::default().with_max_bytes(10).check(&"x".repeat(11)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: the arguments are 11 bytes, more than the limit of 10 bytes"
        );
    }

    #[test]
    fn unterminated_and_trailing_escapes_do_not_panic() {
        for input in [r#"{"a":"\"#, r#""\"#, "\\", "\"", "]]]]", "{\"a\":\"\\u"] {
            let _ = nesting_depth_exceeds(input.as_bytes(), 2);
        }
    }
}
