//! The API key never reaches a log line, even when the server echoes it.
//! This binary holds one test and installs a global subscriber, so no other
//! test's events (or cached callsite interest) get in the way.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolcall_core::{Tool, ToolContext};
use toolcall_tavily::Tavily;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "tvly-log-test-0123456789";

async fn serve(response: ResponseTemplate) -> (MockServer, Tavily) {
    let server = MockServer::start().await;
    Mock::given(method("POST")).and(path("/search")).respond_with(response).mount(&server).await;
    let tavily = Tavily::from_api_key(KEY).unwrap().with_base_url(&server.uri()).unwrap();
    (server, tavily)
}

/// Every event's fields, written out as text.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<String>>);

impl tracing::field::Visit for &Captured {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0.lock().unwrap(), "{}={:?} ", field.name(), value);
    }
}

impl tracing::Subscriber for Captured {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        span.record(&mut &*self);
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        values.record(&mut &*self);
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        event.record(&mut &*self);
        self.0.lock().unwrap().push('\n');
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test]
async fn the_key_is_not_in_any_log_line() {
    let captured = Captured::default();
    tracing::subscriber::set_global_default(captured.clone()).unwrap();

    let (_ok, tavily) =
        serve(ResponseTemplate::new(200).set_body_json(json!({"answer": null, "results": []}))).await;
    tavily.call_text(&ToolContext::new(), r#"{"query":"logged query"}"#).await.unwrap();
    let echo = json!({"detail": {"error": format!("bad key {KEY}")}});
    let (_denied, tavily) = serve(ResponseTemplate::new(401).set_body_json(echo)).await;
    tavily.call_text(&ToolContext::new(), r#"{"query":"q"}"#).await.unwrap_err();

    let logs = captured.0.lock().unwrap().clone();
    assert!(logs.contains("Tavily search"), "{logs}");
    assert!(logs.contains("logged query"), "{logs}");
    assert!(logs.contains("Tavily rejected the API key"), "{logs}");
    assert!(!logs.contains(KEY), "the key leaked into the logs: {logs}");
}
