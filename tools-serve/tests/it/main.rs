//! `toolcall_serve::serve` against raw connections on loopback.

// Timeouts, the cap, long streams.
mod connections;

// The graceful shutdown: requests in progress answered, held connections
// closed, the drain and the grace.
mod shutdown;
