use std::time::Duration;

use futures::future::BoxFuture;

use crate::ToolError;
use crate::toolset::{Layer, LayerCall, OnError};

/// Run a call again when its tool failed [transiently](ToolError::transient),
/// at most `max_reruns` times, pausing `base`, then twice that, and so on
/// up to `max_pause`. Other errors pass through; the call's timeout still
/// bounds the whole.
///
/// ```
/// use std::time::Duration;
/// use toolcall_core::{Toolset, layers::Rerun};
/// let tools = Toolset::new().with_layer(Rerun::new(3).with_backoff(Duration::from_millis(100), Duration::from_secs(2)));
/// ```
#[derive(Clone, Debug)]
pub struct Rerun {
    max_reruns: u32,
    base: Duration,
    max_pause: Duration,
}

impl Rerun {
    /// At most `max_reruns` more runs, pausing 50 ms, then 100 ms, ... up to 5 s.
    pub fn new(max_reruns: u32) -> Self {
        Self { max_reruns, base: Duration::from_millis(50), max_pause: Duration::from_secs(5) }
    }

    /// The first pause, and the longest.
    pub fn with_backoff(mut self, base: Duration, max_pause: Duration) -> Self {
        self.base = base;
        self.max_pause = max_pause;
        self
    }

    /// The pause before rerun number `attempt + 1`.
    fn pause(&self, attempt: u32) -> Duration {
        self.base.saturating_mul(2u32.saturating_pow(attempt)).min(self.max_pause)
    }
}

impl Layer for Rerun {
    fn on_error<'a>(
        &'a self,
        _call: LayerCall<'a>,
        error: ToolError,
        attempt: u32,
    ) -> BoxFuture<'a, OnError> {
        let decision = if error.is_transient() && attempt < self.max_reruns {
            OnError::Rerun(self.pause(attempt))
        } else {
            OnError::Fail(error)
        };
        Box::pin(std::future::ready(decision))
    }
}
