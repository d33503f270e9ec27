//! The canonical JSON Schema of a tool's arguments, what it constrains
//! beyond types, and how deep a request of it can nest.

use std::sync::{Arc, OnceLock};

use jsonschema::Validator;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// A JSON object, as schemas and MCP arguments are.
pub type JsonObject = serde_json::Map<String, Value>;

/// Keywords that serde does not enforce by itself: if a schema has any, a
/// validator is compiled for it.
const CONSTRAINTS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "const",
    "enum",
];

/// A tool's argument schema, built once, with the validator for the
/// constraints in it (ranges, lengths, patterns, enum values) when it has any.
///
/// ```
/// use toolcall_core::Parameters;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Forecast {
///     /// City name.
///     city: String,
///     #[schemars(range(min = 1, max = 16))]
///     days: Option<u8>,
/// }
///
/// let params = Parameters::of::<Forecast>();
/// assert_eq!(params.schema()["required"], serde_json::json!(["city"]));
/// let err = params.parse::<Forecast>(r#"{"city":"Oslo","days":17}"#, &Default::default()).err().unwrap();
/// assert_eq!(err.to_string(), "invalid arguments: `days` must be at most 16");
/// ```
#[derive(Clone)]
pub struct Parameters {
    pub(super) schema: Arc<JsonObject>,
    /// The constraints' validator, or why they do not compile (a pattern
    /// that is not a regex): then every call fails and says so, rather than
    /// skipping the checks the schema promises the model.
    pub(super) validator: Option<Result<Arc<Validator>, Arc<str>>>,
    /// The whole schema's validator for a schema without constraints,
    /// compiled on the first call serde refuses, to name every problem of
    /// it and not only serde's first; `None` without validation.
    pub(super) report: Option<Arc<OnceLock<Option<Arc<Validator>>>>>,
    /// The request is `()` or a unit struct: serde reads it only from
    /// `null`, while the schema (and so the model) says `{}`.
    pub(super) unit: bool,
    /// The deepest nesting the request type can read, if its schema bounds
    /// it: within the limit, the text needs no depth scan.
    pub(super) depth: Option<usize>,
}

impl Parameters {
    /// The schema of `R` (schemars, JSON Schema 2020-12), with its validator.
    ///
    /// The root is an object schema with `properties`: a request with no
    /// fields (`()`, a unit struct, `struct Empty {}`) gets
    /// `{"type":"object","properties":{}}`. `$schema` and the
    /// root `title` (the Rust type's name, noise to a model) are dropped.
    pub fn of<R: JsonSchema + ?Sized>() -> Self {
        let schema = SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<R>().to_value();
        // Before the root is made an object for the providers: `Value`'s
        // schema is `true`, which reads any nesting.
        let depth = schema_depth(&schema);
        let mut root = match schema {
            Value::Object(object) => object,
            _ => JsonObject::new(),
        };
        root.remove("$schema");
        root.remove("title");
        let unit = root.get("type").and_then(Value::as_str) == Some("null");
        if root.is_empty() || unit {
            root.insert("type".into(), "object".into());
        }
        if root.get("type").and_then(Value::as_str) == Some("object") && !root.contains_key("properties") {
            // Several providers reject an object schema without `properties`.
            root.insert("properties".into(), Value::Object(JsonObject::new()));
        }
        let validator = needs_validator(&root).then(|| compile(&root));
        Self { schema: Arc::new(root), validator, report: Some(Arc::default()), unit, depth }
    }

    /// The same schema refusing fields it does not name, at every level:
    /// `additionalProperties: false` on each object that does not say
    /// otherwise (so the model is told too), checked before the tool runs.
    /// Without it, fields the schema does not name are ignored, as serde
    /// does (unless the type says `#[serde(deny_unknown_fields)]`).
    ///
    /// ```
    /// use toolcall_core::{ArgumentLimits, Parameters};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Search { query: String, limit: Option<u32> }
    ///
    /// let params = Parameters::of::<Search>().deny_unknown_fields();
    /// assert_eq!(params.schema()["additionalProperties"], false);
    /// let err = params.parse::<Search>(r#"{"query":"rust","limt":5}"#, &ArgumentLimits::DEFAULT).err().unwrap();
    /// assert_eq!(err.to_string(), "invalid arguments: unknown field `limt`: the fields are `query`, `limit`");
    /// ```
    pub fn deny_unknown_fields(self) -> Self {
        let mut root = Value::Object(JsonObject::clone(&self.schema));
        close_objects(&mut root);
        let Value::Object(root) = root else { unreachable!("an object stays an object") };
        let validator = Some(compile(&root));
        Self { schema: Arc::new(root), validator, report: Some(Arc::default()), ..self }
    }

    /// A schema given as it is (a remote tool's), with no validation of ours.
    pub fn from_schema(schema: JsonObject) -> Self {
        Self { schema: Arc::new(schema), validator: None, report: None, unit: false, depth: None }
    }

    /// The same schema without constraint checks: only serde checks the input.
    pub fn without_validation(self) -> Self {
        Self { validator: None, report: None, ..self }
    }

    /// The schema as a JSON object.
    pub fn schema(&self) -> &JsonObject {
        &self.schema
    }

    /// Whether constraints beyond types are checked before the tool runs.
    pub fn validates(&self) -> bool {
        matches!(self.validator, Some(Ok(_)))
    }
}

impl std::fmt::Debug for Parameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parameters")
            .field("schema", &self.schema)
            .field("validates", &self.validates())
            .finish()
    }
}

pub(super) fn compile(schema: &JsonObject) -> Result<Arc<Validator>, Arc<str>> {
    let built = jsonschema::options().should_validate_formats(false).build(&Value::Object(schema.clone()));
    built.map(Arc::new).map_err(|error| Arc::from(error.to_string()))
}

/// `additionalProperties: false` on every object schema with `properties`
/// that leaves it unsaid.
fn close_objects(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object.contains_key("properties") && !object.contains_key("additionalProperties") {
                object.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (key, value) in object.iter_mut() {
                match key.as_str() {
                    // Maps of names to subschemas.
                    "properties" | "$defs" | "definitions" => {
                        value
                            .as_object_mut()
                            .into_iter()
                            .flat_map(|m| m.values_mut())
                            .for_each(close_objects);
                    }
                    "items" | "additionalProperties" | "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                        close_objects(value)
                    }
                    _ => {}
                }
            }
        }
        Value::Array(branches) => branches.iter_mut().for_each(close_objects),
        _ => {}
    }
}

fn needs_validator(schema: &JsonObject) -> bool {
    schema.iter().any(|(key, value)| {
        // Under `properties` and `$defs` the keys are names, not keywords.
        let is_name_map = key == "properties" || key == "$defs" || key == "definitions";
        let is_constraint =
            !is_name_map && CONSTRAINTS.contains(&key.as_str()) && !is_integer_bound(schema, key, value);
        is_constraint || has_constraint(value, is_name_map)
    })
}

/// schemars bounds integers by their width (`u8` gets `minimum: 0, maximum:
/// 255`); serde enforces those already, so they need no validator.
fn is_integer_bound(schema: &JsonObject, key: &str, value: &Value) -> bool {
    let Some(format) = schema.get("format").and_then(Value::as_str) else {
        return false;
    };
    let (min, max): (i128, i128) = match format {
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint" => (0, u64::MAX.into()),
        "uint128" => (0, i128::MAX),
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        _ => return false,
    };
    let bound = value.as_i64().map(i128::from).or_else(|| value.as_u64().map(i128::from));
    match key {
        "minimum" => bound == Some(min),
        "maximum" => bound == Some(max),
        _ => false,
    }
}

fn has_constraint(value: &Value, names: bool) -> bool {
    match value {
        Value::Object(object) if names => object.values().any(|v| has_constraint(v, false)),
        Value::Object(object) => needs_validator(object),
        Value::Array(items) => items.iter().any(|v| has_constraint(v, false)),
        _ => false,
    }
}

/// The deepest nesting of objects and arrays a request of this schema can
/// have, or `None` when nothing bounds it: any value, an open map, a
/// recursive type. Keys a struct does not name count for nothing: serde
/// skips them without recursion, and the size limit bounds their memory.
///
/// A request type whose bound is within the limit cannot be nested too
/// deeply: a deeper argument fails serde's type check, so the parse needs
/// no scan of the text first.
fn schema_depth(schema: &Value) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Plain {
        city: String,
        days: Option<u8>,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Constrained {
        #[schemars(range(min = 1, max = 16))]
        days: u8,
    }

    #[test]
    fn plain_types_skip_the_validator() {
        assert!(!Parameters::of::<Plain>().validates());
        assert!(Parameters::of::<Constrained>().validates());
        assert!(!Parameters::of::<Constrained>().without_validation().validates());
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
}
