//! The idempotency key a tool gives the backend of its side effect, so
//! that a call run again (a durable engine's retry after a crash) takes
//! effect once.

use smol_str::SmolStr;

use crate::ToolContext;

/// Where the calls' idempotency keys come from: a context extension that a
/// durable engine sets for each turn it runs (`toolcall-restate` sets
/// `{run id}:{turn}`), or an application for its own retries. A call's key
/// is the scope and the call's id, [`ToolContext::idempotency_key`]; a call
/// run again after a crash has the same key, so a backend that applies one
/// effect per key (as payment and order APIs do with an `Idempotency-Key`
/// header) applies it once.
///
/// Call ids are unique within one model response only, so the scope must
/// change from one turn to the next. An in-process run has no scope unless
/// the application sets one.
///
/// ```
/// use toolcall_core::{IdempotencyScope, ToolContext};
///
/// let turn = ToolContext::new().with_extension(IdempotencyScope::new("run-42:1"));
/// assert_eq!(turn.for_call("call_1", "place_order").idempotency_key().as_deref(), Some("run-42:1:call_1"));
/// assert_eq!(ToolContext::new().for_call("call_1", "place_order").idempotency_key(), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyScope(SmolStr);

impl IdempotencyScope {
    /// A scope; the same on every retry of the turn it is set for.
    pub fn new(scope: impl Into<SmolStr>) -> Self {
        Self(scope.into())
    }

    /// The scope as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl ToolContext {
    /// The key this call's side effect is applied under, the same on every
    /// retry of the call: `{scope}:{call id}`, if the context has an
    /// [`IdempotencyScope`]. Send it to the backend with the effect (e.g. as
    /// an `Idempotency-Key` header) and mark the tool `idempotent`: a
    /// durable engine then runs a call cut by a crash again rather than
    /// answering that its result is unknown. A call a tool makes has its
    /// own id, hence its own key.
    pub fn idempotency_key(&self) -> Option<String> {
        let scope = self.get::<IdempotencyScope>()?;
        Some(format!("{}:{}", scope.as_str(), self.call_id()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_and_each_nested_call_has_its_own_key() {
        let turn = ToolContext::new().with_extension(IdempotencyScope::new("run-1:2"));
        let call = turn.for_call("call_a", "t");
        assert_eq!(call.idempotency_key().as_deref(), Some("run-1:2:call_a"));
        assert_eq!(turn.for_call("call_b", "t").idempotency_key().as_deref(), Some("run-1:2:call_b"));
        assert_eq!(call.for_call("call_a.1", "u").idempotency_key().as_deref(), Some("run-1:2:call_a.1"));
        assert_eq!(ToolContext::new().for_call("call_a", "t").idempotency_key(), None);
    }
}
