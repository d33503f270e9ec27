//! The registry: names, collisions, order, lookup, removal, replacement,
//! the reserved `web_search`, and renaming.

use crate::common;

use std::sync::Arc;

use common::{FnTool, Weather, echo};
use toolcall_core::toolset::{NameError, Toolset, ToolsetError, WebSearch};
use toolcall_core::{Outcome, Renamed, Tool, ToolCall, ToolContext};

#[test]
fn keys_are_lower_cased_and_display_names_kept() {
    let mut tools = Toolset::new();
    tools.add(echo("Get_Weather")).unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["Get_Weather"]);
    assert_eq!(tools.get("get_weather").unwrap().spec().name(), "Get_Weather");
}

#[test]
fn lookup_ignores_case() {
    let tools = Toolset::builder().add(echo("search_docs")).build().unwrap();
    for name in ["search_docs", "SEARCH_DOCS", "Search_Docs"] {
        assert_eq!(tools.get(name).map(|tool| tool.spec().name()), Some("search_docs"), "{name}");
    }
    assert!(tools.get("search").is_none());
}

#[test]
fn a_case_collision_names_both_tools() {
    let mut tools = Toolset::new();
    tools.add(echo("Get_Weather")).unwrap();
    let err = tools.add(echo("GET_WEATHER")).unwrap_err();
    assert_eq!(err, ToolsetError::Duplicate { existing: "Get_Weather".into(), new: "GET_WEATHER".into() });
    let message = err.to_string();
    assert!(message.contains("`Get_Weather`") && message.contains("`GET_WEATHER`"), "{message}");
    // The first registration is untouched.
    assert_eq!(tools.len(), 1);
    assert_eq!(tools.get("get_weather").unwrap().spec().name(), "Get_Weather");
}

#[test]
fn invalid_names_are_refused() {
    let mut tools = Toolset::new();
    let err = tools.add(echo("get.weather")).unwrap_err();
    assert_eq!(
        err,
        ToolsetError::InvalidName(NameError::Character { name: "get.weather".into(), found: '.' })
    );
    assert!(err.to_string().contains("`get.weather`"), "{err}");
    let long = "x".repeat(65);
    assert!(matches!(
        tools.add(echo(&long)),
        Err(ToolsetError::InvalidName(NameError::Length { len: 65, .. }))
    ));
    assert!(matches!(tools.add(echo("")), Err(ToolsetError::InvalidName(NameError::Length { len: 0, .. }))));
    assert!(tools.add(echo(&"x".repeat(64))).is_ok());
    assert_eq!(tools.len(), 1);
}

#[test]
fn tools_keep_registration_order() {
    let mut tools = Toolset::new();
    for name in ["zeta", "alpha", "Mid"] {
        tools.add(echo(name)).unwrap();
    }
    assert_eq!(tools.names().collect::<Vec<_>>(), ["zeta", "alpha", "Mid"]);
    assert_eq!(tools.iter().map(|tool| tool.spec().name()).collect::<Vec<_>>(), ["zeta", "alpha", "Mid"]);
    assert_eq!(tools.len(), 3);
}

#[test]
fn remove_takes_the_tool_out_and_keeps_the_order() {
    let mut tools = Toolset::new();
    for name in ["a", "b", "c"] {
        tools.add(echo(name)).unwrap();
    }
    assert_eq!(tools.remove("B").unwrap().spec().name(), "b");
    assert!(tools.remove("b").is_none());
    assert_eq!(tools.names().collect::<Vec<_>>(), ["a", "c"]);
    // Lookup still finds the tool that moved down a slot.
    assert_eq!(tools.get("c").unwrap().spec().name(), "c");
    // And the name is free again.
    tools.add(echo("B")).unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["a", "c", "B"]);
}

#[tokio::test]
async fn replace_swaps_in_place_and_returns_the_old_tool() {
    let mut tools = Toolset::new();
    tools.add(echo("first")).unwrap();
    tools.add(FnTool::new("Lookup", |_, _| async { Ok("old".to_owned()) })).unwrap();
    tools.add(echo("last")).unwrap();
    let old = tools.replace(FnTool::new("LOOKUP", |_, _| async { Ok("new".to_owned()) })).unwrap();
    assert_eq!(old.unwrap().spec().name(), "Lookup");
    assert_eq!(tools.names().collect::<Vec<_>>(), ["first", "LOOKUP", "last"]);
    let result = tools.call(&ToolContext::new(), &ToolCall::new("1", "lookup", "{}")).await;
    assert_eq!(result.content, "new");
    // Replacing a name that is not there adds it.
    assert!(tools.replace(echo("extra")).unwrap().is_none());
    assert_eq!(tools.len(), 4);
    assert!(matches!(tools.replace(echo("bad name")), Err(ToolsetError::InvalidName(_))));
}

#[test]
fn an_arc_dyn_tool_is_registered_as_it_is() {
    let shared: Arc<dyn Tool> = Arc::new(echo("shared"));
    let mut tools = Toolset::builder().add(Weather).build().unwrap();
    tools.add(Arc::clone(&shared)).unwrap();
    assert!(Arc::ptr_eq(tools.get("shared").unwrap(), &shared));
    assert_eq!(tools.names().collect::<Vec<_>>(), ["get_weather", "shared"]);
}

#[test]
fn a_parameter_schema_must_be_an_object() {
    struct NotObject(toolcall_core::ToolSpec);
    impl Tool for NotObject {
        fn spec(&self) -> &toolcall_core::ToolSpec {
            &self.0
        }
        fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> toolcall_core::OutputFuture<'a> {
            Box::pin(async { Ok(toolcall_core::Output::text("")) })
        }
    }
    let schema = serde_json::json!({"type": "string"}).as_object().unwrap().clone();
    let spec =
        toolcall_core::ToolSpec::from_parameters("weird", "", toolcall_core::Parameters::from_schema(schema));
    let err = Toolset::new().add(NotObject(spec)).map(|_| ()).unwrap_err();
    assert_eq!(err, ToolsetError::NotAnObject { name: "weird".into() });
}

#[test]
fn web_search_is_reserved() {
    let mut tools = Toolset::new();
    for name in ["web_search", "Web_Search"] {
        let err = tools.add(echo(name)).map(|_| ()).unwrap_err();
        assert_eq!(err, ToolsetError::Reserved { name: name.into() });
        assert!(err.to_string().contains("add_web_search"), "{err}");
    }
    assert!(matches!(tools.replace(echo("WEB_SEARCH")), Err(ToolsetError::Reserved { .. })));
    assert!(tools.is_empty() && tools.web_search().is_none());
}

#[test]
fn add_web_search_records_the_options_without_a_function() {
    let mut tools = Toolset::new();
    tools
        .add_web_search(
            WebSearch::new()
                .with_max_uses(2)
                .with_allowed_domains(["docs.rs"])
                .with_blocked_domains(["x.com"]),
        )
        .unwrap();
    let search = tools.web_search().unwrap();
    assert_eq!(search.max_uses, Some(2));
    assert_eq!(search.allowed_domains, ["docs.rs"]);
    assert_eq!(search.blocked_domains, ["x.com"]);
    assert!(search.fallback.is_none());
    // Native search alone registers no function.
    assert!(tools.is_empty() && tools.get("web_search").is_none());
}

#[tokio::test]
async fn the_fallback_is_callable_as_web_search() {
    let mut tools = Toolset::new();
    tools.add(echo("other")).unwrap();
    let fallback = FnTool::new("tavily_search", |_, input| async move { Ok(format!("results for {input}")) });
    tools.add_web_search(WebSearch::new().with_fallback(fallback)).unwrap();
    assert_eq!(tools.names().collect::<Vec<_>>(), ["other", "web_search"]);
    let result = tools.call(&ToolContext::new(), &ToolCall::new("1", "Web_Search", "rust")).await;
    assert_eq!((result.outcome, result.content.as_str()), (Outcome::Success, "results for rust"));
    assert!(format!("{:?}", tools.web_search().unwrap()).contains("tavily_search"));

    // A second entry replaces the first, fallback included.
    tools.add_web_search(WebSearch::new().with_max_uses(1)).unwrap();
    assert!(tools.get("web_search").is_none());
    assert_eq!(tools.web_search().unwrap().max_uses, Some(1));

    // Removing `web_search` drops the native entry too.
    tools.add_web_search(WebSearch::new().with_fallback(echo("web_search"))).unwrap();
    assert!(tools.remove("web_search").is_some());
    assert!(tools.web_search().is_none());

    // A native-only entry has no function to return, and goes all the same.
    tools.add_web_search(WebSearch::new()).unwrap();
    assert!(tools.remove("WEB_SEARCH").is_none());
    assert!(tools.web_search().is_none());
}

#[tokio::test]
async fn renamed_changes_name_and_description_only() {
    let renamed = Renamed::new(Weather).with_name("weather_now").with_description("The weather, now.");
    assert_eq!((renamed.spec().name(), renamed.spec().description()), ("weather_now", "The weather, now."));
    assert_eq!(renamed.spec().parameters(), Weather.spec().parameters());
    let tools = Toolset::builder().add(renamed).build().unwrap();
    assert!(tools.get("get_weather").is_none());
    let result =
        tools.call(&ToolContext::new(), &ToolCall::new("1", "weather_now", r#"{"city":"Oslo"}"#)).await;
    assert_eq!(result.content, "21°C in Oslo for 1 days");
    // Unrenamed, it is the inner tool.
    let plain = Renamed::new(Weather);
    assert_eq!(
        (plain.spec().name(), plain.spec().description()),
        (Weather.spec().name(), Weather.spec().description())
    );
    assert_eq!(plain.into_inner().spec().name(), "get_weather");
    // A new name still has to follow the rules.
    assert!(Toolset::new().add(Renamed::new(Weather).with_name("get weather")).is_err());
}

#[test]
fn lookup_and_removal_hold_in_a_large_toolset() {
    // Past a handful of tools the lookup goes through the index.
    let mut tools = Toolset::new();
    for i in 0..20 {
        tools.add(echo(&format!("Tool_{i}"))).unwrap();
    }
    assert_eq!(tools.get("TOOL_13").unwrap().spec().name(), "Tool_13");
    assert!(tools.add(echo("tool_13")).is_err());
    tools.remove("tool_3").unwrap();
    assert_eq!(tools.get("tool_19").unwrap().spec().name(), "Tool_19");
    assert!(tools.get("tool_3").is_none());
    assert_eq!(tools.len(), 19);
}
