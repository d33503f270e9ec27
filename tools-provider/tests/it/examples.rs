//! Example arguments: Anthropic's `input_examples` field, the description
//! elsewhere, and an example that does not fit the schema refused when the
//! definitions are built, naming the tool.

use serde_json::{Value, json};
use toolcall_core::{ToolContext, ToolError, ToolSpec, Toolset, TypedTool};
use toolcall_provider::Dialect;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Request {
    /// City name.
    city: String,
    /// Days ahead, 1 to 16.
    #[schemars(range(min = 1, max = 16))]
    days: Option<u8>,
}

/// A forecast tool whose spec carries `examples`.
struct Forecast(ToolSpec);

impl Forecast {
    fn with(examples: &[Value]) -> Self {
        let spec =
            examples.iter().fold(ToolSpec::new::<Request>("forecast", "Daily forecast."), |spec, example| {
                spec.with_example(example.clone())
            });
        Self(spec)
    }
}

impl TypedTool for Forecast {
    type Request = Request;
    type Output = String;
    type Error = ToolError;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn run(&self, _: &ToolContext, req: Request) -> Result<String, ToolError> {
        Ok(format!("{} for {:?} days", req.city, req.days))
    }
}

fn good() -> [Value; 2] {
    [json!({"city": "Paris"}), json!({"city": "Oslo", "days": 3})]
}

/// The description each dialect sends, wherever it puts it.
fn description(dialect: Dialect, definition: &Value) -> &str {
    let at = match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiChatStrict => &definition["function"]["description"],
        _ => &definition["description"],
    };
    at.as_str().unwrap_or_else(|| panic!("{dialect}: no description in {definition}"))
}

#[test]
fn anthropic_takes_them_as_input_examples_the_others_read_them_in_the_description() {
    let tool = Forecast::with(&good());
    for dialect in Dialect::EXPORTED {
        let definition = dialect.function(&tool).unwrap();
        let text = description(dialect, &definition);
        if matches!(dialect, Dialect::Anthropic | Dialect::AnthropicStrict) {
            assert_eq!(definition["input_examples"], json!(good()), "{dialect}");
            assert_eq!(text, "Daily forecast.", "{dialect}");
        } else {
            assert!(definition.get("input_examples").is_none(), "{dialect}: {definition}");
            assert_eq!(
                text,
                "Daily forecast.\n\nExample arguments:\n{\"city\":\"Paris\"}\n{\"city\":\"Oslo\",\"days\":3}",
                "{dialect}"
            );
        }
    }
}

#[test]
fn without_examples_nothing_changes() {
    let tool = Forecast::with(&[]);
    for dialect in Dialect::EXPORTED {
        let definition = dialect.function(&tool).unwrap();
        assert_eq!(description(dialect, &definition), "Daily forecast.", "{dialect}");
        assert!(definition.get("input_examples").is_none(), "{dialect}");
    }
}

#[test]
fn an_example_that_does_not_fit_is_refused_naming_the_tool_in_every_dialect() {
    let cases = [
        (
            json!({"city": "Paris", "days": 17}),
            "example 2 does not fit the schema at `/days`: 17 is greater than the maximum of 16",
        ),
        (json!({"days": 3}), "example 2 does not fit the schema: \"city\" is a required property"),
        (json!({"city": 7}), "example 2 does not fit the schema at `/city`: 7 is not of type \"string\""),
        (json!(["Paris"]), "example 2 is not a JSON object of arguments: [\"Paris\"]"),
    ];
    for (bad, problem) in cases {
        let tool = Forecast::with(&[json!({"city": "Lima"}), bad.clone()]);
        let tools = Toolset::builder().add(tool).build().unwrap();
        for dialect in Dialect::EXPORTED {
            let error = dialect.tools(&tools).unwrap_err();
            assert_eq!(error.tool.as_deref(), Some("forecast"), "{dialect} {bad}");
            assert_eq!((error.dialect, error.keyword.as_str()), (dialect, "examples"), "{bad}");
            assert_eq!(error.problem, problem, "{dialect}");
        }
    }
}
