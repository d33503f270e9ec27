//! The integration tests of `toolcall-ui`, one binary.

mod support;

// AgentEvents in, UI message chunks out.
mod adapter;
// A tool's JSON, images, files and artifact, and the typed answer.
mod parts;
// AgentEvents in, AG-UI events out, and the AG-UI endpoint.
mod agui;
// The useChat endpoint over HTTP, against the scripted server.
mod server;

// The server on a session store: restarts, users, reloads, stops.
mod chats;
mod doors;
// A tool's big image served under the chat, to its owner alone.
mod files;

// The SSE responses over raw connections: keep-alive, a reader that stops.
mod keepalive;
