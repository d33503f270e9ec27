//! [`Dialect`]: the provider formats, and every way into them.

use serde_json::Value;

use super::{
    Content, DialectError, Finish, Message, MessageError, UnknownDialect, anthropic, gemini, limits, mcp,
    openai, search,
};
use toolcall_core::toolset::{RESERVED_TOOL_SEARCH, RESERVED_WEB_SEARCH, ToolSearch, Toolset, WebSearch};
use toolcall_core::{Tool, ToolCall, ToolResult};

/// A provider format, and the one way into it: how a toolset is sent
/// ([`Self::tool_list`], [`Self::tools`], [`Self::definitions`]), how a
/// conversation is sent ([`Self::messages`]), how the model's response is
/// read ([`Self::content`], its calls alone with [`Self::parse_calls`], how
/// it ended with [`Self::finish`]) and how the turn's results are sent back
/// ([`Self::format_results`]); [`Self::tool_choice`] gives the request
/// fields that say which tools the model may or must call. The strict
/// variants differ from the others in their definitions only: their
/// messages are the same.
///
/// What the messages are, per dialect (the provider modules have the
/// details and the sources):
///
/// | dialect | `parse_calls` reads | `format_results` gives, to append to the conversation |
/// |---|---|---|
/// | `OpenAiChat`, `OpenAiChatStrict` | `choices[0].message.tool_calls` | one `{"role": "tool"}` message per result |
/// | `OpenAiResponses`, `OpenAiResponsesStrict` | the `function_call` items of `output` | one `function_call_output` input item per result |
/// | `Anthropic`, `AnthropicStrict` | the `tool_use` blocks of `content` | one user message of `tool_result` blocks |
/// | `Gemini` | the `functionCall` parts of `candidates[0].content` | one user content of `functionResponse` parts |
/// | `Mcp` | nothing: an error | nothing: an error |
///
/// A result's images and files go where each provider takes them (see
/// [`Self::format_results`]); a part a provider cannot take is an error
/// naming it, never dropped.
///
/// MCP has definitions only: there is no model response to read, since an
/// MCP client sends each call as a `tools/call` request and reads the result
/// from the answer, which the MCP bridge (`toolcall-mcp`) handles.
///
/// One turn, whatever the dialect:
///
/// ```
/// use serde_json::json;
/// use toolcall_core::{Outcome, ToolResult, Toolset};
/// use toolcall_provider::Dialect;
///
/// let dialect = Dialect::Anthropic;
/// let tools = Toolset::new();
/// let mut conversation = vec![json!({"role": "user", "content": "What time is it?"})];
/// let _request = json!({"messages": conversation, "tools": dialect.tools(&tools).unwrap()});
/// let response = json!({"role": "assistant", "content": [
///     {"type": "tool_use", "id": "toolu_01", "name": "now", "input": {}}]});
/// let calls = dialect.parse_calls(&response).unwrap();
/// // What `tools.run_turn(&ctx, &calls).await` returns: one result per call, in order.
/// let results: Vec<ToolResult> =
///     calls.iter().map(|call| ToolResult::new(call.id.clone(), call.name.clone(), "12:00", Outcome::Success)).collect();
/// conversation.push(response);
/// conversation.extend(dialect.format_results(&results).unwrap());
/// assert_eq!(conversation[2]["content"][0], json!({"type": "tool_result", "tool_use_id": "toolu_01", "content": "12:00"}));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Dialect {
    /// OpenAI Chat Completions function tools.
    OpenAiChat,
    /// OpenAI Chat Completions function tools with `strict: true`.
    OpenAiChatStrict,
    /// OpenAI Responses function tools, and its native web search.
    OpenAiResponses,
    /// OpenAI Responses function tools with `strict: true`.
    OpenAiResponsesStrict,
    /// Anthropic Messages API tools.
    Anthropic,
    /// Anthropic tools with `strict: true`.
    AnthropicStrict,
    /// Gemini function declarations.
    Gemini,
    /// Model Context Protocol tools.
    Mcp,
}

/// One tool's definition in one dialect, as exported to one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    /// The tool's name (`web_search` for the native search entry).
    pub name: String,
    /// The definition, ready to send.
    pub value: Value,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 8] = [
        Self::OpenAiChat,
        Self::OpenAiChatStrict,
        Self::OpenAiResponses,
        Self::OpenAiResponsesStrict,
        Self::Anthropic,
        Self::AnthropicStrict,
        Self::Gemini,
        Self::Mcp,
    ];

    /// The dialects [`export`](crate::export) writes by default: `openai`, `openai-strict`,
    /// `anthropic`, `gemini`, `mcp`.
    pub const EXPORTED: [Dialect; 5] =
        [Self::OpenAiChat, Self::OpenAiChatStrict, Self::Anthropic, Self::Gemini, Self::Mcp];

    /// The dialect's name, as the export folder and `--dialect` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAiChat => "openai",
            Self::OpenAiChatStrict => "openai-strict",
            Self::OpenAiResponses => "openai-responses",
            Self::OpenAiResponsesStrict => "openai-responses-strict",
            Self::Anthropic => "anthropic",
            Self::AnthropicStrict => "anthropic-strict",
            Self::Gemini => "gemini",
            Self::Mcp => "mcp",
        }
    }

    /// The dialect with this [name](Self::name).
    ///
    /// ```
    /// use toolcall_provider::Dialect;
    /// assert_eq!(Dialect::from_name("openai-strict"), Some(Dialect::OpenAiChatStrict));
    /// assert_eq!(Dialect::from_name("cohere"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|dialect| dialect.name() == name)
    }

    /// The provider's documented limits for this dialect.
    pub fn limits(self) -> limits::ProviderLimits {
        match self {
            Self::OpenAiChat | Self::OpenAiResponses => openai::LIMITS,
            Self::OpenAiChatStrict | Self::OpenAiResponsesStrict => openai::STRICT_LIMITS,
            Self::Anthropic => anthropic::LIMITS,
            Self::AnthropicStrict => anthropic::STRICT_LIMITS,
            Self::Gemini => gemini::LIMITS,
            Self::Mcp => mcp::LIMITS,
        }
    }

    /// Whether the provider has its own web search tool in this dialect.
    pub fn has_native_web_search(self) -> bool {
        !matches!(self, Self::OpenAiChat | Self::OpenAiChatStrict | Self::Mcp)
    }

    /// Whether the provider searches deferred tools itself in this dialect
    /// ([`ToolSearch`]): Anthropic's tool search tool. Elsewhere the local
    /// `tool_search` function stands in ([`search::LocalSearch`](crate::search::LocalSearch)).
    pub fn has_native_tool_search(self) -> bool {
        matches!(self, Self::Anthropic | Self::AnthropicStrict)
    }

    /// One function tool's definition (no limits check: see [`Self::definitions`]).
    ///
    /// # Errors
    ///
    /// [`DialectError`] when the tool's examples do not fit its schema, when a strict or Gemini
    /// dialect cannot express the schema, or when Gemini refuses the name; the error's
    /// [`keyword`](DialectError::keyword) says what to change.
    pub fn function(self, tool: &dyn Tool) -> Result<Value, DialectError> {
        crate::examples::check(self, tool)?;
        match self {
            Self::OpenAiChat => openai::chat::function(tool, false),
            Self::OpenAiChatStrict => openai::chat::function(tool, true),
            Self::OpenAiResponses => openai::responses::function(tool, false),
            Self::OpenAiResponsesStrict => openai::responses::function(tool, true),
            Self::Anthropic => anthropic::tool(tool, false),
            Self::AnthropicStrict => anthropic::tool(tool, true),
            Self::Gemini => gemini::function_declaration(tool),
            Self::Mcp => Ok(mcp::tool(tool)),
        }
    }

    /// The schema of a typed answer in this dialect: the `answer`'s
    /// parameters under the rules of the provider's structured outputs,
    /// which constrain the model's text to them. OpenAI (both APIs) and
    /// Anthropic decode against a schema only in its strict form, so the
    /// strict transform applies whatever the dialect's tools use; Gemini's
    /// is its schema subset, as for function parameters. What a transform
    /// cannot express is refused, naming the answer and the keyword, as
    /// for a tool.
    ///
    /// ```
    /// # use toolcall_core::{JsonObject, Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
    /// # struct Spec(ToolSpec);
    /// # impl Tool for Spec {
    /// #     fn spec(&self) -> &ToolSpec { &self.0 }
    /// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
    /// # }
    /// use toolcall_provider::Dialect;
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Report { city: String, note: Option<String> }
    /// let answer = Spec(ToolSpec::from_parameters("report", "The report.", Parameters::of::<Report>()));
    /// let schema = Dialect::OpenAiChat.answer_schema(&answer).unwrap();
    /// assert_eq!(schema["required"], serde_json::json!(["city", "note"]));
    /// assert_eq!(schema["additionalProperties"], false);
    /// assert!(Dialect::Mcp.answer_schema(&answer).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`DialectError`] for [`Mcp`](Self::Mcp), which has no answer to constrain, and when the
    /// strict or Gemini transform cannot express the answer's schema (an open map, `not`...).
    pub fn answer_schema(self, answer: &dyn Tool) -> Result<Value, DialectError> {
        let (name, parameters) = (answer.spec().name(), answer.spec().parameters());
        let schema = match self {
            Self::OpenAiChat | Self::OpenAiChatStrict => {
                openai::strict_schema(name, parameters, Self::OpenAiChatStrict)?
            }
            Self::OpenAiResponses | Self::OpenAiResponsesStrict => {
                openai::strict_schema(name, parameters, Self::OpenAiResponsesStrict)?
            }
            Self::Anthropic | Self::AnthropicStrict => anthropic::strict_schema(name, parameters)?,
            Self::Gemini => gemini::parameters(name, parameters)?.unwrap_or_default(),
            Self::Mcp => {
                return Err(DialectError::tool(name, self, "answer", "MCP has no model answer to constrain"));
            }
        };
        Ok(Value::Object(schema))
    }

    /// Whether one tool can be sent in this dialect: its definition builds
    /// and fits the per-tool limits. Call it when registering a tool to
    /// refuse it there rather than at export.
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
    /// use toolcall_provider::Dialect;
    /// let schema = serde_json::json!({"type": "object", "properties": {"x": {"type": "string"}}});
    /// let tool = Named("2fa_code", schema.as_object().unwrap().clone());
    /// assert!(Dialect::OpenAiChat.check(&tool).is_ok());
    /// assert_eq!(Dialect::Gemini.check(&tool).unwrap_err().keyword, "name");
    /// ```
    ///
    /// # Errors
    ///
    /// [`DialectError`] for what [`Self::function`] refuses, and for a per-tool limit of the
    /// provider ([`limits`]) the definition breaks, such as the name's length.
    pub fn check(self, tool: &dyn Tool) -> Result<(), DialectError> {
        let definition = Definition { name: tool.spec().name().to_owned(), value: self.function(tool)? };
        limits::enforce(self, std::slice::from_ref(&definition))
    }

    /// The provider's native web search tool, for dialects that have one.
    /// An option the provider's tool lacks (a domain filter) is refused,
    /// naming this dialect.
    ///
    /// # Errors
    ///
    /// [`DialectError`] when the search has an option this dialect's tool lacks: blocked domains
    /// for OpenAI Responses, both domain lists at once for Anthropic, any domain list for Gemini.
    pub fn native_web_search(self, search: &WebSearch) -> Result<Option<Value>, DialectError> {
        let native = match self {
            Self::OpenAiResponses | Self::OpenAiResponsesStrict => {
                openai::responses::web_search(search).map(Some)
            }
            Self::Anthropic | Self::AnthropicStrict => anthropic::web_search(search).map(Some),
            Self::Gemini => gemini::google_search(search).map(Some),
            _ => Ok(None),
        };
        // The provider modules' search tools name the non-strict dialect:
        // the tool is the same in both.
        native.map_err(|error| DialectError { dialect: self, ..error })
    }

    /// Every entry of the toolset in this dialect, in registration order:
    /// one per function, and the native web search in place of its
    /// fallback function (or last) where the dialect has one. Where it has
    /// none, the fallback function registered under `web_search` is emitted
    /// as an ordinary function, and without a fallback nothing is.
    ///
    /// Fails if any tool cannot be expressed or the toolset breaks the
    /// provider's limits ([`limits`]).
    ///
    /// # Errors
    ///
    /// [`DialectError`] for the first tool [`Self::function`] refuses, a web search option the
    /// native tool lacks ([`Self::native_web_search`]), or the first provider limit the toolset
    /// breaks ([`limits`]), such as too many tools.
    pub fn definitions(self, toolset: &Toolset) -> Result<Vec<Definition>, DialectError> {
        let definitions = self.build(toolset).collect::<Result<Vec<_>, _>>()?;
        limits::enforce(self, &definitions)?;
        Ok(definitions)
    }

    /// Each entry of the toolset built in this dialect, in the order of
    /// [`Self::definitions`], without the limits check: the one path from a
    /// toolset to definitions, for [`Self::definitions`] (which stops at the
    /// first error) and [`limits::report`] (which collects them all).
    pub(crate) fn build(self, toolset: &Toolset) -> impl Iterator<Item = Result<Definition, DialectError>> {
        entries(toolset, self).into_iter().filter_map(move |entry| match entry {
            Entry::Function(tool) => Some(
                self.function(tool).map(|value| Definition { name: tool.spec().name().to_owned(), value }),
            ),
            Entry::Deferred(tool) => Some(self.function(tool).map(|mut value| {
                value["defer_loading"] = Value::Bool(true);
                Definition { name: tool.spec().name().to_owned(), value }
            })),
            Entry::ToolSearch(_) if self.has_native_tool_search() => Some(Ok(Definition {
                name: RESERVED_TOOL_SEARCH.to_owned(),
                value: search::anthropic_native(),
            })),
            Entry::ToolSearch(setting) => Some(
                self.function(&search::LocalSearch::new(setting))
                    .map(|value| Definition { name: RESERVED_TOOL_SEARCH.to_owned(), value }),
            ),
            Entry::WebSearch(search) => self
                .native_web_search(search)
                .map(|value| value.map(|value| Definition { name: RESERVED_WEB_SEARCH.to_owned(), value }))
                .transpose(),
        })
    }

    /// The request's `tools` field as one JSON value, to write into a
    /// request body (`json!({"tools": dialect.tools(&toolset)?, ...})`):
    /// always an array, the elements of [`Self::tool_list`]. To work on
    /// the elements (count them, add one of your own, look one up), take
    /// [`Self::tool_list`]; for one definition per tool with its name,
    /// [`Self::definitions`].
    ///
    /// # Errors
    ///
    /// Those of [`Self::definitions`]: a [`DialectError`] for a tool, a web search option or a
    /// provider limit this dialect cannot express.
    pub fn tools(self, toolset: &Toolset) -> Result<Value, DialectError> {
        self.tool_list(toolset).map(Value::Array)
    }

    /// The elements of the request's `tools` field, in order, as a list:
    /// one [definition](Self::definitions) per entry, except for Gemini,
    /// whose function declarations share one tool object
    /// (`{"functionDeclarations": [...]}`), next to `{"google_search": {}}`.
    /// Empty for an empty toolset (providers refuse an empty `tools`
    /// array: leave the field out). Fails as [`Self::definitions`] does.
    ///
    /// ```
    /// use toolcall_core::Toolset;
    /// use toolcall_provider::Dialect;
    /// # use std::sync::LazyLock;
    /// # use toolcall_core::{ToolContext, ToolError, ToolSpec, TypedTool};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Request { city: String }
    /// # struct GetWeather;
    /// # impl TypedTool for GetWeather {
    /// #     type Request = Request; type Output = String; type Error = ToolError;
    /// #     fn spec(&self) -> &ToolSpec { static S: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec::new::<Request>("get_weather", "Weather.")); &S }
    /// #     async fn run(&self, _: &ToolContext, req: Request) -> Result<String, ToolError> { Ok(req.city) }
    /// # }
    ///
    /// let tools = Toolset::builder().add(GetWeather).build().unwrap();
    /// let list = Dialect::Anthropic.tool_list(&tools).unwrap();
    /// assert_eq!(list.len(), 1);
    /// assert_eq!(list[0]["name"], "get_weather");
    /// // Gemini: the declarations inside one tool object.
    /// let gemini = Dialect::Gemini.tool_list(&tools).unwrap();
    /// assert_eq!(gemini[0]["functionDeclarations"][0]["name"], "get_weather");
    /// // `tools` is the same list as one JSON value.
    /// assert_eq!(Dialect::Anthropic.tools(&tools).unwrap(), serde_json::Value::Array(list));
    /// ```
    ///
    /// # Errors
    ///
    /// Those of [`Self::definitions`]: a [`DialectError`] for a tool, a web search option or a
    /// provider limit this dialect cannot express.
    pub fn tool_list(self, toolset: &Toolset) -> Result<Vec<Value>, DialectError> {
        let definitions = self.definitions(toolset)?;
        if self == Self::Gemini {
            return Ok(match gemini::assemble(definitions) {
                Value::Array(tools) => tools,
                other => vec![other],
            });
        }
        Ok(definitions.into_iter().map(|definition| definition.value).collect())
    }

    /// Whether the dialect has model messages to read calls from and answer
    /// with results: every dialect but [`Mcp`](Self::Mcp).
    pub fn has_messages(self) -> bool {
        self != Self::Mcp
    }

    /// The tool calls of a model response in this dialect, in order (see the
    /// [table](Self) for what is read; each provider's module says which
    /// parts of the response it accepts).
    ///
    /// Fails if the response is not shaped as the provider documents it, and
    /// for [`Mcp`](Self::Mcp), which has no model response.
    ///
    /// ```
    /// use toolcall_provider::Dialect;
    /// let response = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": null,
    ///     "tool_calls": [{"id": "call_1", "type": "function",
    ///                     "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}]});
    /// let calls = Dialect::OpenAiChatStrict.parse_calls(&response).unwrap();
    /// assert_eq!((calls[0].id.as_str(), calls[0].name.as_str()), ("call_1", "get_weather"));
    /// assert!(Dialect::Mcp.parse_calls(&response).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`MessageError`] when the response is not shaped as the provider documents it (its
    /// [`problem`](MessageError::problem) says where), and always for [`Mcp`](Self::Mcp).
    pub fn parse_calls(self, response: &Value) -> Result<Vec<ToolCall>, MessageError> {
        match self {
            Self::OpenAiChat | Self::OpenAiChatStrict => openai::chat::parse_calls(response),
            Self::OpenAiResponses | Self::OpenAiResponsesStrict => openai::responses::parse_calls(response),
            Self::Anthropic | Self::AnthropicStrict => anthropic::parse_calls(response),
            Self::Gemini => gemini::parse_calls(response),
            Self::Mcp => Err(no_messages("read calls from")),
        }
    }

    /// The transcript as this dialect's conversation, in order, to send as
    /// the request's messages: each user message (its text, images and
    /// files), each assistant message (its text, calls and the reasoning
    /// the provider takes back), and each turn's results as
    /// [`Self::format_results`] writes them.
    ///
    /// | dialect | gives | to send as |
    /// |---|---|---|
    /// | `OpenAiChat`, `OpenAiChatStrict` | `user`, `assistant` (its `content` `""` beside `tool_calls`) and `tool` messages | `messages` |
    /// | `OpenAiResponses`, `OpenAiResponsesStrict` | `message`, `reasoning`, `function_call` and `function_call_output` items; the items before the latest `compaction` item left out | `input` |
    /// | `Anthropic`, `AnthropicStrict` | `user` and `assistant` messages, consecutive turns of one role merged; `thinking` and server tool blocks sent back as they came | `messages` |
    /// | `Gemini` | `user` and `model` contents, each thought signature on the part it came with | `contents` |
    /// | `Mcp` | nothing: an error | |
    ///
    /// The instructions are not in it: every request has its own place for
    /// them (a first `system` message in Chat Completions, `instructions`
    /// in Responses, `system` for Anthropic, `systemInstruction` for
    /// Gemini), which the client writes. Another provider's reasoning is
    /// left out, as no provider takes another's. The provider modules have
    /// the details and cite the providers' pages.
    ///
    /// ```
    /// use toolcall_core::ToolCall;
    /// use toolcall_provider::{Dialect, Message};
    /// let transcript = [Message::user("Weather?"),
    ///     Message::assistant("", [ToolCall::new("call_1", "weather", "{}")])];
    /// let messages = Dialect::OpenAiChat.messages(&transcript).unwrap();
    /// assert_eq!(messages[0], serde_json::json!({"role": "user", "content": "Weather?"}));
    /// assert_eq!(messages[1]["content"], "");
    /// assert_eq!(messages[1]["tool_calls"][0]["function"]["name"], "weather");
    /// let input = Dialect::OpenAiResponses.messages(&transcript).unwrap();
    /// assert_eq!(input[0], serde_json::json!({"type": "message", "role": "user", "content": "Weather?"}));
    /// assert_eq!(input[1]["type"], "function_call");
    /// assert!(Dialect::Mcp.messages(&transcript).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`MessageError`] always for [`Mcp`](Self::Mcp), and for a part of a user message or of a
    /// tool's result that this dialect cannot send, named in [`refused`](MessageError::refused)
    /// with the message that held it ([`PartOf`](crate::PartOf)).
    pub fn messages(self, transcript: &[Message]) -> Result<Vec<Value>, MessageError> {
        match self {
            Self::OpenAiChat | Self::OpenAiChatStrict => openai::chat::messages(self, transcript),
            Self::OpenAiResponses | Self::OpenAiResponsesStrict => openai::responses::input(self, transcript),
            Self::Anthropic | Self::AnthropicStrict => anthropic::messages(self, transcript),
            Self::Gemini => gemini::contents(transcript),
            Self::Mcp => Err(no_messages("write a transcript to")),
        }
    }

    /// A model response in this dialect as content, in order: its text,
    /// its calls (the [`Self::parse_calls`] of it), its reasoning, and the
    /// provider's own items that must go back as they came
    /// ([`Content::Native`]); [`Self::messages`] sends them back. What is
    /// read, per dialect (the provider modules have the details and the
    /// sources):
    ///
    /// | dialect | takes | reads |
    /// |---|---|---|
    /// | `OpenAiChat`, `OpenAiChatStrict` | the response, or its `choices[0].message` | `reasoning_content` (or `reasoning`, as OpenAI-compatible servers send it), `content` (or the `refusal` in its place), the `function` calls of `tool_calls` |
    /// | `OpenAiResponses`, `OpenAiResponsesStrict` | the response, or its `output` array | `reasoning` items, the `output_text` and `refusal` parts of `message` items, `function_call` items, `compaction` items (native) |
    /// | `Anthropic`, `AnthropicStrict` | the message, or its `content` array | `text`, `tool_use`, `thinking` and `redacted_thinking` blocks; server tool blocks and `compaction` blocks (native) |
    /// | `Gemini` | the response (its `candidates[0].content`), a content, or its `parts` array | text parts, `functionCall` parts (a call without an id gets one, [`SYNTHETIC_ID_PREFIX`](crate::gemini::SYNTHETIC_ID_PREFIX)), `thought` parts, each `thoughtSignature` |
    /// | `Mcp` | nothing: an error | |
    ///
    /// Other parts (web search calls and the like) are skipped. How the
    /// response ended is [`Self::finish`]'s.
    ///
    /// ```
    /// use toolcall_provider::{Content, Dialect, Reasoning};
    /// let message = serde_json::json!({"role": "assistant", "content": "4", "reasoning_content": "2 + 2"});
    /// assert_eq!(Dialect::OpenAiChat.content(&message).unwrap(), [
    ///     Content::Reasoning(Reasoning::ReasoningContent { text: "2 + 2".into() }), Content::text("4")]);
    /// let response = serde_json::json!({"role": "assistant", "content": [
    ///     {"type": "thinking", "thinking": "Paris first.", "signature": "EqQB"},
    ///     {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}]});
    /// let content = Dialect::Anthropic.content(&response).unwrap();
    /// assert!(matches!(&content[0], Content::Reasoning(Reasoning::Thinking { .. })));
    /// assert!(matches!(&content[1], Content::Call(call) if call.arguments == r#"{"city":"Paris"}"#));
    /// assert!(Dialect::Mcp.content(&response).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`MessageError`] always for [`Mcp`](Self::Mcp), and when the response is not shaped as the
    /// provider documents it (its [`problem`](MessageError::problem) says where): not one of
    /// the shapes the table lists, an empty `choices` or `candidates`, a Gemini candidate
    /// without `content` (stopped for safety or length: read its `finishReason`), or a call,
    /// reasoning or compaction item that lacks a field.
    pub fn content(self, message: &Value) -> Result<Vec<Content>, MessageError> {
        match self {
            Self::OpenAiChat | Self::OpenAiChatStrict => openai::chat::content(message),
            Self::OpenAiResponses | Self::OpenAiResponsesStrict => openai::responses::content(message),
            Self::Anthropic | Self::AnthropicStrict => anthropic::content(message),
            Self::Gemini => gemini::content(message),
            Self::Mcp => Err(no_messages("read content from")),
        }
    }

    /// How the model ended its response, from the reason the provider gave
    /// ([`Finish`] has the table of reasons):
    ///
    /// | dialect | `reason` is |
    /// |---|---|
    /// | `OpenAiChat`, `OpenAiChatStrict` | `choices[0].finish_reason` |
    /// | `OpenAiResponses`, `OpenAiResponsesStrict` | `incomplete_details.reason` of a response whose `status` is `incomplete` (`"incomplete"` when it has none) |
    /// | `Anthropic`, `AnthropicStrict` | `stop_reason` |
    /// | `Gemini` | `candidates[0].finishReason` |
    /// | `Mcp` | anything: [`Finish::Complete`] |
    ///
    /// A Responses response gives a reason only when it is `incomplete`, so
    /// its `status` comes first: `completed` is [`Finish::Complete`] without
    /// asking, `failed` and `cancelled` are errors; an `incomplete` one was
    /// refused by `content_filter`, else cut off (`max_output_tokens`). A
    /// reason this method does not know is [`Finish::Complete`], and so is
    /// any for [`Mcp`](Self::Mcp), which has no model response. Never fails.
    ///
    /// ```
    /// use toolcall_provider::{Dialect, Finish};
    /// assert_eq!(Dialect::OpenAiChat.finish("length"), Finish::Truncated { reason: "length".into() });
    /// let responses = Dialect::OpenAiResponses;
    /// assert_eq!(responses.finish("content_filter"), Finish::Refused { reason: "content_filter".into() });
    /// assert_eq!(responses.finish("max_output_tokens"), Finish::Truncated { reason: "max_output_tokens".into() });
    /// assert_eq!(Dialect::Anthropic.finish("pause_turn"), Finish::Paused { reason: "pause_turn".into() });
    /// assert_eq!(Dialect::Gemini.finish("STOP"), Finish::Complete);
    /// ```
    pub fn finish(self, reason: &str) -> Finish {
        match self {
            Self::OpenAiChat | Self::OpenAiChatStrict => openai::chat::finish(reason),
            Self::OpenAiResponses | Self::OpenAiResponsesStrict => openai::responses::finish(reason),
            Self::Anthropic | Self::AnthropicStrict => anthropic::finish(reason),
            Self::Gemini => gemini::finish(reason),
            Self::Mcp => Finish::Complete,
        }
    }

    /// The turn's results as what to append to the conversation in this
    /// dialect, in call order (see the [table](Self)): one message or item
    /// per result for OpenAI, one message holding every result for Anthropic
    /// and Gemini, and nothing for a turn without results.
    ///
    /// A result's [parts](ToolResult::parts) (text, JSON, images, files)
    /// are sent as the provider documents them, and its artifact never is:
    ///
    /// | dialect | images and files |
    /// |---|---|
    /// | `OpenAiChat`, `OpenAiChatStrict` | a tool message is text: it names them, and one user message after the turn's tool messages carries them (`image_url`, `file` parts) |
    /// | `OpenAiResponses`, `OpenAiResponsesStrict` | the `output` array: `input_text`, `input_image`, `input_file` |
    /// | `Anthropic`, `AnthropicStrict` | the `tool_result`'s `content` blocks: `text`, `image`, `document` |
    /// | `Gemini` | the `functionResponse`'s `parts` (`inlineData`), referenced from its `response` |
    ///
    /// The provider modules ([`openai`](crate::openai),
    /// [`anthropic`](crate::anthropic), [`gemini`](crate::gemini)) cite the
    /// providers' pages. A result without parts gives what it always gave.
    ///
    /// Fails for [`Mcp`](Self::Mcp), which has no model messages, and for a
    /// part the provider cannot take (an image type it does not read, a URL
    /// where it takes only bytes, a file type it has no way for): the
    /// [`MessageError`] names this dialect, the tool and the part
    /// ([`MessageError::refused`]), as nothing is dropped silently.
    ///
    /// ```
    /// use toolcall_core::{Outcome, ToolResult};
    /// use toolcall_provider::Dialect;
    /// let result = ToolResult::new("call_1", "get_weather", "21°C", Outcome::Success);
    /// let messages = Dialect::OpenAiChat.format_results(&[result]).unwrap();
    /// assert_eq!(messages, [serde_json::json!({"role": "tool", "tool_call_id": "call_1", "content": "21°C"})]);
    /// ```
    ///
    /// # Errors
    ///
    /// [`MessageError`] always for [`Mcp`](Self::Mcp), and for a part the provider cannot take,
    /// with [`MessageError::refused`] naming the tool and the part: convert or leave out that part.
    pub fn format_results(self, results: &[ToolResult]) -> Result<Vec<Value>, MessageError> {
        let formatted = match self {
            Self::OpenAiChat | Self::OpenAiChatStrict => openai::chat::format_results(results),
            Self::OpenAiResponses | Self::OpenAiResponsesStrict => openai::responses::format_results(results),
            Self::Anthropic | Self::AnthropicStrict => anthropic::format_results(results),
            Self::Gemini => gemini::format_results(results),
            Self::Mcp => return Err(no_messages("write results to")),
        };
        // The provider modules name the non-strict dialect: the messages
        // are the same in both.
        formatted.map_err(|error| error.in_dialect(self))
    }
}

/// Why [`Dialect::Mcp`] has no messages, for the error of its message methods.
fn no_messages(action: &str) -> MessageError {
    MessageError::new(
        "mcp",
        format!(
            "MCP has no model messages to {action}: a client sends each call as a `tools/call` \
             request and reads the result from the answer (the MCP bridge, tools-mcp, serves them)"
        ),
    )
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(name: &str) -> Result<Self, UnknownDialect> {
        Self::from_name(name).ok_or_else(|| UnknownDialect { name: name.to_owned() })
    }
}

/// One entry of a toolset as a dialect sees it.
pub(crate) enum Entry<'a> {
    Function(&'a dyn Tool),
    /// A tool found through the provider's native tool search, sent with
    /// `defer_loading`.
    Deferred(&'a dyn Tool),
    WebSearch(&'a WebSearch),
    /// The tool search entry: the provider's own, or the local function.
    ToolSearch(&'a ToolSearch),
}

/// The toolset's entries in `dialect`'s definition order. Where the dialect
/// has a native web search, it takes the place of its fallback function,
/// or comes last when there is none; without, the fallback is a function
/// like the others. With tool search on, the deferred tools are sent as
/// such where the provider searches them, and left out elsewhere; the
/// search entry comes first, and the tools searches found come last, in
/// the order found: a find appends to the definitions, and those sent
/// before keep their bytes (prompt caches match a request's prefix).
pub(crate) fn entries(toolset: &Toolset, dialect: Dialect) -> Vec<Entry<'_>> {
    let search = toolset.web_search().filter(|_| dialect.has_native_web_search());
    let native_tool_search = dialect.has_native_tool_search();
    // Where the provider searches, every tool keeps its place (the deferred
    // ones are sent from the start).
    let found =
        toolset.tool_search().filter(|_| !native_tool_search).map(ToolSearch::found).unwrap_or_default();
    let mut out = Vec::with_capacity(toolset.len() + 2);
    if let Some(setting) = toolset.tool_search() {
        out.push(Entry::ToolSearch(setting));
    }
    let mut placed = false;
    for tool in toolset.iter() {
        match search {
            // The search entry above stands for the function answering it.
            _ if tool.spec().name() == RESERVED_TOOL_SEARCH => {}
            Some(search) if tool.spec().name() == RESERVED_WEB_SEARCH => {
                out.push(Entry::WebSearch(search));
                placed = true;
            }
            // Offered at the end, below.
            _ if found.iter().any(|name| tool.spec().name().eq_ignore_ascii_case(name)) => {}
            _ if toolset.is_deferred(tool.spec().name()) => {
                if native_tool_search {
                    out.push(Entry::Deferred(tool.as_ref()));
                }
            }
            _ => out.push(Entry::Function(tool.as_ref())),
        }
    }
    if let (Some(search), false) = (search, placed) {
        out.push(Entry::WebSearch(search));
    }
    let found = found.iter().filter_map(|name| toolset.get(name)).filter(|tool| {
        let name = tool.spec().name();
        !(name == RESERVED_TOOL_SEARCH || search.is_some() && name == RESERVED_WEB_SEARCH)
    });
    out.extend(found.map(|tool| Entry::Function(tool.as_ref())));
    out
}
