//! The lenient cleaner every raw argument string passes through: models wrap
//! JSON in prose, in code fences, or in a JSON string of its own.

use std::borrow::Cow;

use serde::de::IgnoredAny;

/// How many times a double-encoded argument is unwrapped; models have been seen
/// to encode twice, never more, and the bound keeps the work linear.
const MAX_UNWRAP: usize = 3;

/// How many `{` or `[` positions in prose are tried as the start of the JSON
/// before giving up, so that a long prose answer costs linear time.
const MAX_CANDIDATES: usize = 16;

/// Recover the JSON a model meant from the raw argument string it sent.
///
/// - empty, whitespace-only and `null` arguments become `{}`;
/// - a ```` ``` ```` fence (with any language tag, in any case) is removed;
/// - prose before and after the JSON is removed;
/// - a JSON string that holds the object (double-encoded arguments) is decoded.
///
/// Whatever cannot be recovered is returned trimmed, so that the parser reports
/// the real problem. The result borrows from `input` unless a string had to be
/// decoded, and the function never panics.
///
/// ```
/// use toolcall_core::clean_json;
/// assert_eq!(clean_json(r#"{"city":"Paris"}"#), r#"{"city":"Paris"}"#);
/// assert_eq!(clean_json("```json\n{\"city\":\"Paris\"}\n```"), r#"{"city":"Paris"}"#);
/// assert_eq!(clean_json(r#"Sure! {"city":"Paris"} Hope that helps."#), r#"{"city":"Paris"}"#);
/// assert_eq!(clean_json(r#""{\"city\":\"Paris\"}""#), r#"{"city":"Paris"}"#);
/// assert_eq!(clean_json("  "), "{}");
/// ```
pub fn clean_json(input: &str) -> Cow<'_, str> {
    if looks_like_container(input) {
        // What a model sends nearly always: nothing to trim or unwrap.
        return Cow::Borrowed(input);
    }
    let mut current = Cow::Borrowed(input);
    for _ in 0..=MAX_UNWRAP {
        let step = match &current {
            Cow::Borrowed(text) => clean_once(text),
            Cow::Owned(text) => match clean_once(text) {
                Step::Done(slice) => Step::Done(Cow::Owned(slice.into_owned())),
                Step::Decoded(inner) => Step::Decoded(inner),
            },
        };
        match step {
            Step::Done(text) => return text,
            Step::Decoded(inner) => current = Cow::Owned(inner),
        }
    }
    current
}

enum Step<'a> {
    /// The cleaned text: nothing more to unwrap.
    Done(Cow<'a, str>),
    /// A JSON string literal was decoded; clean its contents again.
    Decoded(String),
}

fn clean_once(input: &str) -> Step<'_> {
    let text = input.trim();
    if text.is_empty() || text == "null" {
        return Step::Done(Cow::Borrowed("{}"));
    }
    if looks_like_container(text) {
        return Step::Done(Cow::Borrowed(text));
    }
    if let Some(inner) = decode_string(text) {
        return Step::Decoded(inner);
    }
    if let Some(inner) = fenced(text) {
        let inner = inner.trim();
        if looks_like_container(inner) {
            return Step::Done(Cow::Borrowed(inner));
        }
        if let Some(decoded) = decode_string(inner) {
            return Step::Decoded(decoded);
        }
    }
    match first_json_value(text) {
        Some(found) => Step::Done(Cow::Borrowed(found)),
        None => Step::Done(Cow::Borrowed(text)),
    }
}

/// The contents of a JSON string literal: double-encoded arguments.
fn decode_string(text: &str) -> Option<String> {
    if text.starts_with('"') { serde_json::from_str(text).ok() } else { None }
}

/// Starts with `{` and ends with `}`, or `[` and `]`: handed to the parser as
/// it is, which keeps the common case a constant-time check.
fn looks_like_container(text: &str) -> bool {
    let bytes = text.as_bytes();
    matches!((bytes.first(), bytes.last()), (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']')))
}

/// The body of the first ```` ``` ```` fence: from after the fence line (which
/// may carry a language tag) to the closing fence, or to the end if it is missing.
///
/// The closing fence is the first one that starts a line, as in Markdown: a
/// ```` ``` ```` inside the JSON is inside a string, and a JSON string never
/// holds a raw line break. A fence kept on one line (```` ```{"a":1}``` ````)
/// closes at the last ```` ``` ````.
fn fenced(text: &str) -> Option<&str> {
    let open = memchr::memmem::find(text.as_bytes(), b"```")?;
    let after = &text[open + 3..];
    let body_start = match memchr::memchr(b'\n', after.as_bytes()) {
        // The tag line holds no JSON of its own (```json, ```JSON5, ``` tool):
        // skip it unless the JSON starts on it (```{"a":1}```).
        Some(newline) if !after[..newline].trim_start().starts_with(['{', '[']) => newline + 1,
        _ => after.len() - after.trim_start_matches(|c: char| c.is_ascii_alphanumeric()).len(),
    };
    let body = &after[body_start..];
    let end = closing_fence(body).unwrap_or(body.len());
    Some(&body[..end])
}

fn closing_fence(body: &str) -> Option<usize> {
    let mut line_start = 0;
    for line in body.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        if line[indent..].starts_with("```") {
            return Some(line_start + indent);
        }
        line_start += line.len();
    }
    memchr::memmem::rfind(body.as_bytes(), b"```")
}

/// The first complete JSON object or array inside `text`, found by letting
/// serde_json read one value from each `{` or `[` in turn.
fn first_json_value(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut from = 0;
    for _ in 0..MAX_CANDIDATES {
        let start = from + memchr::memchr2(b'{', b'[', &bytes[from..])?;
        let rest = &text[start..];
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<IgnoredAny>();
        if let Some(Ok(_)) = values.next() {
            return Some(&rest[..values.byte_offset()]);
        }
        from = start + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const OBJ: &str = r#"{"city":"Paris","days":3}"#;

    /// Shapes models really send, each with what should come out.
    #[test]
    fn recovers_the_shapes_models_send() {
        let cases: &[(&str, &str)] = &[
            (OBJ, OBJ),
            ("  \n\t{\"city\":\"Paris\",\"days\":3}\n ", OBJ),
            ("```json\n{\"city\":\"Paris\",\"days\":3}\n```", OBJ),
            ("```JSON\n{\"city\":\"Paris\",\"days\":3}\n```", OBJ),
            ("```\n{\"city\":\"Paris\",\"days\":3}\n```", OBJ),
            ("```jsonc\r\n{\"city\":\"Paris\",\"days\":3}\r\n```", OBJ),
            ("```{\"city\":\"Paris\",\"days\":3}```", OBJ),
            ("```json\n{\"city\":\"Paris\",\"days\":3}", OBJ),
            ("Here are the arguments:\n```json\n{\"city\":\"Paris\",\"days\":3}\n```\nLet me know!", OBJ),
            ("Sure! {\"city\":\"Paris\",\"days\":3}", OBJ),
            ("{\"city\":\"Paris\",\"days\":3} I called the tool.", OBJ),
            ("I'll use {braces} loosely. {\"city\":\"Paris\",\"days\":3} done {x}", OBJ),
            (r#""{\"city\":\"Paris\",\"days\":3}""#, OBJ),
            (r#""\"{\\\"city\\\":\\\"Paris\\\",\\\"days\\\":3}\"""#, OBJ),
            ("```json\n\"{\\\"city\\\":\\\"Paris\\\",\\\"days\\\":3}\"\n```", OBJ),
            ("", "{}"),
            ("   \n ", "{}"),
            ("null", "{}"),
            (" null\n", "{}"),
            ("\"\"", "{}"),
            ("[1,2,3]", "[1,2,3]"),
            ("<tool_call>{\"city\":\"Paris\",\"days\":3}</tool_call>", OBJ),
            ("{\"note\":\"```not a fence```\"}", "{\"note\":\"```not a fence```\"}"),
            ("not json at all", "not json at all"),
            ("{\"city\": \"Paris\"", "{\"city\": \"Paris\""),
        ];
        for (input, expected) in cases {
            assert_eq!(clean_json(input), *expected, "input: {input:?}");
        }
    }

    #[test]
    fn a_fence_inside_a_json_string_does_not_close_the_fence() {
        let raw = "```json\n{\"note\":\"wrap code in ``` fences\"}\n```";
        assert_eq!(clean_json(raw), r#"{"note":"wrap code in ``` fences"}"#);
        let encoded = "```json\n\"{\\\"_\\\":{\\\"```\\\":null}}\"\n```";
        assert_eq!(clean_json(encoded), r#"{"_":{"```":null}}"#);
        assert_eq!(clean_json(r#"```{"a":"```"}```"#), r#"{"a":"```"}"#);
    }

    #[test]
    fn borrows_unless_it_decodes() {
        assert!(matches!(clean_json(OBJ), Cow::Borrowed(_)));
        assert!(matches!(clean_json("ok ```json\n{}\n```"), Cow::Borrowed(_)));
        assert!(matches!(clean_json(r#""{}""#), Cow::Owned(_)));
    }

    #[test]
    fn unwrapping_is_bounded() {
        let mut nested = OBJ.to_string();
        for _ in 0..20 {
            nested = serde_json::to_string(&nested).unwrap();
        }
        // Still a string after the bounded unwraps: the parser reports it.
        assert!(clean_json(&nested).starts_with('"'));
    }

    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            ".{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                prop::collection::btree_map(".{0,8}", inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn json_object() -> impl Strategy<Value = String> {
        prop::collection::btree_map("[a-z_]{1,8}", json_value(), 0..6)
            .prop_map(|m| serde_json::to_string(&serde_json::Value::Object(m.into_iter().collect())).unwrap())
    }

    proptest! {
        #[test]
        fn valid_objects_pass_through_unchanged(obj in json_object(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(&obj).unwrap()).unwrap()
            } else {
                obj
            };
            let cleaned = clean_json(&text);
            prop_assert!(matches!(cleaned, Cow::Borrowed(_)));
            prop_assert_eq!(cleaned.as_ref(), text.as_str());
        }

        #[test]
        fn wrapped_objects_are_recovered(
            obj in json_object(),
            prose in "[a-zA-Z ,.!:]{0,40}",
            tag in "(json|JSON|Json|jsonc|)",
            wrap in 0..4u8,
        ) {
            let wrapped = match wrap {
                0 => format!("{prose}\n```{tag}\n{obj}\n```\n{prose}"),
                1 => format!("{prose} {obj} {prose}"),
                2 => serde_json::to_string(&obj).unwrap(),
                _ => format!("```{tag}\n{}\n```", serde_json::to_string(&obj).unwrap()),
            };
            let cleaned = clean_json(&wrapped);
            let got: serde_json::Value = serde_json::from_str(&cleaned).unwrap();
            let want: serde_json::Value = serde_json::from_str(&obj).unwrap();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn never_panics(input in any::<String>()) {
            let _ = clean_json(&input);
        }

        #[test]
        fn never_panics_on_json_like_noise(input in r#"[\{\}\[\]"\\`a-z :,\n]{0,64}"#) {
            let _ = clean_json(&input);
        }
    }
}
