//! `Dialect::tool_choice`: each choice in each provider's documented shape
//! (the pages are cited in `src/choice.rs`), the parallel setting, and the
//! errors, which name the dialect.

use serde_json::{Value, json};
use toolcall_core::toolset::WebSearch;
use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec, Toolset};
use toolcall_provider::{Dialect, ToolChoice, ToolChoiceError};

/// A tool that only has a name: all a choice reads.
struct Named(ToolSpec);

impl Tool for Named {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> {
        Box::pin(async { Ok(Output::text("")) })
    }
}

fn named(name: &'static str) -> Named {
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    let parameters = Parameters::from_schema(schema.as_object().cloned().unwrap_or_default());
    Named(ToolSpec::from_parameters(name, "A tool.", parameters))
}

/// `get_weather` and `get_time`.
fn tools() -> Toolset {
    Toolset::builder().add(named("get_weather")).add(named("get_time")).build().unwrap()
}

/// The same, and the native web search (without a fallback function).
fn tools_with_search() -> Toolset {
    Toolset::builder()
        .add(named("get_weather"))
        .add(named("get_time"))
        .add_web_search(WebSearch::new())
        .build()
        .unwrap()
}

/// The fields as one JSON object.
fn fields(dialect: Dialect, tools: &Toolset, choice: ToolChoice, parallel: Option<bool>) -> Value {
    match dialect.tool_choice(tools, &choice, parallel) {
        Ok(fields) => Value::Object(fields),
        Err(error) => panic!("{choice} in {dialect}: {error}"),
    }
}

fn refused(dialect: Dialect, tools: &Toolset, choice: ToolChoice, parallel: Option<bool>) -> ToolChoiceError {
    let error = match dialect.tool_choice(tools, &choice, parallel) {
        Ok(fields) => panic!("{choice} in {dialect} gave {fields:?}"),
        Err(error) => error,
    };
    assert_eq!(error.dialect, dialect);
    let message = error.to_string();
    assert!(message.contains(&format!("cannot be sent as {dialect}: ")), "{message}");
    error
}

#[test]
fn openai_chat() {
    let tools = tools();
    for dialect in [Dialect::OpenAiChat, Dialect::OpenAiChatStrict] {
        let choice = |choice, parallel| fields(dialect, &tools, choice, parallel);
        assert_eq!(choice(ToolChoice::Auto, None), json!({"tool_choice": "auto"}));
        assert_eq!(choice(ToolChoice::None, None), json!({"tool_choice": "none"}));
        assert_eq!(choice(ToolChoice::Required, None), json!({"tool_choice": "required"}));
        assert_eq!(
            choice(ToolChoice::tool("get_weather"), None),
            json!({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}})
        );
        assert_eq!(
            choice(ToolChoice::allowed(["get_weather", "get_time"]), Some(false)),
            json!({
                "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [
                    {"type": "function", "function": {"name": "get_weather"}},
                    {"type": "function", "function": {"name": "get_time"}}
                ]}},
                "parallel_tool_calls": false
            })
        );
        assert_eq!(
            choice(ToolChoice::allowed_required(["get_time"]), Some(true)),
            json!({
                "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
                    {"type": "function", "function": {"name": "get_time"}}
                ]}},
                "parallel_tool_calls": true
            })
        );
        assert_eq!(
            choice(ToolChoice::None, Some(false)),
            json!({"tool_choice": "none", "parallel_tool_calls": false})
        );
    }
    // Strict mode holds every call to its schema: validated is auto there,
    // and cannot be said without it.
    assert_eq!(
        fields(Dialect::OpenAiChatStrict, &tools, ToolChoice::Validated, None),
        json!({"tool_choice": "auto"})
    );
    let error = refused(Dialect::OpenAiChat, &tools, ToolChoice::Validated, None);
    assert!(error.problem.contains("openai-strict"), "{error}");
}

#[test]
fn openai_responses() {
    let tools = tools();
    for dialect in [Dialect::OpenAiResponses, Dialect::OpenAiResponsesStrict] {
        let choice = |choice, parallel| fields(dialect, &tools, choice, parallel);
        assert_eq!(choice(ToolChoice::Auto, None), json!({"tool_choice": "auto"}));
        assert_eq!(choice(ToolChoice::None, None), json!({"tool_choice": "none"}));
        assert_eq!(
            choice(ToolChoice::Required, Some(true)),
            json!({"tool_choice": "required", "parallel_tool_calls": true})
        );
        assert_eq!(
            choice(ToolChoice::tool("get_weather"), Some(false)),
            json!({"tool_choice": {"type": "function", "name": "get_weather"}, "parallel_tool_calls": false})
        );
        assert_eq!(
            choice(ToolChoice::allowed(["get_weather"]), Some(false)),
            json!({
                "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_weather"}]},
                "parallel_tool_calls": false
            })
        );
        assert_eq!(
            choice(ToolChoice::allowed_required(["get_weather", "get_time"]), None),
            json!({"tool_choice": {"type": "allowed_tools", "mode": "required", "tools": [
                {"type": "function", "name": "get_weather"}, {"type": "function", "name": "get_time"}
            ]}})
        );
    }
    assert_eq!(
        fields(Dialect::OpenAiResponsesStrict, &tools, ToolChoice::Validated, None),
        json!({"tool_choice": "auto"})
    );
    refused(Dialect::OpenAiResponses, &tools, ToolChoice::Validated, None);

    // The native web search is a hosted tool, listed by its type; forced,
    // it is the one tool of a required set.
    let tools = tools_with_search();
    assert_eq!(
        fields(Dialect::OpenAiResponses, &tools, ToolChoice::allowed(["web_search", "get_time"]), None),
        json!({"tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [
            {"type": "web_search"}, {"type": "function", "name": "get_time"}
        ]}})
    );
    assert_eq!(
        fields(Dialect::OpenAiResponses, &tools, ToolChoice::tool("web_search"), None),
        json!({"tool_choice": {"type": "allowed_tools", "mode": "required", "tools": [{"type": "web_search"}]}})
    );
}

#[test]
fn anthropic() {
    let tools = tools();
    for dialect in [Dialect::Anthropic, Dialect::AnthropicStrict] {
        let choice = |choice, parallel| fields(dialect, &tools, choice, parallel);
        assert_eq!(choice(ToolChoice::Auto, None), json!({"tool_choice": {"type": "auto"}}));
        assert_eq!(choice(ToolChoice::None, None), json!({"tool_choice": {"type": "none"}}));
        assert_eq!(choice(ToolChoice::Required, None), json!({"tool_choice": {"type": "any"}}));
        assert_eq!(
            choice(ToolChoice::tool("get_weather"), None),
            json!({"tool_choice": {"type": "tool", "name": "get_weather"}})
        );
        // The parallel setting is `disable_parallel_tool_use`, inside the
        // choice, with auto, any and tool; `none` takes none.
        assert_eq!(
            choice(ToolChoice::Auto, Some(false)),
            json!({"tool_choice": {"type": "auto", "disable_parallel_tool_use": true}})
        );
        assert_eq!(
            choice(ToolChoice::Required, Some(false)),
            json!({"tool_choice": {"type": "any", "disable_parallel_tool_use": true}})
        );
        assert_eq!(
            choice(ToolChoice::tool("get_weather"), Some(true)),
            json!({"tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": false}})
        );
        assert_eq!(choice(ToolChoice::None, Some(false)), json!({"tool_choice": {"type": "none"}}));
        // What Anthropic can say of an allowed set: all the tools, or one required.
        assert_eq!(
            choice(ToolChoice::allowed(["get_time", "get_weather"]), Some(false)),
            json!({"tool_choice": {"type": "auto", "disable_parallel_tool_use": true}})
        );
        assert_eq!(
            choice(ToolChoice::allowed_required(["get_time", "get_weather"]), None),
            json!({"tool_choice": {"type": "any"}})
        );
        assert_eq!(
            choice(ToolChoice::allowed_required(["get_weather"]), Some(false)),
            json!({"tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true}})
        );
        let error = refused(dialect, &tools, ToolChoice::allowed(["get_weather"]), None);
        assert!(error.problem.contains("no set of allowed tools"), "{error}");
        assert_eq!(error.setting, "tool choice `allowed tools [get_weather]`");
    }
    assert_eq!(
        fields(Dialect::AnthropicStrict, &tools, ToolChoice::Validated, Some(false)),
        json!({"tool_choice": {"type": "auto", "disable_parallel_tool_use": true}})
    );
    let error = refused(Dialect::Anthropic, &tools, ToolChoice::Validated, None);
    assert!(error.problem.contains("anthropic-strict"), "{error}");
    // The native web search is a server tool with a name, forced as any tool is.
    assert_eq!(
        fields(Dialect::Anthropic, &tools_with_search(), ToolChoice::tool("web_search"), None),
        json!({"tool_choice": {"type": "tool", "name": "web_search"}})
    );
}

#[test]
fn gemini() {
    let tools = tools();
    let choice = |choice, parallel| fields(Dialect::Gemini, &tools, choice, parallel);
    let config = |config: Value| json!({"toolConfig": {"functionCallingConfig": config}});
    assert_eq!(choice(ToolChoice::Auto, None), config(json!({"mode": "AUTO"})));
    assert_eq!(choice(ToolChoice::None, None), config(json!({"mode": "NONE"})));
    assert_eq!(choice(ToolChoice::Required, None), config(json!({"mode": "ANY"})));
    assert_eq!(
        choice(ToolChoice::tool("get_weather"), None),
        config(json!({"mode": "ANY", "allowedFunctionNames": ["get_weather"]}))
    );
    assert_eq!(
        choice(ToolChoice::allowed_required(["get_weather", "get_time"]), None),
        config(json!({"mode": "ANY", "allowedFunctionNames": ["get_weather", "get_time"]}))
    );
    // AUTO takes no names: VALIDATED is the mode that lets the model answer
    // in text and limits its calls to the set.
    assert_eq!(
        choice(ToolChoice::allowed(["get_weather"]), None),
        config(json!({"mode": "VALIDATED", "allowedFunctionNames": ["get_weather"]}))
    );
    assert_eq!(choice(ToolChoice::Validated, None), config(json!({"mode": "VALIDATED"})));
    // Parallel calls are Gemini's default and it has no switch for them.
    assert_eq!(choice(ToolChoice::Auto, Some(true)), config(json!({"mode": "AUTO"})));
    assert_eq!(choice(ToolChoice::None, Some(false)), config(json!({"mode": "NONE"})));
    for asked in [ToolChoice::Auto, ToolChoice::tool("get_weather"), ToolChoice::allowed(["get_weather"])] {
        let error = refused(Dialect::Gemini, &tools, asked, Some(false));
        assert_eq!(error.setting, "`parallel_tool_calls: false`");
        assert!(error.problem.contains("no switch for parallel function calls"), "{error}");
    }

    // Google Search is not a function declaration: it cannot be named, and
    // without functions there is nothing to configure but the default.
    let search = tools_with_search();
    let error = refused(Dialect::Gemini, &search, ToolChoice::allowed_required(["web_search"]), None);
    assert!(error.problem.contains("Google Search is not a function declaration"), "{error}");
    let only_search = Toolset::builder().add_web_search(WebSearch::new()).build().unwrap();
    assert_eq!(fields(Dialect::Gemini, &only_search, ToolChoice::Auto, None), json!({}));
    refused(Dialect::Gemini, &only_search, ToolChoice::Required, None);
}

#[test]
fn mcp_has_no_tool_choice() {
    let tools = tools();
    assert_eq!(fields(Dialect::Mcp, &tools, ToolChoice::Auto, None), json!({}));
    for asked in [
        ToolChoice::None,
        ToolChoice::Required,
        ToolChoice::tool("get_weather"),
        ToolChoice::allowed(["get_time"]),
    ] {
        let error = refused(Dialect::Mcp, &tools, asked, None);
        assert!(error.problem.contains("MCP has no tool choice"), "{error}");
    }
    let error = refused(Dialect::Mcp, &tools, ToolChoice::Auto, Some(true));
    assert_eq!(error.setting, "`parallel_tool_calls: true`");
}

#[test]
fn names_are_found_ignoring_case_and_sent_as_registered() {
    let tools = tools();
    assert_eq!(
        fields(Dialect::OpenAiResponses, &tools, ToolChoice::tool("GET_Weather"), None),
        json!({"tool_choice": {"type": "function", "name": "get_weather"}})
    );
    // A tool named twice in a set is listed once.
    assert_eq!(
        fields(Dialect::Gemini, &tools, ToolChoice::allowed_required(["get_time", "Get_Time"]), None),
        json!({"toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_time"]}}})
    );
}

#[test]
fn a_tool_not_offered_is_refused_in_every_dialect_with_a_choice() {
    let tools = tools();
    for dialect in Dialect::ALL.into_iter().filter(|dialect| *dialect != Dialect::Mcp) {
        for asked in
            [ToolChoice::tool("get_wether"), ToolChoice::allowed_required(["get_time", "get_wether"])]
        {
            let error = refused(dialect, &tools, asked.clone(), None);
            assert_eq!(
                error.problem, "no tool `get_wether` among the tools sent (get_weather, get_time)",
                "{dialect}"
            );
        }
        let error = refused(dialect, &tools, ToolChoice::allowed(Vec::<String>::new()), None);
        assert!(error.problem.starts_with("an allowed set needs at least one tool"), "{error}");
    }
    // Chat Completions has no native search: without a fallback function,
    // `web_search` is not sent, so it cannot be chosen.
    let error = refused(Dialect::OpenAiChat, &tools_with_search(), ToolChoice::tool("web_search"), None);
    assert!(error.problem.starts_with("no tool `web_search` among the tools sent"), "{error}");
    let error = refused(Dialect::Anthropic, &Toolset::new(), ToolChoice::tool("get_time"), None);
    assert_eq!(error.problem, "no tool `get_time` is sent: the request offers no tools");
}

#[test]
fn the_error_reads_as_what_was_asked_and_the_dialect() {
    let error = refused(Dialect::Anthropic, &tools(), ToolChoice::allowed(["get_weather"]), None);
    assert_eq!(
        error.to_string(),
        "tool choice `allowed tools [get_weather]` cannot be sent as anthropic: Anthropic's tool_choice has no \
         set of allowed tools (only auto, any, tool and none): offer only those tools, or name one"
    );
}

#[test]
fn a_choice_round_trips_through_serde() {
    let choices = [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::None, json!("none")),
        (ToolChoice::Required, json!("required")),
        (ToolChoice::tool("get_weather"), json!({"tool": "get_weather"})),
        (
            ToolChoice::allowed_required(["a", "b"]),
            json!({"allowed": {"tools": ["a", "b"], "required": true}}),
        ),
        (ToolChoice::Validated, json!("validated")),
    ];
    for (choice, value) in choices {
        assert_eq!(serde_json::to_value(&choice).unwrap(), value);
        assert_eq!(serde_json::from_value::<ToolChoice>(value).unwrap(), choice);
    }
    // `required` may be left out of an allowed set: the model may then answer in text.
    let choice: ToolChoice = serde_json::from_value(json!({"allowed": {"tools": ["a"]}})).unwrap();
    assert_eq!(choice, ToolChoice::allowed(["a"]));
    assert_eq!(ToolChoice::default(), ToolChoice::Auto);
}
