//! One `tools/call`: through the toolset's contract, its approval asked
//! for, its progress relayed, cancelled with its request, and cut off with
//! an error when the server stops.

use std::pin::pin;
use std::sync::{Arc, Mutex};

use futures::future::Either;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::json;
use tokio::sync::mpsc;

use super::McpServer;
use crate::approval::{Verdict, ask};
use crate::blocks::{call_result, error_result};
use toolcall_core::ToolCall;

impl McpServer {
    /// Answer `tools/call` ([`ServerHandler::call_tool`](rmcp::ServerHandler::call_tool)).
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let state = self.state();
        let Some(tool) = state.toolset.get(&request.name).map(|tool| tool.spec().name().to_owned()) else {
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
            match ask(&call, &request, &context, self.approval_timeout, self.stateless).await {
                Verdict::Run => {}
                Verdict::Refuse(error) => {
                    return Ok(error_result(error.outcome(), error.model_content()).into());
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
