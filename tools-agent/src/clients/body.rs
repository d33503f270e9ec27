//! What the four bodies share: the names each API has in a refusal, the
//! small writers of settings fields, and the refusal of a context setting
//! an API has no place for. Each provider's own fields (sampling, stop
//! sequences, seed, reasoning, the prompt cache, its context management,
//! a typed answer) are written in its folder's `settings.rs`, each sent as
//! the provider documents it, and what a provider cannot take, or a
//! combination it refuses, returned as [`ModelError::Setting`] before
//! anything is sent. The tables of what goes where are on
//! [`ModelSettings`], [`ReasoningSettings`], [`CacheSettings`](crate::CacheSettings),
//! [`NativeContext`](crate::NativeContext) and [`AnswerMode`](crate::AnswerMode);
//! the extra JSON is merged by each body last ([`merge_extra`]). A setting
//! that is not set costs a test of its `Option` and nothing else.

use serde_json::{Map, Value, json};

use crate::model::ModelSettings;
use crate::{AnswerType, ModelError, ReasoningEffort, ReasoningSettings};

/// The names [`ModelError::Setting`] gives the four APIs.
pub(crate) const CHAT: &str = "openai (Chat Completions)";

/// OpenAI Responses.
pub(crate) const RESPONSES: &str = "openai (Responses)";

/// Anthropic Messages.
pub(crate) const ANTHROPIC: &str = "anthropic";

/// Gemini generateContent.
pub(crate) const GEMINI: &str = "gemini";

/// Put `value` at `name` if it is set.
pub(crate) fn put(body: &mut Map<String, Value>, name: &str, value: Option<Value>) {
    if let Some(value) = value {
        body.insert(name.to_owned(), value);
    }
}

/// The stop sequences as a JSON array, if any.
pub(crate) fn stops(settings: &ModelSettings) -> Option<Value> {
    (!settings.stop_sequences.is_empty()).then(|| json!(settings.stop_sequences))
}

/// An effort of `None` contradicts a budget wherever a budget is taken.
pub(crate) fn off_with_budget(api: &str, reasoning: &ReasoningSettings) -> Result<(), ModelError> {
    match (reasoning.effort, reasoning.budget_tokens) {
        (Some(ReasoningEffort::None), Some(budget)) => Err(refused(
            api,
            "reasoning.budget_tokens",
            format!("effort `none` turns reasoning off, and a budget of {budget} tokens turns it on"),
        )),
        _ => Ok(()),
    }
}

/// The setting's name in a refusal.
pub(crate) const SETTING: &str = "native_context";

/// Chat Completions and Gemini have no context management of their own:
/// the setting is refused (a [`ContextPolicy`](crate::ContextPolicy)
/// with other strategies beside [`Strategy::Native`](crate::Strategy::Native)
/// applies those instead, and never sets it for these clients).
pub(crate) fn unsupported(api: &str, settings: &ModelSettings) -> Result<(), ModelError> {
    if settings.native_context.is_none() {
        return Ok(());
    }
    let reason = match api {
        CHAT => "Chat Completions has no context management of its own (OpenAI Responses has compaction)",
        GEMINI => "Gemini has no context management of its own",
        _ => "the API has no context management of its own",
    };
    Err(refused(
        api,
        SETTING,
        format!(
            "{reason}; give the context policy a model-agnostic strategy after `Strategy::Native` \
             (`ClearToolResults`, `DropOldestTurns`, `Summarize`) to keep the context on this client"
        ),
    ))
}

/// OpenAI's formats carry the description, which the model reads.
pub(crate) fn describe(answer: &AnswerType, format: &mut Value) {
    if !answer.description().is_empty() {
        format["description"] = json!(answer.description());
    }
}

/// A setting `api` cannot take, or a combination of settings it refuses.
pub(crate) fn refused(api: &str, setting: &'static str, reason: impl Into<String>) -> ModelError {
    ModelError::Setting { provider: api.to_owned(), setting, reason: reason.into() }
}

/// Merge the settings' extra JSON into a request body, as
/// [`ModelSettings::with_extra`] says.
pub(crate) fn merge_extra(
    api: &str,
    body: &mut Map<String, Value>,
    extra: Option<&Value>,
) -> Result<(), ModelError> {
    let Some(extra) = extra else { return Ok(()) };
    let Value::Object(fields) = extra else {
        return Err(refused(api, "extra", format!("the extra fields must be a JSON object, not {extra}")));
    };
    for (name, value) in fields {
        patch_field(body, name, value);
    }
    Ok(())
}

/// Merge the fields of the object `fields` into a request body, as a JSON
/// merge patch (the extra's merge, for the SDK's own fields).
pub(crate) fn patch(body: &mut Map<String, Value>, fields: &Value) {
    for (name, value) in fields.as_object().into_iter().flatten() {
        patch_field(body, name, value);
    }
}

/// One field of a merge patch into `target`: null removes, an object
/// merges into an object (or replaces anything else), the rest replaces.
fn patch_field(target: &mut Map<String, Value>, name: &str, patch: &Value) {
    match patch {
        Value::Null => {
            target.remove(name);
        }
        Value::Object(fields) => {
            let slot = target.entry(name).or_insert_with(|| Value::Object(Map::new()));
            if !slot.is_object() {
                *slot = Value::Object(Map::new());
            }
            if let Value::Object(inner) = slot {
                for (name, value) in fields {
                    patch_field(inner, name, value);
                }
            }
        }
        other => {
            target.insert(name.to_owned(), other.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::super::{anthropic, gemini, openai};
    use super::merge_extra;
    use crate::{CacheRetention, CacheSettings, CacheTtl, ModelError, ModelSettings};

    fn marked(body: Value, cache: &CacheSettings) -> Result<Value, ModelError> {
        let Value::Object(mut body) = body else { unreachable!("an object") };
        anthropic::fields::cache(cache, &mut body).map(|()| Value::Object(body))
    }

    #[test]
    fn what_a_provider_cannot_take_is_refused() {
        let off = marked(json!({"system": "s", "messages": []}), &CacheSettings::off()).unwrap();
        assert_eq!(off, json!({"system": "s", "messages": []}));
        let refusals = [
            marked(json!({}), &CacheSettings::new().with_key("k")).unwrap_err(),
            marked(json!({}), &CacheSettings::off().with_ttl(CacheTtl::FiveMinutes)).unwrap_err(),
            openai::fields::cache(
                "openai (Chat Completions)",
                &CacheSettings::new().with_ttl(CacheTtl::OneHour),
                &mut Map::new(),
            )
            .unwrap_err(),
            gemini::fields::cache(&CacheSettings::new().with_retention(CacheRetention::InMemory))
                .unwrap_err(),
        ];
        let settings: Vec<&str> = refusals
            .iter()
            .map(|error| match error {
                ModelError::Setting { setting, .. } => *setting,
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(settings, ["cache.key", "cache.ttl", "cache.ttl", "cache.retention"]);
        assert_eq!(
            refusals[1].to_string(),
            "anthropic cannot take `cache.ttl`: a TTL (5m) was set for breakpoints that are off"
        );
    }

    #[test]
    fn the_extra_merges_objects_replaces_the_rest_and_null_removes() {
        let mut body = json!({"model": "m", "stream": true, "generationConfig": {"temperature": 0.5, "topK": 3},
            "include": ["a"]});
        let extra = json!({"stream": null, "generationConfig": {"topK": null, "seed": 7}, "include": ["b"],
            "new": {"deep": {"er": 1}}});
        let Value::Object(fields) = &mut body else { unreachable!() };
        merge_extra("p", fields, Some(&extra)).unwrap();
        assert_eq!(
            body,
            json!({"model": "m", "generationConfig": {"temperature": 0.5, "seed": 7}, "include": ["b"],
                "new": {"deep": {"er": 1}}})
        );
        let error = merge_extra("p", &mut Map::new(), Some(&json!([1]))).unwrap_err();
        assert_eq!(
            error.to_string(),
            "p cannot take `extra`: the extra fields must be a JSON object, not [1]"
        );
    }

    #[test]
    fn a_second_extra_merges_into_the_first_and_keeps_its_nulls() {
        let settings = ModelSettings::default()
            .with_extra(json!({"a": {"b": 1, "c": 2}, "d": 1}))
            .with_extra(json!({"a": {"c": null}, "d": [2]}));
        assert_eq!(settings.extra, Some(json!({"a": {"b": 1, "c": null}, "d": [2]})));
        let mut body = Map::new();
        body.insert("a".into(), json!({"c": 3, "e": 4}));
        merge_extra("p", &mut body, settings.extra.as_ref()).unwrap();
        assert_eq!(Value::Object(body), json!({"a": {"b": 1, "e": 4}, "d": [2]}));
    }
}
