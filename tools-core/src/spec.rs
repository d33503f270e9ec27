//! What a typed tool declares about itself: name, description, annotations,
//! argument schema, limits and timeout.

use std::borrow::Cow;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::{ArgumentLimits, JsonObject, Parameters, ToolError};

/// Hints about a tool's behaviour, as MCP defines them. All are hints a
/// client may show or use; none is enforced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    /// A human-readable title.
    pub title: Option<Cow<'static, str>>,
    /// The tool does not change its environment.
    pub read_only: Option<bool>,
    /// The tool may make destructive updates.
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// The tool talks to an open world of external entities (the web).
    pub open_world: Option<bool>,
}

impl Annotations {
    /// No hints at all.
    pub const NONE: Self =
        Self { title: None, read_only: None, destructive: None, idempotent: None, open_world: None };

    /// Whether no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::NONE
    }
}

/// Everything a tool says about itself ([`Tool::spec`](crate::Tool::spec)),
/// built once per tool (in a `static` for a stateless tool, in a field for a
/// tool with state): its name, description, argument schema and limits,
/// annotations, examples, approval, timeout and output schema. A wrapper
/// that renames or re-describes a tool changes this value and nothing else.
///
/// ```
/// use std::sync::LazyLock;
/// use std::time::Duration;
/// use toolcall_core::ToolSpec;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Request { city: String }
///
/// static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
///     ToolSpec::new::<Request>("get_weather", "Current temperature for a city.")
///         .with_title("Weather")
///         .with_read_only(true)
///         .with_timeout(Duration::from_secs(5))
/// });
/// assert_eq!(SPEC.name(), "get_weather");
/// assert_eq!(SPEC.parameters()["required"], serde_json::json!(["city"]));
/// ```
#[derive(Clone, Debug)]
pub struct ToolSpec {
    name: Cow<'static, str>,
    description: Cow<'static, str>,
    annotations: Annotations,
    parameters: Parameters,
    limits: ArgumentLimits,
    timeout: Option<Duration>,
    output_schema: Option<JsonObject>,
    needs_approval: bool,
    nested_steps: bool,
    examples: Vec<serde_json::Value>,
}

impl ToolSpec {
    /// A spec whose arguments are `R`, with default limits and no timeout.
    pub fn new<R: JsonSchema + ?Sized>(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::from_parameters(name, description, Parameters::of::<R>())
    }

    /// A spec with parameters built elsewhere.
    pub fn from_parameters(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<Cow<'static, str>>,
        parameters: Parameters,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            annotations: Annotations::NONE,
            parameters,
            limits: ArgumentLimits::DEFAULT,
            timeout: None,
            output_schema: None,
            needs_approval: false,
            nested_steps: false,
            examples: Vec::new(),
        }
    }

    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description injected into the prompt.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Hints for MCP clients (title, read-only, destructive...).
    pub fn annotations(&self) -> &Annotations {
        &self.annotations
    }

    /// The JSON Schema of the arguments: what the model sees.
    pub fn parameters(&self) -> &JsonObject {
        self.parameters.schema()
    }

    /// Read a call's raw arguments into `R` through the one argument
    /// pipeline, under this spec's schema and limits ([`Parameters::parse`]).
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] when the text is over the limits, is not JSON, does not
    /// fit `R` or breaks the constraints; [`ToolError::Failed`] when the constraints do not compile.
    pub fn parse<R: DeserializeOwned>(&self, arguments: &str) -> Result<R, ToolError> {
        self.parameters.parse(arguments, &self.limits)
    }

    /// Read a call's raw arguments as a JSON object, for a tool with no
    /// request type ([`Parameters::parse_object`]).
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArguments`] when the text is over the limits, is not a JSON object or
    /// breaks the schema; [`ToolError::Failed`] when the constraints do not compile.
    pub fn parse_object(&self, arguments: &str) -> Result<JsonObject, ToolError> {
        self.parameters.parse_object(arguments, &self.limits)
    }

    /// The size and depth limits of the arguments.
    pub fn limits(&self) -> &ArgumentLimits {
        &self.limits
    }

    /// How long one call may take, if limited.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The same spec under another name.
    pub fn with_name(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.name = name.into();
        self
    }

    /// The same spec with another description.
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = description.into();
        self
    }

    /// Set the human-readable title.
    pub fn with_title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.annotations.title = Some(title.into());
        self
    }

    /// Set all annotations at once.
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Hint that the tool does not change its environment.
    pub fn with_read_only(mut self, yes: bool) -> Self {
        self.annotations.read_only = Some(yes);
        self
    }

    /// Hint that the tool may make destructive updates.
    pub fn with_destructive(mut self, yes: bool) -> Self {
        self.annotations.destructive = Some(yes);
        self
    }

    /// Hint that repeated calls with the same arguments have no further effect.
    pub fn with_idempotent(mut self, yes: bool) -> Self {
        self.annotations.idempotent = Some(yes);
        self
    }

    /// Hint that the tool reaches an open world (the web, other people).
    pub fn with_open_world(mut self, yes: bool) -> Self {
        self.annotations.open_world = Some(yes);
        self
    }

    /// Refuse the fields the schema does not name, at every level, with an
    /// error that names them and the fields there are
    /// ([`Parameters::deny_unknown_fields`]); the schema the model sees says
    /// `additionalProperties: false`. By default they are ignored, as serde
    /// does; OpenAI's strict mode keeps the model from sending them either way.
    pub fn deny_unknown_fields(mut self) -> Self {
        self.parameters = self.parameters.deny_unknown_fields();
        self
    }

    /// Hold every call until a person approves it: a toolset never runs it
    /// unapproved ([`Toolset::run_turn_approved`](crate::Toolset::run_turn_approved)
    /// runs it once approved; the agent loop pauses for it).
    pub fn with_approval_required(mut self) -> Self {
        self.needs_approval = true;
        self
    }

    /// Whether every call waits for a person's approval
    /// (`#[tool(needs_approval)]`); a toolset can require it of more calls
    /// ([`Toolset::with_approval_rule`](crate::Toolset::with_approval_rule)).
    pub fn needs_approval(&self) -> bool {
        self.needs_approval
    }

    /// Mark each call as taking its side effects through the calling
    /// run's effects rather than on its own: an agent tool, whose
    /// sub-agent's model requests and calls are steps of the run above it.
    /// A durable engine then journals those steps one by one, and does not
    /// make the call a step of its own (a journaled step cannot hold
    /// others); in process it changes nothing.
    pub fn with_nested_steps(mut self) -> Self {
        self.nested_steps = true;
        self
    }

    /// Whether each call takes its side effects through the calling run's
    /// effects ([`Self::with_nested_steps`]).
    pub fn has_nested_steps(&self) -> bool {
        self.nested_steps
    }

    /// Limit how long one call may take.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Other size and depth limits for the arguments.
    pub fn with_limits(mut self, limits: ArgumentLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The JSON Schema of what the tool returns, when it returns a JSON
    /// object of type `O` (e.g. through [`Json`](crate::Json)); MCP clients
    /// get it as `outputSchema`.
    pub fn with_output<O: JsonSchema + ?Sized>(mut self) -> Self {
        let schema = Parameters::of::<O>();
        if schema.schema().get("type").and_then(serde_json::Value::as_str) == Some("object") {
            self.output_schema = Some(schema.schema().clone());
        }
        self
    }

    /// The JSON Schema of what the tool returns, given as it is (a remote
    /// tool's `outputSchema`).
    pub fn with_output_schema(mut self, schema: JsonObject) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// The JSON Schema of the content, when the content is a JSON object of
    /// a known shape (MCP's `outputSchema`); `None` for free text.
    pub fn output_schema(&self) -> Option<&JsonObject> {
        self.output_schema.as_ref()
    }

    /// Check only types (serde), not the schema's constraints.
    pub fn without_validation(mut self) -> Self {
        self.parameters = self.parameters.without_validation();
        self
    }

    /// One more example of the arguments, shown to the model: Anthropic
    /// takes examples as `input_examples`, the other formats in the
    /// description. The provider formats refuse an example that does not
    /// fit the schema, naming the tool, when they build the definitions.
    ///
    /// ```
    /// use toolcall_core::{Tool, ToolSpec};
    /// # #[derive(schemars::JsonSchema)] #[allow(dead_code)] struct Request { city: String }
    /// let spec = ToolSpec::new::<Request>("get_weather", "Weather.")
    ///     .with_example(serde_json::json!({"city": "Paris"}));
    /// assert_eq!(spec.examples().len(), 1);
    /// ```
    pub fn with_example(mut self, arguments: serde_json::Value) -> Self {
        self.examples.push(arguments);
        self
    }

    /// Example arguments that show the model how to call the tool
    /// (`#[tool(example = ...)]`), in the order given; each must fit the
    /// schema, which the provider formats check when they build the
    /// definitions.
    pub fn examples(&self) -> &[serde_json::Value] {
        &self.examples
    }
}
