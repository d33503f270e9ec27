//! The one argument pipeline, from the raw text a model sent to the
//! request: the size limit, the cleaner, the depth limit, serde, then the
//! schema's constraints. Every failure is invalid arguments whose reason
//! names the field, except a schema whose constraints do not compile.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::error::Category;

use super::lax::{read_lax, read_lax_fields};
use super::node::Node;
use super::nulls::drop_null_defaults;
use super::reasons::{not_json, serde_error, serde_invalid};
use super::report::serde_steps;
use super::{ArgumentLimits, JsonObject, Parameters, clean_json};
use crate::ToolError;

impl Parameters {
    /// Turn a raw argument string into `R`: check its size, clean it, check
    /// its depth, deserialize, check the constraints. Every failure is
    /// [`ToolError::InvalidArguments`] with a reason that names the field.
    ///
    /// A number or boolean sent as a string is read where the schema wants
    /// one and takes no string, as pydantic's lax mode reads it; never the
    /// other way.
    ///
    /// ```
    /// use toolcall_core::{ArgumentLimits, Parameters};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Forecast {
    ///     city: String,
    ///     days: Option<u8>,
    /// }
    ///
    /// let params = Parameters::of::<Forecast>();
    /// let read: Forecast = params.parse(r#"{"city":"2","days":" 2 "}"#, &ArgumentLimits::DEFAULT).unwrap();
    /// assert_eq!((read.city.as_str(), read.days), ("2", Some(2)));
    /// let err = params.parse::<Forecast>(r#"{"city":"Paris","days":"2.5"}"#, &ArgumentLimits::DEFAULT).err().unwrap();
    /// assert_eq!(
    ///     err.to_string(),
    ///     r#"invalid arguments: at `days`: expected an integer, not the string "2.5", which is not a whole number"#
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] when the text is over the size or depth limit, is not
    /// JSON, does not fit `R` or breaks the schema's constraints; [`ToolError::Failed`] only
    /// when the schema's constraints do not compile (a fault of the tool, not of the call).
    pub fn parse<R: DeserializeOwned>(
        &self,
        arguments: &str,
        limits: &ArgumentLimits,
    ) -> Result<R, ToolError> {
        let json = self.prepare(arguments, limits)?;
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
        // Only a failed read pays for looking for nulls that mean "not
        // given" and numbers sent as strings.
        let json = match self.repaired(&json)? {
            Some(cleaned) => match serde_json::from_str(&cleaned) {
                Ok(request) => return self.checked(request, &cleaned, limits),
                Err(_) => Cow::Owned(cleaned),
            },
            None => json,
        };
        let mut de = serde_json::Deserializer::from_str(&json);
        Err(match serde_path_to_error::deserialize::<_, R>(&mut de) {
            // serde stops at its first problem of a value: the schema
            // names the rest. Text that is not JSON has no value to read.
            Err(error) if error.inner().classify() == Category::Data => {
                let at = serde_steps(&error);
                self.with_the_rest(serde_error(error), at, &json)
            }
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
    /// use toolcall_core::{ArgumentLimits, Parameters};
    ///
    /// let schema = serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}});
    /// let params = Parameters::from_schema(schema.as_object().unwrap().clone());
    /// let args = params.parse_object("```json\n{\"q\":\"rust\"}\n```", &ArgumentLimits::DEFAULT).unwrap();
    /// assert_eq!(args["q"], "rust");
    /// let err = params.parse_object("[1]", &ArgumentLimits::DEFAULT).unwrap_err();
    /// let expected = "invalid arguments: the arguments must be a JSON object with the fields `q`, not an array (`[1]`)";
    /// assert_eq!(err.to_string(), expected);
    /// ```
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] when the text is over the size or depth limit, is not a
    /// JSON object or breaks the schema; [`ToolError::Failed`] only when the schema's
    /// constraints do not compile.
    pub fn parse_object(&self, arguments: &str, limits: &ArgumentLimits) -> Result<JsonObject, ToolError> {
        let json = self.prepare(arguments, limits)?;
        let mut object = match serde_json::from_str::<Value>(&json) {
            Ok(Value::Object(object)) => object,
            Ok(other) => return Err(self.not_an_object(&other)),
            Err(e) => return Err(not_json(&e)),
        };
        // No Rust type reads these arguments to refuse a number sent as a
        // string, and the remote server may: read it here, on every call.
        read_lax_fields(Node::root(&self.schema), &mut object)?;
        if self.validator.is_some() {
            self.check_constraints(&Value::Object(object.clone()))?;
        }
        Ok(object)
    }

    /// `json` without the nulls that mean "not given" and with the numbers
    /// and booleans sent as strings read, or `None` if it had neither (or
    /// is not JSON); an error for a string that stands for no number the
    /// schema wants. Read only after serde refused `json`.
    fn repaired(&self, json: &str) -> Result<Option<String>, ToolError> {
        let Ok(mut value) = serde_json::from_str::<Value>(json) else {
            return Ok(None);
        };
        let root = Node::root(&self.schema);
        let dropped = drop_null_defaults(root, &mut value);
        let read = read_lax(root, &mut value)?;
        Ok((dropped || read).then(|| value.to_string()))
    }
    /// The steps before any parser sees the text: its size, the cleaner,
    /// and its depth when the schema does not bound it within the limit.
    fn prepare<'a>(&self, arguments: &'a str, limits: &ArgumentLimits) -> Result<Cow<'a, str>, ToolError> {
        limits.check_size(arguments)?;
        let json = clean_json(arguments);
        if self.depth.is_none_or(|depth| depth > limits.max_depth) {
            limits.check_depth(&json)?;
        }
        Ok(json)
    }
}

#[cfg(test)]
mod tests;
