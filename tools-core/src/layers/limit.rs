use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use crate::OutputFuture;
use crate::toolset::{Layer, LayerCall, Next};

/// At most `limit` calls of each tool run at once, across turns and the
/// clones of the toolset; the others wait for a place (within their
/// timeout). On a toolset, each tool has its own count; on one tool
/// ([`ToolOptions::with_layer`](crate::toolset::ToolOptions::with_layer)), that tool.
///
/// ```
/// use toolcall_core::{Toolset, layers::ConcurrencyLimit};
/// let tools = Toolset::new().with_layer(ConcurrencyLimit::new(4));
/// ```
#[derive(Debug)]
pub struct ConcurrencyLimit {
    limit: usize,
    per_tool: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl ConcurrencyLimit {
    /// At most `limit` calls of a tool at once (at least one).
    pub fn new(limit: usize) -> Self {
        Self { limit: limit.clamp(1, Semaphore::MAX_PERMITS), per_tool: Mutex::default() }
    }

    fn semaphore(&self, tool: &str) -> Arc<Semaphore> {
        // A poisoned map is still a map of semaphores.
        let mut per_tool = self.per_tool.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match per_tool.get(tool) {
            Some(semaphore) => Arc::clone(semaphore),
            None => {
                let semaphore = Arc::new(Semaphore::new(self.limit));
                per_tool.insert(tool.to_owned(), Arc::clone(&semaphore));
                semaphore
            }
        }
    }
}

impl Layer for ConcurrencyLimit {
    fn around<'a>(&'a self, call: LayerCall<'a>, next: Next<'a>) -> OutputFuture<'a> {
        let semaphore = self.semaphore(call.tool.spec().name());
        Box::pin(async move {
            // Never closed, so acquiring only waits.
            let _permit = semaphore.acquire().await;
            next.call(call).await
        })
    }
}
