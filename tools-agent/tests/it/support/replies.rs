//! A mock provider that answers each request with the next of a list of
//! bodies, and what it was sent.
#![allow(dead_code, reason = "each test file uses its own part")]

use serde_json::Value;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A mock answering every POST with these bodies, in order.
pub(crate) async fn mock(bodies: Vec<Value>) -> MockServer {
    let server = MockServer::start().await;
    for body in bodies {
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&server)
            .await;
    }
    server
}

/// The JSON bodies the mock received, in order.
pub(crate) async fn received(server: &MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests.iter().map(|request| request.body_json::<Value>().unwrap()).collect()
}
