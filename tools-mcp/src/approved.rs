//! The client's side of a remote call that needs approval: the person
//! approves the call locally (the agent pauses before it, as before a local
//! tool), and the client answers the server's approval request, an
//! `elicitation/create` request or an `input_required` result, with a yes
//! for that exact call. Fails closed: any other request, and every request
//! about a call no person approved, is declined, so the server refuses the
//! call as it does for a client that cannot ask.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};

use crate::approval::{CALL, FIELD};

/// The calls in flight that a person approved, each as the server names
/// it in its approval request: `{"name", "arguments"}`.
#[derive(Clone, Default)]
pub(crate) struct Approvals {
    calls: Arc<Mutex<Vec<Value>>>,
}

impl Approvals {
    /// Hold `name` with `arguments` as approved until the guard drops.
    pub(crate) fn hold(&self, name: &str, arguments: &serde_json::Map<String, Value>) -> Held {
        let call = json!({ "name": name, "arguments": arguments });
        self.calls.lock().unwrap_or_else(PoisonError::into_inner).push(call.clone());
        Held { approvals: self.clone(), call }
    }

    fn approved(&self, call: &Value) -> bool {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner).contains(call)
    }
}

/// One approved call in flight; dropping it ends the approval.
pub(crate) struct Held {
    approvals: Approvals,
    call: Value,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut calls = self.approvals.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = calls.iter().position(|call| *call == self.call) {
            calls.remove(at);
        }
    }
}

impl ClientHandler for Approvals {
    /// rmcp's defaults, with form elicitation: this SDK's servers ask
    /// through it before a call that needs approval, and refuse the call
    /// outright to a client without it.
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities = ClientCapabilities::builder().enable_elicitation().build();
        info
    }

    /// Yes to an approval request naming a call a person approved (the
    /// form's one box ticked); no to anything else.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { meta, requested_schema, .. } = &request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        // rmcp moves a request's `_meta` into its context as it arrives.
        let call = meta.as_ref().and_then(|meta| meta.0.get(CALL)).or_else(|| context.meta.0.get(CALL));
        let one_box =
            requested_schema.properties.len() == 1 && requested_schema.properties.contains_key(FIELD);
        if one_box && call.is_some_and(|call| self.approved(call)) {
            return Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({ FIELD: true })));
        }
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }
}
