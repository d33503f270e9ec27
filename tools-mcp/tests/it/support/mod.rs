//! Helpers shared by the integration tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts its drops: held by a tool's run, it counts the runs that ended,
/// finished or dropped mid-way.
pub(crate) struct CountDrop(pub(crate) Arc<AtomicUsize>);

impl Drop for CountDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
