//! [`ToolChoice`]: which tools the model may or must call, and whether it
//! may call several at once, in each dialect ([`Dialect::tool_choice`]).
//!
//! What each provider documents, and so what each dialect sends:
//!
//! - OpenAI Chat Completions: `tool_choice` is `"auto"`, `"none"`,
//!   `"required"`, `{"type": "function", "function": {"name"}}`, or
//!   `{"type": "allowed_tools", "allowed_tools": {"mode": "auto" | "required",
//!   "tools": [{"type": "function", "function": {"name"}}]}}`; beside it the
//!   boolean `parallel_tool_calls`:
//!   <https://platform.openai.com/docs/api-reference/chat/create#chat-create-tool_choice>,
//!   <https://platform.openai.com/docs/guides/function-calling#tool-choice>,
//!   <https://platform.openai.com/docs/guides/function-calling#parallel-function-calling>.
//! - OpenAI Responses: the same strings, `{"type": "function", "name"}`, and
//!   `{"type": "allowed_tools", "mode", "tools": [{"type": "function", "name"}]}`
//!   whose list may also hold a hosted tool by its type (`{"type":
//!   "web_search"}`); `parallel_tool_calls`:
//!   <https://platform.openai.com/docs/api-reference/responses/create#responses-create-tool_choice>,
//!   <https://platform.openai.com/docs/guides/function-calling#tool-choice>.
//! - Anthropic: `tool_choice` is `{"type": "auto" | "any" | "none"}` or
//!   `{"type": "tool", "name"}`; `auto`, `any` and `tool` take
//!   `disable_parallel_tool_use` (at most one call with `auto`, exactly one
//!   with `any` and `tool`); there is no set of allowed tools:
//!   <https://docs.anthropic.com/en/api/messages#body-tool-choice>,
//!   <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#forcing-tool-use>,
//!   <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#parallel-tool-use>.
//! - Gemini: `toolConfig.functionCallingConfig` is `{"mode": "AUTO" | "ANY" |
//!   "NONE" | "VALIDATED", "allowedFunctionNames"}`, the names only with
//!   `ANY` (a call is required) or `VALIDATED` (the model may answer in text
//!   or call, and calls are held to the declared schemas by constrained
//!   decoding); there is no switch for parallel calls:
//!   <https://ai.google.dev/gemini-api/docs/function-calling#function_calling_modes>,
//!   <https://ai.google.dev/api/caching#FunctionCallingConfig>,
//!   <https://googleapis.github.io/js-genai/release_docs/enums/types.FunctionCallingConfigMode.html>.
//! - MCP: a server lists its tools and the client's model decides; there is
//!   no request to carry a choice:
//!   <https://modelcontextprotocol.io/specification/2025-06-18/server/tools>.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use toolcall_core::Toolset;
use toolcall_core::toolset::{RESERVED_TOOL_SEARCH, RESERVED_WEB_SEARCH};

use crate::dialect::{Entry, entries};
use crate::{Dialect, ToolChoiceError};

/// Which tools the model may or must call: the same choice for every
/// provider, turned into each one's request fields by
/// [`Dialect::tool_choice`], which refuses, naming the dialect, what a
/// provider cannot express and any tool that is not offered.
///
/// | choice | OpenAI Chat | OpenAI Responses | Anthropic | Gemini `functionCallingConfig` |
/// |---|---|---|---|---|
/// | `Auto` (default) | `"auto"` | `"auto"` | `{"type": "auto"}` | `{"mode": "AUTO"}` |
/// | `None` | `"none"` | `"none"` | `{"type": "none"}` | `{"mode": "NONE"}` |
/// | `Required` | `"required"` | `"required"` | `{"type": "any"}` | `{"mode": "ANY"}` |
/// | `Tool(name)` | `{"type": "function", "function": {"name"}}` | `{"type": "function", "name"}` | `{"type": "tool", "name"}` | `{"mode": "ANY", "allowedFunctionNames": [name]}` |
/// | `Allowed { required: false }` | `{"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools"}}` | `{"type": "allowed_tools", "mode": "auto", "tools"}` | an error | `{"mode": "VALIDATED", "allowedFunctionNames"}` |
/// | `Allowed { required: true }` | the same, `"mode": "required"` | the same, `"mode": "required"` | an error | `{"mode": "ANY", "allowedFunctionNames"}` |
/// | `Validated` | `"auto"` in strict mode, else an error | `"auto"` in strict mode, else an error | `{"type": "auto"}` in strict mode, else an error | `{"mode": "VALIDATED"}` |
///
/// For Anthropic, an allowed set that is every tool sent is `auto` (or
/// `any`), and a required set of one tool is `tool`: those say exactly
/// the same. MCP has no tool choice: anything but `Auto` is an error.
///
/// Names are looked up as the toolset does, ignoring case, and sent as the
/// tool registered them. Serialized, a choice reads `"auto"`, `{"tool":
/// "get_weather"}`, `{"allowed": {"tools": ["a", "b"], "required": true}}`.
///
/// ```
/// use toolcall_provider::ToolChoice;
///
/// let choice = ToolChoice::allowed(["get_weather", "get_time"]);
/// assert_eq!(choice, ToolChoice::Allowed { tools: vec!["get_weather".into(), "get_time".into()], required: false });
/// assert_eq!(choice.to_string(), "allowed tools [get_weather, get_time]");
/// assert_eq!(serde_json::to_value(ToolChoice::tool("get_weather")).unwrap(), serde_json::json!({"tool": "get_weather"}));
/// assert_eq!(serde_json::from_str::<ToolChoice>("\"required\"").unwrap(), ToolChoice::Required);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides whether to call tools, and which (the providers'
    /// default).
    #[default]
    Auto,
    /// No tool calls: the model answers in text.
    None,
    /// At least one tool call, of any tool offered.
    Required,
    /// A call of this tool.
    Tool(String),
    /// Calls of these tools only, with every tool still offered (so the
    /// prompt, and the provider's cache of it, stays the same from turn to
    /// turn); `required` asks for at least one call, otherwise the model
    /// may answer in text.
    Allowed {
        /// The tools the model may call.
        tools: Vec<String>,
        /// Whether the model must call one of them.
        #[serde(default)]
        required: bool,
    },
    /// The model may answer in text or call any tool, and a call is held to
    /// the tool's schema: Gemini's `VALIDATED` mode, and `Auto` in the strict
    /// dialects, whose schemas already hold every call.
    Validated,
}

impl ToolChoice {
    /// A call of this tool: [`ToolChoice::Tool`].
    ///
    /// ```
    /// use toolcall_provider::ToolChoice;
    /// assert_eq!(ToolChoice::tool("get_weather"), ToolChoice::Tool("get_weather".into()));
    /// ```
    pub fn tool(name: impl Into<String>) -> Self {
        Self::Tool(name.into())
    }

    /// Calls of these tools only, or a text answer: [`ToolChoice::Allowed`]
    /// with `required: false`.
    ///
    /// ```
    /// use toolcall_provider::ToolChoice;
    /// let choice = ToolChoice::allowed(["get_weather"]);
    /// assert!(matches!(choice, ToolChoice::Allowed { required: false, .. }));
    /// ```
    pub fn allowed<S: Into<String>>(tools: impl IntoIterator<Item = S>) -> Self {
        Self::Allowed { tools: tools.into_iter().map(Into::into).collect(), required: false }
    }

    /// At least one call, of these tools only: [`ToolChoice::Allowed`] with
    /// `required: true`.
    ///
    /// ```
    /// use toolcall_provider::ToolChoice;
    /// let choice = ToolChoice::allowed_required(["get_weather", "get_time"]);
    /// assert_eq!(choice.to_string(), "allowed tools [get_weather, get_time], one required");
    /// ```
    pub fn allowed_required<S: Into<String>>(tools: impl IntoIterator<Item = S>) -> Self {
        Self::Allowed { tools: tools.into_iter().map(Into::into).collect(), required: true }
    }
}

impl fmt::Display for ToolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::None => f.write_str("none"),
            Self::Required => f.write_str("required"),
            Self::Tool(name) => write!(f, "tool {name}"),
            Self::Allowed { tools, required } => {
                write!(f, "allowed tools [{}]", tools.join(", "))?;
                if *required { f.write_str(", one required") } else { Ok(()) }
            }
            Self::Validated => f.write_str("validated"),
        }
    }
}

impl Dialect {
    /// The request fields that say `choice` and, when given, whether the
    /// model may call several tools in one turn (`parallel`; `None` leaves
    /// the provider's default, which is on everywhere), for a request
    /// offering `toolset`: merge them into the request body next to
    /// [`Self::tools`]. See [`ToolChoice`] for the table, and the module
    /// source for the providers' pages.
    ///
    /// | dialect | fields | `parallel: Some(p)` |
    /// |---|---|---|
    /// | OpenAI Chat, Responses (and strict) | `tool_choice` | `parallel_tool_calls: p` |
    /// | Anthropic (and strict) | `tool_choice` | `disable_parallel_tool_use: !p` inside it (not with `none`) |
    /// | Gemini | `toolConfig: {functionCallingConfig}` | `true` is the default and sends nothing; `false` is an error, but with `None` |
    /// | MCP | none | an error |
    ///
    /// Fails, naming this dialect, when the provider cannot express the
    /// choice or the parallel setting, when a named tool is not among the
    /// tools the toolset sends in this dialect (names are matched ignoring
    /// case, as the toolset registers them), and for an empty allowed set.
    /// Gemini's settings apply to function declarations: with none (only
    /// Google Search) `Auto` sends nothing and another choice is an error.
    ///
    /// ```
    /// # use toolcall_core::{JsonObject, Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Spec(ToolSpec);
    /// # impl Tool for Spec {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// # #[allow(non_snake_case)]
    /// # fn Named(name: &'static str, schema: JsonObject) -> Spec { Spec(ToolSpec::from_parameters(name, "", Parameters::from_schema(schema))) }
    /// use serde_json::json;
    /// use toolcall_core::Toolset;
    /// use toolcall_provider::{Dialect, ToolChoice};
    ///
    /// let schema = json!({"type": "object"}).as_object().cloned().unwrap();
    /// let mut tools = Toolset::new();
    /// tools.add(Named("get_weather", schema.clone())).unwrap();
    /// tools.add(Named("get_time", schema)).unwrap();
    /// let choice = ToolChoice::allowed(["get_weather"]);
    ///
    /// let fields = Dialect::OpenAiResponses.tool_choice(&tools, &choice, Some(false)).unwrap();
    /// assert_eq!(serde_json::Value::Object(fields), json!({
    ///     "tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_weather"}]},
    ///     "parallel_tool_calls": false,
    /// }));
    /// let fields = Dialect::Gemini.tool_choice(&tools, &choice, None).unwrap();
    /// assert_eq!(fields["toolConfig"], json!({"functionCallingConfig": {"mode": "VALIDATED", "allowedFunctionNames": ["get_weather"]}}));
    ///
    /// let err = Dialect::Anthropic.tool_choice(&tools, &choice, None).unwrap_err();
    /// assert_eq!(err.dialect, Dialect::Anthropic);
    /// assert!(err.to_string().starts_with("tool choice `allowed tools [get_weather]` cannot be sent as anthropic: "), "{err}");
    /// let err = Dialect::Gemini.tool_choice(&tools, &ToolChoice::Auto, Some(false)).unwrap_err();
    /// assert!(err.to_string().starts_with("`parallel_tool_calls: false` cannot be sent as gemini: "), "{err}");
    /// let err = Dialect::OpenAiChat.tool_choice(&tools, &ToolChoice::tool("get_wether"), None).unwrap_err();
    /// assert!(err.problem.contains("get_weather, get_time"), "{err}");
    /// ```
    ///
    /// # Errors
    ///
    /// [`ToolChoiceError`], naming this dialect and the setting, in the cases above: offer the
    /// named tool, or ask for a choice or parallel setting the dialect can send.
    pub fn tool_choice(
        self,
        toolset: &Toolset,
        choice: &ToolChoice,
        parallel: Option<bool>,
    ) -> Result<Map<String, Value>, ToolChoiceError> {
        let asked = Asked { dialect: self, choice, parallel };
        if self == Self::Mcp {
            return mcp(&asked);
        }
        let offered: Vec<Offered<'_>> = entries(toolset, self)
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Function(tool) | Entry::Deferred(tool) => Some(Offered::Function(tool.spec().name())),
                Entry::WebSearch(_) => Some(Offered::WebSearch),
                // The provider's own search is no function to name.
                Entry::ToolSearch(_) if self.has_native_tool_search() => None,
                Entry::ToolSearch(_) => Some(Offered::Function(RESERVED_TOOL_SEARCH)),
            })
            .collect();
        let resolved = resolve(&asked, &offered)?;
        match self {
            Self::OpenAiChat | Self::OpenAiChatStrict => openai(&asked, resolved, Api::Chat),
            Self::OpenAiResponses | Self::OpenAiResponsesStrict => openai(&asked, resolved, Api::Responses),
            Self::Anthropic | Self::AnthropicStrict => anthropic(&asked, resolved, offered.len()),
            Self::Gemini => gemini(&asked, resolved, &offered),
            Self::Mcp => mcp(&asked),
        }
    }

    /// Whether every function call is held to its schema in this dialect
    /// (`strict: true` on every function).
    fn is_strict(self) -> bool {
        matches!(self, Self::OpenAiChatStrict | Self::OpenAiResponsesStrict | Self::AnthropicStrict)
    }
}

/// What was asked, for the errors.
struct Asked<'a> {
    dialect: Dialect,
    choice: &'a ToolChoice,
    parallel: Option<bool>,
}

impl Asked<'_> {
    /// The choice cannot be sent, for this reason.
    fn refuse(&self, problem: impl Into<String>) -> ToolChoiceError {
        ToolChoiceError {
            dialect: self.dialect,
            setting: format!("tool choice `{}`", self.choice),
            problem: problem.into(),
        }
    }

    /// The parallel setting cannot be sent, for this reason.
    fn refuse_parallel(&self, parallel: bool, problem: impl Into<String>) -> ToolChoiceError {
        ToolChoiceError {
            dialect: self.dialect,
            setting: format!("`parallel_tool_calls: {parallel}`"),
            problem: problem.into(),
        }
    }

    /// Why calls are not held to their schemas outside strict mode.
    fn not_strict(&self) -> ToolChoiceError {
        self.refuse(format!(
            "calls are held to the schemas only in strict mode; use the {}-strict dialect (strict tools)",
            self.dialect
        ))
    }
}

/// One entry the dialect sends, as a choice names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Offered<'a> {
    /// A function, by the name it is sent under.
    Function(&'a str),
    /// The provider's native web search, named `web_search`.
    WebSearch,
}

impl<'a> Offered<'a> {
    fn name(self) -> &'a str {
        match self {
            Self::Function(name) => name,
            Self::WebSearch => RESERVED_WEB_SEARCH,
        }
    }
}

/// A choice with its names found among the entries sent.
enum Resolved<'a> {
    Auto,
    None,
    Required,
    Tool(Offered<'a>),
    Allowed(Vec<Offered<'a>>, bool),
    Validated,
}

/// Find the choice's names among the entries offered, ignoring case;
/// an allowed set keeps its first mention of each tool.
fn resolve<'a>(asked: &Asked<'_>, offered: &[Offered<'a>]) -> Result<Resolved<'a>, ToolChoiceError> {
    let find = |name: &str| {
        offered.iter().copied().find(|entry| entry.name().eq_ignore_ascii_case(name)).ok_or_else(|| {
            let names: Vec<&str> = offered.iter().map(|entry| entry.name()).collect();
            if names.is_empty() {
                asked.refuse(format!("no tool `{name}` is sent: the request offers no tools"))
            } else {
                asked.refuse(format!("no tool `{name}` among the tools sent ({})", names.join(", ")))
            }
        })
    };
    Ok(match asked.choice {
        ToolChoice::Auto => Resolved::Auto,
        ToolChoice::None => Resolved::None,
        ToolChoice::Required => Resolved::Required,
        ToolChoice::Tool(name) => Resolved::Tool(find(name)?),
        ToolChoice::Allowed { tools, required } => {
            if tools.is_empty() {
                return Err(
                    asked.refuse("an allowed set needs at least one tool (`ToolChoice::None` offers none)")
                );
            }
            let mut allowed = Vec::with_capacity(tools.len());
            for name in tools {
                let entry = find(name)?;
                if !allowed.contains(&entry) {
                    allowed.push(entry);
                }
            }
            Resolved::Allowed(allowed, *required)
        }
        ToolChoice::Validated => Resolved::Validated,
    })
}

/// Which of OpenAI's two APIs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    Chat,
    Responses,
}

/// OpenAI: `tool_choice`, and `parallel_tool_calls` when given.
fn openai(asked: &Asked<'_>, choice: Resolved<'_>, api: Api) -> Result<Map<String, Value>, ToolChoiceError> {
    // A tool as `tool_choice` names it, and as an allowed set lists it. Chat
    // Completions has no native search, so its entries are all functions.
    let named = |entry: Offered<'_>| match (api, entry) {
        (Api::Chat, entry) => json!({"type": "function", "function": {"name": entry.name()}}),
        (Api::Responses, Offered::Function(name)) => json!({"type": "function", "name": name}),
        (Api::Responses, Offered::WebSearch) => json!({"type": "web_search"}),
    };
    let allowed = |entries: Vec<Offered<'_>>, required: bool| {
        let mode = if required { "required" } else { "auto" };
        let tools: Vec<Value> = entries.into_iter().map(named).collect();
        match api {
            Api::Chat => json!({"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": tools}}),
            Api::Responses => json!({"type": "allowed_tools", "mode": mode, "tools": tools}),
        }
    };
    let value = match choice {
        Resolved::Auto => json!("auto"),
        Resolved::None => json!("none"),
        Resolved::Required => json!("required"),
        // A hosted tool is not a function: the Responses API forces it as
        // the one tool of a required allowed set.
        Resolved::Tool(Offered::WebSearch) => allowed(vec![Offered::WebSearch], true),
        Resolved::Tool(entry) => named(entry),
        Resolved::Allowed(entries, required) => allowed(entries, required),
        Resolved::Validated if asked.dialect.is_strict() => json!("auto"),
        Resolved::Validated => return Err(asked.not_strict()),
    };
    let mut fields = Map::new();
    fields.insert("tool_choice".into(), value);
    if let Some(parallel) = asked.parallel {
        fields.insert("parallel_tool_calls".into(), Value::Bool(parallel));
    }
    Ok(fields)
}

/// Anthropic: `tool_choice`, with `disable_parallel_tool_use` inside it.
fn anthropic(
    asked: &Asked<'_>,
    choice: Resolved<'_>,
    offered: usize,
) -> Result<Map<String, Value>, ToolChoiceError> {
    let mut value = match choice {
        Resolved::Auto => json!({"type": "auto"}),
        Resolved::None => json!({"type": "none"}),
        Resolved::Required => json!({"type": "any"}),
        Resolved::Tool(entry) => json!({"type": "tool", "name": entry.name()}),
        // What Anthropic can say of a set: all of the tools, or one.
        Resolved::Allowed(entries, required) if entries.len() == offered => {
            json!({"type": if required { "any" } else { "auto" }})
        }
        Resolved::Allowed(entries, true) if entries.len() == 1 => {
            json!({"type": "tool", "name": entries[0].name()})
        }
        Resolved::Allowed(..) => {
            return Err(asked.refuse(
                "Anthropic's tool_choice has no set of allowed tools (only auto, any, tool and none): \
                 offer only those tools, or name one",
            ));
        }
        Resolved::Validated if asked.dialect.is_strict() => json!({"type": "auto"}),
        Resolved::Validated => return Err(asked.not_strict()),
    };
    // `none` takes no `disable_parallel_tool_use`, and needs none: there
    // are no calls to run in parallel.
    if let (Some(parallel), false) = (asked.parallel, value["type"] == "none") {
        value["disable_parallel_tool_use"] = Value::Bool(!parallel);
    }
    let mut fields = Map::new();
    fields.insert("tool_choice".into(), value);
    Ok(fields)
}

/// Gemini: `toolConfig.functionCallingConfig`.
fn gemini(
    asked: &Asked<'_>,
    choice: Resolved<'_>,
    offered: &[Offered<'_>],
) -> Result<Map<String, Value>, ToolChoiceError> {
    if asked.parallel == Some(false) && !matches!(choice, Resolved::None) {
        return Err(asked.refuse_parallel(
            false,
            "Gemini has no switch for parallel function calls: the model may call several functions in one turn",
        ));
    }
    let mut fields = Map::new();
    if !offered.iter().any(|entry| matches!(entry, Offered::Function(_))) {
        // Without function declarations there is nothing to configure.
        return match choice {
            Resolved::Auto => Ok(fields),
            _ => Err(asked.refuse(
                "Gemini's function calling config applies to function declarations, and none is sent \
                 (Google Search is not one)",
            )),
        };
    }
    let functions = |entries: Vec<Offered<'_>>| -> Result<Vec<Value>, ToolChoiceError> {
        entries
            .into_iter()
            .map(|entry| match entry {
                Offered::Function(name) => Ok(json!(name)),
                Offered::WebSearch => Err(asked.refuse(
                    "Google Search is not a function declaration, and allowedFunctionNames names functions only",
                )),
            })
            .collect()
    };
    let config = match choice {
        Resolved::Auto => json!({"mode": "AUTO"}),
        Resolved::None => json!({"mode": "NONE"}),
        Resolved::Required => json!({"mode": "ANY"}),
        Resolved::Tool(entry) => json!({"mode": "ANY", "allowedFunctionNames": functions(vec![entry])?}),
        Resolved::Allowed(entries, true) => {
            json!({"mode": "ANY", "allowedFunctionNames": functions(entries)?})
        }
        // AUTO takes no names: VALIDATED is the mode that both lets the
        // model answer in text and limits its calls to a set.
        Resolved::Allowed(entries, false) => {
            json!({"mode": "VALIDATED", "allowedFunctionNames": functions(entries)?})
        }
        Resolved::Validated => json!({"mode": "VALIDATED"}),
    };
    fields.insert("toolConfig".into(), json!({"functionCallingConfig": config}));
    Ok(fields)
}

/// MCP: nothing to send, and nothing else to ask.
fn mcp(asked: &Asked<'_>) -> Result<Map<String, Value>, ToolChoiceError> {
    if *asked.choice != ToolChoice::Auto {
        return Err(asked.refuse("MCP has no tool choice: the client's model decides which tools to call"));
    }
    if let Some(parallel) = asked.parallel {
        return Err(asked.refuse_parallel(
            parallel,
            "MCP has no parallel setting: the client decides how it sends its `tools/call` requests",
        ));
    }
    Ok(Map::new())
}
