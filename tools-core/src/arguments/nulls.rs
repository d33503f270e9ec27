//! What `null` means where a field is optional but its type takes no null
//! (`#[serde(default)] offset: u32`): "not given", so the default. Models
//! send it that way, and OpenAI's strict mode, where every field is
//! required, can only say it that way.

use serde_json::Value;

use super::{JsonObject, Parameters};

impl Parameters {
    /// `json` without the nulls that mean "not given", or `None` if it has
    /// none (or is not JSON). Read only after serde refused `json`.
    pub(super) fn without_null_defaults(&self, json: &str) -> Option<String> {
        let mut value: Value = serde_json::from_str(json).ok()?;
        let root = Node { schema: &self.schema, root: &self.schema };
        root.drop_null_defaults(&mut value).then(|| value.to_string())
    }
}

/// A schema inside the root one, which its `$ref`s point into.
#[derive(Clone, Copy)]
struct Node<'a> {
    schema: &'a JsonObject,
    root: &'a JsonObject,
}

impl<'a> Node<'a> {
    fn child(self, schema: &'a Value) -> Option<Self> {
        let mut schema = schema.as_object()?;
        // Only local references; anything else is left to serde.
        if let Some(Value::String(reference)) = schema.get("$ref") {
            let name =
                reference.strip_prefix("#/$defs/").or_else(|| reference.strip_prefix("#/definitions/"))?;
            let defs = self.root.get("$defs").or_else(|| self.root.get("definitions"))?;
            schema = defs.get(name)?.as_object()?;
        }
        Some(Self { schema, root: self.root })
    }

    /// Remove each such null under this node; whether any was.
    fn drop_null_defaults(self, value: &mut Value) -> bool {
        match value {
            Value::Object(fields) => {
                let Some(Value::Object(properties)) = self.schema.get("properties") else {
                    return false;
                };
                let required = |name: &str| match self.schema.get("required") {
                    Some(Value::Array(names)) => names.iter().any(|n| n == name),
                    _ => false,
                };
                let mut dropped = false;
                fields.retain(|name, field| {
                    let Some(node) = properties.get(name).and_then(|schema| self.child(schema)) else {
                        return true;
                    };
                    if field.is_null() && !required(name) && !node.takes_null() {
                        dropped = true;
                        return false;
                    }
                    dropped |= node.drop_null_defaults(field);
                    true
                });
                dropped
            }
            Value::Array(items) => match self.schema.get("items").and_then(|schema| self.child(schema)) {
                Some(node) => {
                    items.iter_mut().fold(false, |dropped, item| node.drop_null_defaults(item) | dropped)
                }
                None => false,
            },
            _ => false,
        }
    }

    fn takes_null(self) -> bool {
        let schema = self.schema;
        let typed_null = match schema.get("type") {
            Some(Value::String(name)) => name == "null",
            Some(Value::Array(names)) => names.iter().any(|name| name == "null"),
            // No type: anything, null too, unless a union or enum says otherwise.
            _ => !["anyOf", "oneOf", "enum", "const", "$ref"].iter().any(|key| schema.contains_key(*key)),
        };
        let union_null = ["anyOf", "oneOf"].iter().any(|key| match schema.get(*key) {
            Some(Value::Array(branches)) => {
                branches.iter().any(|branch| self.child(branch).is_some_and(Node::takes_null))
            }
            _ => false,
        });
        let listed_null = match schema.get("enum") {
            Some(Value::Array(values)) => values.contains(&Value::Null),
            _ => schema.get("const") == Some(&Value::Null),
        };
        typed_null || union_null || listed_null
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;

    use crate::{ArgumentLimits, Parameters};

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Page {
        query: String,
        #[serde(default)]
        offset: u32,
        #[serde(default = "ten")]
        limit: u32,
        #[serde(default)]
        filter: Filter,
        #[serde(default)]
        sort: Vec<Sort>,
    }

    #[derive(Debug, Default, Deserialize, JsonSchema, PartialEq)]
    struct Filter {
        #[serde(default)]
        tags: Vec<String>,
        #[serde(default)]
        exact: bool,
    }

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Sort {
        field: String,
        #[serde(default)]
        descending: bool,
    }

    fn ten() -> u32 {
        10
    }

    fn parse(raw: &str) -> Result<Page, crate::ToolError> {
        Parameters::of::<Page>().parse(raw, &ArgumentLimits::DEFAULT)
    }

    #[test]
    fn null_for_a_defaulted_field_is_its_default_at_any_depth() {
        let page = parse(
            r#"{"query":"rust","offset":null,"limit":null,"filter":{"tags":null,"exact":null},
                "sort":[{"field":"date","descending":null}]}"#,
        )
        .unwrap();
        assert_eq!((page.offset, page.limit), (0, 10));
        assert_eq!(page.filter, Filter::default());
        assert_eq!(page.sort, [Sort { field: "date".into(), descending: false }]);
        assert_eq!(parse(r#"{"query":"rust","filter":null}"#).unwrap().filter, Filter::default());
    }

    #[test]
    fn null_for_a_required_field_is_still_refused_by_name() {
        let err = parse(r#"{"query":null,"offset":null}"#).unwrap_err();
        assert_eq!(err.to_string(), "invalid arguments: at `query`: invalid type: null, expected a string");
        let err = parse(r#"{"query":"rust","offset":null,"sort":[{"field":null}]}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: at `sort[0].field`: invalid type: null, expected a string"
        );
    }

    #[test]
    fn other_mistakes_are_named_after_the_nulls_are_gone() {
        let err = parse(r#"{"query":"rust","offset":null,"limit":"ten"}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: at `limit`: invalid type: string \"ten\", expected u32"
        );
    }
}
