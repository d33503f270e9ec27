// TEMPORARY: replaced by the turn executor at merge.
//! One call through the error contract: lookup, timeout, cancellation, panic.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;

use super::Toolset;
use crate::{Outcome, ToolCall, ToolContext, ToolError, ToolResult, error_object};

impl Toolset {
    /// Run one call and always return its result: an unknown name, a
    /// timeout, a cancellation or a panic is an outcome, never an abort.
    pub async fn call(&self, ctx: &ToolContext, call: &ToolCall) -> ToolResult {
        let (content, outcome) = match self.get(&call.name) {
            None => {
                let names: Vec<&str> = self.names().collect();
                let message = format!("unknown tool `{}`; the tools are: {}", call.name, names.join(", "));
                (error_object(&message), Outcome::NotFound)
            }
            Some(tool) => {
                let ctx = ctx.for_call(call.id.as_str(), tool.name());
                let run = AssertUnwindSafe(tool.call(&ctx, &call.arguments)).catch_unwind();
                let timed = async {
                    match tool.timeout() {
                        Some(limit) => tokio::time::timeout(limit, run).await.map_err(|_| limit),
                        None => Ok(run.await),
                    }
                };
                tokio::select! {
                    biased;
                    () = ctx.cancellation().cancelled() => {
                        (error_object("the call was cancelled"), Outcome::Cancelled)
                    }
                    ended = timed => match ended {
                        Err(limit) => (
                            error_object(&format!("the tool did not finish within {limit:?}")),
                            Outcome::TimedOut,
                        ),
                        Ok(Err(panic)) => (error_object(&panic_message(panic.as_ref())), Outcome::Panicked),
                        Ok(Ok(Ok(content))) => (content, Outcome::Success),
                        Ok(Ok(Err(error))) => (error.model_content(), error_outcome(&error)),
                    },
                }
            }
        };
        ToolResult { id: call.id.clone(), name: call.name.clone(), content, outcome }
    }
}

fn error_outcome(error: &ToolError) -> Outcome {
    match error {
        ToolError::InvalidArguments(_) => Outcome::InvalidArguments,
        ToolError::Retry(_) => Outcome::RetryRequested,
        ToolError::Failed(_) => Outcome::Error,
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let detail = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    format!("the tool panicked: {detail}")
}
