//! The server value: what it serves and with which settings, its toolset
//! swapped while clients are connected, and stdio.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::model::Implementation;
use rmcp::{Peer, RoleServer, ServiceExt};
use tokio::sync::watch;

use super::state::{Shared, State};
use toolcall_core::{ToolContext, Toolset};

/// A [`Toolset`] served over MCP, on any rmcp transport.
///
/// Cheap to clone: clones share the toolset, so [`McpServer::set_toolset`]
/// on one is seen by every session, and each connected client is sent
/// `notifications/tools/list_changed`: on its session (protocol versions up
/// to 2025-11-25), or on its `subscriptions/listen` stream (2026-07-28).
///
/// A call's [`Output`](toolcall_core::Output) is sent part by part: its text
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
/// use toolcall_core::Toolset;
/// use toolcall_mcp::McpServer;
/// # async fn run(tools: Toolset) -> Result<(), Box<dyn std::error::Error>> {
/// McpServer::new(tools).with_server_info("weather", "1.0.0").serve_stdio().await?;
/// # Ok(()) }
/// ```
pub struct McpServer {
    pub(super) shared: Arc<Shared>,
    pub(super) info: Arc<Implementation>,
    pub(super) context: ToolContext,
    /// Cancelled when the HTTP server stops: the calls it cuts off answer
    /// with a JSON-RPC error, unlike calls the context's owner cancels.
    pub(super) stopping: Option<tokio_util::sync::CancellationToken>,
    /// Whether this session's `initialize` has been answered: each clone
    /// serves one session (the HTTP server clones one per session), so a
    /// clone starts without it.
    pub(super) initialized: AtomicBool,
    /// How long a person has to answer an approval request.
    pub(super) approval_timeout: Duration,
    /// Served over HTTP without sessions ([`crate::HttpOptions::with_stateless`]):
    /// before 2026-07-28 the server cannot ask the client anything.
    pub(super) stateless: bool,
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
            stateless: self.stateless,
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
            stateless: false,
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
    ///
    /// What the server writes waits for the client to read it in a queue
    /// of 1 MiB at most (a longer answer is queued alone); while the queue
    /// is full the server reads no further request, so a client that sends
    /// and never reads blocks on its own full pipe and the server's memory
    /// stays flat. Once the client reads, every answer follows in turn.
    /// When the client closes the server's input, the calls in flight
    /// finish (10 s at most) and the last answers are written for as long
    /// as the client keeps reading them; one that reads nothing for 1 s is
    /// given up on, so the server exits.
    ///
    /// # Errors
    ///
    /// [`McpError::Transport`](crate::McpError::Transport) when stdin or stdout fails before the
    /// handshake is done, [`McpError::Accept`](crate::McpError::Accept) when the handshake fails
    /// otherwise, [`McpError::Task`](crate::McpError::Task) when the serving task panics.
    pub async fn serve_stdio(self) -> Result<(), crate::McpError> {
        let (input, output) = crate::stdio::std_streams();
        let (stdio, writer) = crate::stdio::transport(input, output);
        let running = self.serve(stdio).await?;
        running.waiting().await.map_err(crate::McpError::Task)?;
        // The last answers are still on their way to stdout.
        writer.finish().await;
        Ok(())
    }

    /// This server, answering each HTTP request on its own: its approval
    /// refusals then say why the client could not be asked.
    pub(crate) fn answering_statelessly(mut self, yes: bool) -> Self {
        self.stateless = yes;
        self
    }

    pub(super) fn state(&self) -> Arc<State> {
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

/// The running executable's file stem: the user's program, where the name
/// of this crate would introduce every server as the SDK.
fn program_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|path| path.file_stem().map(|stem| stem.to_string_lossy().into_owned()))
        .filter(|stem| !stem.is_empty())
        .unwrap_or_else(|| env!("CARGO_PKG_NAME").to_owned())
}
