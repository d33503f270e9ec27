//! How a failure to read the arguments is put to the model: in its terms
//! (not an object, not JSON), and serde's message with the field's path.

use serde_json::Value;
use serde_json::error::Category;

use super::Parameters;
use crate::ToolError;

impl Parameters {
    /// Arguments serde could not read because they are JSON but not an
    /// object: said in the model's terms, not as the first field's fault.
    pub(super) fn not_an_object_at_all(&self, json: &str, error: &serde_json::Error) -> Option<ToolError> {
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
    pub(super) fn not_an_object(&self, sent: &Value) -> ToolError {
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
}

/// Text that is not JSON, with where (the model can find line and column
/// in what it sent).
pub(super) fn not_json(error: &serde_json::Error) -> ToolError {
    ToolError::invalid_arguments(format!("the arguments are not valid JSON: {error}"))
}

pub(super) fn serde_error(error: serde_path_to_error::Error<serde_json::Error>) -> ToolError {
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
pub(super) fn serde_invalid(error: serde_json::Error) -> ToolError {
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
