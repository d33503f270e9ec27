//! [`Remote`]: runs made on a Restate deployment's workers and followed
//! from another process, step by step, as a [`Runner`] (a chat server's
//! runs, durable).

use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use toolcall_agent::{Agent, AgentError, AgentEvent, ModelError, RunInput, RunResult, Runner, Transcript};

use crate::{Start, Step};

/// The workflow's runs, started and followed through the Restate
/// ingress: a [`Runner`] whose runs are made by the workers (each model
/// request and call journaled, a worker that dies replaced by another)
/// and whose steps come to the caller as the workers make them.
///
/// A run starts as `POST /{workflow}/{id}/run/send`, the id the caller
/// gives it (a session's run id, new for each run), with the input, `"follow": true` (it writes its steps) and `"pause": true`: a call held for approval ends the run
/// [`Paused`](toolcall_agent::StopReason::Paused), as in-process, for the
/// caller to keep and resume (a chat server keeps it in its session
/// store; the resumed run is a new workflow from the paused state). The
/// run's steps ([`Step`]) are read from its `steps` handler every
/// [`Self::with_poll_interval`] until it ends, and its end is its
/// output (`/restate/workflow/{workflow}/{id}/attach`).
///
/// The run goes on without its caller: a chat server that dies while
/// the workers make it learns its end afterwards by its id
/// ([`Runner::ended`]: the same output), and keeps it as if it had
/// followed it to the end.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolcall_restate::Remote;
/// # fn page(agent: toolcall_agent::Agent) {
/// // The chat server makes no run itself: the workers do.
/// let chat = toolcall_ui::ChatServer::new(agent)
///     .with_runner(Arc::new(Remote::new("http://127.0.0.1:8080")));
/// # let _ = chat; }
/// ```
#[derive(Clone, Debug)]
pub struct Remote {
    ingress: String,
    workflow: String,
    poll: Duration,
    client: reqwest::Client,
}

impl Remote {
    /// Runs of the workflow `AgentRun` through the ingress at `ingress`
    /// (`http://127.0.0.1:8080`), its steps read every 200 ms.
    pub fn new(ingress: impl Into<String>) -> Self {
        let ingress = ingress.into().trim_end_matches('/').to_owned();
        Self {
            ingress,
            workflow: crate::DEFAULT_NAME.to_owned(),
            poll: Duration::from_millis(200),
            client: reqwest::Client::new(),
        }
    }

    /// Runs of the workflow served under `name` ([`AgentRun::named`](crate::AgentRun::named)).
    pub fn with_workflow(mut self, name: impl Into<String>) -> Self {
        self.workflow = name.into();
        self
    }

    /// How often a run's new steps are read (200 ms by default): how late a
    /// step may reach the reader after the worker made it.
    pub fn with_poll_interval(mut self, every: Duration) -> Self {
        self.poll = every;
        self
    }

    /// Start the run `id` from `input` and follow it: its steps as
    /// events, then its end.
    fn follow(self, id: String, input: RunInput) -> BoxStream<'static, AgentEvent> {
        let (events, received) = futures::channel::mpsc::unbounded();
        tokio::spawn(async move {
            let ended = match self.start(&id, &input).await {
                Ok(()) => self.steps_until_the_end(&id, &events).await,
                Err(error) => Err(error),
            };
            let ended = ended.map_err(|error| AgentError {
                error: ModelError::engine("restate", error),
                transcript: Box::new(input.transcript()),
            });
            let _ = events.unbounded_send(AgentEvent::Finished(ended));
        });
        received.boxed()
    }

    /// Send the run off.
    async fn start(&self, id: &str, input: &RunInput) -> Result<(), RemoteError> {
        let url = format!("{}/{}/{id}/run/send", self.ingress, self.workflow);
        let response = self
            .client
            .post(&url)
            .json(&Start::Input { input: input.clone(), pause: true, follow: true })
            .send()
            .await
            .map_err(|source| RemoteError::Unreachable { url: url.clone(), source })?;
        refused(&url, response).await.map(drop)
    }

    /// Send each step as it comes until the run has ended, then its end.
    async fn steps_until_the_end(
        &self,
        id: &str,
        events: &futures::channel::mpsc::UnboundedSender<AgentEvent>,
    ) -> Result<RunResult, RemoteError> {
        let output = self.output(id);
        let mut output = std::pin::pin!(output);
        let mut read = 0;
        loop {
            // The end is read first, and the steps after it: the run wrote
            // every step before it ended.
            let done = tokio::select! {
                biased;
                done = &mut output => Some(done),
                () = tokio::time::sleep(self.poll) => None,
            };
            read += self.send_steps(id, read, events).await?;
            if let Some(done) = done {
                let result = done?;
                // Those of the run's last moments, and any left over
                // from a long run (a read gives at most 500).
                while self.send_steps(id, read, events).await.map(|sent| {
                    read += sent;
                    sent > 0
                })? {}
                return Ok(result);
            }
        }
    }

    /// The run's end, once it has ended (its output, through the
    /// ingress's attach, which waits for it).
    async fn output(&self, id: &str) -> Result<RunResult, RemoteError> {
        let attach = format!("{}/restate/workflow/{}/{id}/attach", self.ingress, self.workflow);
        let response = self
            .client
            .get(&attach)
            .send()
            .await
            .map_err(|source| RemoteError::Unreachable { url: attach.clone(), source })?;
        let body = refused(&attach, response).await?;
        run_result(attach, &body)
    }

    /// Send the run's steps from the `after`th on; how many.
    async fn send_steps(
        &self,
        id: &str,
        after: u64,
        events: &futures::channel::mpsc::UnboundedSender<AgentEvent>,
    ) -> Result<u64, RemoteError> {
        let steps = self.steps(id, after).await?;
        let sent = steps.len() as u64;
        for step in steps {
            let _ = events.unbounded_send(step.into_event());
        }
        Ok(sent)
    }

    /// The run's steps from the `after`th on.
    async fn steps(&self, id: &str, after: u64) -> Result<Vec<Step>, RemoteError> {
        let url = format!("{}/{}/{id}/steps", self.ingress, self.workflow);
        let response = self
            .client
            .post(&url)
            .json(&after)
            .send()
            .await
            .map_err(|source| RemoteError::Unreachable { url: url.clone(), source })?;
        let body = refused(&url, response).await?;
        serde_json::from_str(&body).map_err(|error| RemoteError::OutOfSpec {
            url,
            reason: format!("the run's steps do not read: {error}"),
        })
    }
}

impl Runner for Remote {
    /// The workers run their own agent: `agent` is not sent, only the
    /// input (the conversation so far, or the paused run). The run is the
    /// workflow keyed `run`.
    fn stream(&self, agent: &Agent, run: &str, input: RunInput) -> BoxStream<'static, AgentEvent> {
        let _ = agent;
        self.clone().follow(run.to_owned(), input)
    }

    /// The output of the workflow keyed `run` (waited for while it goes);
    /// `None` when the ingress knows no such run (404).
    fn ended(&self, run: &str) -> BoxFuture<'static, Option<Result<RunResult, AgentError>>> {
        let (remote, run) = (self.clone(), run.to_owned());
        Box::pin(async move {
            match remote.output(&run).await {
                Ok(result) => Some(Ok(result)),
                Err(RemoteError::Status { status: 404, .. }) => None,
                Err(error) => Some(Err(AgentError {
                    error: ModelError::engine("restate", error),
                    transcript: Box::new(Transcript::default()),
                })),
            }
        })
    }
}

/// A run's output, read from `url`, as the run's result.
fn run_result(url: String, body: &str) -> Result<RunResult, RemoteError> {
    serde_json::from_str(body).map_err(|error| RemoteError::OutOfSpec {
        url,
        reason: format!("the run's output is not a run result: {error}"),
    })
}

/// The body of a successful response, or the refusal as an error.
async fn refused(url: &str, response: reqwest::Response) -> Result<String, RemoteError> {
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    if status.is_success() {
        Ok(body)
    } else {
        Err(RemoteError::Status { url: url.to_owned(), status: status.as_u16(), body })
    }
}

/// Why a [`Remote`] run could not be started or followed: the source of
/// the run's [`ModelError::Engine`] (engine `restate`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The ingress could not be reached.
    #[error("the Restate ingress could not be reached at {url}: {source}")]
    Unreachable {
        /// The request's URL.
        url: String,
        /// What the HTTP client said.
        source: reqwest::Error,
    },
    /// The ingress answered with an error status: the run failed (its
    /// terminal error), or the request was refused.
    #[error("{url} answered HTTP {status}: {body}")]
    Status {
        /// The request's URL.
        url: String,
        /// The status.
        status: u16,
        /// The body (Restate's error, as JSON).
        body: String,
    },
    /// The ingress answered something that does not read.
    #[error("{url} answered out of spec: {reason}")]
    OutOfSpec {
        /// The request's URL.
        url: String,
        /// What was wrong.
        reason: String,
    },
}
