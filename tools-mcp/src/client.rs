//! Remote MCP tools as local ones: connect to a server (a child process over
//! stdio, or a URL) and register its tools into a toolset.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};

use super::McpError;
use super::blocks::{output_of, remote_error};
use crate::approval::NEEDS_APPROVAL;
use crate::approved::Approvals;
use toolcall_core::{
    Annotations, Output, OutputFuture, Parameters, Tool, ToolContext, ToolError, ToolSpec, Toolset,
};

type Connection = Arc<RunningService<RoleClient, Approvals>>;

/// Whether one of a server's tools joins the toolset.
type Filter = Arc<dyn Fn(&dyn Tool) -> bool + Send + Sync>;

/// A connection to an MCP server, whose tools can join a [`Toolset`].
///
/// ```no_run
/// use toolcall_core::Toolset;
/// use toolcall_mcp::{McpClient, Registration};
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = McpClient::stdio(tokio::process::Command::new("my-mcp-server")).await?;
/// let mut tools = Toolset::new();
/// client.register(&mut tools).await?; // remote tools, called like local ones
///
/// // Another server's read-only tools, as `github_*`.
/// let github = McpClient::http("http://127.0.0.1:8001/mcp").await?;
/// let read_only = Registration::new().with_prefix("github").with_filter(|tool| tool.spec().annotations().read_only == Some(true));
/// github.register_with(&mut tools, read_only).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpClient {
    connection: Connection,
}

impl McpClient {
    /// Start `command` and speak MCP on its stdin/stdout.
    ///
    /// # Errors
    ///
    /// [`McpError::Spawn`] when the program cannot be started; [`McpError::Transport`] when the
    /// process exits or its pipes fail before the handshake; [`McpError::Connect`] when the
    /// handshake fails otherwise (no protocol version both speak...).
    pub async fn stdio(command: tokio::process::Command) -> Result<Self, McpError> {
        let program = command.as_std().get_program().to_string_lossy().into_owned();
        let transport =
            TokioChildProcess::new(command).map_err(|source| McpError::Spawn { program, source })?;
        Self::connect(transport).await
    }

    /// Connect to a streamable HTTP server at `url` (e.g. `http://127.0.0.1:8000/mcp`).
    ///
    /// # Errors
    ///
    /// [`McpError::Transport`] when nothing answers at `url` or the server refuses the
    /// connection (it may want a token: [`Self::http_with_token`]); [`McpError::Connect`] when
    /// the handshake fails otherwise.
    pub async fn http(url: &str) -> Result<Self, McpError> {
        Self::connect(StreamableHttpClientTransport::from_uri(url)).await
    }

    /// Connect to a streamable HTTP server that wants a bearer token.
    ///
    /// # Errors
    ///
    /// [`McpError::Transport`] when nothing answers at `url` or the server refuses the token;
    /// [`McpError::Connect`] when the handshake fails otherwise.
    pub async fn http_with_token(url: &str, token: &str) -> Result<Self, McpError> {
        let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
        Self::connect(StreamableHttpClientTransport::from_config(config)).await
    }

    /// Connect over any rmcp client transport (a duplex stream, a socket...).
    ///
    /// # Errors
    ///
    /// [`McpError::Transport`] when the transport fails before the handshake is done;
    /// [`McpError::Connect`] when the handshake fails otherwise.
    pub async fn connect<T, E, A>(transport: T) -> Result<Self, McpError>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let service = Approvals::default().serve(transport).await?;
        Ok(Self { connection: Arc::new(service) })
    }

    /// The rmcp peer, for anything beyond tools.
    pub fn peer(&self) -> &rmcp::Peer<RoleClient> {
        self.connection.peer()
    }

    /// The server's tools, as local [`Tool`]s.
    ///
    /// # Errors
    ///
    /// [`McpError::Request`] when `tools/list` fails or the server answers it with an error.
    pub async fn tools(&self) -> Result<Vec<RemoteTool>, McpError> {
        let listed = self
            .connection
            .peer()
            .list_all_tools()
            .await
            .map_err(|source| McpError::Request { request: "tools/list", source })?;
        Ok(listed.into_iter().map(|tool| RemoteTool::new(Arc::clone(&self.connection), tool)).collect())
    }

    /// Add every tool of the server to `toolset`; returns how many. A name
    /// that breaks the rules or collides is an error, and nothing is added.
    /// The same as [`McpClient::register_with`] with [`Registration::new`].
    ///
    /// # Errors
    ///
    /// As [`Self::register_with`]: [`McpError::Request`] when `tools/list` fails,
    /// [`McpError::Register`] when a tool's name breaks the rules or collides.
    pub async fn register(&self, toolset: &mut Toolset) -> Result<usize, McpError> {
        self.register_with(toolset, Registration::new()).await
    }

    /// Add the server's tools that `registration` keeps to `toolset`, under
    /// its prefix; returns how many. They are gathered in a toolset of
    /// their own, labeled with the server's name unless the registration
    /// gives a label ([`Toolset::with_source`]), prefixed
    /// ([`Toolset::prefixed`]) and merged ([`Toolset::merge`]): a name that
    /// breaks the rules or collides is an error naming both sources, and
    /// nothing is added. `toolset`'s layers, observers, approval rules and
    /// prepare steps apply to them like to its other tools.
    ///
    /// ```no_run
    /// use toolcall_core::Toolset;
    /// use toolcall_mcp::{McpClient, Registration};
    /// # async fn run(client: McpClient) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut tools = Toolset::new();
    /// let registration = Registration::new().with_prefix("github").with_filter(|tool| !tool.spec().name().starts_with("delete_"));
    /// let added = client.register_with(&mut tools, registration).await?;
    /// assert!(tools.names().all(|name| name.starts_with("github_")));
    /// # let _ = added; Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`McpError::Request`] when `tools/list` fails; [`McpError::Register`] when a tool's name
    /// breaks the rules, the prefix makes one invalid, or one collides with a tool of `toolset`
    /// (prefix or filter the server's tools to avoid it). Nothing is added then.
    pub async fn register_with(
        &self,
        toolset: &mut Toolset,
        registration: Registration,
    ) -> Result<usize, McpError> {
        let Registration { prefix, filters, source } = registration;
        let mut server = Toolset::new();
        let label = source.or_else(|| self.server_name());
        if let Some(label) = &label {
            server = server.with_source(label.clone());
        }
        let refused = |source| McpError::Register { server: label.clone(), source };
        // The filters come first: a tool they leave out may have a name no
        // toolset takes.
        for tool in self.tools().await? {
            if filters.iter().all(|keep| keep(&tool)) {
                server.add(tool).map_err(refused)?;
            }
        }
        let server = server.prefixed(prefix.as_deref().unwrap_or_default()).map_err(refused)?;
        let added = server.len();
        toolset.merge(server).map_err(refused)?;
        Ok(added)
    }

    /// The name the server gave itself when it connected.
    fn server_name(&self) -> Option<String> {
        let info = self.connection.peer().peer_info()?;
        info.server_info.as_ref().map(|server| server.name.clone()).filter(|name| !name.is_empty())
    }
}

/// Which of a server's tools join a toolset, and under what names
/// ([`McpClient::register_with`]): all of them under their own names
/// unless it says otherwise.
///
/// ```
/// use toolcall_mcp::Registration;
/// let registration = Registration::new()
///     .with_prefix("github")
///     .with_filter(|tool| tool.spec().annotations().destructive != Some(true))
///     .with_source("github-mcp");
/// # let _ = registration;
/// ```
#[derive(Clone, Default)]
#[must_use = "a registration does nothing until given to McpClient::register_with"]
pub struct Registration {
    prefix: Option<String>,
    filters: Vec<Filter>,
    source: Option<String>,
}

impl Registration {
    /// Every tool, under the server's names, labeled with the server's name.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register each tool as `<prefix>_<name>`, lower-cased
    /// ([`Toolset::prefixed`]): the remote call still goes by the server's name.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Keep only the tools `keep` says yes to, judged under the server's
    /// names (before the prefix); with several filters, every one must.
    pub fn with_filter(mut self, keep: impl Fn(&dyn Tool) -> bool + Send + Sync + 'static) -> Self {
        self.filters.push(Arc::new(keep));
        self
    }

    /// Label the tools `source` instead of the server's name, for errors
    /// and [`Toolset::source_of`].
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("prefix", &self.prefix)
            .field("filters", &self.filters.len())
            .field("source", &self.source)
            .finish()
    }
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient").field("server", &self.connection.peer().peer_info()).finish()
    }
}

/// One tool of a remote MCP server, callable as a local [`Tool`].
///
/// Its arguments go through the same pipeline as a local tool's
/// ([`ToolSpec::parse_object`]: size, cleaning, depth; the remote server
/// checks its own schema). Errors keep the contract: a result with
/// `isError` is the error the server's call ended with where the server
/// says which (this SDK's servers do, in `_meta`), else
/// [`ToolError::Failed`], and reads as the server's text, once; a JSON-RPC
/// invalid-params error is [`ToolError::InvalidArguments`], and a broken
/// connection is a failure. Cancelling the context cancels the remote
/// request.
///
/// Its result keeps every block ([`Tool::call`]): a first text block
/// is the output's text and later ones text parts; images are
/// [`Part::Image`](toolcall_core::Part::Image) with their bytes decoded from
/// base64; audio is a [`Part::File`](toolcall_core::Part::File) of its media
/// type; an embedded resource, blob or text, is a file named by its URI's
/// last segment; a resource link is a file at its URL (an image, for an
/// `image/*` link); `structuredContent` is a
/// [`Part::Json`](toolcall_core::Part::Json) unless a text block says the same.
/// [`Tool::call_text`] gives the same as text alone.
///
/// A tool the server lists as needing a person's approval (this SDK's
/// servers say so in its `_meta`, as `tools-sdk/needs_approval`) needs it
/// here too ([`ToolSpec::needs_approval`]): a toolset holds its calls and
/// the agent pauses before them, as before a local tool's. A call run with
/// an approval ([`ToolContext::is_approved`]) answers the server's approval
/// request for that exact call (name and arguments) with a yes; every other
/// request the server makes of the client is declined, so a call made
/// without an approval is refused by the server, with its reason.
#[derive(Clone)]
pub struct RemoteTool {
    connection: Connection,
    spec: Arc<ToolSpec>,
}

impl RemoteTool {
    fn new(connection: Connection, tool: rmcp::model::Tool) -> Self {
        let needs_approval = tool
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get(NEEDS_APPROVAL))
            .and_then(serde_json::Value::as_bool)
            == Some(true);
        let hints = tool.annotations.unwrap_or_default();
        let title = tool.title.or(hints.title);
        let annotations = Annotations {
            title: title.map(Cow::Owned),
            read_only: hints.read_only_hint,
            destructive: hints.destructive_hint,
            idempotent: hints.idempotent_hint,
            open_world: hints.open_world_hint,
        };
        let mut spec = ToolSpec::from_parameters(
            tool.name.into_owned(),
            tool.description.map(Cow::into_owned).unwrap_or_default(),
            Parameters::from_schema((*tool.input_schema).clone()),
        )
        .with_annotations(annotations);
        if let Some(schema) = tool.output_schema {
            spec = spec.with_output_schema((*schema).clone());
        }
        if needs_approval {
            spec = spec.with_approval_required();
        }
        Self { connection, spec: Arc::new(spec) }
    }

    async fn call_remote(&self, ctx: &ToolContext, arguments: &str) -> Result<Output, ToolError> {
        let arguments = self.spec.parse_object(arguments)?;
        // While the call is in flight, the server's approval request for
        // it gets a yes: the person approved it here.
        let _approved =
            ctx.is_approved().then(|| self.connection.service().hold(self.spec.name(), &arguments));
        let request = CallToolRequestParams::new(self.spec.name().to_owned()).with_arguments(arguments);
        // The service's call answers `input_required` through the handler
        // and calls again, where the peer's would fail.
        match self.connection.call_tool(request).await {
            Ok(result) => remote_output(result),
            Err(ServiceError::McpError(error)) if error.code == ErrorCode::INVALID_PARAMS => {
                Err(ToolError::invalid_arguments(error.message.into_owned()))
            }
            Err(ServiceError::McpError(error)) => {
                Err(ToolError::failed(format!("the MCP server answered {}: {}", error.code.0, error.message)))
            }
            Err(error) => Err(ToolError::failed(format!("calling the MCP server failed: {error}"))),
        }
    }
}

/// A remote result as an output: a result flagged `isError` is a failure
/// with its text; any other keeps every block.
fn remote_output(result: rmcp::model::CallToolResult) -> Result<Output, ToolError> {
    if result.is_error == Some(true) {
        return Err(remote_error(&result));
    }
    Ok(output_of(result.content, result.structured_content))
}

impl Tool for RemoteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(async move {
            // Dropping the request future sends notifications/cancelled.
            tokio::select! {
                () = ctx.cancellation().cancelled() => Err(ToolError::failed("the call was cancelled")),
                result = self.call_remote(ctx, arguments) => result,
            }
        })
    }
}

impl std::fmt::Debug for RemoteTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTool").field("name", &self.spec.name()).finish()
    }
}
