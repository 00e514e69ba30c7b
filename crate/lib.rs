//! pgasync: a sandbox for PostgreSQL-style asynchronous query execution.
//!
//! The core is sans-IO: it never opens a socket, sleeps or reads a clock. A host
//! (`sim::SimHost` for simulated shards, a TCP host natively, a WebSocket host in the
//! browser) moves bytes and time; the executor returns Wait when it cannot progress.

pub mod behaviour;
pub mod clock;
pub mod estate;
pub mod event_loop;
pub mod exec_async;
pub mod executor;
pub mod host;
#[cfg(not(target_arch = "wasm32"))]
pub mod host_tcp;
pub mod instrument;
pub mod plan;
pub mod remote;
pub mod run;
pub mod scenario;
pub mod session;
pub mod sim;
pub mod sql;
pub mod trace;
pub mod types;
pub mod wasm_api;
