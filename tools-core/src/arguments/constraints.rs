//! The schema's constraints over a value already read, each violation
//! worded as the model should read it, with the field's path.

use std::fmt::Write as _;

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::Value;

use super::Parameters;
use super::node::{Kinds, Node};
use super::report::worded;
use crate::ToolError;

impl Parameters {
    /// The schema's constraints over a value already read.
    pub(super) fn check_constraints(&self, value: &Value) -> Result<(), ToolError> {
        let Some(validator) = &self.validator else {
            return Ok(());
        };
        let validator = validator.as_ref().map_err(|reason| {
            ToolError::failed(format!("the tool's argument schema does not compile: {reason}"))
        })?;
        let problems = self.problems(validator, value);
        if problems.is_empty() { Ok(()) } else { Err(ToolError::invalid_arguments(worded(&problems))) }
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
    pub(super) fn violation(&self, error: &ValidationError<'_>) -> String {
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                self.unknown_fields(error, unexpected)
            }
            _ => violation(error),
        }
    }

    /// "unknown field `limt`: the fields are `query`, `limit`", for the
    /// object at the error's path.
    pub(super) fn unknown_fields(&self, error: &ValidationError<'_>, unexpected: &[String]) -> String {
        // Through `Option`'s union to the one object or array schema.
        let node = error
            .instance_path()
            .iter()
            .try_fold(Node::root(&self.schema), |node, segment| match segment {
                LocationSegment::Property(name) => node.container(Kinds::OBJECT)?.property(&name),
                LocationSegment::Index(_) => node.container(Kinds::ARRAY)?.items(),
            })
            .and_then(|node| node.container(Kinds::OBJECT));
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
