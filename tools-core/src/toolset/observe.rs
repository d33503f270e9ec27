//! Hooks into every call the toolset runs, for logs, metrics or tests.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use super::{Entry, Toolset, panic_message};
use crate::{ToolCall, ToolResult};

/// Callbacks around each call: it starts, it ends well, it ends otherwise,
/// or its name matches no tool. Every method does nothing by default, so an
/// observer implements only what it needs.
///
/// Each call of a registered tool gets `on_start` and then exactly one of
/// `on_end` (success) or `on_error` (any other outcome); a call of an unknown
/// name gets only `on_not_found`. Callbacks run on the task running the
/// turn, between polls of the tools: keep them quick. A callback that panics
/// is logged and skipped; the call and the turn go on.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use toolcall_core::toolset::{Observer, Toolset};
/// use toolcall_core::{ToolCall, ToolResult};
///
/// #[derive(Default)]
/// struct Failures(AtomicUsize);
///
/// impl Observer for Failures {
///     fn on_error(&self, _call: &ToolCall, _result: &ToolResult, _elapsed: std::time::Duration) {
///         self.0.fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// let tools = Toolset::new().with_observer(Failures::default());
/// ```
pub trait Observer: Send + Sync {
    /// A call of a registered tool is about to run.
    fn on_start(&self, call: &ToolCall) {
        let _ = call;
    }

    /// A call succeeded.
    fn on_end(&self, call: &ToolCall, result: &ToolResult, elapsed: Duration) {
        let _ = (call, result, elapsed);
    }

    /// A call ended in any other way; `result.outcome` says which.
    fn on_error(&self, call: &ToolCall, result: &ToolResult, elapsed: Duration) {
        let _ = (call, result, elapsed);
    }

    /// The model called a name no tool has.
    fn on_not_found(&self, call: &ToolCall) {
        let _ = call;
    }
}

impl<T: Observer + ?Sized> Observer for Arc<T> {
    fn on_start(&self, call: &ToolCall) {
        (**self).on_start(call)
    }
    fn on_end(&self, call: &ToolCall, result: &ToolResult, elapsed: Duration) {
        (**self).on_end(call, result, elapsed)
    }
    fn on_error(&self, call: &ToolCall, result: &ToolResult, elapsed: Duration) {
        (**self).on_error(call, result, elapsed)
    }
    fn on_not_found(&self, call: &ToolCall) {
        (**self).on_not_found(call)
    }
}

impl Toolset {
    /// This toolset with `observer` added; observers are called in the
    /// order they were added.
    pub fn with_observer(mut self, observer: impl Observer + 'static) -> Self {
        self.observers.push(Arc::new(observer));
        self
    }

    pub(super) fn notify_start(&self, entry: &Entry, call: &ToolCall) {
        self.notify(&entry.options.observers, |observer| observer.on_start(call));
    }

    pub(super) fn notify_end(&self, entry: &Entry, call: &ToolCall, result: &ToolResult, elapsed: Duration) {
        self.notify(&entry.options.observers, |observer| {
            if result.outcome.is_success() {
                observer.on_end(call, result, elapsed);
            } else {
                observer.on_error(call, result, elapsed);
            }
        });
    }

    pub(super) fn notify_not_found(&self, call: &ToolCall) {
        self.notify(&[], |observer| observer.on_not_found(call));
    }

    /// Tell every observer, in order: the toolset's, then the tool's own
    /// (those of a toolset it was merged from). An observer that panics is
    /// logged and passed over: like a panicking tool, it must not end the
    /// turn, nor keep the observers after it from hearing of the call.
    fn notify(&self, tool_observers: &[Arc<dyn Observer>], tell: impl Fn(&dyn Observer)) {
        for observer in self.observers.iter().chain(tool_observers) {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| tell(&**observer))) {
                tracing::error!(panic = panic_message(&*payload), "tool observer panicked");
            }
        }
    }
}
