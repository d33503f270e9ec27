//! A toolset as an rmcp server: `tools/list`, `tools/call` through the
//! toolset's contract, `notifications/tools/list_changed` on updates.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures::future::Either;

use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CallToolResponse, CallToolResult, ConstString,
    ContentBlock, CustomRequest, CustomResult, ErrorCode, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;
use tokio::sync::{mpsc, watch};

use super::approval::{Verdict, ask};
use super::blocks::call_result;
use tools_core::{Tool, ToolCall, ToolContext, Toolset};

/// A [`Toolset`] served over MCP, on any rmcp transport.
///
/// Cheap to clone: clones share the toolset, so [`McpServer::set_toolset`]
/// on one is seen by every session, and each connected client is sent
/// `notifications/tools/list_changed`: on its session (protocol versions up
/// to 2025-11-25), or on its `subscriptions/listen` stream (2026-07-28).
///
/// A call's [`Output`](tools_core::Output) is sent part by part: its text
/// and text parts as `TextContent`; a JSON part as text, and the first
/// JSON object that fits the tool's output schema (any object when it has
/// none) as `structuredContent` too, where a text that is such an object
/// serves when there is no JSON part (a tool returning `Json<T>`); when
/// the output has text of its own, that JSON is not repeated as text.
/// Images are `ImageContent`, `audio/*` media `AudioContent`, other files
/// embedded resources (a text resource for UTF-8 text types, else a blob,
/// under the URI `tool://<tool>/<file name>`), and content at a URL a
/// resource link. The artifact is the application's and is not sent, not
/// even in `_meta`.
///
/// ```no_run
/// use tools_core::Toolset;
/// use tools_mcp::McpServer;
/// # async fn run(tools: Toolset) -> Result<(), Box<dyn std::error::Error>> {
/// McpServer::new(tools).with_server_info("weather", "1.0.0").serve_stdio().await?;
/// # Ok(()) }
/// ```
pub struct McpServer {
    shared: Arc<Shared>,
    info: Arc<Implementation>,
    context: ToolContext,
    /// Cancelled when the HTTP server stops: the calls it cuts off answer
    /// with a JSON-RPC error, unlike calls the context's owner cancels.
    stopping: Option<tokio_util::sync::CancellationToken>,
    /// Whether this session's `initialize` has been answered: each clone
    /// serves one session (the HTTP server clones one per session), so a
    /// clone starts without it.
    initialized: AtomicBool,
    /// How long a person has to answer an approval request.
    approval_timeout: Duration,
}

impl Clone for McpServer {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            info: Arc::clone(&self.info),
            context: self.context.clone(),
            stopping: self.stopping.clone(),
            initialized: AtomicBool::new(false),
            approval_timeout: self.approval_timeout,
        }
    }
}

struct Shared {
    state: RwLock<Arc<State>>,
    /// Sessions of clients that initialized (protocol versions up to
    /// 2025-11-25): told of changes directly.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Bumped on every change: each `subscriptions/listen` stream (protocol
    /// 2026-07-28, which has no sessions) waits on it.
    changes: watch::Sender<u64>,
}

/// One version of the toolset, with its `tools/list` answer and its
/// output schemas' validators built once.
struct State {
    toolset: Toolset,
    listed: Vec<rmcp::model::Tool>,
    /// Each tool with an output schema, by name: the validator its
    /// structured content must pass, or `None` for a schema that does not
    /// compile (then any JSON object is sent, as for a tool without one).
    outputs: HashMap<String, Option<jsonschema::Validator>>,
}

impl State {
    fn new(toolset: Toolset) -> Arc<Self> {
        let listed = toolset.iter().map(|tool| mcp_tool(tool.as_ref())).collect();
        let outputs = toolset
            .iter()
            .filter_map(|tool| {
                let schema = serde_json::Value::Object(tool.output_schema()?.clone());
                let validator = jsonschema::options().should_validate_formats(false).build(&schema);
                if let Err(error) = &validator {
                    tracing::warn!(tool = tool.name(), %error, "the output schema does not compile");
                }
                Some((tool.name().to_owned(), validator.ok()))
            })
            .collect();
        Arc::new(Self { toolset, listed, outputs })
    }

    /// Whether `value` may be the structured content of `tool`'s result:
    /// it fits the tool's output schema, when it has one.
    fn fits(&self, tool: &str, value: &serde_json::Value) -> bool {
        match self.outputs.get(tool) {
            Some(Some(validator)) => validator.is_valid(value),
            Some(None) | None => true,
        }
    }
}

impl McpServer {
    /// Serve these tools. In `initialize` the server introduces itself by
    /// the running program's name (the executable's file stem, such as
    /// `weather-server`) and this SDK's version, until
    /// [`with_server_info`](Self::with_server_info) says otherwise: pass
    /// `env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")` there for your
    /// crate's own.
    pub fn new(toolset: Toolset) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: RwLock::new(State::new(toolset)),
                peers: Mutex::default(),
                changes: watch::Sender::new(0),
            }),
            info: Arc::new(Implementation::new(program_name(), env!("CARGO_PKG_VERSION"))),
            context: ToolContext::new(),
            stopping: None,
            initialized: AtomicBool::new(false),
            approval_timeout: Duration::from_secs(600),
        }
    }

    /// The name and version the server reports in `initialize`, for
    /// example your crate's: `with_server_info(env!("CARGO_PKG_NAME"),
    /// env!("CARGO_PKG_VERSION"))`.
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Arc::new(Implementation::new(name, version));
        self
    }

    /// The context every call starts from (shared state as extensions, a
    /// deadline); each call gets a child of it, cancelled with the request.
    pub fn with_context(mut self, context: ToolContext) -> Self {
        self.context = context;
        self
    }

    /// How long a call that needs approval waits for the person's answer
    /// on the protocols where the server asks the client (10 minutes by
    /// default); past it, the call does not run.
    pub fn with_approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = timeout;
        self
    }

    /// The same server, and what cancels its calls when the HTTP server
    /// stops (the context's own token still cancels them too).
    pub(crate) fn with_own_cancellation(self) -> (Self, Stop) {
        let calls = self.context.cancellation().child_token();
        let context = self.context.clone().with_cancellation(calls.clone());
        let stopping = tokio_util::sync::CancellationToken::new();
        let server = Self { context, stopping: Some(stopping.clone()), ..self };
        (server, Stop { calls, stopping })
    }

    /// The toolset served now.
    pub fn toolset(&self) -> Toolset {
        self.state().toolset.clone()
    }

    /// Serve another toolset from now on, and tell every connected client
    /// that the list changed.
    pub async fn set_toolset(&self, toolset: Toolset) {
        let state = State::new(toolset);
        match self.shared.state.write() {
            Ok(mut slot) => *slot = state,
            Err(poisoned) => *poisoned.into_inner() = state,
        }
        self.shared.changes.send_modify(|version| *version += 1);
        let peers: Vec<Peer<RoleServer>> = match self.shared.peers.lock() {
            Ok(mut peers) => {
                peers.retain(|peer| !peer.is_transport_closed());
                peers.clone()
            }
            Err(_) => Vec::new(),
        };
        for peer in peers {
            // A client that went away in between needs no notice.
            let _ = peer.notify_tool_list_changed().await;
        }
    }

    /// Change the toolset in place (add, remove, replace tools), then notify
    /// clients as [`set_toolset`](Self::set_toolset) does.
    pub async fn update<R>(&self, change: impl FnOnce(&mut Toolset) -> R) -> R {
        let mut toolset = self.toolset();
        let out = change(&mut toolset);
        self.set_toolset(toolset).await;
        out
    }

    /// Serve one client on stdin/stdout until it disconnects.
    ///
    /// Where stdin and stdout are pipes (a client that spawned the server),
    /// they are put in non-blocking mode and served by the runtime's
    /// reactor: nothing else in the process may print to stdout, which is
    /// the protocol's channel anyway (log to stderr).
    pub async fn serve_stdio(self) -> Result<(), super::McpError> {
        let (input, output) = crate::stdio::std_streams();
        let (stdio, writer) = crate::stdio::transport(input, output);
        let running = self.serve(stdio).await?;
        running.waiting().await.map_err(super::McpError::Task)?;
        // The last answers are still on their way to stdout.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), writer).await;
        Ok(())
    }

    fn state(&self) -> Arc<State> {
        match self.shared.state.read() {
            Ok(state) => Arc::clone(&state),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("info", &self.info).field("toolset", &self.state().toolset).finish()
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
            .with_server_info((*self.info).clone())
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.changes.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    // A stream that asked for other notifications only is
                    // refused this one by rmcp; it needs no notice.
                    let _ = context.sink().notify_tool_list_changed().await;
                }
            }
        }
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.initialized.swap(true, Ordering::AcqRel) {
            return Err(ErrorData::invalid_request(
                "this session is already initialized: `initialize` is sent once, as a session's first request",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // rmcp reads a `tools/call` whose params do not fit as a method of
        // its own; its default answer, "method not found", misleads.
        if request.method != CallToolRequestMethod::VALUE {
            return Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method, None));
        }
        let reason = match request.params.map(serde_json::from_value::<CallToolRequestParams>) {
            None => "there are none".into(),
            Some(Err(error)) => error.to_string(),
            Some(Ok(_)) => "they do not fit the request".into(),
        };
        Err(ErrorData::invalid_params(
            format!(
                "invalid params for `tools/call`: {reason} (expected {{\"name\": string, \"arguments\": object}})"
            ),
            None,
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Ok(mut peers) = self.shared.peers.lock() {
            peers.retain(|peer| !peer.is_transport_closed());
            peers.push(context.peer);
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.state().listed.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let state = self.state();
        let tool = state.toolset.get(name)?;
        state.listed.iter().find(|listed| listed.name == tool.name()).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let state = self.state();
        let Some(tool) = state.toolset.get(&request.name).map(|tool| tool.name().to_owned()) else {
            let names: Vec<&str> = state.toolset.names().collect();
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                Some(json!({ "tools": names })),
            ));
        };
        let arguments = match &request.arguments {
            Some(arguments) => serde_json::Value::Object(arguments.clone()).to_string(),
            None => String::from("{}"),
        };
        let call = ToolCall::new(context.id.to_string(), request.name.as_ref(), arguments);
        // A child of the server's token: cancelling the server cancels every
        // call; the request's own cancellation is relayed to it below.
        let cancel = self.context.cancellation().child_token();
        let mut ctx = self.context.clone().with_cancellation(cancel.clone());
        let token = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref().and_then(|meta| meta.get_progress_token()));
        let forwarder = Arc::new(Mutex::new(None::<Forwarder>));
        if let Some(token) = token {
            let peer = context.peer.clone();
            let slot = Arc::clone(&forwarder);
            // Captured here so a tool may report from any thread.
            let runtime = tokio::runtime::Handle::current();
            ctx = ctx.with_progress(move |progress, total, message| {
                let mut report = ProgressNotificationParam::new(token.clone(), progress);
                report.total = total;
                report.message = message.map(str::to_owned);
                if let Ok(mut forwarder) = slot.lock() {
                    // Started on the first report: most calls report none.
                    let forwarder = forwarder.get_or_insert_with(|| Forwarder::start(&runtime, peer.clone()));
                    let _ = forwarder.sender.send(report);
                }
            });
        }
        let relay = async {
            context.ct.cancelled().await;
            cancel.cancel();
            std::future::pending::<std::convert::Infallible>().await
        };
        let approved = state.toolset.needs_approval(&ctx, &call);
        if approved {
            match ask(&call, &request, &context, self.approval_timeout).await {
                Verdict::Run => {}
                Verdict::Refuse(error) => {
                    return Ok(CallToolResult::error(vec![ContentBlock::text(error.model_content())]).into());
                }
                Verdict::Ask(question) => return Ok(question.into()),
            }
        }
        let run = async {
            match approved {
                true => state.toolset.call_approved(&ctx, &call).await,
                false => state.toolset.call(&ctx, &call).await,
            }
        };
        let result = match futures::future::select(pin!(run), pin!(relay)).await {
            Either::Left((result, _)) => result,
            Either::Right((never, _)) => match never {},
        };
        drop(ctx);
        let stopped = self.stopping.as_ref().is_some_and(|stopping| stopping.is_cancelled());
        if stopped && !result.outcome.is_success() {
            // The server is shutting down, not the client cancelling: what
            // the tool said once cancelled is not its answer. An error the
            // client reads as "not done", whether the executor or the tool
            // itself stopped the call.
            return Err(ErrorData::internal_error(
                format!("the server shut down before the call to `{}` finished", request.name),
                None,
            ));
        }
        let started = forwarder.lock().ok().and_then(|mut forwarder| forwarder.take());
        if let Some(Forwarder { sender, task }) = started {
            // The reply waits for the reports, so no progress arrives after it.
            drop(sender);
            let _ = task.await;
        }
        Ok(call_result(result, &tool, &|value| state.fits(&tool, value)).into())
    }
}

/// Stops a server's calls because the server stops.
#[derive(Debug)]
pub(crate) struct Stop {
    calls: tokio_util::sync::CancellationToken,
    stopping: tokio_util::sync::CancellationToken,
}

impl Stop {
    pub(crate) fn cancel(&self) {
        // First, so every cancelled call sees why.
        self.stopping.cancel();
        self.calls.cancel();
    }
}

/// The task that sends one call's progress reports, in order.
struct Forwarder {
    sender: mpsc::UnboundedSender<ProgressNotificationParam>,
    task: tokio::task::JoinHandle<()>,
}

impl Forwarder {
    fn start(runtime: &tokio::runtime::Handle, peer: Peer<RoleServer>) -> Self {
        let (sender, mut reports) = mpsc::unbounded_channel::<ProgressNotificationParam>();
        let task = runtime.spawn(async move {
            while let Some(report) = reports.recv().await {
                if peer.notify_progress(report).await.is_err() {
                    break;
                }
            }
        });
        Self { sender, task }
    }
}

/// How a tool is listed: name, title, description, input and output schema,
/// annotations.
fn mcp_tool(tool: &dyn Tool) -> rmcp::model::Tool {
    // One definition of a listed tool: the MCP dialect's, read into rmcp's type.
    serde_json::from_value(tools_provider::mcp::tool(tool))
        .expect("the MCP dialect writes rmcp's tool shape: strings and JSON objects")
}

/// The running executable's file stem: the user's program, where the name
/// of this crate would introduce every server as the SDK.
fn program_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|path| path.file_stem().map(|stem| stem.to_string_lossy().into_owned()))
        .filter(|stem| !stem.is_empty())
        .unwrap_or_else(|| env!("CARGO_PKG_NAME").to_owned())
}
