//! The one argument pipeline, from the raw text a model sent to the
//! request: the size limit, the cleaner, the depth limit, serde, then the
//! schema's constraints. Every failure is invalid arguments whose reason
//! names the field, except a schema whose constraints do not compile.

use std::borrow::Cow;
use std::fmt::Write as _;

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::error::Category;

use super::node::Node;
use super::{ArgumentLimits, JsonObject, Parameters, clean_json};
use crate::ToolError;

/// How many constraint violations one error reports.
const MAX_REPORTED: usize = 5;

impl Parameters {
    /// Turn a raw argument string into `R`: check its size, clean it, check
    /// its depth, deserialize, check the constraints. Every failure is
    /// [`ToolError::InvalidArguments`] with a reason that names the field.
    pub fn parse<R: DeserializeOwned>(&self, raw: &str, limits: &ArgumentLimits) -> Result<R, ToolError> {
        let json = self.prepare(raw, limits)?;
        if self.unit {
            // Any object will do: there is nothing in it to read.
            serde_json::from_str::<serde::de::IgnoredAny>(&json).map_err(|error| not_json(&error))?;
            if !json.trim_start().starts_with('{') {
                // Valid JSON, just read: only the message costs a second read.
                let sent = serde_json::from_str::<Value>(&json).unwrap_or(Value::Null);
                return Err(self.not_an_object(&sent));
            }
            let request = serde_json::from_value(Value::Null).map_err(serde_invalid)?;
            return self.checked(request, &json, limits);
        }
        // serde first, with or without constraints: its messages name the
        // field and the Rust type that was expected, and it refuses
        // duplicate keys, which a JSON value would silently merge.
        // Tracking the path costs every call; only a failed call needs it,
        // so the failure is read again to name where it happened.
        let error = match serde_json::from_str(&json) {
            Ok(request) => return self.checked(request, &json, limits),
            Err(error) => error,
        };
        if let Some(unreadable) = self.not_an_object_at_all(&json, &error) {
            return Err(unreadable);
        }
        // Only a failed read pays for looking for nulls that mean "not given".
        let json = match self.without_null_defaults(&json) {
            Some(cleaned) => match serde_json::from_str(&cleaned) {
                Ok(request) => return self.checked(request, &cleaned, limits),
                Err(_) => Cow::Owned(cleaned),
            },
            None => json,
        };
        let mut de = serde_json::Deserializer::from_str(&json);
        Err(match serde_path_to_error::deserialize::<_, R>(&mut de) {
            Err(error) => serde_error(error),
            Ok(_) => de.end().map_or_else(serde_invalid, |()| {
                ToolError::invalid_arguments("the arguments could not be read")
            }),
        })
    }

    /// `request`, read from `json`, once the schema's constraints hold.
    fn checked<R>(&self, request: R, json: &str, limits: &ArgumentLimits) -> Result<R, ToolError> {
        if self.validator.is_some() {
            // `R` was read from this text, so it is valid JSON; but a value
            // under a key `R` skipped may nest past serde_json's recursion
            // limit, which the depth limit names.
            let value: Value = serde_json::from_str(json)
                .map_err(|error| limits.check_depth(json).err().unwrap_or_else(|| serde_invalid(error)))?;
            self.check_constraints(&value)?;
        }
        Ok(request)
    }

    /// The same pipeline for a tool with no Rust request type (a remote
    /// MCP tool): the arguments as a JSON object, checked against the
    /// schema's constraints when it has a validator.
    ///
    /// ```
    /// use tools_core::{ArgumentLimits, Parameters};
    ///
    /// let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}});
    /// let params = Parameters::from_schema(schema.as_object().unwrap().clone());
    /// let args = params.parse_object("```json\n{\"q\":\"rust\"}\n```", &ArgumentLimits::DEFAULT).unwrap();
    /// assert_eq!(args["q"], "rust");
    /// let err = params.parse_object("[1]", &ArgumentLimits::DEFAULT).unwrap_err();
    /// let expected = "invalid arguments: the arguments must be a JSON object with the fields `q`, not an array (`[1]`)";
    /// assert_eq!(err.to_string(), expected);
    /// ```
    pub fn parse_object(&self, raw: &str, limits: &ArgumentLimits) -> Result<JsonObject, ToolError> {
        let json = self.prepare(raw, limits)?;
        let object = match serde_json::from_str::<Value>(&json) {
            Ok(Value::Object(object)) => object,
            Ok(other) => return Err(self.not_an_object(&other)),
            Err(e) => return Err(not_json(&e)),
        };
        if self.validator.is_some() {
            self.check_constraints(&Value::Object(object.clone()))?;
        }
        Ok(object)
    }

    /// Arguments serde could not read because they are JSON but not an
    /// object: said in the model's terms, not as the first field's fault.
    fn not_an_object_at_all(&self, json: &str, error: &serde_json::Error) -> Option<ToolError> {
        if error.classify() != Category::Data {
            return None;
        }
        match serde_json::from_str::<Value>(json) {
            Ok(value) if !value.is_object() => Some(self.not_an_object(&value)),
            _ => None,
        }
    }

    /// "the arguments must be a JSON object with the fields ...", naming
    /// the schema's fields and what was sent instead.
    fn not_an_object(&self, sent: &Value) -> ToolError {
        let required: Vec<&str> = match self.schema.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let fields: Vec<String> = match self.schema.get("properties") {
            Some(Value::Object(properties)) => properties
                .keys()
                .map(|name| {
                    if required.contains(&name.as_str()) {
                        format!("`{name}` (required)")
                    } else {
                        format!("`{name}`")
                    }
                })
                .collect(),
            _ => Vec::new(),
        };
        let kind = match sent {
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            Value::Bool(_) => "a boolean",
            Value::Null => "null",
            Value::Object(_) => "an object",
        };
        let mut excerpt = sent.to_string();
        if excerpt.len() > 40 {
            let mut end = 40;
            while !excerpt.is_char_boundary(end) {
                end -= 1;
            }
            excerpt.truncate(end);
            excerpt.push_str("...");
        }
        let shape = if fields.is_empty() {
            "a JSON object, `{}`".to_owned()
        } else {
            format!("a JSON object with the fields {}", fields.join(", "))
        };
        ToolError::invalid_arguments(format!("the arguments must be {shape}, not {kind} (`{excerpt}`)"))
    }

    /// The steps before any parser sees the text: its size, the cleaner,
    /// and its depth when the schema does not bound it within the limit.
    fn prepare<'a>(&self, raw: &'a str, limits: &ArgumentLimits) -> Result<Cow<'a, str>, ToolError> {
        limits.check_size(raw)?;
        let json = clean_json(raw);
        if self.depth.is_none_or(|depth| depth > limits.max_depth) {
            limits.check_depth(&json)?;
        }
        Ok(json)
    }

    /// The schema's constraints over a value already read.
    fn check_constraints(&self, value: &Value) -> Result<(), ToolError> {
        let Some(validator) = &self.validator else {
            return Ok(());
        };
        let validator = validator.as_ref().map_err(|reason| {
            ToolError::failed(format!("the tool's argument schema does not compile: {reason}"))
        })?;
        let violations: Vec<String> =
            validator.iter_errors(value).take(MAX_REPORTED).map(|e| self.violation(&e)).collect();
        if violations.is_empty() { Ok(()) } else { Err(ToolError::invalid_arguments(violations.join("; "))) }
    }
}

/// Text that is not JSON, with where (the model can find line and column
/// in what it sent).
fn not_json(error: &serde_json::Error) -> ToolError {
    ToolError::invalid_arguments(format!("the arguments are not valid JSON: {error}"))
}

fn serde_error(error: serde_path_to_error::Error<serde_json::Error>) -> ToolError {
    let path = error.path().to_string();
    let syntax = matches!(error.inner().classify(), Category::Syntax | Category::Eof);
    if syntax && (path == "." || path == "?") {
        return not_json(error.inner());
    }
    // A syntax error keeps its line and column: the field path alone does
    // not say where in the text it is.
    let message = if syntax { error.inner().to_string() } else { serde_message(error.inner()) };
    if path == "." {
        ToolError::invalid_arguments(message)
    } else {
        ToolError::invalid_arguments(format!("at `{path}`: {message}"))
    }
}

/// A serde failure as invalid arguments, in [`serde_message`]'s words.
fn serde_invalid(error: serde_json::Error) -> ToolError {
    ToolError::invalid_arguments(serde_message(&error))
}

/// serde_json's message without its " at line L column C" suffix: the model
/// sent one line of arguments, and the field path says more.
fn serde_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    if error.line() == 0 {
        return text;
    }
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// `items[0].name`, as serde_path_to_error writes paths.
fn field_path(error: &ValidationError<'_>) -> String {
    let mut path = String::new();
    for segment in error.instance_path().iter() {
        match segment {
            LocationSegment::Property(name) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&name);
            }
            LocationSegment::Index(index) => {
                let _ = write!(path, "[{index}]");
            }
        }
    }
    path
}

impl Parameters {
    /// One constraint violation as the model should read it: "`days` must
    /// be at most 16".
    fn violation(&self, error: &ValidationError<'_>) -> String {
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                self.unknown_fields(error, unexpected)
            }
            _ => violation(error),
        }
    }

    /// "unknown field `limt`: the fields are `query`, `limit`", for the
    /// object at the error's path.
    fn unknown_fields(&self, error: &ValidationError<'_>, unexpected: &[String]) -> String {
        let node =
            error.instance_path().iter().try_fold(Node::root(&self.schema), |node, segment| match segment {
                LocationSegment::Property(name) => node.property(&name),
                LocationSegment::Index(_) => node.items(),
            });
        let listed = |names: &mut dyn Iterator<Item = &String>| {
            names.map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
        };
        let mut message = match unexpected {
            [one] => format!("unknown field `{one}`"),
            many => format!("unknown fields {}", listed(&mut many.iter())),
        };
        if let Some(node) = node {
            let known = listed(&mut node.property_names());
            message.push_str(&if known.is_empty() {
                ": it takes no fields".to_owned()
            } else {
                format!(": the fields are {known}")
            });
        }
        let path = field_path(error);
        if path.is_empty() { message } else { format!("at `{path}`: {message}") }
    }
}

/// One constraint violation, other than an unknown field.
fn violation(error: &ValidationError<'_>) -> String {
    let path = field_path(error);
    let subject = if path.is_empty() { "the arguments".to_owned() } else { format!("`{path}`") };
    match error.kind() {
        ValidationErrorKind::Maximum { limit } => format!("{subject} must be at most {limit}"),
        ValidationErrorKind::Minimum { limit } => format!("{subject} must be at least {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("{subject} must be less than {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("{subject} must be greater than {limit}"),
        ValidationErrorKind::MaxLength { limit } => {
            format!("{subject} must be at most {limit} characters long")
        }
        ValidationErrorKind::MinLength { limit } => {
            format!("{subject} must be at least {limit} characters long")
        }
        ValidationErrorKind::MaxItems { limit } => format!("{subject} must have at most {limit} items"),
        ValidationErrorKind::MinItems { limit } => format!("{subject} must have at least {limit} items"),
        ValidationErrorKind::Pattern { pattern } => format!("{subject} must match the pattern `{pattern}`"),
        ValidationErrorKind::Enum { options } => format!("{subject} must be one of {options}"),
        ValidationErrorKind::Required { property } => {
            let field = property.as_str().map_or_else(|| property.to_string(), |name| format!("`{name}`"));
            if path.is_empty() {
                format!("missing field {field}")
            } else {
                format!("at `{path}`: missing field {field}")
            }
        }
        _ => format!("{subject}: {error}"),
    }
}

#[cfg(test)]
mod tests {
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
        let reason = invalid(params.parse::<Plain>(r#"{"city":"Oslo","days":"3","tags":[]}"#, &limits()));
        assert_eq!(reason, r#"at `days`: invalid type: string "3", expected u8"#);
        let reason = invalid(params.parse::<Plain>(r#"{"city":"Oslo","tags":[1]}"#, &limits()));
        assert_eq!(reason, "at `tags[0]`: invalid type: integer `1`, expected a string");
        let reason = invalid(params.parse::<Plain>(r#"{"tags":[]}"#, &limits()));
        assert_eq!(reason, "missing field `city`");
    }

    #[test]
    fn arguments_that_are_not_an_object_or_not_json_are_said_so_in_the_models_terms() {
        let params = Parameters::of::<Plain>();
        let must = "the arguments must be a JSON object with the fields `city` (required), `days`, `tags` (required)";
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
            (
                r#"{"code":"ab","days":1,"items":[{"qty":11}],"note":"n"}"#,
                "`items[0].qty` must be at most 10",
            ),
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
        assert_eq!(
            invalid(unit.parse::<()>(r#"{"x":1}"#, &limits())),
            "unknown field `x`: it takes no fields"
        );
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
        let reason = invalid(
            params.parse::<Constrained>(r#"{"code":"a","days":99,"items":[],"note":null}"#, &limits()),
        );
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
        assert_eq!(
            params.without_validation().parse::<Broken>(r#"{"code":"a"}"#, &limits()).unwrap().code,
            "a"
        );
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
}
