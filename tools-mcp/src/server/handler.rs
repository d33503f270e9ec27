//! The MCP methods a server answers, as rmcp's `ServerHandler`.

use std::sync::atomic::Ordering;

use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CallToolResponse, ConstString, CustomRequest, CustomResult,
    ErrorCode, InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::McpServer;

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
        state.listed.iter().find(|listed| listed.name == tool.spec().name()).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }
}
