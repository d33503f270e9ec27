//! Calls that need a person's approval, put to the person behind the MCP
//! client through elicitation: a request to the client on the protocols
//! with sessions (2025-06-18 to 2025-11-25), an `input_required` result that
//! the client answers by calling again on 2026-07-28, which forbids
//! requests to the client. Fails closed: a client that cannot be asked, a
//! decline, a dismissal, an answer that is not a yes or no answer in time
//! each leave the call unrun.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion, RequestMetaObject,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use toolcall_core::{ToolCall, ToolError};

/// The `_meta` key of a listed tool whose every call needs a person's
/// approval: an MCP client of this SDK holds its calls for approval too.
pub(crate) const NEEDS_APPROVAL: &str = "tools-sdk/needs_approval";

/// The `_meta` key of an approval request that names the call it is about
/// (`{"name", "arguments"}`): a client answers for that call alone.
pub(crate) const CALL: &str = "tools-sdk/call";

/// The key of the approval among a call's input requests and responses.
const KEY: &str = "approval";

/// The one field of the form: a person ticks it to let the call run.
pub(crate) const FIELD: &str = "approve";

/// What becomes of a call that needs approval.
pub(crate) enum Verdict {
    /// The person said yes: run it.
    Run,
    /// It does not run; the client reads why.
    Refuse(ToolError),
    /// Ask first (2026-07-28): the client calls again with the answer.
    Ask(InputRequiredResult),
}

/// Ask whether `call` may run, or read the answer its request carries.
/// `stateless`: served over HTTP without sessions, where a request to the
/// client has no way back before 2026-07-28.
pub(crate) async fn ask(
    call: &ToolCall,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    timeout: Duration,
    stateless: bool,
) -> Verdict {
    let can_ask = context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        // A capability naming neither mode is form mode, as before modes.
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
    let modern = context.protocol_version().is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    if modern && let Some(answer) = answered(call, request) {
        return answer;
    }
    if stateless && !modern {
        // rmcp serves such a request with no session: the client's
        // capabilities are unknown, and its answer, a POST of its own, may
        // reach another replica and is refused there anyway.
        return Verdict::Refuse(ToolError::Denied(format!(
            "tool `{}` needs a person's approval before it runs, and this server answers each request \
             on its own (stateless): it can ask the person only on MCP 2026-07-28, where the client \
             calls again with the answer. Connect at 2026-07-28, or use a server with sessions \
             (behind a balancer, sticky on Mcp-Session-Id): it did not run",
            call.name
        )));
    }
    if !can_ask {
        return Verdict::Refuse(ToolError::Denied(format!(
            "tool `{}` needs a person's approval before it runs, and this client cannot ask for it \
             (it does not support MCP elicitation): it did not run",
            call.name
        )));
    }
    let params = form(call);
    if modern {
        let requests =
            InputRequests::from([(KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)))]);
        // The state binds the answer to these arguments: a call that comes
        // back with others is asked again.
        return Verdict::Ask(InputRequiredResult::new(Some(requests), Some(call.arguments.clone())));
    }
    let asked = context.peer.create_elicitation_with_timeout(params, Some(timeout));
    let answer = tokio::select! {
        answer = asked => answer,
        () = context.ct.cancelled() => return Verdict::Refuse(not_run(call, "the request was cancelled while it waited for approval")),
    };
    match answer {
        Ok(answer) => verdict(call, &answer),
        Err(error) => {
            Verdict::Refuse(not_run(call, &format!("approval was asked for and not given ({error})")))
        }
    }
}

/// The answer a 2026-07-28 client sent back with its call, when it is
/// the answer to this call's question.
fn answered(call: &ToolCall, request: &CallToolRequestParams) -> Option<Verdict> {
    let response = request.input_responses.as_ref()?.get(KEY)?;
    let state = request.request_state.as_deref()?;
    let same =
        serde_json::from_str::<Value>(state).ok()? == serde_json::from_str::<Value>(&call.arguments).ok()?;
    if !same {
        return None;
    }
    Some(match serde_json::from_value::<ElicitResult>(response.clone()) {
        Ok(answer) => verdict(call, &answer),
        Err(error) => Verdict::Refuse(not_run(
            call,
            &format!("the answer to the approval is not an elicitation result ({error})"),
        )),
    })
}

fn verdict(call: &ToolCall, answer: &ElicitResult) -> Verdict {
    let ticked = answer.content.as_ref().and_then(|content| content.get(FIELD)).and_then(Value::as_bool);
    match (&answer.action, ticked) {
        (ElicitationAction::Accept, Some(true)) => Verdict::Run,
        (ElicitationAction::Accept, _) => Verdict::Refuse(not_run(call, "the person did not approve it")),
        (ElicitationAction::Decline, _) => Verdict::Refuse(not_run(call, "the person declined it")),
        (ElicitationAction::Cancel, _) => Verdict::Refuse(not_run(call, "the person dismissed the request")),
        (_, _) => Verdict::Refuse(not_run(call, "the answer was neither a yes nor a no")),
    }
}

/// The question: which tool, with which arguments, and one box to tick;
/// the call also in `_meta`, for a client that answers for a call a person
/// approved before it was made.
fn form(call: &ToolCall) -> ElicitRequestParams {
    let parsed = serde_json::from_str::<Value>(&call.arguments).ok();
    let arguments = parsed
        .as_ref()
        .and_then(|value| serde_json::to_string_pretty(value).ok())
        .unwrap_or_else(|| call.arguments.clone());
    let mut meta = RequestMetaObject::new();
    meta.0.insert(CALL.to_owned(), json!({ "name": call.name, "arguments": parsed }));
    let schema = ElicitationSchema::builder()
        .required_bool_property(FIELD, |field| {
            field.title("Run this call").description(format!("Let `{}` run with these arguments", call.name))
        })
        .build_unchecked();
    ElicitRequestParams::FormElicitationParams {
        meta: Some(meta),
        message: format!("Allow the tool `{}` to run with these arguments?\n{arguments}", call.name),
        requested_schema: schema,
    }
}

fn not_run(call: &ToolCall, why: &str) -> ToolError {
    ToolError::Denied(format!(
        "the call of `{}` needed a person's approval and did not run: {why}",
        call.name
    ))
}
