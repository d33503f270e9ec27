//! A worker: the workflow served over HTTP/2 for a Restate server to call.

use std::io;
use std::net::SocketAddr;

use restate_sdk::prelude::*;
use tokio::net::TcpListener;
use toolcall_agent::Agent;

use crate::AgentRun;

/// A worker could not serve: the address it could not listen on (none
/// when a listener given to [`serve_on`] could not tell its own), and why.
#[derive(Debug, thiserror::Error)]
#[error("the Restate worker cannot listen on {}: {source}", match address {
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

    /// What went wrong ([`io::ErrorKind::AddrInUse`] for a port taken).
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
    let listener =
        TcpListener::bind(address).await.map_err(|source| ServeError { address: Some(address), source })?;
    serve_on(agent, listener).await
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
    // restate-sdk unwraps the listener's address: asked here first.
    listener.local_addr().map_err(|source| ServeError { address: None, source })?;
    HttpServer::new(Endpoint::builder().bind(AgentRun::new(agent)).build()).serve(listener).await;
    Ok(())
}
