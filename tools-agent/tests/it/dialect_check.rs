//! A toolset the model's dialect cannot express is refused when the agent
//! is built, naming the tool and the keyword, before any request.

use toolcall_agent::testing::ScriptedModel;
use toolcall_agent::{
    Agent, AnswerMode, AnswerType, ApiKey, FallbackModel, Gemini, OpenAiChat, OpenAiResponses,
};
use toolcall_core::toolset::{ToolSearch, Toolset};
use toolcall_core::{ToolContext, ToolError};
use toolcall_macros::tool;
use toolcall_provider::Dialect;

/// Keeps any JSON value.
#[tool(args, crate = "toolcall_core")]
async fn store(_ctx: &ToolContext, value: serde_json::Value) -> Result<String, ToolError> {
    Ok(value.to_string())
}

/// Current temperature for a city.
#[tool(args, crate = "toolcall_core")]
async fn get_weather(_ctx: &ToolContext, city: String) -> Result<String, ToolError> {
    Ok(format!("12°C in {city}"))
}

fn tools() -> Toolset {
    Toolset::builder().add(Store).add(GetWeather).build().unwrap()
}

fn chat() -> OpenAiChat {
    OpenAiChat::from_values("gpt-4.1", Some(ApiKey::new("sk-test")), None)
}

#[test]
fn a_schema_strict_mode_cannot_express_is_refused_when_the_agent_is_built() {
    let refused = Agent::new(chat().with_strict(true), tools()).unwrap_err();
    assert_eq!(refused.tool.as_deref(), Some("store"));
    assert_eq!(refused.dialect, Dialect::OpenAiChatStrict);
    assert!(!refused.keyword.is_empty(), "{refused}");
    assert!(refused.to_string().starts_with("tool `store` cannot be sent as openai-strict"), "{refused}");
    // Outside strict mode the canonical schema goes as it is.
    assert!(Agent::new(chat(), tools()).is_ok());
    // A model without a dialect is not checked.
    assert!(Agent::new(ScriptedModel::new(), tools()).is_ok());
}

#[test]
fn a_deferred_tool_is_checked_too_where_the_local_search_may_load_it() {
    let searched = tools().with_tool_search(ToolSearch::new().with_loaded(["get_weather"]));
    let model = OpenAiResponses::from_values("gpt-4.1", Some(ApiKey::new("sk-test")), None).with_strict(true);
    let refused = Agent::new(model, searched).unwrap_err();
    assert_eq!((refused.tool.as_deref(), refused.dialect), (Some("store"), Dialect::OpenAiResponsesStrict));
}

/// A fallback's tools must be valid for every model it may ask: a schema
/// the second model's dialect cannot express is refused at build time,
/// naming that dialect, as it is for the model alone.
#[test]
fn a_fallbacks_toolset_is_checked_for_every_model() {
    let refused = Agent::new(FallbackModel::new(chat()).or(chat().with_strict(true)), tools()).unwrap_err();
    assert_eq!((refused.tool.as_deref(), refused.dialect), (Some("store"), Dialect::OpenAiChatStrict));
    let gemini = Gemini::from_values("gemini-2.5-flash", Some(ApiKey::new("AIza-test")), None);
    let both = FallbackModel::new(chat()).or(gemini);
    assert_eq!(toolcall_agent::Model::dialects(&both), [Dialect::OpenAiChat, Dialect::Gemini]);
    let refused = Agent::new(both.clone(), tools()).unwrap_err();
    assert_eq!((refused.tool.as_deref(), refused.dialect), (Some("store"), Dialect::Gemini));
    assert!(Agent::new(both, Toolset::builder().add(GetWeather).build().unwrap()).is_ok());
    // A typed answer's native schema is checked for each too.
    #[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
    struct Anything {
        value: serde_json::Value,
    }
    let strict = FallbackModel::new(chat()).or(chat().with_strict(true));
    let answer = AnswerType::of::<Anything>().with_mode(AnswerMode::Native);
    let refused = Agent::new(strict, Toolset::new()).unwrap().with_answer_type(answer).unwrap_err();
    assert_eq!(refused.dialect, Dialect::OpenAiChatStrict, "{refused}");
}
