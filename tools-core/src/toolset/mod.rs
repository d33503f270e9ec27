//! The toolset: a registry of tools under their lower-cased names, and the
//! executor that runs one model turn's calls against it.
//!
//! Its state is declared here, in one place; each file adds one part of
//! its behaviour: `registry` (registration, lookup, removal), `builder`
//! (many tools, one `?`), `compose` (toolsets merged, filtered, prefixed,
//! one tool renamed), `prepare` (the tools the model sees this turn), `run`
//! (the turn executor), `observe` (callbacks around every call), `layer`
//! (code that wraps every call), `approval` (which calls wait for a
//! person), `counters` (per-tool counts), `names` (the naming rules),
//! `web_search` (the reserved entry).

mod approval;
mod builder;
mod cap;
mod compose;
mod counters;
mod layer;
mod names;
mod observe;
mod prepare;
mod registry;
mod run;
mod tool_search;
mod web_search;

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

pub use builder::ToolsetBuilder;
pub use cap::{OutputCap, truncate};
pub use counters::CallCounts;
pub use layer::{Before, Layer, LayerCall, Next, OnError};
pub use names::{NameError, RESERVED_TOOL_SEARCH, RESERVED_WEB_SEARCH, validate_name};
pub use observe::Observer;
pub use tool_search::ToolSearch;
pub use web_search::WebSearch;

use crate::Tool;
use counters::ToolCounters;
use prepare::PrepareStep;

/// Why a tool could not be registered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsetError {
    /// The name breaks the naming rules.
    #[error(transparent)]
    InvalidName(#[from] NameError),
    /// A tool with the same lower-cased name is already registered.
    #[error("tool `{new}` collides with the registered tool `{existing}`: names are compared ignoring case")]
    Duplicate {
        /// The name already registered.
        existing: String,
        /// The name that was refused.
        new: String,
    },
    /// `web_search` and `tool_search` are reserved for the entries of
    /// those names.
    #[error("{}", reserved(name))]
    Reserved {
        /// The refused name.
        name: String,
    },
    /// The tool's parameters are not an object schema.
    #[error(
        "tool `{name}` has a parameter schema whose root is not `\"type\": \"object\"`; use a struct as the request type"
    )]
    NotAnObject {
        /// The refused tool.
        name: String,
    },
    /// Two merged toolsets hold tools whose names differ at most in case
    /// ([`Toolset::merge`]); each is named with the label of the toolset it
    /// came from ([`Toolset::with_source`]).
    #[error(
        "tool `{new}` from {} collides with `{existing}` from {}: names are compared ignoring case; \
         prefix one toolset (Toolset::prefixed) or rename the tool (Toolset::rename)",
        compose::origin(new_source.as_deref(), "the toolset being merged"),
        compose::origin(existing_source.as_deref(), "the toolset merged into")
    )]
    Collision {
        /// The name in the toolset being merged.
        new: String,
        /// The label of the toolset it came from, if it had one.
        new_source: Option<String>,
        /// The name already there.
        existing: String,
        /// The label of the toolset it came from, if it had one.
        existing_source: Option<String>,
    },
    /// No tool has the name an operation was given ([`Toolset::rename`],
    /// [`Toolset::redescribe`], [`Toolset::only`]).
    #[error(
        "there is no tool named `{name}` (names are compared ignoring case); {}",
        compose::listing(available)
    )]
    Unknown {
        /// The name given.
        name: String,
        /// The names there are, in registration order.
        available: Vec<String>,
    },
    /// A prefix makes a tool's name break the naming rules ([`Toolset::prefixed`]).
    #[error(
        "the prefix `{prefix}` gives tool `{tool}` an invalid name: {error}; choose a shorter prefix \
         of a-z, 0-9, `_` and `-`, or rename the tool first (Toolset::rename)"
    )]
    InvalidPrefix {
        /// The prefix given.
        prefix: String,
        /// The tool's name before the prefix.
        tool: String,
        /// What is wrong with the name it would get.
        error: NameError,
    },
    /// The provider-native `web_search` entry keeps its reserved name: it
    /// is neither prefixed nor renamed ([`Toolset::prefixed`], [`Toolset::rename`]).
    #[error("{}", compose::reserved_web_search(prefix.as_deref()))]
    WebSearchName {
        /// The prefix refused, when a prefix was.
        prefix: Option<String>,
    },
}

/// Why a reserved name is refused, and what to do instead.
fn reserved(name: &str) -> String {
    if name.eq_ignore_ascii_case(RESERVED_TOOL_SEARCH) {
        return format!(
            "tool name `{name}` is reserved for tool search: turn it on with Toolset::with_tool_search, or give \
             the tool another name"
        );
    }
    format!(
        "tool name `{name}` is reserved for the provider's native web search: register it with \
         Toolset::add_web_search, or give the tool another name"
    )
}

/// The tools a model may call, under their lower-cased names, in
/// registration order.
///
/// ```
/// use toolcall_core::toolset::Toolset;
/// # use toolcall_core::{Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};
/// # struct Named(ToolSpec);
/// # impl Tool for Named {
/// #     fn spec(&self) -> &ToolSpec { &self.0 }
/// #     fn call<'a>(&'a self, _: &'a ToolContext, _: &'a str) -> OutputFuture<'a> { Box::pin(async { Ok(Output::text("")) }) }
/// # }
/// # fn tool(name: &'static str) -> Named {
/// #     Named(ToolSpec::from_parameters(name, "", Parameters::of::<()>()))
/// # }
/// let mut tools = Toolset::new();
/// tools.add(tool("Get_Weather")).unwrap();
/// assert!(tools.get("get_weather").is_some());
/// let err = tools.add(tool("GET_WEATHER")).unwrap_err();
/// assert!(err.to_string().contains("`Get_Weather`"));
///
/// // Many tools, one `?`: the first refusal is the error.
/// let built = Toolset::builder().add(tool("search")).add(tool("fetch")).build();
/// assert_eq!(built.unwrap().names().collect::<Vec<_>>(), ["search", "fetch"]);
/// ```
///
/// A clone holds the same tools and shares their call counters.
#[derive(Clone, Default)]
pub struct Toolset {
    /// The registrations, in order.
    tools: Vec<Entry>,
    /// Lower-cased name to index in `tools`.
    index: HashMap<String, usize>,
    web_search: Option<WebSearch>,
    /// Tool search, when it is on: which tools are offered from the start.
    tool_search: Option<ToolSearch>,
    options: TurnOptions,
    observers: Vec<Arc<dyn Observer>>,
    /// Around every call, outermost first.
    layers: Vec<Arc<dyn Layer>>,
    /// Which tools' calls wait for approval, beyond their own say.
    approval_rules: Vec<approval::ToolRule>,
    /// Calls of names no tool has, shared by clones like the tools' counters.
    not_found: Arc<AtomicU64>,
    /// The label of this toolset, given to the tools registered in it.
    source: Option<Arc<str>>,
    /// Which tools the model sees in a turn ([`Toolset::prepared`]).
    prepare: Vec<PrepareStep>,
}

/// One registered tool and what the executor keeps beside it.
#[derive(Clone)]
struct Entry {
    /// The tool as the model sees it: the registered one, or that one under
    /// the name and description composition gave it.
    tool: Arc<dyn Tool>,
    /// The tool as it was registered: composition wraps this one again
    /// rather than wrapping its own wrapper.
    own: Arc<dyn Tool>,
    /// The name it is called by (`tool`'s), for lookups without a virtual call.
    name: Arc<str>,
    /// `own`'s name, shared with every call's context instead of copied
    /// into it: a prefix or a rename stays out of the tool's logic.
    own_name: smol_str::SmolStr,
    options: ToolOptions,
    counters: Arc<ToolCounters>,
    /// The label of the toolset it was registered in.
    source: Option<Arc<str>>,
}

/// How the executor runs a turn, for every tool of the toolset.
///
/// ```
/// use std::time::Duration;
/// use toolcall_core::toolset::{TurnOptions, Toolset};
///
/// let tools = Toolset::new()
///     .with_options(TurnOptions::new().with_default_timeout(Duration::from_secs(30)).with_max_concurrency(8));
/// assert_eq!(tools.options().max_concurrency, Some(8));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TurnOptions {
    /// The timeout of a call whose tool declares none and was registered
    /// without one.
    pub default_timeout: Option<Duration>,
    /// The most calls of one turn that run at once; unbounded if `None`.
    pub max_concurrency: Option<usize>,
    /// How much of each call's output the model reads ([`OutputCap`]).
    pub output_cap: OutputCap,
    /// Whether each call's span records its arguments and, when it
    /// succeeds, its result (`gen_ai.tool.call.arguments`,
    /// `gen_ai.tool.call.result`). Off by default: they may hold what the
    /// user or a tool would not have in a trace.
    pub trace_content: bool,
}

impl TurnOptions {
    /// No default timeout, no bound on concurrency, the default [`OutputCap`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Give each call at most `timeout`, for tools that declare none.
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = Some(timeout);
        self
    }

    /// Run at most `limit` calls of a turn at once (at least one).
    pub fn with_max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = Some(limit.max(1));
        self
    }

    /// Record each call's arguments and result on its span
    /// ([`TurnOptions::trace_content`]).
    pub fn with_trace_content(mut self, yes: bool) -> Self {
        self.trace_content = yes;
        self
    }
}

/// What one registration says about its tool, ahead of what the tool
/// declares itself ([`Toolset::add_with`]).
///
/// ```
/// use std::time::Duration;
/// use toolcall_core::toolset::ToolOptions;
/// let options = ToolOptions::new().with_timeout(Duration::from_secs(2));
/// assert_eq!(options.timeout, Some(Duration::from_secs(2)));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ToolOptions {
    /// The most one call may take, whatever the tool's own timeout.
    pub timeout: Option<Duration>,
    /// How much of each call's output the model reads, instead of the
    /// toolset's cap ([`ToolOptions::with_output_cap`]).
    pub output_cap: Option<OutputCap>,
    /// This tool's own layers, inside the toolset's, outermost first.
    pub layers: Vec<Arc<dyn Layer>>,
    /// Which of this tool's calls wait for approval
    /// ([`ToolOptions::with_approval_when`]).
    approval: Option<approval::CallRule>,
    /// Every call waits for approval: a toolset rule picked the tool before
    /// it was merged, prefixed or renamed, and composition never clears an
    /// approval.
    held: bool,
    /// The observers of the toolsets it was merged from, told after this
    /// toolset's.
    observers: Vec<Arc<dyn Observer>>,
    /// The prepare steps of the toolsets it was merged from.
    prepare: Vec<PrepareStep>,
}

impl std::fmt::Debug for ToolOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolOptions")
            .field("timeout", &self.timeout)
            .field("layers", &self.layers.len())
            .field("approval", &(self.approval.is_some() || self.held))
            .field("observers", &self.observers.len())
            .field("prepare", &self.prepare.len())
            .finish()
    }
}

impl ToolOptions {
    /// Nothing beyond what the tool declares.
    pub fn new() -> Self {
        Self::default()
    }

    /// Limit each call of this registration to `timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Wrap each call of this tool in `layer`, inside the toolset's layers
    /// and any added before it ([`Layer`] has the order).
    pub fn with_layer(mut self, layer: impl Layer + 'static) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }
}

/// A tool as the toolset keeps it: an `Arc<dyn Tool>` as it is, any other
/// tool in a new `Arc`. (`Arc<dyn Tool>` is itself a `Tool`, and wrapping it
/// again would cost every call a second indirection.)
fn shared<T: Tool + 'static>(tool: T) -> Arc<dyn Tool> {
    match (&tool as &dyn Any).downcast_ref::<Arc<dyn Tool>>() {
        Some(arc) => Arc::clone(arc),
        None => Arc::new(tool),
    }
}

/// The text of a panic payload, when it has one.
fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a non-string panic payload")
}

impl std::fmt::Debug for Toolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolset")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("web_search", &self.web_search)
            .field("options", &self.options)
            .field("observers", &self.observers.len())
            .field("layers", &self.layers.len())
            .field("approval_rules", &self.approval_rules.len())
            .field("source", &self.source)
            .field("prepare", &self.prepare.len())
            .finish()
    }
}
