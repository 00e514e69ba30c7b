//! pgasync: a sandbox for PostgreSQL-style asynchronous query execution.
//!
//! The core is sans-IO: it never opens a socket, sleeps or reads a clock. A host
//! (`sim::SimHost` for simulated shards, a TCP host natively, a WebSocket host in the
//! browser) moves bytes and time; the executor returns Wait when it cannot progress.

pub mod behaviour;
pub mod clock;
pub mod coordinator_sql;
pub mod demo;
pub mod executor;
pub mod host;
pub mod instrument;
pub mod knobs;
pub mod plan;
pub mod remote;
pub mod run;
pub mod scenario;
pub mod shard_sql;
pub mod sim;
pub mod sql_text;
pub mod trace;
pub mod types;
