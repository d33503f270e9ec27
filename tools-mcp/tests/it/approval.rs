//! A tool that needs approval, served over MCP to rmcp's client: the server
//! asks the person behind the client through elicitation, as a request to
//! the client on session protocols and as an `input_required` result on
//! 2026-07-28, and never runs the call without a yes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, InputRequiredResult,
    ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolcall_core::{ToolContext, Toolset};
use toolcall_macros::tool;
use toolcall_mcp::McpServer;

/// How many times the tool really ran.
#[derive(Clone, Default)]
struct Ran(Arc<AtomicUsize>);

/// Delete a file.
#[tool(args, destructive, needs_approval)]
async fn delete_file(ctx: &ToolContext, path: String) -> String {
    if let Some(ran) = ctx.get::<Ran>() {
        ran.0.fetch_add(1, Ordering::SeqCst);
    }
    format!("deleted {path}")
}

/// What the person answers, and what they were asked.
struct Person {
    answer: Option<ElicitResult>,
    asked: Arc<Mutex<Vec<ElicitRequestParams>>>,
    /// How long the person takes to answer.
    thinks: Duration,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.answer.is_some() {
            capabilities = ClientCapabilities::builder().enable_elicitation().build();
        }
        ClientConfig::new(capabilities, Implementation::new("approval-test", "0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.lock().unwrap().push(request);
        tokio::time::sleep(self.thinks).await;
        self.answer.clone().ok_or_else(|| ErrorData::invalid_request("no elicitation here", None))
    }
}

#[derive(Clone, Copy, Debug)]
enum Protocol {
    /// 2025-11-25: the server sends `elicitation/create` to the client.
    Session,
    /// 2026-07-28: the server answers `input_required`, the client calls again.
    Stateless,
}

/// A client of an in-process server holding `delete_file`.
async fn connect(
    protocol: Protocol,
    answer: Option<ElicitResult>,
) -> (RunningService<RoleClient, Person>, Ran, Asked) {
    let person = Person { answer, asked: Asked::default(), thinks: Duration::ZERO };
    connect_with(protocol, person, Duration::from_secs(60)).await
}

/// The same, with a person and the server's approval timeout.
async fn connect_with(
    protocol: Protocol,
    person: Person,
    approval_timeout: Duration,
) -> (RunningService<RoleClient, Person>, Ran, Asked) {
    let ran = Ran::default();
    let tools = Toolset::builder().add(DeleteFile).build().unwrap();
    let server = McpServer::new(tools)
        .with_context(ToolContext::new().with_extension(ran.clone()))
        .with_approval_timeout(approval_timeout);
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let asked = Arc::clone(&person.asked);
    let lifecycle = match protocol {
        Protocol::Session => ClientLifecycleMode::Initialize,
        Protocol::Stateless => {
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
        }
    };
    let client = person.serve_with_lifecycle(client_io, lifecycle).await.unwrap();
    (client, ran, asked)
}

type Asked = Arc<Mutex<Vec<ElicitRequestParams>>>;

fn delete(path: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("delete_file")
        .with_arguments(json!({"path": path}).as_object().unwrap().clone())
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|b| b.as_text()).map(|t| t.text.clone()).collect::<Vec<_>>().join("\n")
}

fn accept(content: Value) -> Option<ElicitResult> {
    Some(ElicitResult::new(ElicitationAction::Accept).with_content(content))
}

const PROTOCOLS: [Protocol; 2] = [Protocol::Session, Protocol::Stateless];

#[tokio::test]
async fn approved_the_call_runs_once_and_the_person_saw_the_tool_and_arguments() {
    for protocol in PROTOCOLS {
        let (client, ran, asked) = connect(protocol, accept(json!({"approve": true}))).await;
        let result = client.call_tool(delete("/tmp/a")).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{protocol:?}: {}", text(&result));
        assert_eq!(text(&result), "deleted /tmp/a", "{protocol:?}");
        assert_eq!(ran.0.load(Ordering::SeqCst), 1, "{protocol:?}");
        let asked = asked.lock().unwrap().clone();
        let [ElicitRequestParams::FormElicitationParams { message, requested_schema, .. }] = asked.as_slice()
        else {
            panic!("{protocol:?}: asked {asked:?}");
        };
        assert!(message.contains("`delete_file`") && message.contains("\"/tmp/a\""), "{message}");
        let schema = serde_json::to_value(requested_schema).unwrap();
        assert_eq!(schema["required"], json!(["approve"]), "{schema}");
        assert_eq!(schema["properties"]["approve"]["type"], "boolean", "{schema}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn every_answer_but_a_ticked_yes_leaves_the_call_unrun() {
    let answers = [
        (Some(ElicitResult::new(ElicitationAction::Decline)), "the person declined it"),
        (Some(ElicitResult::new(ElicitationAction::Cancel)), "the person dismissed the request"),
        (accept(json!({"approve": false})), "the person did not approve it"),
        (accept(json!({})), "the person did not approve it"),
        (None, "this client cannot ask for it (it does not support MCP elicitation)"),
    ];
    for protocol in PROTOCOLS {
        for (answer, why) in answers.clone() {
            let (client, ran, _) = connect(protocol, answer.clone()).await;
            let result = client.call_tool(delete("/tmp/b")).await.unwrap();
            assert_eq!(result.is_error, Some(true), "{protocol:?} {answer:?}");
            assert!(text(&result).contains(why), "{protocol:?} {answer:?}: {}", text(&result));
            assert_eq!(ran.0.load(Ordering::SeqCst), 0, "{protocol:?} {answer:?}: it ran");
            client.cancel().await.unwrap();
        }
    }
}

#[tokio::test]
async fn a_stateless_yes_counts_only_for_the_arguments_it_was_given_for() {
    let (client, ran, _) = connect(Protocol::Stateless, accept(json!({"approve": true}))).await;
    let CallToolResponse::InputRequired(asked) = client.call_tool_once(delete("/tmp/c")).await.unwrap()
    else {
        panic!("the first call was not asked about");
    };
    let InputRequiredResult { request_state, .. } = asked;
    let yes = serde_json::to_value(
        ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true})),
    )
    .unwrap();
    // The yes, sent back with other arguments: asked again, not run.
    let mut other = delete("/etc").with_input_responses([("approval".to_owned(), yes.clone())].into());
    other.request_state = request_state.clone();
    let again = client.call_tool_once(other).await.unwrap();
    assert!(matches!(again, CallToolResponse::InputRequired(_)), "{again:?}");
    assert_eq!(ran.0.load(Ordering::SeqCst), 0);
    // With the arguments it was given for, it runs.
    let mut same = delete("/tmp/c").with_input_responses([("approval".to_owned(), yes)].into());
    same.request_state = request_state;
    let CallToolResponse::Complete(done) = client.call_tool_once(same).await.unwrap() else { panic!() };
    assert_eq!(text(&done), "deleted /tmp/c");
    assert_eq!(ran.0.load(Ordering::SeqCst), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_person_who_does_not_answer_in_time_runs_nothing() {
    let person = Person {
        answer: accept(json!({"approve": true})),
        asked: Asked::default(),
        thinks: Duration::from_secs(5),
    };
    let (client, ran, _) = connect_with(Protocol::Session, person, Duration::from_millis(100)).await;
    let result = client.call_tool(delete("/tmp/d")).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("approval was asked for and not given"), "{}", text(&result));
    assert_eq!(ran.0.load(Ordering::SeqCst), 0);
    client.cancel().await.unwrap();
}
