//! A subschema of a tool's canonical schema, reached by the path of a value
//! in the arguments: for the steps that read a value against its schema
//! after serde has refused it or a constraint has failed.

use serde_json::Value;

use super::JsonObject;

/// How many `anyOf`/`oneOf` levels are followed into, so that a schema
/// whose union refers back to itself costs bounded work.
const MAX_BRANCH_DEPTH: usize = 8;

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

    /// The schema of the field `name` of this object schema: its property,
    /// or else what `additionalProperties` says of every field (a map).
    pub(super) fn field(self, name: &str) -> Option<Self> {
        self.property(name).or_else(|| self.child(self.schema.get("additionalProperties")?))
    }

    /// The kinds of JSON value this schema takes: its `type`, or its
    /// `anyOf`/`oneOf` branches'; anything when it says neither (an
    /// `enum`, a `const`, `{}`).
    pub(super) fn kinds(self) -> Kinds {
        self.kinds_within(MAX_BRANCH_DEPTH)
    }

    fn kinds_within(self, depth: usize) -> Kinds {
        if let Some(kinds) = self.typed() {
            return kinds;
        }
        match self.branches() {
            // A `$ref` back to itself must not recurse forever.
            Some(_) if depth == 0 => Kinds::ANY,
            Some(branches) => {
                branches.fold(Kinds::NONE, |kinds, branch| kinds | branch.kinds_within(depth - 1))
            }
            None => Kinds::ANY,
        }
    }

    /// What `type` says, if it says anything.
    fn typed(self) -> Option<Kinds> {
        match self.schema.get("type")? {
            Value::String(name) => Some(Kinds::named(name)),
            Value::Array(names) => Some(
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .fold(Kinds::NONE, |kinds, name| kinds | Kinds::named(name)),
            ),
            _ => None,
        }
    }

    /// The one schema of an object (`kind` [`Kinds::OBJECT`]) or an array
    /// ([`Kinds::ARRAY`]) value: this one if it takes the kind, else the one
    /// `anyOf`/`oneOf` branch that does (`Option<Struct>`); `None` when no
    /// branch or several do, as for an untagged enum.
    pub(super) fn container(self, kind: Kinds) -> Option<Self> {
        self.container_within(kind, MAX_BRANCH_DEPTH)
    }

    fn container_within(self, kind: Kinds, depth: usize) -> Option<Self> {
        let shaped =
            ["properties", "additionalProperties", "items"].iter().any(|key| self.schema.contains_key(*key));
        if self.typed().map_or(shaped, |kinds| kinds.takes(kind)) {
            return Some(self);
        }
        let branches = self.branches().filter(|_| depth > 0)?;
        let mut found = branches.filter_map(|branch| branch.container_within(kind, depth - 1));
        let one = found.next()?;
        found.next().is_none().then_some(one)
    }

    /// The `anyOf` or `oneOf` branches of this schema, if it has either.
    fn branches(self) -> Option<impl Iterator<Item = Self>> {
        let branches = ["anyOf", "oneOf"].iter().find_map(|key| self.schema.get(*key)?.as_array())?;
        Some(branches.iter().filter_map(move |branch| self.child(branch)))
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

/// The JSON types a schema takes, as bits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Kinds(u8);

impl Kinds {
    pub(super) const STRING: Self = Self(1);
    pub(super) const INTEGER: Self = Self(1 << 1);
    pub(super) const NUMBER: Self = Self(1 << 2);
    pub(super) const BOOLEAN: Self = Self(1 << 3);
    pub(super) const OBJECT: Self = Self(1 << 4);
    pub(super) const ARRAY: Self = Self(1 << 5);
    pub(super) const NULL: Self = Self(1 << 6);
    pub(super) const NONE: Self = Self(0);
    pub(super) const ANY: Self = Self(u8::MAX);
    pub(super) const SCALARS: Self = Self(Self::INTEGER.0 | Self::NUMBER.0 | Self::BOOLEAN.0);

    pub(super) fn named(name: &str) -> Self {
        match name {
            "string" => Self::STRING,
            "integer" => Self::INTEGER,
            "number" => Self::NUMBER,
            "boolean" => Self::BOOLEAN,
            "object" => Self::OBJECT,
            "array" => Self::ARRAY,
            "null" => Self::NULL,
            _ => Self::NONE,
        }
    }

    /// Whether any of `kinds` is taken.
    pub(super) fn takes(self, kinds: Self) -> bool {
        self.0 & kinds.0 != 0
    }
}

impl std::ops::BitOr for Kinds {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}
