//! pgasync: a sandbox for PostgreSQL-style asynchronous query execution.
//!
//! The core is sans-IO: it never opens a socket, sleeps or reads a clock. A host
//! (`sim::SimHost` for simulated shards, a TCP host natively, a WebSocket host in the
//! browser) moves bytes and time; the executor returns Wait when it cannot progress.

pub mod behaviour;
pub mod breakpoint;
pub mod clock;
pub mod executor;
pub mod export;
pub mod frontend;
pub mod host;
pub mod instrument;
pub mod knobs;
pub mod lesson;
pub mod plan;
pub mod postgres_sql;
pub mod remote;
pub mod run;
pub mod scenario;
pub mod session;
pub mod sim;
pub mod sql;
pub mod trace;
pub mod types;
pub mod wasm_api;
