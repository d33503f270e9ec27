use super::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Plain {
    city: String,
    days: Option<u8>,
    tags: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Constrained {
    #[schemars(length(min = 2, max = 5))]
    code: String,
    #[schemars(range(min = 1, max = 16))]
    days: u8,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    slug: Option<String>,
    #[schemars(length(max = 2))]
    items: Vec<Item>,
    #[schemars(required)]
    note: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Item {
    #[schemars(range(max = 10))]
    qty: u32,
}

fn limits() -> ArgumentLimits {
    ArgumentLimits::default()
}

fn invalid(result: Result<impl std::fmt::Debug, ToolError>) -> String {
    match result {
        Err(ToolError::InvalidArguments(reason)) => reason,
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

#[test]
fn unit_requests_take_the_empty_object_the_schema_asks_for() {
    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    struct Unit;
    let params = Parameters::of::<Unit>();
    assert_eq!(params.schema()["type"], "object");
    for raw in ["", "null", "{}", "```json\n{}\n```", r#"{"ignored":1}"#] {
        assert_eq!(params.parse::<Unit>(raw, &limits()).unwrap(), Unit, "{raw:?}");
    }
    Parameters::of::<()>().parse::<()>("{}", &limits()).unwrap();
    let reason = invalid(params.parse::<Unit>("[1]", &limits()));
    assert_eq!(reason, "the arguments must be a JSON object, `{}`, not an array (`[1]`)");
    assert!(invalid(params.parse::<Unit>("{", &limits())).contains("EOF"));
}

#[test]
fn serde_errors_name_the_field_path() {
    let params = Parameters::of::<Plain>();
    let reason = invalid(params.parse::<Plain>(r#"{"city":"Oslo","days":"three","tags":[]}"#, &limits()));
    assert_eq!(reason, r#"at `days`: invalid type: string "three", expected u8"#);
    let reason = invalid(params.parse::<Plain>(r#"{"city":"Oslo","tags":[1]}"#, &limits()));
    assert_eq!(reason, "at `tags[0]`: invalid type: integer `1`, expected a string");
    let reason = invalid(params.parse::<Plain>(r#"{"tags":[]}"#, &limits()));
    assert_eq!(reason, "missing field `city`");
}

#[test]
fn arguments_that_are_not_an_object_or_not_json_are_said_so_in_the_models_terms() {
    let params = Parameters::of::<Plain>();
    let must =
        "the arguments must be a JSON object with the fields `city` (required), `days`, `tags` (required)";
    for (raw, not) in [
        ("[1,2,3]", "an array (`[1,2,3]`)"),
        ("[[1]]", "an array (`[[1]]`)"),
        ("true", "a boolean (`true`)"),
        ("42", "a number (`42`)"),
    ] {
        assert_eq!(invalid(params.parse::<Plain>(raw, &limits())), format!("{must}, not {not}"), "{raw}");
    }
    let long = format!("[{}]", "1,".repeat(50) + "1");
    assert!(invalid(params.parse::<Plain>(&long, &limits())).ends_with("1,1,1...`)"));
    let reason = invalid(params.parse::<Plain>(r#"{"city":"a","tags":[}"#, &limits()));
    assert_eq!(reason, "at `tags[0]`: expected value at line 1 column 21");
    let reason = invalid(params.parse::<Plain>(r#"{"city":"Oslo"#, &limits()));
    assert_eq!(reason, "at `city`: EOF while parsing a string at line 1 column 13");
    let cases = [("Paris, please", "expected value at line 1 column 1")];
    for (raw, says) in cases {
        let reason = invalid(params.parse::<Plain>(raw, &limits()));
        assert_eq!(reason, format!("the arguments are not valid JSON: {says}"), "{raw}");
    }
    let remote = Parameters::from_schema(params.schema().clone());
    let reason = remote.parse_object("[1]", &limits()).unwrap_err().to_string();
    assert_eq!(reason, format!("invalid arguments: {must}, not an array (`[1]`)"));
}

#[test]
fn deep_junk_under_a_key_the_type_skips_is_named_when_the_constraints_read_it() {
    let params = Parameters::of::<Constrained>();
    let junk = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let raw = format!(r#"{{"code":"ab","days":3,"items":[],"note":"n","junk":{junk}}}"#);
    let reason = invalid(params.parse::<Constrained>(&raw, &limits()));
    assert_eq!(reason, "the arguments are nested more than 64 levels deep, under the key `junk`");
}

#[test]
fn constraints_are_enforced_with_field_names() {
    let params = Parameters::of::<Constrained>();
    let ok = r#"{"code":"ab","days":3,"items":[{"qty":1}],"note":"n"}"#;
    params.parse::<Constrained>(ok, &limits()).unwrap();
    let cases = [
        (r#"{"code":"ab","days":17,"items":[],"note":"n"}"#, "`days` must be at most 16"),
        (r#"{"code":"ab","days":0,"items":[],"note":"n"}"#, "`days` must be at least 1"),
        (r#"{"code":"a","days":1,"items":[],"note":"n"}"#, "`code` must be at least 2 characters long"),
        (
            r#"{"code":"ab","days":1,"slug":"A!","items":[],"note":"n"}"#,
            "`slug` must match the pattern `^[a-z]+$`",
        ),
        (r#"{"code":"ab","days":1,"items":[{"qty":11}],"note":"n"}"#, "`items[0].qty` must be at most 10"),
        (
            r#"{"code":"ab","days":1,"items":[{"qty":1},{"qty":1},{"qty":1}],"note":"n"}"#,
            "`items` must have at most 2 items",
        ),
        // `#[schemars(required)]` on an Option: serde would take it missing or null.
        (r#"{"code":"ab","days":1,"items":[]}"#, "missing field `note`"),
        (r#"{"code":"ab","days":1,"items":[],"note":null}"#, r#"`note`: null is not of type "string""#),
    ];
    for (input, expected) in cases {
        assert_eq!(invalid(params.parse::<Constrained>(input, &limits())), expected, "{input}");
    }
}

#[test]
fn unknown_fields_are_ignored_unless_denied_and_then_named_where_they_are() {
    let raw = r#"{"code":"ab","days":3,"note":"n","items":[{"qty":1,"qyt":2}],"colour":"red","size":1}"#;
    Parameters::of::<Constrained>().parse::<Constrained>(raw, &limits()).unwrap();
    let strict = Parameters::of::<Constrained>().deny_unknown_fields();
    assert_eq!(strict.schema()["$defs"]["Item"]["additionalProperties"], false);
    assert_eq!(
        invalid(strict.parse::<Constrained>(raw, &limits())),
        "at `items[0]`: unknown field `qyt`: the fields are `qty`; \
         unknown fields `colour`, `size`: the fields are `code`, `days`, `slug`, `items`, `note`"
    );
    let clean = r#"{"code":"ab","days":3,"note":"n","items":[{"qty":1}]}"#;
    assert!(strict.parse::<Constrained>(clean, &limits()).is_ok());
    // Without fields to read, nothing is expected either.
    let unit = Parameters::of::<()>().deny_unknown_fields();
    assert_eq!(invalid(unit.parse::<()>(r#"{"x":1}"#, &limits())), "unknown field `x`: it takes no fields");
}

#[test]
fn a_type_that_denies_unknown_fields_is_refused_by_serde_with_the_names() {
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Closed {
        city: String,
    }
    let params = Parameters::of::<Closed>();
    assert_eq!(params.schema()["additionalProperties"], false);
    assert_eq!(
        invalid(params.parse::<Closed>(r#"{"city":"Oslo","cty":"x"}"#, &limits())),
        "at `cty`: unknown field `cty`, expected `city`"
    );
}

#[test]
fn several_violations_are_reported_together() {
    let params = Parameters::of::<Constrained>();
    let reason =
        invalid(params.parse::<Constrained>(r#"{"code":"a","days":99,"items":[],"note":null}"#, &limits()));
    assert!(reason.contains("`code`") && reason.contains("`days`"), "{reason}");
}

#[test]
fn empty_requests_get_an_object_root() {
    #[derive(Deserialize, JsonSchema)]
    struct Unit;
    for schema in [Parameters::of::<()>(), Parameters::of::<Unit>()] {
        assert_eq!(schema.schema()["type"], "object");
        assert_eq!(schema.schema()["properties"], serde_json::json!({}));
    }
    #[derive(Deserialize, JsonSchema)]
    struct NoFields {}
    let params = Parameters::of::<NoFields>();
    for raw in ["", "null", "{}", "```json\n{}\n```"] {
        assert!(params.parse::<NoFields>(raw, &limits()).is_ok(), "{raw:?}");
    }
}

#[test]
fn limits_come_before_the_parser() {
    let deep = format!("{{\"value\":{}", "[".repeat(100_000));
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Open {
        value: Value,
    }
    let reason = invalid(Parameters::of::<Open>().parse::<Open>(&deep, &limits()));
    assert!(reason.contains("64 levels"), "{reason}");
    let params = Parameters::of::<Plain>();
    let reason = invalid(params.parse::<Plain>("{}", &limits().with_max_bytes(1)));
    assert!(reason.contains("limit of 1 bytes"), "{reason}");
}

#[test]
fn constraints_that_do_not_compile_fail_every_call_and_say_why() {
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Broken {
        #[schemars(regex(pattern = "(unclosed"))]
        code: String,
    }
    let params = Parameters::of::<Broken>();
    assert!(!params.validates());
    let err = params.parse::<Broken>(r#"{"code":"a"}"#, &limits()).unwrap_err();
    assert!(err.is_failure(), "{err:?}");
    assert!(err.to_string().contains("argument schema does not compile"), "{err}");
    assert!(err.to_string().contains("(unclosed"), "{err}");
    // Opting out of validation leaves serde's checks alone.
    assert_eq!(params.without_validation().parse::<Broken>(r#"{"code":"a"}"#, &limits()).unwrap().code, "a");
}

#[test]
fn a_type_that_bounds_the_nesting_is_read_without_a_depth_scan() {
    let params = Parameters::of::<Plain>();
    // serde meets the first bracket where a string belongs.
    let deep = format!("{{\"city\":{}", "[".repeat(100_000));
    let reason = invalid(params.parse::<Plain>(&deep, &limits()));
    assert_eq!(reason, "at `city`: invalid type: sequence, expected a string");
    // A key the type does not name is skipped, however deep.
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let extra = format!(r#"{{"city":"Oslo","tags":[],"extra":{nested}}}"#);
    assert_eq!(params.parse::<Plain>(&extra, &limits()).unwrap().city, "Oslo");
    // A limit below the type's own depth is still checked.
    let shallow = limits().with_max_depth(1);
    let reason = invalid(params.parse::<Plain>(r#"{"city":"Oslo","tags":[]}"#, &shallow));
    assert!(reason.contains("more than 1 levels"), "{reason}");
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Text a model might send: JSON-ish fragments, fences, prose,
    /// brackets, escapes and any character at all.
    fn model_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("[".to_owned()),
            Just("]".to_owned()),
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just("```json\n".to_owned()),
            Just("```".to_owned()),
            Just(r#""city":"Oslo","#.to_owned()),
            Just(r#""days":300"#.to_owned()),
            Just(r#""code":"x","days":1"#.to_owned()),
            Just("null".to_owned()),
            any::<String>(),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        // The adapter's whole path (limits, clean, parse, constraints)
        // never panics, and whatever fails is the model's to fix.
        #[test]
        fn any_text_is_a_request_or_invalid_arguments(raw in model_text()) {
            let checks = |result: Result<(), ToolError>| match result {
                Ok(()) | Err(ToolError::InvalidArguments(_)) => Ok(()),
                Err(other) => Err(TestCaseError::fail(format!("{raw:?} gave {other:?}"))),
            };
            checks(Parameters::of::<Plain>().parse::<Plain>(&raw, &limits()).map(drop))?;
            checks(Parameters::of::<Constrained>().parse::<Constrained>(&raw, &limits()).map(drop))?;
        }

        // What serde reads directly, the adapter reads the same.
        #[test]
        fn clean_requests_read_as_serde_reads_them(
            city in any::<String>(), days in any::<Option<u8>>(), tags in any::<Vec<String>>()
        ) {
            let raw = serde_json::json!({"city": city, "days": days, "tags": tags}).to_string();
            let parsed = Parameters::of::<Plain>().parse::<Plain>(&raw, &limits()).unwrap();
            prop_assert_eq!((parsed.city, parsed.days, parsed.tags), (city, days, tags));
        }
    }
}
