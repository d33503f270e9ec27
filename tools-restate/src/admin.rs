//! What the runs wait on, read from the Restate server's own storage: no
//! worker involved.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::Waiting;
use crate::workflow::WAITING;

/// A Restate server's admin API (port 9070 by default), for what the runs
/// wait on while no worker is up.
///
/// The `waiting` handler is code a worker runs: called through the
/// ingress while no worker is up, it answers nothing until one is (Restate
/// holds the call and retries it against the deployment, by default 70
/// times over about an hour, then pauses it). What a run waits on is its
/// workflow's state, kept by the server itself; this reads it through the
/// admin API's SQL introspection (`POST /query`, the `state` table), which
/// no worker takes part in.
///
/// A run shows from the moment it waits until its worker has taken the
/// decisions (a decision sent while no worker is up leaves it listed), or
/// until Restate drops the state of a run that ended otherwise.
///
/// ```no_run
/// # async fn list() -> Result<(), toolcall_restate::AdminError> {
/// let admin = toolcall_restate::Admin::new("http://127.0.0.1:9070");
/// for (run, waiting) in admin.all_waiting().await? {
///     let calls: Vec<_> = waiting.pending.iter().map(|pending| pending.call.name.as_str()).collect();
///     println!("{run} waits on {}", calls.join(", "));
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Admin {
    url: String,
    /// The workflow whose runs are read.
    workflow: String,
    client: reqwest::Client,
}

/// What the admin API could not answer.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The request did not reach the admin API, or its answer did not
    /// arrive whole.
    #[error("the Restate admin API at {url} did not answer: {source}")]
    Unreachable {
        /// The admin API's URL.
        url: String,
        /// Why.
        #[source]
        source: reqwest::Error,
    },
    /// The admin API refused the query: a server just started answers
    /// 500 until its partitions are up (`partition ... doesn't exist on
    /// this node`), and the query is worth asking again.
    #[error("the Restate admin API at {url} answered {status}: {body}")]
    Refused {
        /// The admin API's URL.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The answer's body.
        body: String,
    },
    /// The answer, or a run's state in it, is not what this crate wrote.
    #[error("the Restate admin API at {url} gave what does not read as the runs' state: {reason}")]
    Unreadable {
        /// The admin API's URL.
        url: String,
        /// What does not read.
        reason: String,
    },
}

/// One row of the `state` table as the query asks for it.
#[derive(Deserialize)]
struct Row {
    service_key: String,
    value_utf8: Option<String>,
}

#[derive(Deserialize)]
struct Rows {
    rows: Vec<Row>,
}

/// `text` as an SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

impl Admin {
    /// The admin API at `url` (`http://127.0.0.1:9070`, say).
    /// It reads the runs of the workflow `AgentRun`; [`Self::for_workflow`]
    /// for an agent served under another name.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into().trim_end_matches('/').to_owned(),
            workflow: crate::workflow::DEFAULT_NAME.to_owned(),
            client: reqwest::Client::new(),
        }
    }

    /// Read the runs of the workflow `name` ([`AgentRun::named`](crate::AgentRun::named)).
    pub fn for_workflow(mut self, name: impl Into<String>) -> Self {
        self.workflow = name.into();
        self
    }

    /// What run `run` waits on, or `None` if it waits on nothing (or is
    /// not a run): what its `waiting` handler gives, with no worker.
    ///
    /// # Errors
    ///
    /// [`AdminError::Unreachable`] when the admin API does not answer, [`AdminError::Refused`]
    /// when it answers an error status (a server just started answers 500 for a while: ask
    /// again), [`AdminError::Unreadable`] when the runs' state does not read.
    pub async fn waiting(&self, run: &str) -> Result<Option<Waiting>, AdminError> {
        Ok(self.query(Some(run)).await?.remove(run))
    }

    /// Every run that waits, by run id, with what it waits on.
    ///
    /// # Errors
    ///
    /// As [`Self::waiting`]: [`AdminError::Unreachable`], [`AdminError::Refused`] (worth asking
    /// again) or [`AdminError::Unreadable`].
    pub async fn all_waiting(&self) -> Result<BTreeMap<String, Waiting>, AdminError> {
        self.query(None).await
    }

    async fn query(&self, run: Option<&str>) -> Result<BTreeMap<String, Waiting>, AdminError> {
        let mut sql = format!(
            "SELECT service_key, value_utf8 FROM state WHERE service_name = {} AND key = {}",
            literal(&self.workflow),
            literal(WAITING)
        );
        if let Some(run) = run {
            sql.push_str(&format!(" AND service_key = {}", literal(run)));
        }
        let url = &self.url;
        let unreachable = |source| AdminError::Unreachable { url: url.clone(), source };
        let response = self
            .client
            .post(format!("{url}/query"))
            .header(reqwest::header::ACCEPT, "application/json")
            .json(&serde_json::json!({ "query": sql }))
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status();
        let body = response.text().await.map_err(unreachable)?;
        if !status.is_success() {
            return Err(AdminError::Refused { url: url.clone(), status: status.as_u16(), body });
        }
        let unreadable = |reason: String| AdminError::Unreadable { url: url.clone(), reason };
        let rows: Rows =
            serde_json::from_str(&body).map_err(|error| unreadable(format!("{error}: {body}")))?;
        rows.rows
            .into_iter()
            .map(|row| {
                let value = row
                    .value_utf8
                    .ok_or_else(|| unreadable(format!("run {}: its state is not UTF-8", row.service_key)))?;
                let waiting = serde_json::from_str(&value)
                    .map_err(|error| unreadable(format!("run {}: {error}: {value}", row.service_key)))?;
                Ok((row.service_key, waiting))
            })
            .collect()
    }
}
