//! Whether a toolset fits each provider's documented limits: tool count,
//! name length, and the schema limits of strict modes. The numbers live in
//! each dialect's module (`openai::LIMITS`...), with their sources; this
//! module only measures and compares.
//!
//! [`Dialect::definitions`] enforces these limits, so an export or a
//! request body is refused before it reaches the provider; [`check`]
//! reports them for every dialect at once:
//!
//! ```
//! use toolcall_provider::limits;
//! let reports = limits::check(&toolcall_core::Toolset::new());
//! assert!(reports.iter().all(|report| report.fits()));
//! println!("{}", reports[0]); // openai: 0/128 tools, longest name 0/64, largest definition 0 bytes: fits
//! ```

use std::fmt;

use serde_json::Value;

use super::{Definition, Dialect, DialectError};
use toolcall_core::Toolset;

/// A provider's limits; `None` where it documents none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProviderLimits {
    /// Tools per request.
    pub max_tools: Option<usize>,
    /// Characters in a tool name.
    pub max_name_len: usize,
    /// Object properties in one schema, counted over every level.
    pub max_properties: Option<usize>,
    /// Levels of object nesting in one schema.
    pub max_nesting: Option<usize>,
    /// Enum values in one schema.
    pub max_enum_values: Option<usize>,
    /// Characters of property names, enum values and consts in one schema.
    pub max_schema_chars: Option<usize>,
    /// Optional parameters over all tools of a request.
    pub max_optional_params: Option<usize>,
    /// Union-typed parameters (`anyOf`, `[T, "null"]`) over all tools of a request.
    pub max_union_params: Option<usize>,
}

impl ProviderLimits {
    /// No limit but a 64-character name.
    pub const NONE: Self = Self {
        max_tools: None,
        max_name_len: 64,
        max_properties: None,
        max_nesting: None,
        max_enum_values: None,
        max_schema_chars: None,
        max_optional_params: None,
        max_union_params: None,
    };
}

/// How large a toolset is in one dialect, measured as its limits count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Size {
    /// Tools sent (the native web search counts as one).
    pub tools: usize,
    /// The longest name and its length in characters.
    pub longest_name: (String, usize),
    /// The largest definition and its size in bytes (compact JSON).
    pub largest_definition: (String, usize),
    /// All definitions together, in bytes (compact JSON).
    pub total_bytes: usize,
    /// The most properties in one schema.
    pub properties: usize,
    /// The deepest object nesting in one schema.
    pub nesting: usize,
    /// The most enum values in one schema.
    pub enum_values: usize,
    /// The most characters of names, enum values and consts in one schema.
    pub schema_chars: usize,
    /// Optional parameters over all tools.
    pub optional_params: usize,
    /// Union-typed parameters over all tools.
    pub union_params: usize,
}

/// How a toolset fits one dialect.
#[derive(Clone, Debug)]
pub struct Report {
    /// The dialect.
    pub dialect: Dialect,
    /// Its limits.
    pub limits: ProviderLimits,
    /// How large the toolset is (of the definitions that could be built).
    pub size: Size,
    /// Everything that does not fit; empty if the toolset fits.
    pub problems: Vec<DialectError>,
}

impl Report {
    /// Whether the toolset can be sent in this dialect.
    pub fn fits(&self) -> bool {
        self.problems.is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let of = |limit: Option<usize>| limit.map_or_else(String::new, |n| format!("/{n}"));
        write!(
            f,
            "{}: {}{} tools, longest name {}/{}, largest definition {} bytes",
            self.dialect,
            self.size.tools,
            of(self.limits.max_tools),
            self.size.longest_name.1,
            self.limits.max_name_len,
            self.size.largest_definition.1,
        )?;
        if self.problems.is_empty() {
            return f.write_str(": fits");
        }
        for problem in &self.problems {
            write!(f, "\n  - {problem}")?;
        }
        Ok(())
    }
}

/// A report for every dialect, in [`Dialect::ALL`] order.
pub fn check(toolset: &Toolset) -> Vec<Report> {
    Dialect::ALL.into_iter().map(|dialect| report(dialect, toolset)).collect()
}

/// How the toolset fits one dialect.
pub fn report(dialect: Dialect, toolset: &Toolset) -> Report {
    let limits = dialect.limits();
    let mut problems = Vec::new();
    let mut definitions = Vec::new();
    for built in dialect.build(toolset) {
        match built {
            Ok(definition) => definitions.push(definition),
            Err(error) => problems.push(error),
        }
    }
    let size = measure(&definitions);
    problems.extend(compare(dialect, &limits, &definitions));
    Report { dialect, limits, size, problems }
}

/// The first limit the definitions break, as an error.
pub(crate) fn enforce(dialect: Dialect, definitions: &[Definition]) -> Result<(), DialectError> {
    match compare(dialect, &dialect.limits(), definitions).into_iter().next() {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

fn compare(dialect: Dialect, limits: &ProviderLimits, definitions: &[Definition]) -> Vec<DialectError> {
    let mut problems = Vec::new();
    if let Some(max) = limits.max_tools
        && definitions.len() > max
    {
        problems.push(DialectError::toolset(
            dialect,
            format!("max_tools = {max}"),
            format!("{} tools, more than the {max} the provider accepts", definitions.len()),
        ));
    }
    let (mut optional, mut unions) = (0, 0);
    for definition in definitions {
        let len = definition.name.chars().count();
        if len > limits.max_name_len {
            problems.push(DialectError::tool(
                &definition.name,
                dialect,
                format!("max_name_len = {}", limits.max_name_len),
                format!("the name is {len} characters long"),
            ));
        }
        let Some(schema) = schema_of(&definition.value) else { continue };
        let stats = Stats::of(schema);
        optional += stats.optional_params;
        unions += stats.union_params;
        let per_schema = [
            ("max_properties", limits.max_properties, stats.properties, "object properties"),
            ("max_nesting", limits.max_nesting, stats.nesting, "levels of nesting"),
            ("max_enum_values", limits.max_enum_values, stats.enum_values, "enum values"),
            (
                "max_schema_chars",
                limits.max_schema_chars,
                stats.chars,
                "characters of names, enum values and consts",
            ),
        ];
        for (name, limit, used, what) in per_schema {
            if let Some(max) = limit
                && used > max
            {
                problems.push(DialectError::tool(
                    &definition.name,
                    dialect,
                    format!("{name} = {max}"),
                    format!("the schema has {used} {what}"),
                ));
            }
        }
    }
    let per_request = [
        ("max_optional_params", limits.max_optional_params, optional, "optional parameters"),
        ("max_union_params", limits.max_union_params, unions, "union-typed parameters"),
    ];
    for (name, limit, used, what) in per_request {
        if let Some(max) = limit
            && used > max
        {
            problems.push(DialectError::toolset(
                dialect,
                format!("{name} = {max}"),
                format!("the tools have {used} {what}"),
            ));
        }
    }
    problems
}

fn measure(definitions: &[Definition]) -> Size {
    let mut size = Size { tools: definitions.len(), ..Size::default() };
    for definition in definitions {
        let len = definition.name.chars().count();
        if len > size.longest_name.1 {
            size.longest_name = (definition.name.clone(), len);
        }
        let bytes = definition.value.to_string().len();
        size.total_bytes += bytes;
        if bytes > size.largest_definition.1 {
            size.largest_definition = (definition.name.clone(), bytes);
        }
        if let Some(schema) = schema_of(&definition.value) {
            let stats = Stats::of(schema);
            size.properties = size.properties.max(stats.properties);
            size.nesting = size.nesting.max(stats.nesting);
            size.enum_values = size.enum_values.max(stats.enum_values);
            size.schema_chars = size.schema_chars.max(stats.chars);
            size.optional_params += stats.optional_params;
            size.union_params += stats.union_params;
        }
    }
    size
}

/// The argument schema inside a definition, wherever the dialect puts it.
fn schema_of(definition: &Value) -> Option<&Value> {
    let holder = definition.get("function").unwrap_or(definition);
    ["parameters", "input_schema", "inputSchema"].iter().find_map(|key| holder.get(*key))
}

#[derive(Default)]
struct Stats {
    properties: usize,
    nesting: usize,
    enum_values: usize,
    chars: usize,
    optional_params: usize,
    union_params: usize,
}

impl Stats {
    fn of(schema: &Value) -> Self {
        let mut stats = Self::default();
        stats.walk(schema, 1, true);
        stats
    }

    fn walk(&mut self, node: &Value, depth: usize, top: bool) {
        let Some(object) = node.as_object() else { return };
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            self.nesting = self.nesting.max(depth);
            self.properties += properties.len();
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (name, property) in properties {
                self.chars += name.chars().count();
                if top {
                    if !required.contains(&name.as_str()) {
                        self.optional_params += 1;
                    }
                    if is_union(property) {
                        self.union_params += 1;
                    }
                }
                self.walk(property, depth + 1, false);
            }
        }
        if let Some(values) = object.get("enum").and_then(Value::as_array) {
            self.enum_values += values.len();
            self.chars += values.iter().filter_map(Value::as_str).map(|s| s.chars().count()).sum::<usize>();
        }
        if let Some(Value::String(value)) = object.get("const") {
            self.chars += value.chars().count();
        }
        for (key, value) in object {
            match key.as_str() {
                "properties" | "enum" | "const" => {}
                "$defs" => {
                    for (name, def) in value.as_object().into_iter().flatten() {
                        self.chars += name.chars().count();
                        self.walk(def, 1, false);
                    }
                }
                _ => match value {
                    Value::Object(_) => self.walk(value, depth, false),
                    Value::Array(items) => items.iter().for_each(|item| self.walk(item, depth, false)),
                    _ => {}
                },
            }
        }
    }
}

fn is_union(schema: &Value) -> bool {
    schema.get("anyOf").is_some()
        || schema.get("oneOf").is_some()
        || schema.get("type").is_some_and(Value::is_array)
        || schema.get("nullable") == Some(&Value::Bool(true))
}
