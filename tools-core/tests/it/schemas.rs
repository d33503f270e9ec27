//! The canonical schema of representative request types, pinned.

#![allow(dead_code, reason = "the requests are only described, never read")]

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::Deserialize;
use toolcall_core::Parameters;

fn pretty<R: JsonSchema>() -> String {
    serde_json::to_string_pretty(Parameters::of::<R>().schema()).unwrap()
}

/// A request with no fields.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Empty {}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Unit;

/// Current temperature for a city.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Weather {
    /// City name.
    pub city: String,
    /// Days ahead; today if absent.
    pub days: Option<u8>,
}

/// Units for temperatures.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Unit2 {
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Point {
    pub lat: f64,
    pub lon: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Place {
    City { name: String },
    Coordinates { point: Point },
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Everything {
    pub unit: Unit2,
    pub place: Place,
    pub stops: Vec<Point>,
    pub headers: HashMap<String, String>,
    pub scores: BTreeMap<String, f32>,
    #[serde(rename = "q")]
    pub query_text: String,
    #[serde(default)]
    pub max_results: u32,
    pub include_raw: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Constrained {
    #[schemars(range(min = 1, max = 16))]
    pub days: u8,
    #[schemars(length(min = 1, max = 100))]
    pub query: String,
    #[schemars(regex(pattern = r"^[A-Z]{2}$"))]
    pub country: Option<String>,
    #[schemars(length(max = 3))]
    pub tags: Vec<String>,
}

#[test]
fn empty_requests() {
    insta::assert_snapshot!(pretty::<Empty>());
    for empty in [pretty::<Unit>(), pretty::<()>()] {
        assert_eq!(empty, "{\n  \"type\": \"object\",\n  \"properties\": {}\n}");
    }
}

#[test]
fn flat_request_with_docs_and_option() {
    insta::assert_snapshot!(pretty::<Weather>());
}

#[test]
fn enums_nested_collections_and_renames() {
    insta::assert_snapshot!(pretty::<Everything>());
}

#[test]
fn constraints() {
    insta::assert_snapshot!(pretty::<Constrained>());
}
