//! What a tool knows about the call it is serving, and the shared state it
//! may read.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use http::Extensions;
use smol_str::SmolStr;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The context of one tool call: cheap to clone (a reference count or two).
///
/// It carries the call id and the tool's name, a cancellation token, an
/// optional deadline, and typed extensions: shared state such as an HTTP
/// client or a database pool, put in once and read by type.
///
/// ```
/// use toolcall_core::ToolContext;
///
/// #[derive(Clone)]
/// struct Db(&'static str);
///
/// let ctx = ToolContext::new().with_extension(Db("postgres://localhost"));
/// let call = ctx.for_call("call_1", "lookup");
/// assert_eq!(call.get::<Db>().map(|db| db.0), Some("postgres://localhost"));
/// assert_eq!(call.call_id(), "call_1");
/// ```
#[derive(Debug, Default)]
pub struct ToolContext {
    call_id: SmolStr,
    tool_name: SmolStr,
    /// What every call of a turn shares, behind one reference count: making
    /// a call's context copies a pointer, not a token whose every clone and
    /// drop takes a lock.
    shared: Arc<Shared>,
    /// A call's own token, a child of the shared one, made the first time
    /// someone asks for it ([`ToolContext::cancellation`]): most calls never
    /// do, and a child token costs an allocation and a lock on its parent.
    own: Option<OnceLock<CancellationToken>>,
    deadline: Option<Instant>,
    /// A person approved this call ([`ToolContext::is_approved`]).
    approved: bool,
}

impl Clone for ToolContext {
    /// A clone of a call's context shares the call's own token, made now if
    /// nobody asked for it yet: cancelling either one's cancels both.
    fn clone(&self) -> Self {
        Self {
            call_id: self.call_id.clone(),
            tool_name: self.tool_name.clone(),
            shared: Arc::clone(&self.shared),
            own: self.own.as_ref().map(|_| OnceLock::from(self.cancellation().clone())),
            deadline: self.deadline,
            approved: self.approved,
        }
    }
}

/// The part of a context that a turn's calls share. Cloning it (when one
/// context changes its token, or a nested call's context is made) counts
/// references and copies no extension.
#[derive(Clone, Debug, Default)]
struct Shared {
    /// The token cancellation comes down from: this context's own, or, in a
    /// call's context, the one of the context it was made from.
    cancellation: CancellationToken,
    extensions: Arc<Extensions>,
    progress: Option<ProgressHook>,
}

/// Where [`ToolContext::report_progress`] goes: set by whoever serves the
/// call (the MCP bridge turns it into `notifications/progress`).
#[derive(Clone)]
struct ProgressHook(Arc<ProgressFn>);

type ProgressFn = dyn Fn(f64, Option<f64>, Option<&str>) + Send + Sync;

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}

impl ToolContext {
    /// An empty context: no call id, no deadline, no extensions.
    pub fn new() -> Self {
        Self::default()
    }

    /// A context for one call of `tool_name`, sharing this one's extensions
    /// and deadline; its cancellation token is a child of this one's, so
    /// cancelling the turn cancels the call but not the other way round.
    pub fn for_call(&self, call_id: impl Into<SmolStr>, tool_name: impl Into<SmolStr>) -> Self {
        let shared = match self.own {
            // A call's context: cancellation must come down from its own
            // token, made now if nobody asked for it yet.
            Some(_) => {
                Arc::new(Shared { cancellation: self.cancellation().clone(), ..(*self.shared).clone() })
            }
            None => Arc::clone(&self.shared),
        };
        Self {
            call_id: call_id.into(),
            tool_name: tool_name.into(),
            shared,
            own: Some(OnceLock::new()),
            deadline: self.deadline,
            // An approval is of one call, never of the calls it makes.
            approved: false,
        }
    }

    /// Whether a person approved this very call: it runs through
    /// [`Toolset::call_approved`](crate::Toolset::call_approved) or
    /// [`Toolset::run_turn_approved`](crate::Toolset::run_turn_approved)
    /// (the agent loop resumed with `Decision::Approve`). A tool that
    /// forwards the call elsewhere passes the approval on (an MCP client
    /// answers the remote server's approval request with it); any other
    /// call, and every call it makes, is not approved.
    ///
    /// ```
    /// use toolcall_core::ToolContext;
    /// assert!(!ToolContext::new().for_call("call_1", "delete_file").is_approved());
    /// ```
    pub fn is_approved(&self) -> bool {
        self.approved
    }

    /// Mark this call's context as approved by a person.
    pub(crate) fn approved(mut self) -> Self {
        self.approved = true;
        self
    }

    /// The id the model gave this call (empty outside a turn).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The name of the tool called (empty outside a turn): its own name,
    /// also when a toolset offers it under a prefix or another name
    /// ([`Toolset::prefixed`](crate::Toolset::prefixed),
    /// [`Toolset::rename`](crate::Toolset::rename)), which stays out of
    /// the tool's logic.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The token that is cancelled when the call should stop. In a call's
    /// context it is the call's own, a child of the turn's: cancelling it
    /// stops nothing else.
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.own {
            Some(own) => own.get_or_init(|| self.shared.cancellation.child_token()),
            None => &self.shared.cancellation,
        }
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.shared.cancellation.is_cancelled()
            || self.own.as_ref().and_then(OnceLock::get).is_some_and(|own| own.is_cancelled())
    }

    /// Resolves when cancellation comes down from the context this one was
    /// made from (the turn's), without making the call's own token.
    pub(crate) fn cancelled_from_above(&self) -> tokio_util::sync::WaitForCancellationFuture<'_> {
        self.shared.cancellation.cancelled()
    }

    /// When the call must be done by, if anyone said.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The time left before the deadline, if there is one.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }

    /// The shared value of type `T`, if one was added.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.shared.extensions.get::<T>()
    }

    /// This context with `value` added (replacing any earlier value of its type).
    /// Values are cloned only when the context's extensions are shared, so add
    /// them before handing the context out; wrap large state in an `Arc`.
    pub fn with_extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.shared_mut().extensions).insert(value);
        self
    }

    /// The shared part, to change for this context alone.
    fn shared_mut(&mut self) -> &mut Shared {
        Arc::make_mut(&mut self.shared)
    }

    /// This context with a cancellation token of the caller's.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.shared_mut().cancellation = token;
        self.own = None;
        self
    }

    /// This context with a deadline.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// This context with a receiver for the progress its tool reports:
    /// `hook(progress, total, message)`. It must not block: forward the
    /// report (e.g. into a channel) and return.
    pub fn with_progress(
        mut self,
        hook: impl Fn(f64, Option<f64>, Option<&str>) + Send + Sync + 'static,
    ) -> Self {
        self.shared_mut().progress = Some(ProgressHook(Arc::new(hook)));
        self
    }

    /// Report how far the call has got (`total`, when known, is the value
    /// `progress` ends at). Does nothing unless the caller asked for progress,
    /// so a tool may report freely.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use toolcall_core::ToolContext;
    ///
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&seen);
    /// let ctx = ToolContext::new().with_progress(move |done, total, _msg| sink.lock().unwrap().push((done, total)));
    /// ctx.for_call("1", "import").report_progress(1.0, Some(4.0), Some("first file"));
    /// assert_eq!(*seen.lock().unwrap(), [(1.0, Some(4.0))]);
    /// ToolContext::new().report_progress(1.0, None, None); // nobody listens: a no-op
    /// ```
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(hook) = &self.shared.progress {
            (hook.0)(progress, total, message);
        }
    }

    /// Whether anyone receives [`report_progress`](Self::report_progress).
    pub fn reports_progress(&self) -> bool {
        self.shared.progress.is_some()
    }

    /// This context with a deadline `timeout` from now.
    pub fn with_timeout(self, timeout: Duration) -> Self {
        self.with_deadline(Instant::now() + timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelling_the_turn_cancels_its_calls_only_downwards() {
        let turn = ToolContext::new();
        let a = turn.for_call("a", "t");
        let b = turn.for_call("b", "t");
        a.cancellation().cancel();
        assert!(!turn.is_cancelled() && !b.is_cancelled());
        turn.cancellation().cancel();
        assert!(b.is_cancelled());
    }

    #[test]
    fn a_context_made_from_a_calls_comes_down_from_that_call() {
        let turn = ToolContext::new();
        let call = turn.for_call("a", "t");
        let nested = call.for_call("a.1", "u");
        let sibling = turn.for_call("b", "t");
        call.cancellation().cancel();
        assert!(nested.is_cancelled() && !sibling.is_cancelled() && !turn.is_cancelled());
    }

    #[test]
    fn a_clone_of_a_calls_context_shares_its_cancellation() {
        let turn = ToolContext::new();
        let call = turn.for_call("a", "t");
        let clone = call.clone();
        call.cancellation().cancel();
        assert!(clone.is_cancelled() && !turn.is_cancelled());
        let other = turn.for_call("b", "t");
        other.clone().cancellation().cancel();
        assert!(other.is_cancelled());
    }

    #[test]
    fn extensions_are_shared_not_copied() {
        let state = Arc::new(String::from("pool"));
        let ctx = ToolContext::new().with_extension(Arc::clone(&state));
        let call = ctx.for_call("1", "t");
        assert!(Arc::ptr_eq(call.get::<Arc<String>>().unwrap(), &state));
        assert!(call.get::<u32>().is_none());
    }

    #[test]
    fn a_new_token_or_a_nested_call_copies_no_extension() {
        static CLONES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        struct Counted;
        impl Clone for Counted {
            fn clone(&self) -> Self {
                CLONES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Counted
            }
        }
        let server = ToolContext::new().with_extension(Counted);
        let request = server.clone().with_cancellation(CancellationToken::new());
        let nested = request.for_call("1", "t").for_call("1.1", "u");
        assert!(nested.get::<Counted>().is_some());
        assert_eq!(CLONES.load(std::sync::atomic::Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn remaining_time_counts_down() {
        let ctx = ToolContext::new().with_timeout(Duration::from_secs(60));
        let left = ctx.remaining().unwrap();
        assert!(left <= Duration::from_secs(60) && left > Duration::from_secs(50));
        assert!(ToolContext::new().remaining().is_none());
    }
}
