//! A worker: the workflows served over HTTP/2 for a Restate server to call.

use std::io;
use std::net::SocketAddr;

use restate_sdk::prelude::*;
use tokio::net::TcpListener;
use toolcall_agent::Agent;

use crate::AgentRun;

/// A worker could not serve: the address it could not listen on (none
/// when a listener given to [`serve_on`] could not tell its own), and why
/// (two agents given one name, [`io::ErrorKind::InvalidInput`]).
#[derive(Debug, thiserror::Error)]
#[error("the Restate worker cannot serve on {}: {source}", match address {
    Some(address) => address.to_string(),
    None => "its listener".to_owned(),
})]
pub struct ServeError {
    address: Option<SocketAddr>,
    #[source]
    source: io::Error,
}

impl ServeError {
    /// The address the worker could not listen on.
    pub fn address(&self) -> Option<SocketAddr> {
        self.address
    }

    /// What went wrong ([`io::ErrorKind::AddrInUse`] for a port taken,
    /// [`io::ErrorKind::InvalidInput`] for two agents under one name).
    pub fn kind(&self) -> io::ErrorKind {
        self.source.kind()
    }
}

/// Serve `agent`'s runs at `address` until the process gets Ctrl-C
/// (SIGINT): one worker. An address that cannot be bound (a port taken,
/// an address not of this machine) is an error naming it.
///
/// Register the worker with the Restate server once (its admin API,
/// `POST /deployments {"uri": "http://ADDRESS"}`); every worker serving
/// the same agent can be registered, and Restate spreads the runs over
/// them.
///
/// # Errors
///
/// [`ServeError`], naming the address, when it cannot be bound (a port taken, an address not
/// of this machine). Once serving, it returns `Ok` at Ctrl-C.
pub async fn serve(agent: Agent, address: SocketAddr) -> Result<(), ServeError> {
    serve_runs([AgentRun::new(agent)], address).await
}

/// Serve several agents' runs at `address` until the process gets Ctrl-C
/// (SIGINT): one worker, each agent a workflow under its own name
/// ([`AgentRun::named`]; [`AgentRun::new`] is `AgentRun`), started
/// through the ingress at `/{name}/{run id}/run`. Registering the worker
/// registers them all.
///
/// ```no_run
/// use toolcall_agent::{Agent, OpenAiChat};
/// use toolcall_core::toolset::Toolset;
/// use toolcall_restate::AgentRun;
///
/// # async fn worker() -> Result<(), Box<dyn std::error::Error>> {
/// let researcher = Agent::new(OpenAiChat::new("gpt-4.1"), Toolset::new())?;
/// let writer = Agent::new(OpenAiChat::new("gpt-4.1-mini"), Toolset::new())?;
/// let runs = [AgentRun::named("researcher", researcher)?, AgentRun::named("writer", writer)?];
/// toolcall_restate::serve_runs(runs, "127.0.0.1:9080".parse()?).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`ServeError`], naming the address, when it cannot be bound, or when
/// two of the agents have one name. Once serving, it returns `Ok` at
/// Ctrl-C.
pub async fn serve_runs(
    runs: impl IntoIterator<Item = AgentRun>,
    address: SocketAddr,
) -> Result<(), ServeError> {
    let listener =
        TcpListener::bind(address).await.map_err(|source| ServeError { address: Some(address), source })?;
    serve_runs_on(runs, listener).await
}

/// Serve `agent`'s runs on a listener bound beforehand, until the process
/// gets Ctrl-C (SIGINT): what [`serve`] does once bound. Bind port 0 for
/// a port the system picks, and read it from
/// [`local_addr`](TcpListener::local_addr) (to register it, or print it)
/// before serving: no port chosen in advance that another process could
/// take in between.
///
/// ```no_run
/// use toolcall_agent::{Agent, OpenAiChat};
/// use toolcall_core::toolset::Toolset;
///
/// # async fn worker() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = Agent::new(OpenAiChat::new("gpt-4.1-mini"), Toolset::new())?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// println!("register http://{}", listener.local_addr()?);
/// toolcall_restate::serve_on(agent, listener).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`ServeError`] when the listener's local address cannot be read; once serving, it returns
/// `Ok` at Ctrl-C.
pub async fn serve_on(agent: Agent, listener: TcpListener) -> Result<(), ServeError> {
    serve_runs_on([AgentRun::new(agent)], listener).await
}

/// Serve several agents' runs on a listener bound beforehand, each under
/// its own name, until the process gets Ctrl-C (SIGINT): what
/// [`serve_runs`] does once bound.
///
/// # Errors
///
/// [`ServeError`] when the listener's local address cannot be read, or
/// when two of the agents have one name; once serving, it returns `Ok` at
/// Ctrl-C.
pub async fn serve_runs_on(
    runs: impl IntoIterator<Item = AgentRun>,
    listener: TcpListener,
) -> Result<(), ServeError> {
    // restate-sdk unwraps the listener's address: asked here first.
    let address = listener.local_addr().map_err(|source| ServeError { address: None, source })?;
    let mut names = Vec::new();
    let mut endpoint = Endpoint::builder();
    for run in runs {
        if names.iter().any(|name| name == run.name()) {
            let message = format!("two agents are named `{}`: each needs a name of its own", run.name());
            let source = io::Error::new(io::ErrorKind::InvalidInput, message);
            return Err(ServeError { address: Some(address), source });
        }
        names.push(run.name().to_owned());
        endpoint = endpoint.bind(run);
    }
    HttpServer::new(endpoint.build()).serve(listener).await;
    Ok(())
}
