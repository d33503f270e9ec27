//! The request types every dialect's snapshot is taken over: one of each
//! shape a tool's arguments take (nested, enums, tagged enums, Option, Vec,
//! maps, recursive, renamed, defaults, constraints, empty...).
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::Ipv4Addr;

use schemars::JsonSchema;
use serde::Deserialize;
use toolcall_core::{JsonObject, Output, OutputFuture, Tool, ToolContext, ToolSpec, Toolset};

/// A tool that only has a schema: what the dialects read.
pub(crate) struct SchemaTool {
    pub spec: ToolSpec,
    pub schema: JsonObject,
}

impl Tool for SchemaTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call<'a>(&'a self, _: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(async move { Ok(Output::text(arguments)) })
    }
}

impl SchemaTool {
    /// A tool with this schema as it is.
    pub(crate) fn new(name: &'static str, description: &'static str, schema: JsonObject) -> Self {
        let parameters = toolcall_core::Parameters::from_schema(schema.clone());
        Self { spec: ToolSpec::from_parameters(name, description, parameters), schema }
    }
}

pub(crate) fn tool<R: JsonSchema>(name: &'static str, description: &'static str) -> SchemaTool {
    SchemaTool::new(name, description, toolcall_core::Parameters::of::<R>().schema().clone())
}

/// A request with no fields.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Empty {}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct UnitRequest;

/// Current weather for a city.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Flat {
    /// City name.
    pub city: String,
    /// Days ahead; today if absent.
    pub days: Option<u8>,
    pub metric: bool,
}

/// Units for temperatures.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct WithEnum {
    pub unit: Unit,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Point {
    pub lat: f64,
    pub lon: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Place {
    /// A city by name.
    City { name: String },
    /// A point on the map.
    Coordinates { point: Point },
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Tagged {
    pub place: Place,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Shape {
    Circle { radius: f64 },
    Square(f64),
    Dot,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ExternallyTagged {
    pub shape: Shape,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "op", content = "args", rename_all = "snake_case")]
pub(crate) enum Command {
    Move { dx: i32, dy: i32 },
    Say(String),
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct AdjacentlyTagged {
    pub command: Command,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum IdOrName {
    Id(u64),
    Name(String),
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Untagged {
    pub user: IdOrName,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Address {
    pub street: String,
    pub zip: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Nested {
    /// Where to deliver.
    pub address: Address,
    pub billing: Option<Address>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Lists {
    pub stops: Vec<Point>,
    pub tags: Vec<String>,
    pub maybe: Vec<Option<String>>,
    pub unique: HashSet<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Maps {
    pub headers: HashMap<String, String>,
    pub scores: BTreeMap<String, Vec<u32>>,
}

/// A file tree.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Tree {
    pub name: String,
    pub children: Vec<Tree>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Recursive {
    pub root: Tree,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Renamed {
    pub query_text: String,
    #[serde(rename = "q")]
    pub short: String,
    pub include_raw: Option<bool>,
}

fn ten() -> u32 {
    10
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Defaults {
    #[serde(default)]
    pub offset: u32,
    #[serde(default = "ten")]
    pub limit: u32,
    #[serde(default)]
    pub verbose: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Constraints {
    #[schemars(range(min = 1, max = 16))]
    pub days: u8,
    #[schemars(length(min = 1, max = 100))]
    pub query: String,
    #[schemars(regex(pattern = r"^[A-Z]{2}$"))]
    pub country: Option<String>,
    #[schemars(length(max = 3))]
    pub tags: Vec<String>,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub ratio: f64,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct OptionalEnum {
    pub unit: Option<Unit>,
    pub place: Option<Place>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Numbers {
    pub small: i8,
    pub big: i64,
    pub unsigned: u64,
    pub float: f32,
    pub double: f64,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Tuple {
    pub pair: (f64, f64),
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct AnyValue {
    pub payload: serde_json::Value,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Formats {
    pub ip: Ipv4Addr,
    pub when: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Paging {
    pub page: u32,
    pub per_page: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Flattened {
    pub query: String,
    #[serde(flatten)]
    pub paging: Paging,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Deep {
    pub level1: Level1,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Level1 {
    pub level2: Vec<Level2>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Level2 {
    pub leaf: HashMap<String, Unit>,
}

/// Every corpus type as a tool, in a stable order.
pub(crate) fn tools() -> Vec<SchemaTool> {
    vec![
        tool::<Empty>("empty", "No arguments."),
        tool::<UnitRequest>("unit_struct", "A unit struct: no arguments."),
        tool::<Flat>("flat", "Flat fields with docs and an Option."),
        tool::<WithEnum>("simple_enum", "A unit-variant enum."),
        tool::<Tagged>("tagged_enum", "An internally tagged enum."),
        tool::<ExternallyTagged>("external_enum", "An externally tagged enum."),
        tool::<AdjacentlyTagged>("adjacent_enum", "An adjacently tagged enum."),
        tool::<Untagged>("untagged_enum", "An untagged enum."),
        tool::<Nested>("nested", "Nested structs, one optional."),
        tool::<Lists>("lists", "Vectors and sets."),
        tool::<Maps>("maps", "Open maps."),
        tool::<Recursive>("recursive", "A recursive type."),
        tool::<Renamed>("renamed", "Renamed fields."),
        tool::<Defaults>("defaults", "Fields with defaults."),
        tool::<Constraints>("constraints", "Ranges, lengths and patterns."),
        tool::<OptionalEnum>("optional_enum", "Optional enums."),
        tool::<Numbers>("numbers", "Integer and float widths."),
        tool::<Tuple>("tuple", "A tuple field."),
        tool::<AnyValue>("any_value", "A field of any JSON value."),
        tool::<Formats>("formats", "String formats."),
        tool::<Flattened>("flattened", "A flattened struct."),
        tool::<Deep>("deep", "Deep nesting with a map of enums."),
    ]
}

/// The corpus as one toolset.
pub(crate) fn toolset() -> Toolset {
    let mut set = Toolset::new();
    for tool in tools() {
        set.add(tool).unwrap();
    }
    set
}
