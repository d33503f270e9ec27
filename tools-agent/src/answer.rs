//! A typed answer: the run ends with a value of the user's type rather
//! than free text. The model writes it in one of two ways, and either way
//! it goes through the argument pipeline a tool's arguments go through
//! (lenient cleaning, limits, serde with the field's path, the schema's
//! constraints): a bad answer goes back to the model with the reason, as
//! a call with bad arguments does, and counts against the same retry
//! budget.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolError, ToolSpec};
use toolcall_provider::{Dialect, DialectError};

/// How the model gives a typed answer.
///
/// | provider | native ([`AnswerMode::Native`]) |
/// |---|---|
/// | OpenAI Chat | `response_format: {"type": "json_schema", "json_schema": {name, schema, strict: true}}` |
/// | OpenAI Responses | `text.format: {"type": "json_schema", name, schema, strict: true}` |
/// | Anthropic | `output_config.format: {"type": "json_schema", schema}` |
/// | Gemini | `generationConfig.responseMimeType: "application/json"` and `responseSchema` (its schema subset, as for function parameters) |
///
/// Sources: <https://platform.openai.com/docs/guides/structured-outputs>,
/// <https://platform.claude.com/docs/en/build-with-claude/structured-outputs>,
/// <https://ai.google.dev/gemini-api/docs/structured-output>.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerMode {
    /// Native where the model's provider constrains an answer to a schema
    /// together with tools ([`Model::native_answers`](crate::Model::native_answers)),
    /// a tool elsewhere.
    #[default]
    Auto,
    /// The provider's structured output: the model's text is the answer,
    /// decoded against the schema.
    Native,
    /// A tool the model calls with the answer as its arguments (named
    /// `final_answer` unless [`AnswerType::with_name`] says otherwise), for
    /// a model without structured outputs; the run ends when it succeeds.
    Tool,
}

/// The type of a run's answer: its schema, how the model gives it, and how
/// its JSON is read. Build one with [`AnswerType::of`], give it to
/// [`Agent::with_answer_type`](crate::Agent::with_answer_type), or use
/// [`Agent::run_as`](crate::Agent::run_as).
///
/// The type must be a struct (an object at the schema's root), as the
/// providers' structured outputs and tool parameters require.
///
/// ```
/// use toolcall_agent::{AnswerMode, AnswerType};
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// struct Report {
///     /// The city.
///     city: String,
///     /// Degrees Celsius.
///     temperature: f64,
/// }
///
/// let answer = AnswerType::of::<Report>().with_mode(AnswerMode::Tool).with_name("report");
/// assert_eq!(answer.name(), "report");
/// let missing = answer.read(r#"{"city": "Oslo"}"#).unwrap_err();
/// assert!(missing.to_string().contains("temperature"), "{missing}");
/// let value = answer.read("```json\n{\"city\": \"Oslo\", \"temperature\": 4.5}\n```").unwrap();
/// assert_eq!(value, serde_json::json!({"city": "Oslo", "temperature": 4.5}));
/// ```
#[derive(Clone)]
pub struct AnswerType {
    tool: Arc<AnswerTool>,
    mode: AnswerMode,
}

/// The answer as a tool: its spec is the schema the model sees, its call
/// reads the answer.
struct AnswerTool {
    spec: ToolSpec,
    read: fn(&ToolSpec, &str) -> Result<Value, ToolError>,
}

impl AnswerType {
    /// The answer type of `T`, named `final_answer`, in [`AnswerMode::Auto`].
    pub fn of<T: DeserializeOwned + Serialize + JsonSchema>() -> Self {
        fn read<T: DeserializeOwned + Serialize>(spec: &ToolSpec, text: &str) -> Result<Value, ToolError> {
            let value: T = spec.parse(text)?;
            serde_json::to_value(value).map_err(|error| ToolError::failed(error.to_string()))
        }
        let spec = ToolSpec::from_parameters(
            "final_answer",
            "Give the final answer: call this once everything needed is known.",
            Parameters::of::<T>(),
        );
        Self { tool: Arc::new(AnswerTool { spec, read: read::<T> }), mode: AnswerMode::Auto }
    }

    /// The same answer type, given this way.
    pub fn with_mode(mut self, mode: AnswerMode) -> Self {
        self.mode = mode;
        self
    }

    /// The same answer type under this name: the schema's name in OpenAI's
    /// structured outputs, the tool's in [`AnswerMode::Tool`].
    pub fn with_name(self, name: impl Into<String>) -> Self {
        self.with_spec(|spec| spec.with_name(name.into()))
    }

    /// The same answer type with this description, which the model reads.
    pub fn with_description(self, description: impl Into<String>) -> Self {
        self.with_spec(|spec| spec.with_description(description.into()))
    }

    fn with_spec(mut self, change: impl FnOnce(ToolSpec) -> ToolSpec) -> Self {
        let spec = change(self.tool.spec.clone());
        self.tool = Arc::new(AnswerTool { spec, read: self.tool.read });
        self
    }

    /// The answer's name.
    pub fn name(&self) -> &str {
        self.tool.spec.name()
    }

    /// The answer's description.
    pub fn description(&self) -> &str {
        self.tool.spec.description()
    }

    /// How the model gives it.
    pub fn mode(&self) -> AnswerMode {
        self.mode
    }

    /// The answer's schema in `dialect`, as the provider's structured
    /// outputs take it ([`Dialect::answer_schema`]).
    ///
    /// # Errors
    ///
    /// [`DialectError`], naming the keyword, when `dialect`'s structured outputs cannot express
    /// the schema, and always for [`Dialect::Mcp`].
    pub fn schema(&self, dialect: Dialect) -> Result<Value, DialectError> {
        dialect.answer_schema(self.tool.as_ref())
    }

    /// Read the model's answer text through the argument pipeline: the
    /// value as the type serializes it, or the reason the model is told.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] when the text does not read as the type, with the reason
    /// to show the model; [`ToolError::Failed`] when the schema's constraints do not compile or
    /// the value does not serialize back.
    pub fn read(&self, text: &str) -> Result<Value, ToolError> {
        (self.tool.read)(&self.tool.spec, text)
    }

    /// The answer as a tool, for [`AnswerMode::Tool`].
    pub(crate) fn tool(&self) -> Arc<dyn Tool> {
        self.tool.clone()
    }
}

impl Tool for AnswerTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, _ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(async move { Ok(Output::text((self.read)(&self.spec, arguments)?.to_string())) })
    }
}

impl std::fmt::Debug for AnswerType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerType").field("name", &self.name()).field("mode", &self.mode).finish()
    }
}

/// What [`Agent::run_as`](crate::Agent::run_as) gives back: the typed
/// answer, if the run ended with one, and the whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct Typed<T> {
    /// The answer; `None` when the run stopped without one (see
    /// `run.stop`: paused for approval, cut off, out of turns...).
    pub answer: Option<T>,
    /// The run, its text answer being the answer's JSON.
    pub run: crate::RunResult,
}
