//! tools-session's tests: one suite every store passes (in memory, SQLite,
//! and PostgreSQL when a server is given), an agent's runs in a session, and
//! one conversation decided about through two stores on one database.

mod claims;
mod sessions;
mod stores;
mod support;
