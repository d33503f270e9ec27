//! Every problem of the arguments in one invalid-arguments error (issue 45,
//! point 8): unknown fields, missing fields, wrong types and constraints
//! together, each with its path, up to ten and then how many more.

use schemars::JsonSchema;
use serde::Deserialize;
use toolcall_core::{ArgumentLimits, Parameters, ToolError};

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Booking {
    city: String,
    #[schemars(range(min = 1, max = 16))]
    days: u8,
    guests: Vec<Guest>,
    note: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Guest {
    name: String,
    #[schemars(range(max = 120))]
    age: u8,
    address: Option<Address>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Address {
    street: String,
    #[schemars(length(min = 4, max = 10))]
    zip: String,
}

/// The same request, closed by serde itself rather than by the tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Closed {
    city: String,
    days: u8,
    tags: Vec<String>,
}

/// Plain types, no constraints: no validator until serde refuses a call.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Plain {
    city: String,
    days: u8,
    tags: Vec<String>,
}

fn reason<R: serde::de::DeserializeOwned + std::fmt::Debug>(params: &Parameters, raw: &str) -> String {
    match params.parse::<R>(raw, &ArgumentLimits::DEFAULT) {
        Err(ToolError::InvalidArguments(reason)) => reason,
        other => panic!("expected invalid arguments for {raw}, got {other:?}"),
    }
}

/// The strict booking: every object refuses fields it does not name.
fn strict() -> Parameters {
    Parameters::of::<Booking>().deny_unknown_fields()
}

#[test]
fn an_unknown_field_a_wrong_type_and_a_missing_field_are_reported_at_once() {
    // Closed by the tool: serde ignores `colour` and stops at `days`.
    let raw = r#"{"days":"three","guests":[],"colour":"red"}"#;
    assert_eq!(
        reason::<Booking>(&strict(), raw),
        "missing field `city`; \
         at `days`: invalid type: string \"three\", expected u8; \
         unknown field `colour`: the fields are `city`, `days`, `guests`, `note`"
    );
    // Closed by serde: it stops at `colour`, the first key it meets.
    let raw = r#"{"colour":"red","days":"three","tags":[]}"#;
    assert_eq!(
        reason::<Closed>(&Parameters::of::<Closed>(), raw),
        "missing field `city`; \
         `days`: \"three\" is not of type \"integer\"; \
         at `colour`: unknown field `colour`, expected one of `city`, `days`, `tags`"
    );
    // A type with no constraints at all: the schema is compiled for it on
    // the first call serde refuses.
    let raw = r#"{"days":"three","tags":[1, "a", 2]}"#;
    assert_eq!(
        reason::<Plain>(&Parameters::of::<Plain>(), raw),
        "missing field `city`; \
         at `days`: invalid type: string \"three\", expected u8; \
         `tags[0]`: 1 is not of type \"string\"; \
         `tags[2]`: 2 is not of type \"string\""
    );
}

#[test]
fn the_order_is_the_schemas_not_the_order_of_the_keys() {
    let one = reason::<Booking>(&strict(), r#"{"days":"three","guests":[],"colour":"red"}"#);
    let other = reason::<Booking>(&strict(), r#"{"colour":"red","guests":[],"days":"three"}"#);
    assert_eq!(one, other);
    assert_eq!(one, reason::<Booking>(&strict(), r#"{"days":"three","guests":[],"colour":"red"}"#));
}

#[test]
fn past_ten_problems_the_rest_are_counted() {
    let guests = |age: &str| {
        let guests: Vec<String> = (0..13).map(|i| format!(r#"{{"name":"g{i}","age":{age}}}"#)).collect();
        format!(r#"{{"city":"Oslo","days":3,"guests":[{}]}}"#, guests.join(","))
    };
    // serde refused the first age; the schema names the rest.
    let said = reason::<Booking>(&strict(), &guests(r#""old""#));
    let problems: Vec<&str> = said.split("; ").collect();
    assert_eq!(problems.len(), 11, "{said}");
    assert_eq!(problems[0], r#"at `guests[0].age`: invalid type: string "old", expected u8"#);
    assert_eq!(problems[9], r#"`guests[9].age`: "old" is not of type "integer""#);
    assert_eq!(problems[10], "and 3 more");
    // serde read them all; the constraints fail thirteen times.
    let said = reason::<Booking>(&strict(), &guests("130"));
    let problems: Vec<&str> = said.split("; ").collect();
    assert_eq!(problems.len(), 11, "{said}");
    assert_eq!(problems[0], "`guests[0].age` must be at most 120");
    assert_eq!(problems[10], "and 3 more");
    // Exactly ten: no tail.
    let ten: Vec<String> = (0..10).map(|i| format!(r#"{{"name":"g{i}","age":130}}"#)).collect();
    let raw = format!(r#"{{"city":"Oslo","days":3,"guests":[{}]}}"#, ten.join(","));
    let said = reason::<Booking>(&strict(), &raw);
    assert_eq!(said.split("; ").count(), 10, "{said}");
    assert!(!said.contains("more"), "{said}");
}

#[test]
fn deeply_nested_problems_are_named_by_their_path() {
    let raw = r#"{"city":"Oslo","days":3,"guests":[
        {"name":"a","age":3,"address":{"zip":"1"}},
        {"name":"b","age":"x","address":{"street":"s","zip":"123456789012","flat":2}}
    ]}"#;
    assert_eq!(
        reason::<Booking>(&strict(), raw),
        "at `guests[0].address`: missing field `street`; \
         `guests[0].address.zip` must be at least 4 characters long; \
         `guests[1].age`: \"x\" is not of type \"integer\"; \
         `guests[1].address.zip` must be at most 10 characters long; \
         at `guests[1].address`: unknown field `flat`: the fields are `street`, `zip`"
    );
    // A value serde refused for its Rust type, next to a constraint.
    let raw = r#"{"city":"Oslo","days":30,"guests":[{"name":"a","age":300}]}"#;
    assert_eq!(
        reason::<Booking>(&strict(), raw),
        "`days` must be at most 16; at `guests[0].age`: invalid value: integer `300`, expected u8"
    );
}

#[test]
fn one_problem_reads_word_for_word_as_serde_says_it() {
    let cases: [(&Parameters, &str, &str); 4] = [
        (
            &strict(),
            r#"{"city":"Oslo","days":"three","guests":[]}"#,
            r#"at `days`: invalid type: string "three", expected u8"#,
        ),
        (&strict(), r#"{"days":3,"guests":[]}"#, "missing field `city`"),
        (
            &strict(),
            r#"{"city":"Oslo","days":3,"guests":[{"name":"a"}]}"#,
            "at `guests[0]`: missing field `age`",
        ),
        (
            &strict(),
            r#"{"city":"Oslo","days":3,"guests":[],"colour":"red"}"#,
            "unknown field `colour`: the fields are `city`, `days`, `guests`, `note`",
        ),
    ];
    for (params, raw, expected) in cases {
        assert_eq!(reason::<Booking>(params, raw), expected, "{raw}");
    }
    let closed = Parameters::of::<Closed>();
    assert_eq!(
        reason::<Closed>(&closed, r#"{"city":"Oslo","days":3,"tags":[],"colour":"red"}"#),
        "at `colour`: unknown field `colour`, expected one of `city`, `days`, `tags`"
    );
    // Two unknown fields of one object are two problems, named together.
    assert_eq!(
        reason::<Closed>(&closed, r#"{"city":"Oslo","days":3,"tags":[],"colour":"red","size":1}"#),
        "unknown fields `colour`, `size`: the fields are `city`, `days`, `tags`"
    );
}

#[test]
fn without_validation_serde_alone_speaks() {
    let params = Parameters::of::<Plain>().without_validation();
    let raw = r#"{"days":"three","tags":[1]}"#;
    assert_eq!(reason::<Plain>(&params, raw), r#"at `days`: invalid type: string "three", expected u8"#);
}
