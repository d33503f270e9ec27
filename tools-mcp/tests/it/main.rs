//! The integration tests of `toolcall-mcp`, one binary: in-process servers
//! over HTTP on loopback and over in-memory pipes, against rmcp's client,
//! raw requests and this crate's `McpClient`. (The example server, over
//! stdio and HTTP and against the official SDKs' clients, is tested in the
//! root package.)

mod support;

// Against rmcp's client: progress, cancellation, shutdown, list changes,
// hosts, origins and tokens; `McpClient` against a server made with rmcp's macros.
mod bridge;
// Approval by elicitation: what the person is shown, and every answer.
mod approval;
// JSON-RPC batches over HTTP, by protocol version.
mod batch;
// The JSON-RPC errors of messages the server cannot read or act on.
mod errors;
// A tool's images, files and URLs as MCP blocks, and back.
mod parts;
// A remote tool's error read back as the same local one.
mod remote_errors;

// The HTTP server's limits: timeouts, caps, sessions, event streams, hosts.
mod http_limits;
// Event streams resumed after a cut, with Last-Event-ID.
mod resume;
// A client that disconnects mid-call.
mod disconnect;
// Replicas behind HAProxy's round robin: stateless, and sticky sessions
// (ignored by default: they need haproxy).
mod balanced;
