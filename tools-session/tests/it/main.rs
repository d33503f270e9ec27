//! tools-session's tests: one suite every store passes (in memory, SQLite,
//! and PostgreSQL when a server is given), and an agent's runs in a session.

mod sessions;
mod stores;
mod support;
