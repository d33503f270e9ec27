//! Numbers and booleans sent as strings (`"days": "2"`): read where the
//! schema wants an integer, a number or a boolean and takes no string, as
//! pydantic's lax mode reads them
//! (<https://docs.pydantic.dev/latest/concepts/conversion_table/>). Clients
//! that build arguments from text send them so (the MCP Inspector's
//! `--tool-arg days=2` up to version 0.16.5 for a nullable field, forms,
//! small models). Never the other way: a string field keeps `"2"`, and a
//! number sent for a string is still refused.
//!
//! What is read, as pydantic 2.13 reads a JSON string:
//! - an integer: surrounding whitespace, a sign, underscores between
//!   digits, and zeros after a point (`" 2 "`, `"+2"`, `"1_000"`,
//!   `"2.0"`); not `"2.5"`, `"1e3"`, `"0x10"` or `"2."`;
//! - a number: what an integer takes, and fractions and exponents
//!   (`"2.5"`, `"1e3"`); not `"0x10"`, and not `"inf"` or `"nan"`, which
//!   JSON cannot carry;
//! - a boolean: `true`, `false`, `yes`, `no`, `on`, `off`, `t`, `f`,
//!   `y`, `n`, `1`, `0`, in any case, without whitespace.
//!
//! A number sent as a string for an integer that is none (`"2.5"`, or
//! `"1e3"`, which pydantic refuses too) is refused here, by the field's path; any other string none of these reads is left
//! for serde to name (`invalid type: string "two", expected u8`), or for a
//! remote tool's server.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::{Number, Value};

use super::JsonObject;
use super::node::{Kinds, Node};
use crate::ToolError;

/// Read the strings under `node` that stand for the integer, number or
/// boolean the schema wants; whether any was.
pub(super) fn read_lax(node: Node<'_>, value: &mut Value) -> Result<bool, ToolError> {
    walk(node, value, &Path::Root)
}

/// The same for the fields of an object, the arguments of a remote tool.
pub(super) fn read_lax_fields(node: Node<'_>, fields: &mut JsonObject) -> Result<bool, ToolError> {
    walk_fields(node, fields, &Path::Root)
}

fn walk_fields(node: Node<'_>, fields: &mut JsonObject, path: &Path<'_>) -> Result<bool, ToolError> {
    let Some(node) = node.container(Kinds::OBJECT) else {
        return Ok(false);
    };
    let mut read = false;
    for (name, field) in fields.iter_mut() {
        if let Some(schema) = node.field(name) {
            read |= walk(schema, field, &Path::Field(path, name))?;
        }
    }
    Ok(read)
}

fn walk(node: Node<'_>, value: &mut Value, path: &Path<'_>) -> Result<bool, ToolError> {
    match value {
        Value::String(text) => {
            let kinds = node.kinds();
            if kinds.takes(Kinds::STRING) || !kinds.takes(Kinds::SCALARS) {
                return Ok(false);
            }
            match read(text, kinds) {
                Some(read) => {
                    *value = read;
                    Ok(true)
                }
                // serde's words ("invalid type: string \"2.5\", expected
                // u8") would have the quotes dropped, and 2.5 is no better.
                None if kinds.takes(Kinds::INTEGER) && !kinds.takes(Kinds::NUMBER) => match number(text) {
                    Some(number) => Err(not_an_integer(text, &number, path)),
                    None => Ok(false),
                },
                // serde names any other string, and a remote tool's server.
                None => Ok(false),
            }
        }
        Value::Object(fields) => walk_fields(node, fields, path),
        Value::Array(items) => {
            let Some(schema) = node.container(Kinds::ARRAY).and_then(Node::items) else {
                return Ok(false);
            };
            let mut read = false;
            for (index, item) in items.iter_mut().enumerate() {
                read |= walk(schema, item, &Path::Index(path, index))?;
            }
            Ok(read)
        }
        _ => Ok(false),
    }
}

/// `text` as the first of the kinds it reads as: an integer stays exact
/// where the schema takes any number.
fn read(text: &str, kinds: Kinds) -> Option<Value> {
    if kinds.takes(Kinds::INTEGER | Kinds::NUMBER)
        && let Some(n) = integer(text)
    {
        return Some(Value::Number(n));
    }
    if kinds.takes(Kinds::NUMBER)
        && let Some(n) = number(text)
    {
        return Some(Value::Number(n));
    }
    if kinds.takes(Kinds::BOOLEAN) { boolean(text).map(Value::Bool) } else { None }
}

fn integer(text: &str) -> Option<Number> {
    let digits = without_underscores(text.trim())?;
    // "2.0" is the integer 2, "2." and "2.5" are not.
    let digits = match digits.split_once('.') {
        Some((whole, zeros))
            if !whole.is_empty() && !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') =>
        {
            whole
        }
        _ => &digits,
    };
    match digits.parse::<i64>() {
        Ok(n) => Some(n.into()),
        Err(_) => digits.parse::<u64>().ok().map(Number::from),
    }
}

fn number(text: &str) -> Option<Number> {
    let text = without_underscores(text.trim())?;
    // Rust reads "inf" and "nan" too, which JSON cannot carry:
    // `from_f64` refuses them.
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

fn boolean(text: &str) -> Option<bool> {
    const TRUE: [&str; 6] = ["true", "t", "yes", "y", "on", "1"];
    const FALSE: [&str; 6] = ["false", "f", "no", "n", "off", "0"];
    if TRUE.iter().any(|word| word.eq_ignore_ascii_case(text)) {
        Some(true)
    } else if FALSE.iter().any(|word| word.eq_ignore_ascii_case(text)) {
        Some(false)
    } else {
        None
    }
}

/// `1_000` as `1000`, as Python reads it: each underscore between two
/// digits; `None` for any other underscore.
fn without_underscores(text: &str) -> Option<Cow<'_, str>> {
    if !text.contains('_') {
        return Some(Cow::Borrowed(text));
    }
    let bytes = text.as_bytes();
    let between_digits =
        |i: usize| i > 0 && bytes[i - 1].is_ascii_digit() && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
    let all = bytes.iter().enumerate().all(|(i, &b)| b != b'_' || between_digits(i));
    all.then(|| Cow::Owned(text.replace('_', "")))
}

/// "at `days`: expected an integer, not the string \"2.5\", which is not
/// a whole number"; for `"1e3"`, that the integer is written in digits.
fn not_an_integer(text: &str, number: &Number, path: &Path<'_>) -> ToolError {
    let mut excerpt: String = text.chars().take(40).collect();
    if excerpt.len() < text.len() {
        excerpt.push_str("...");
    }
    let message = if number.as_f64().is_some_and(|n| n.fract() == 0.0) {
        format!("expected an integer written in digits, not the string {excerpt:?}")
    } else {
        format!("expected an integer, not the string {excerpt:?}, which is not a whole number")
    };
    let mut at = String::new();
    path.write(&mut at);
    if at.is_empty() {
        ToolError::invalid_arguments(message)
    } else {
        ToolError::invalid_arguments(format!("at `{at}`: {message}"))
    }
}

/// Where a value is, written only when a string is refused.
enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// `items[0].name`, as serde_path_to_error writes paths.
    fn write(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Field(parent, name) => {
                parent.write(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Path::Index(parent, index) => {
                parent.write(out);
                let _ = write!(out, "[{index}]");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::{boolean, integer, number};
    use crate::{ArgumentLimits, JsonObject, Parameters, ToolError};

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Forecast {
        city: String,
        days: u8,
        #[serde(default)]
        ratio: f64,
        #[serde(default)]
        metric: bool,
        offset: Option<i64>,
        #[serde(default)]
        place: Place,
        #[serde(default)]
        hours: Vec<u8>,
        extra: Option<Place>,
        #[serde(default)]
        counts: BTreeMap<String, u32>,
    }

    #[derive(Debug, Default, Deserialize, JsonSchema, PartialEq)]
    struct Place {
        #[serde(default)]
        lat: f64,
        #[serde(default)]
        zoom: u8,
    }

    fn parse(raw: &str) -> Result<Forecast, ToolError> {
        Parameters::of::<Forecast>().parse(raw, &ArgumentLimits::DEFAULT)
    }

    fn refused(raw: &str) -> String {
        match parse(raw) {
            Err(ToolError::InvalidArguments(reason)) => reason,
            other => panic!("{raw}: expected invalid arguments, got {other:?}"),
        }
    }

    #[test]
    fn an_integer_sent_as_a_string_is_read() {
        let forecast = parse(r#"{"city":"Paris","days":"2"}"#).unwrap();
        assert_eq!((forecast.city.as_str(), forecast.days), ("Paris", 2));
        for (sent, days) in [(" 2 ", 2), ("+2", 2), ("2.0", 2), ("2.000", 2), ("007", 7), ("\t16\n", 16)] {
            let raw = json!({"city": "Paris", "days": sent}).to_string();
            assert_eq!(parse(&raw).unwrap().days, days, "{sent:?}");
        }
    }

    #[test]
    fn what_pydantic_reads_as_an_integer() {
        // As pydantic 2.13's `TypeAdapter(int).validate_json('"..."')` does.
        let read =
            [(" 2 ", 2), ("+2", 2), ("-3", -3), ("1_000", 1000), ("2.0", 2), ("-2.0", -2), ("00012", 12)];
        for (text, n) in read {
            assert_eq!(integer(text), Some(n.into()), "{text:?}");
        }
        assert_eq!(integer("18446744073709551615"), Some(u64::MAX.into()));
        for text in
            ["2.5", "1e3", "0x10", "2.", ".0", "1__0", "_1", "1_", "", " ", "inf", "nan", "true", "２"]
        {
            assert_eq!(integer(text), None, "{text:?}");
        }
    }

    #[test]
    fn what_pydantic_reads_as_a_number() {
        let read = [
            ("2.5", 2.5),
            ("1e3", 1000.0),
            (" 2 ", 2.0),
            ("2.", 2.0),
            (".5", 0.5),
            ("1_000.5", 1000.5),
            ("-0.25", -0.25),
        ];
        for (text, n) in read {
            assert_eq!(number(text).and_then(|n| n.as_f64()), Some(n), "{text:?}");
        }
        // JSON has no infinity or NaN, so a string of one stays refused.
        for text in ["0x10", "inf", "-inf", "nan", "", "1__0", "two"] {
            assert_eq!(number(text), None, "{text:?}");
        }
    }

    #[test]
    fn what_pydantic_reads_as_a_boolean() {
        for text in ["true", "True", "TRUE", "t", "yes", "Y", "on", "1"] {
            assert_eq!(boolean(text), Some(true), "{text:?}");
        }
        for text in ["false", "False", "f", "no", "N", "off", "OFF", "0"] {
            assert_eq!(boolean(text), Some(false), "{text:?}");
        }
        for text in [" true ", "2", "maybe", "", "truth", "nope"] {
            assert_eq!(boolean(text), None, "{text:?}");
        }
    }

    #[test]
    fn integers_keep_their_width() {
        assert_eq!(parse(r#"{"city":"Paris","days":"255"}"#).unwrap().days, 255);
        assert_eq!(
            refused(r#"{"city":"Paris","days":"256"}"#),
            "at `days`: invalid value: integer `256`, expected u8"
        );
        assert_eq!(
            refused(r#"{"city":"Paris","days":"-1"}"#),
            "at `days`: invalid value: integer `-1`, expected u8"
        );
    }

    #[test]
    fn a_fraction_for_an_integer_is_refused_by_name() {
        assert_eq!(
            refused(r#"{"city":"Paris","days":"2.5"}"#),
            "at `days`: expected an integer, not the string \"2.5\", which is not a whole number"
        );
        assert_eq!(
            refused(r#"{"city":"Paris","days":"1e3"}"#),
            "at `days`: expected an integer written in digits, not the string \"1e3\""
        );
        assert_eq!(
            refused(r#"{"city":"Paris","days":"2."}"#),
            "at `days`: expected an integer written in digits, not the string \"2.\""
        );
        // Strings that are no number at all are left for serde to name.
        assert_eq!(
            refused(r#"{"city":"Paris","days":"0x10"}"#),
            "at `days`: invalid type: string \"0x10\", expected u8"
        );
        assert_eq!(
            refused(r#"{"city":"Paris","days":"two"}"#),
            "at `days`: invalid type: string \"two\", expected u8"
        );
    }

    #[test]
    fn a_number_sent_as_a_string_is_read() {
        assert_eq!(parse(r#"{"city":"Paris","days":1,"ratio":"2.5"}"#).unwrap().ratio, 2.5);
        assert_eq!(parse(r#"{"city":"Paris","days":1,"ratio":"1e3"}"#).unwrap().ratio, 1000.0);
        assert_eq!(parse(r#"{"city":"Paris","days":1,"ratio":" 2 "}"#).unwrap().ratio, 2.0);
        assert_eq!(
            refused(r#"{"city":"Paris","days":1,"ratio":"0x10"}"#),
            "at `ratio`: invalid type: string \"0x10\", expected f64"
        );
        assert_eq!(
            refused(r#"{"city":"Paris","days":1,"ratio":"NaN"}"#),
            "at `ratio`: invalid type: string \"NaN\", expected f64"
        );
    }

    #[test]
    fn a_boolean_sent_as_a_string_is_read() {
        assert!(parse(r#"{"city":"Paris","days":1,"metric":"true"}"#).unwrap().metric);
        assert!(!parse(r#"{"city":"Paris","days":1,"metric":"False"}"#).unwrap().metric);
        assert!(parse(r#"{"city":"Paris","days":1,"metric":"yes"}"#).unwrap().metric);
        assert_eq!(
            refused(r#"{"city":"Paris","days":1,"metric":"maybe"}"#),
            "at `metric`: invalid type: string \"maybe\", expected a boolean"
        );
    }

    #[test]
    fn an_optional_integer_sent_as_a_string_is_read() {
        assert_eq!(parse(r#"{"city":"Paris","days":1,"offset":"-3"}"#).unwrap().offset, Some(-3));
        assert_eq!(parse(r#"{"city":"Paris","days":1,"offset":null}"#).unwrap().offset, None);
        assert_eq!(
            refused(r#"{"city":"Paris","days":1,"offset":"soon"}"#),
            "at `offset`: invalid type: string \"soon\", expected i64"
        );
    }

    #[test]
    fn strings_are_read_at_any_depth() {
        let forecast = parse(
            r#"{"city":"Paris","days":"1","place":{"lat":"48.85","zoom":"3"},"hours":["6","12"],
                "extra":{"zoom":"4"},"counts":{"rain":"5"},"offset":null}"#,
        )
        .unwrap();
        assert_eq!(forecast.place, Place { lat: 48.85, zoom: 3 });
        assert_eq!(forecast.hours, [6, 12]);
        assert_eq!(forecast.extra, Some(Place { lat: 0.0, zoom: 4 }));
        assert_eq!(forecast.counts, BTreeMap::from([("rain".to_owned(), 5)]));
        assert_eq!(
            refused(r#"{"city":"Paris","days":1,"hours":["6","noon"]}"#),
            "at `hours[1]`: invalid type: string \"noon\", expected u8"
        );
        assert_eq!(
            refused(r#"{"city":"Paris","days":1,"extra":{"zoom":"1.5"}}"#),
            "at `extra.zoom`: expected an integer, not the string \"1.5\", which is not a whole number"
        );
    }

    #[test]
    fn never_the_other_way() {
        // A string field keeps "2", and a number sent for it is refused.
        assert_eq!(parse(r#"{"city":"2","days":"2"}"#).unwrap().city, "2");
        assert_eq!(parse(r#"{"city":" 2.0 ","days":1}"#).unwrap().city, " 2.0 ");
        assert_eq!(
            refused(r#"{"city":2,"days":1}"#),
            "at `city`: invalid type: integer `2`, expected a string"
        );
        assert_eq!(
            refused(r#"{"city":"Paris","days":1,"metric":1}"#),
            "at `metric`: invalid type: integer `1`, expected a boolean"
        );
    }

    fn remote(schema: serde_json::Value) -> Parameters {
        let serde_json::Value::Object(schema) = schema else { panic!("an object schema") };
        Parameters::from_schema(schema)
    }

    fn object(value: serde_json::Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_remote_tool_sends_what_its_schema_asks_for() {
        // An MCP tool of another server: no Rust type reads the arguments,
        // so the strings are read before they are sent on.
        let params = remote(json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": ["boolean", "null"]},
            "s": {"type": "string"}, "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "any": {}, "tags": {"type": "array", "items": {"type": "integer"}},
        }}));
        let read = params
            .parse_object(
                r#"{"n":"2","x":"2.5","b":"no","s":"2","either":"2","any":"2","tags":["1"],"other":"3"}"#,
                &ArgumentLimits::DEFAULT,
            )
            .unwrap();
        let expected = json!({"n":2,"x":2.5,"b":false,"s":"2","either":"2","any":"2","tags":[1],"other":"3"});
        assert_eq!(read, object(expected));
        let err = params.parse_object(r#"{"n":"2.5"}"#, &ArgumentLimits::DEFAULT).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: at `n`: expected an integer, not the string \"2.5\", which is not a whole number"
        );
    }

    #[test]
    fn a_union_of_objects_is_not_guessed_and_a_cycle_ends() {
        let params = remote(json!({"type": "object", "properties": {
            "either": {"anyOf": [
                {"type": "object", "properties": {"n": {"type": "integer"}}},
                {"type": "object", "properties": {"n": {"type": "string"}}},
            ]},
            "loop": {"$ref": "#/$defs/Loop"},
        }, "$defs": {"Loop": {"anyOf": [{"$ref": "#/$defs/Loop"}]}}}));
        let raw = r#"{"either":{"n":"2"},"loop":"2"}"#;
        let read = params.parse_object(raw, &ArgumentLimits::DEFAULT).unwrap();
        assert_eq!(read, object(json!({"either": {"n": "2"}, "loop": "2"})));
    }
}
