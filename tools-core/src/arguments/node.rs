//! A subschema of a tool's canonical schema, reached by the path of a value
//! in the arguments: for the steps that read a value against its schema
//! after serde has refused it or a constraint has failed.

use serde_json::Value;

use super::JsonObject;

/// A schema inside the root one, which its local `$ref`s point into.
#[derive(Clone, Copy)]
pub(super) struct Node<'a> {
    pub schema: &'a JsonObject,
    root: &'a JsonObject,
}

impl<'a> Node<'a> {
    pub(super) fn root(root: &'a JsonObject) -> Self {
        Self { schema: root, root }
    }

    /// `schema` as a node, its `$ref` followed; `None` for a boolean
    /// schema or a reference that is not local.
    fn child(self, schema: &'a Value) -> Option<Self> {
        let mut schema = schema.as_object()?;
        if let Some(Value::String(reference)) = schema.get("$ref") {
            let name =
                reference.strip_prefix("#/$defs/").or_else(|| reference.strip_prefix("#/definitions/"))?;
            let defs = self.root.get("$defs").or_else(|| self.root.get("definitions"))?;
            schema = defs.get(name)?.as_object()?;
        }
        Some(Self { schema, root: self.root })
    }

    /// The schema of the field `name` of this object schema.
    pub(super) fn property(self, name: &str) -> Option<Self> {
        self.child(self.schema.get("properties")?.get(name)?)
    }

    /// The schema of this array schema's items.
    pub(super) fn items(self) -> Option<Self> {
        self.child(self.schema.get("items")?)
    }

    /// The field names of this object schema, in order.
    pub(super) fn property_names(self) -> impl Iterator<Item = &'a String> {
        self.schema.get("properties").and_then(Value::as_object).into_iter().flat_map(JsonObject::keys)
    }

    pub(super) fn is_required(self, name: &str) -> bool {
        match self.schema.get("required") {
            Some(Value::Array(names)) => names.iter().any(|n| n == name),
            _ => false,
        }
    }

    /// Whether a value of this schema may be `null`.
    pub(super) fn takes_null(self) -> bool {
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
