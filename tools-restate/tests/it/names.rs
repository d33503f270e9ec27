//! Several agents in one worker, each a workflow under its own name, each
//! run through its own ingress path, each answering from its own model.

use futures::future::BoxFuture;
use tokio::net::TcpListener;
use toolcall_agent::{Agent, Model, ModelError, ModelRequest, ModelResponse, RunResult, StopReason};
use toolcall_core::toolset::Toolset;
use toolcall_restate::AgentRun;

use crate::support::Restate;

/// A model that answers every request with the same text.
struct Says(&'static str);

impl Model for Says {
    fn provider(&self) -> &str {
        "script"
    }

    fn model(&self) -> &str {
        self.0
    }

    fn request<'a>(&'a self, _request: ModelRequest<'a>) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move { Ok(ModelResponse::new(self.0, [])) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Restate server: ./scripts/test.sh installs it and runs these"]
async fn one_worker_serves_two_agents_each_under_its_own_name() {
    let researcher = Agent::new(Says("the researcher found three papers"), Toolset::new()).unwrap();
    let writer = Agent::new(Says("the writer wrote a page"), Toolset::new()).unwrap();
    let runs =
        [AgentRun::named("researcher", researcher).unwrap(), AgentRun::named("writer", writer).unwrap()];
    let worker = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = worker.local_addr().unwrap().port();
    let serving = tokio::spawn(toolcall_restate::serve_runs_on(runs, worker));
    let restate = Restate::start().await;
    restate.register_serving(port, &["researcher", "writer"]).await;

    // The same run id under each name: two runs.
    restate.send_to("researcher", "run-1", "Find papers.").await;
    restate.send_to("writer", "run-1", "Write a page.").await;
    for (workflow, answer) in
        [("researcher", "the researcher found three papers"), ("writer", "the writer wrote a page")]
    {
        let (status, body) = restate.ended(workflow, "run-1").await;
        assert_eq!(status, 200, "{workflow}: {body}");
        let finished: RunResult = serde_json::from_str(&body).unwrap();
        assert_eq!((&finished.stop, finished.answer.as_str()), (&StopReason::Answered, answer));
    }
    // No `AgentRun` in this worker.
    let (status, body) = restate.call("run-1", "waiting", &serde_json::Value::Null).await;
    assert_eq!(status, 404, "{body}");
    serving.abort();
}

#[tokio::test]
async fn two_agents_under_one_name_are_refused() {
    let agent = || Agent::new(Says("hi"), Toolset::new()).unwrap();
    let runs = [AgentRun::named("helper", agent()).unwrap(), AgentRun::named("helper", agent()).unwrap()];
    let worker = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let error = toolcall_restate::serve_runs_on(runs, worker).await.unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("two agents are named `helper`"), "{error}");
    assert_eq!(AgentRun::new(agent()).name(), "AgentRun");
    assert!(AgentRun::named("1st", agent()).is_err());
}
