//! Every dialect's definitions over the corpus, pinned; and what each
//! dialect refuses.

use crate::corpus;

use serde_json::{Value, json};
use toolcall_provider::Dialect;

/// Each corpus tool's definition in `dialect`, or the error it is refused with.
fn dialect_output(dialect: Dialect) -> String {
    let mut out = serde_json::Map::new();
    for tool in corpus::tools() {
        let value = match dialect.function(&tool) {
            Ok(value) => value,
            Err(error) => json!({"refused": error.to_string()}),
        };
        out.insert(tool.spec.name().to_owned(), value);
    }
    serde_json::to_string_pretty(&Value::Object(out)).unwrap()
}

#[test]
fn openai_chat() {
    insta::assert_snapshot!(dialect_output(Dialect::OpenAiChat));
}

#[test]
fn openai_chat_strict() {
    insta::assert_snapshot!(dialect_output(Dialect::OpenAiChatStrict));
}

#[test]
fn openai_responses() {
    insta::assert_snapshot!(dialect_output(Dialect::OpenAiResponses));
}

#[test]
fn openai_responses_strict() {
    insta::assert_snapshot!(dialect_output(Dialect::OpenAiResponsesStrict));
}

#[test]
fn anthropic() {
    insta::assert_snapshot!(dialect_output(Dialect::Anthropic));
}

#[test]
fn anthropic_strict() {
    insta::assert_snapshot!(dialect_output(Dialect::AnthropicStrict));
}

#[test]
fn gemini() {
    insta::assert_snapshot!(dialect_output(Dialect::Gemini));
}

#[test]
fn mcp() {
    insta::assert_snapshot!(dialect_output(Dialect::Mcp));
}

mod behaviour {
    use super::corpus::{self, SchemaTool, tool};
    use serde_json::json;
    use toolcall_core::toolset::{Toolset, WebSearch};
    use toolcall_core::{ArgumentLimits, Parameters};
    use toolcall_provider::{Dialect, limits};

    fn error(dialect: Dialect, tool: &SchemaTool) -> toolcall_provider::DialectError {
        dialect.function(tool).unwrap_err()
    }

    #[test]
    fn strict_optional_fields_are_nullable_and_serde_takes_null_or_absence() {
        let flat = tool::<corpus::Flat>("flat", "");
        let sent = Dialect::OpenAiChatStrict.function(&flat).unwrap();
        let strict = sent["function"]["parameters"].as_object().unwrap().clone();
        assert_eq!(strict["required"], json!(["city", "days", "metric"]));
        assert_eq!(strict["properties"]["days"]["type"], json!(["integer", "null"]));
        let params = Parameters::of::<corpus::Flat>();
        for raw in [r#"{"city":"Oslo","days":null,"metric":true}"#, r#"{"city":"Oslo","metric":true}"#] {
            let parsed: corpus::Flat = params.parse(raw, &ArgumentLimits::default()).unwrap();
            assert!(parsed.days.is_none(), "{raw}");
        }
        // The strict schema itself accepts the null the model will send.
        let validator = jsonschema::validator_for(&serde_json::Value::Object(strict)).unwrap();
        assert!(validator.is_valid(&json!({"city": "Oslo", "days": null, "metric": true})));
        assert!(!validator.is_valid(&json!({"city": "Oslo", "metric": true, "extra": 1})));
    }

    #[test]
    fn serde_default_fields_become_required_and_nullable_and_null_reads_as_the_default() {
        let defaults = tool::<corpus::Defaults>("defaults", "");
        // The definition as it is sent to OpenAI.
        let sent = Dialect::OpenAiChatStrict.function(&defaults).unwrap();
        let parameters = &sent["function"]["parameters"];
        assert_eq!(sent["function"]["strict"], true);
        assert_eq!(parameters["required"], json!(["offset", "limit", "verbose"]));
        assert_eq!(
            parameters["properties"]["offset"],
            json!({"type": ["integer", "null"], "minimum": 0, "description": "default: 0"})
        );
        // What strict mode lets the model send for "not given" is `null`.
        let call = json!({"offset": null, "limit": null, "verbose": null});
        let validator = jsonschema::validator_for(parameters).unwrap();
        assert!(validator.is_valid(&call));
        assert!(!validator.is_valid(&json!({"offset": null, "limit": null})), "every field is required");
        let params = Parameters::of::<corpus::Defaults>();
        let parsed: corpus::Defaults = params.parse(&call.to_string(), &ArgumentLimits::default()).unwrap();
        assert_eq!((parsed.offset, parsed.limit, parsed.verbose), (0, 10, None));
        let parsed: corpus::Defaults =
            params.parse(r#"{"offset":3,"limit":5,"verbose":null}"#, &ArgumentLimits::default()).unwrap();
        assert_eq!((parsed.offset, parsed.limit, parsed.verbose), (3, 5, None));
    }

    #[derive(serde::Deserialize, schemars::JsonSchema, Default, Debug, PartialEq)]
    enum Units {
        #[default]
        Metric,
        Imperial,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema, Default, Debug, PartialEq)]
    struct Window {
        #[serde(default)]
        days: u8,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Forecast {
        city: String,
        #[serde(default)]
        units: Units,
        #[serde(default)]
        window: Window,
    }

    #[test]
    fn defaulted_enums_and_structs_take_null_in_strict_mode_too() {
        let forecast = tool::<Forecast>("forecast", "");
        let sent = Dialect::OpenAiResponsesStrict.function(&forecast).unwrap();
        let strict = sent["parameters"].as_object().unwrap().clone();
        let validator = jsonschema::validator_for(&serde_json::Value::Object(strict.clone())).unwrap();
        let call = json!({"city": "Oslo", "units": null, "window": {"days": null}});
        assert!(validator.is_valid(&call), "{strict:#?}");
        assert!(validator.is_valid(&json!({"city": "Oslo", "units": "Imperial", "window": null})));
        assert!(
            !validator.is_valid(&json!({"city": null, "units": null, "window": null})),
            "city is required"
        );
        let parsed: Forecast =
            Parameters::of::<Forecast>().parse(&call.to_string(), &ArgumentLimits::default()).unwrap();
        assert_eq!(
            (parsed.city.as_str(), parsed.units, parsed.window),
            ("Oslo", Units::Metric, Window { days: 0 })
        );
    }

    #[test]
    fn refusals_name_the_tool_the_dialect_and_the_keyword() {
        let recursive = tool::<corpus::Recursive>("walk_tree", "");
        let err = error(Dialect::Gemini, &recursive);
        assert_eq!(
            (err.tool.as_deref(), err.dialect, err.keyword.as_str()),
            (Some("walk_tree"), Dialect::Gemini, "$ref")
        );
        assert!(err.to_string().contains("tool `walk_tree` cannot be sent as gemini"), "{err}");
        assert!(Dialect::OpenAiChatStrict.function(&recursive).is_ok(), "OpenAI strict allows recursion");

        let maps = tool::<corpus::Maps>("maps", "");
        let err = error(Dialect::OpenAiChatStrict, &maps);
        assert_eq!(err.keyword, "additionalProperties");
        assert!(err.to_string().contains("`properties.headers`"), "{err}");
        assert!(Dialect::OpenAiChat.function(&maps).is_ok(), "outside strict mode a map is fine");

        let any = tool::<corpus::AnyValue>("any", "");
        assert_eq!(error(Dialect::OpenAiResponsesStrict, &any).keyword, "true");

        let digit = SchemaTool::new("3d_render", "", corpus::tools()[0].schema.clone());
        let err = error(Dialect::Gemini, &digit);
        assert_eq!(err.keyword, "name");
        assert!(Dialect::OpenAiChat.function(&digit).is_ok());
    }

    #[test]
    fn refusals_happen_when_the_toolset_is_exported() {
        let set = corpus::toolset();
        let err = Dialect::Gemini.definitions(&set).unwrap_err();
        assert_eq!(err.tool.as_deref(), Some("recursive"));
        let err = toolcall_provider::export::render(&set, &[Dialect::OpenAiChatStrict]).unwrap_err();
        assert_eq!(err.tool.as_deref(), Some("maps"));
        assert!(toolcall_provider::export::render(&set, &[Dialect::OpenAiChat, Dialect::Mcp]).is_ok());
    }

    fn many(count: usize) -> Toolset {
        let mut set = Toolset::new();
        for index in 0..count {
            let name: &'static str = Box::leak(format!("tool_{index}").into_boxed_str());
            set.add(tool::<corpus::Flat>(name, "")).unwrap();
        }
        set
    }

    #[test]
    fn tool_counts_are_checked_per_dialect() {
        assert!(Dialect::OpenAiChat.tools(&many(128)).is_ok());
        let err = Dialect::OpenAiChat.tools(&many(129)).unwrap_err();
        assert_eq!((err.tool.as_deref(), err.keyword.as_str()), (None, "max_tools = 128"));
        assert!(err.to_string().starts_with("the toolset cannot be sent as openai: 129 tools"), "{err}");
        assert!(Dialect::Mcp.tools(&many(129)).is_ok());
        assert!(Dialect::Anthropic.tools(&many(21)).is_ok());
        assert_eq!(Dialect::AnthropicStrict.tools(&many(21)).unwrap_err().keyword, "max_tools = 20");
        // Each Flat has one optional (and union-typed) parameter: 25 > 24, within 20 tools is impossible,
        // so check the optional-parameter limit through the report.
        let report = limits::report(Dialect::AnthropicStrict, &many(20));
        assert_eq!(report.size.optional_params, 20);
        assert_eq!(report.size.union_params, 20);
        let report = limits::report(Dialect::AnthropicStrict, &many(25));
        let keywords: Vec<&str> = report.problems.iter().map(|p| p.keyword.as_str()).collect();
        assert_eq!(keywords, ["max_tools = 20", "max_optional_params = 24", "max_union_params = 16"]);
    }

    #[test]
    #[allow(dead_code)]
    fn strict_schema_limits_are_checked() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L1 {
            a: L2,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L2 {
            a: L3,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L3 {
            a: L4,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L4 {
            a: L5,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L5 {
            a: L6,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L6 {
            a: L7,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L7 {
            a: L8,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L8 {
            a: L9,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L9 {
            a: L10,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L10 {
            a: L11,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct L11 {
            a: String,
        }
        // schemars puts each level in `$defs`, so nesting is counted on the inlined Gemini form too.
        let set = Toolset::builder().add(tool::<L1>("deep", "")).build().unwrap();
        assert!(Dialect::OpenAiChatStrict.tools(&set).is_ok(), "each $defs entry is one level");
        let sent = Dialect::Gemini.function(&tool::<L1>("deep", "")).unwrap();
        let inlined = sent["parameters"].as_object().unwrap().clone();
        let deep = SchemaTool::new("deep", "", inlined);
        let set = Toolset::builder().add(deep).build().unwrap();
        let err = Dialect::OpenAiChatStrict.tools(&set).unwrap_err();
        assert_eq!((err.tool.as_deref(), err.keyword.as_str()), (Some("deep"), "max_nesting = 10"));
    }

    fn with_search(search: WebSearch) -> Toolset {
        let mut set = Toolset::new();
        set.add(tool::<corpus::Flat>("get_weather", "Weather.")).unwrap();
        set.add_web_search(search).unwrap();
        set.add(tool::<corpus::Empty>("now", "The time.")).unwrap();
        set
    }

    fn fallback() -> SchemaTool {
        tool::<corpus::Renamed>("my_search", "Search the web.")
    }

    #[test]
    fn web_search_is_native_where_the_provider_has_it() {
        let set = with_search(
            WebSearch::new().with_max_uses(3).with_allowed_domains(["docs.rs"]).with_fallback(fallback()),
        );
        let responses = Dialect::OpenAiResponses.tools(&set).unwrap();
        assert_eq!(responses[1], json!({"type": "web_search", "filters": {"allowed_domains": ["docs.rs"]}}));
        let anthropic = Dialect::Anthropic.tools(&set).unwrap();
        assert_eq!(
            anthropic[1],
            json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 3, "allowed_domains": ["docs.rs"]})
        );
        assert_eq!(anthropic.as_array().unwrap().len(), 3);
        let chat = Dialect::OpenAiChat.tools(&set).unwrap();
        assert_eq!(chat[1]["function"]["name"], "web_search");
        assert_eq!(chat[1]["function"]["description"], "Search the web.");
        let mcp = Dialect::Mcp.tools(&set).unwrap();
        let names: Vec<&str> = mcp.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["get_weather", "web_search", "now"]);
    }

    #[test]
    fn gemini_search_sits_beside_the_function_declarations() {
        let set = with_search(WebSearch::new().with_fallback(fallback()));
        let tools = Dialect::Gemini.tools(&set).unwrap();
        let declarations = tools[0]["functionDeclarations"].as_array().unwrap();
        let names: Vec<&str> = declarations.iter().map(|d| d["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["get_weather", "now"]);
        assert!(declarations[1].get("parameters").is_none(), "no parameters for a tool without arguments");
        assert_eq!(tools[1], json!({"google_search": {}}));
    }

    /// Issue 45, point 9: the request's tools as a list (`tool_list`, new),
    /// and `tools` as the same list in one JSON value, in every dialect.
    #[test]
    fn tool_list_gives_the_requests_tools_as_a_list() {
        let set = with_search(WebSearch::new().with_fallback(fallback()));
        for dialect in Dialect::ALL {
            let list: Vec<serde_json::Value> = dialect.tool_list(&set).unwrap();
            assert_eq!(dialect.tools(&set).unwrap(), serde_json::Value::Array(list.clone()), "{dialect:?}");
            let definitions: Vec<serde_json::Value> =
                dialect.definitions(&set).unwrap().into_iter().map(|definition| definition.value).collect();
            if dialect == Dialect::Gemini {
                // The declarations share one tool object, beside the search.
                assert_eq!(list.len(), 2);
                assert_eq!(list[0]["functionDeclarations"].as_array().unwrap().len(), 2);
                assert_eq!(list[1], json!({"google_search": {}}));
            } else {
                assert_eq!(list, definitions, "{dialect:?}: one element per definition");
            }
        }
        for dialect in Dialect::ALL {
            assert!(dialect.tool_list(&Toolset::new()).unwrap().is_empty(), "{dialect:?}");
        }
        let err = Dialect::AnthropicStrict.tool_list(&many(21)).unwrap_err();
        assert_eq!(err.keyword, "max_tools = 20");
    }

    #[test]
    fn without_a_fallback_search_is_native_only() {
        let set = with_search(WebSearch::new());
        assert_eq!(Dialect::OpenAiChat.tools(&set).unwrap().as_array().unwrap().len(), 2);
        let anthropic = Dialect::AnthropicStrict.tools(&set).unwrap();
        assert_eq!(anthropic[2], json!({"type": "web_search_20250305", "name": "web_search"}));
    }

    #[test]
    fn search_options_a_provider_lacks_are_refused() {
        let blocked = with_search(WebSearch::new().with_blocked_domains(["example.com"]));
        assert_eq!(Dialect::OpenAiResponses.tools(&blocked).unwrap_err().keyword, "blocked_domains");
        // The error names the dialect asked for, strict or not.
        let err = Dialect::OpenAiResponsesStrict.tools(&blocked).unwrap_err();
        assert_eq!((err.dialect, err.keyword.as_str()), (Dialect::OpenAiResponsesStrict, "blocked_domains"));
        assert_eq!(Dialect::Gemini.tools(&blocked).unwrap_err().keyword, "blocked_domains");
        assert!(Dialect::Anthropic.tools(&blocked).is_ok());
        assert!(Dialect::OpenAiChat.tools(&blocked).is_ok(), "no native search: nothing to refuse");
        let both =
            with_search(WebSearch::new().with_allowed_domains(["a.org"]).with_blocked_domains(["b.org"]));
        let err = Dialect::Anthropic.tools(&both).unwrap_err();
        assert_eq!((err.tool.as_deref(), err.keyword.as_str()), (Some("web_search"), "allowed_domains"));
        assert_eq!(Dialect::AnthropicStrict.tools(&both).unwrap_err().dialect, Dialect::AnthropicStrict);
    }

    #[test]
    fn the_limits_report_covers_every_dialect() {
        let reports = limits::check(&corpus::toolset());
        let fits: Vec<(&str, bool)> = reports.iter().map(|r| (r.dialect.name(), r.fits())).collect();
        assert_eq!(
            fits,
            [
                ("openai", true),
                ("openai-strict", false),
                ("openai-responses", true),
                ("openai-responses-strict", false),
                ("anthropic", true),
                ("anthropic-strict", false),
                ("gemini", false),
                ("mcp", true),
            ]
        );
        let text = reports[6].to_string();
        assert!(text.starts_with("gemini: 19/128 tools, longest name 13/64"), "{text}");
        assert!(text.contains("tool `recursive` cannot be sent as gemini"), "{text}");
        assert_eq!(reports[0].size.tools, 22);
    }

    #[test]
    fn dialect_names_round_trip() {
        for dialect in Dialect::ALL {
            assert_eq!(dialect.name().parse::<Dialect>(), Ok(dialect));
        }
        let err = "gpt".parse::<Dialect>().unwrap_err();
        assert_eq!(err.name, "gpt");
        assert_eq!(
            err.to_string(),
            "unknown dialect `gpt`; expected one of openai, openai-strict, openai-responses, \
             openai-responses-strict, anthropic, anthropic-strict, gemini, mcp"
        );
    }
}

/// What every transformed schema must hold, checked on every node of the
/// corpus: the rules that, broken, give a 400.
mod invariants {
    use super::corpus;
    use serde_json::Value;
    use toolcall_provider::Dialect;

    fn nodes<'a>(value: &'a Value, out: &mut Vec<&'a serde_json::Map<String, Value>>) {
        let Some(object) = value.as_object() else { return };
        out.push(object);
        for (key, child) in object {
            match key.as_str() {
                "properties" | "$defs" => {
                    child.as_object().into_iter().flatten().for_each(|(_, v)| nodes(v, out))
                }
                "anyOf" => child.as_array().into_iter().flatten().for_each(|v| nodes(v, out)),
                "items" => nodes(child, out),
                _ => {}
            }
        }
    }

    fn schemas(dialect: Dialect, pick: fn(&Value) -> Option<&Value>) -> Vec<Value> {
        corpus::tools()
            .iter()
            .filter_map(|tool| dialect.function(tool).ok())
            .filter_map(|d| pick(&d).cloned())
            .collect()
    }

    #[test]
    fn openai_strict_objects_are_closed_and_fully_required() {
        let allowed = [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
            "const",
            "anyOf",
            "$ref",
            "$defs",
            "description",
            "title",
            "pattern",
            "format",
            "multipleOf",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minItems",
            "maxItems",
        ];
        let all = schemas(Dialect::OpenAiChatStrict, |d| d.get("function").and_then(|f| f.get("parameters")));
        assert!(all.len() >= 18, "{}", all.len());
        for schema in &all {
            let mut found = Vec::new();
            nodes(schema, &mut found);
            for node in found {
                for key in node.keys() {
                    assert!(allowed.contains(&key.as_str()), "`{key}` in {node:?}");
                }
                if let Some(properties) = node.get("properties").and_then(Value::as_object) {
                    assert_eq!(node["additionalProperties"], false, "{node:?}");
                    let required: Vec<&str> =
                        node["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
                    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
                    assert_eq!(required, names);
                }
                if node.contains_key("$ref") {
                    assert_eq!(node.len(), 1, "a $ref stands alone: {node:?}");
                }
            }
        }
    }

    #[test]
    fn gemini_schemas_use_only_the_openapi_subset() {
        let allowed = [
            "type",
            "format",
            "description",
            "nullable",
            "enum",
            "items",
            "properties",
            "required",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
            "minLength",
            "maxLength",
            "pattern",
            "minimum",
            "maximum",
            "anyOf",
            "propertyOrdering",
        ];
        let all = schemas(Dialect::Gemini, |d| d.get("parameters"));
        assert!(all.len() >= 17, "{}", all.len());
        for schema in &all {
            let mut found = Vec::new();
            nodes(schema, &mut found);
            for node in found {
                for key in node.keys() {
                    assert!(allowed.contains(&key.as_str()), "`{key}` in {node:?}");
                }
                assert!(node.get("type").is_none_or(Value::is_string), "one type: {node:?}");
                if node.contains_key("anyOf") {
                    assert_eq!(node.len(), 1, "anyOf alone: {node:?}");
                }
                if let Some(format) = node.get("format") {
                    assert!(format == "enum" || format == "date-time", "{node:?}");
                }
                if let Some(values) = node.get("enum") {
                    assert!(values.as_array().unwrap().iter().all(Value::is_string), "{node:?}");
                }
                if let Some(properties) = node.get("properties") {
                    assert!(!properties.as_object().unwrap().is_empty(), "non-empty properties: {node:?}");
                }
            }
        }
    }

    #[test]
    fn anthropic_and_mcp_roots_are_objects() {
        for tool in corpus::tools() {
            let anthropic = Dialect::Anthropic.function(&tool).unwrap();
            assert_eq!(anthropic["input_schema"]["type"], "object");
            let mcp = Dialect::Mcp.function(&tool).unwrap();
            assert_eq!(mcp["inputSchema"]["type"], "object");
            assert!(mcp["inputSchema"]["properties"].is_object());
        }
    }
}
