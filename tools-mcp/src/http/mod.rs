//! Streamable HTTP on axum: loopback by default, Host and Origin checked
//! against DNS rebinding, an optional bearer token, bounded connections and
//! a shutdown that always ends.
//!
//! - `options`: [`HttpOptions`], what to serve and how;
//! - `router`: the axum router, rmcp's service behind the checks below;
//! - `host`: one `Host`, and an absolute-form target's authority as the host;
//! - `bearer`: the token, never shown, and its check;
//! - `sessions`: the session cap, and DELETE answered as clients read it;
//! - `streams`: the event streams (GET), capped and of a bounded life;
//! - `resume`: a call's stream kept, and resumed strictly after an event;
//! - `unreadable`: a body rmcp cannot read, answered as clients read it;
//! - `batches`: a batch at 2025-03-26, its messages POSTed one by one;
//! - `duplicates`: a request with the id of one in flight, refused;
//! - `server`: [`HttpServer`], bound and served until its shutdown;
//! - `requests`: the requests in flight, which a shutdown waits for.

mod batches;
mod bearer;
mod duplicates;
mod host;
mod options;
mod requests;
mod resume;
mod router;
mod server;
mod sessions;
mod streams;
mod unreadable;

pub use options::HttpOptions;
pub use server::HttpServer;
