//! A worker on an address it cannot listen on: an error naming the
//! address, from the library and from the worker example, not a panic.

use std::process::Stdio;

use toolcall_agent::{Agent, OpenAiChat};
use toolcall_core::toolset::Toolset;

use crate::support::{PATIENCE, worker_command};

#[tokio::test]
async fn serving_on_a_taken_port_is_an_error_naming_the_address() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap();
    let agent = Agent::new(OpenAiChat::new("gpt-4.1-mini"), Toolset::new()).unwrap();

    let served = tokio::time::timeout(PATIENCE, toolcall_restate::serve(agent, address)).await;
    let error = served.expect("serve gave up on the taken port").unwrap_err();

    assert_eq!(error.kind(), std::io::ErrorKind::AddrInUse);
    assert_eq!(error.address(), Some(address));
    assert!(error.to_string().contains(&address.to_string()), "{error}");
}

#[tokio::test]
async fn the_worker_example_on_a_taken_port_exits_with_an_error_naming_it() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap();

    let output = worker_command("http://127.0.0.1:1")
        .args(["serve", &address.port().to_string()])
        .stderr(Stdio::piped())
        .output()
        .await
        .unwrap();

    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&address.to_string()), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
