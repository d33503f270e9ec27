//! A subscriber that keeps every span's name and fields, for tests of what
//! the SDK traces (this crate's and tools-agent's, which includes it by path),
//! and how a test gives its own subscriber every span ([`traced`]).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Span name and fields, in creation order.
pub(crate) type Spans = Arc<Mutex<Vec<(String, Vec<(String, String)>)>>>;

pub(crate) struct Capture(pub Spans);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut spans = self.0.lock().unwrap();
        let mut fields = Vec::new();
        span.record(&mut Fields(&mut fields));
        spans.push((span.metadata().name().to_owned(), fields));
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.0.lock().unwrap();
        let index = span.into_u64() as usize - 1;
        values.record(&mut Fields(&mut spans[index].1));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// `run` with `subscriber` as this thread's default, every span reaching it
/// whatever the other tests do meanwhile. tracing caches, per callsite and
/// process-wide, whether any subscriber wants it, asked on the first thread
/// to reach it: a test thread without a subscriber would cache "never" for
/// a span another test captures (a flake seen under load). A global
/// subscriber that wants every span keeps that answer from being "never".
pub(crate) fn traced<S, T>(subscriber: S, run: impl FnOnce() -> T) -> T
where
    S: Subscriber + Send + Sync + 'static,
{
    static ANCHOR: std::sync::Once = std::sync::Once::new();
    ANCHOR.call_once(|| {
        let _ = tracing::subscriber::set_global_default(Anchor);
        tracing::callsite::rebuild_interest_cache();
    });
    tracing::subscriber::with_default(subscriber, run)
}

/// Wants every span and keeps none.
struct Anchor;

impl Subscriber for Anchor {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// The value of `key` among a span's fields.
pub(crate) fn field<'a>(fields: &'a [(String, String)], key: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}
