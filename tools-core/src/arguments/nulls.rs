//! What `null` means where a field is optional but its type takes no null
//! (`#[serde(default)] offset: u32`): "not given", so the default. Models
//! send it that way, and OpenAI's strict mode, where every field is
//! required, can only say it that way.

use serde_json::Value;

use super::node::Node;

/// Remove each null under `node` that means "not given"; whether any was.
pub(super) fn drop_null_defaults(node: Node<'_>, value: &mut Value) -> bool {
    match value {
        Value::Object(fields) => {
            let mut dropped = false;
            fields.retain(|name, field| {
                let Some(schema) = node.property(name) else {
                    return true;
                };
                if field.is_null() && !node.is_required(name) && !schema.takes_null() {
                    dropped = true;
                    return false;
                }
                dropped |= drop_null_defaults(schema, field);
                true
            });
            dropped
        }
        Value::Array(items) => match node.items() {
            Some(schema) => {
                items.iter_mut().fold(false, |dropped, item| drop_null_defaults(schema, item) | dropped)
            }
            None => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;

    use crate::{ArgumentLimits, Parameters};

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Page {
        query: String,
        #[serde(default)]
        offset: u32,
        #[serde(default = "ten")]
        limit: u32,
        #[serde(default)]
        filter: Filter,
        #[serde(default)]
        sort: Vec<Sort>,
    }

    #[derive(Debug, Default, Deserialize, JsonSchema, PartialEq)]
    struct Filter {
        #[serde(default)]
        tags: Vec<String>,
        #[serde(default)]
        exact: bool,
    }

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Sort {
        field: String,
        #[serde(default)]
        descending: bool,
    }

    fn ten() -> u32 {
        10
    }

    fn parse(raw: &str) -> Result<Page, crate::ToolError> {
        Parameters::of::<Page>().parse(raw, &ArgumentLimits::DEFAULT)
    }

    #[test]
    fn null_for_a_defaulted_field_is_its_default_at_any_depth() {
        let page = parse(
            r#"{"query":"rust","offset":null,"limit":null,"filter":{"tags":null,"exact":null},
                "sort":[{"field":"date","descending":null}]}"#,
        )
        .unwrap();
        assert_eq!((page.offset, page.limit), (0, 10));
        assert_eq!(page.filter, Filter::default());
        assert_eq!(page.sort, [Sort { field: "date".into(), descending: false }]);
        assert_eq!(parse(r#"{"query":"rust","filter":null}"#).unwrap().filter, Filter::default());
    }

    #[test]
    fn null_for_a_required_field_is_still_refused_by_name() {
        let err = parse(r#"{"query":null,"offset":null}"#).unwrap_err();
        assert_eq!(err.to_string(), "invalid arguments: at `query`: invalid type: null, expected a string");
        let err = parse(r#"{"query":"rust","offset":null,"sort":[{"field":null}]}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: at `sort[0].field`: invalid type: null, expected a string"
        );
    }

    #[test]
    fn other_mistakes_are_named_after_the_nulls_are_gone() {
        let err = parse(r#"{"query":"rust","offset":null,"limit":"ten"}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments: at `limit`: invalid type: string \"ten\", expected u32"
        );
    }
}
