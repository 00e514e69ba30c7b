//! Simulated shards: in-process servers that speak the PostgreSQL protocol, a network
//! with per-connection round-trip time and bandwidth, and the host that moves bytes and
//! (virtual) time between them and the executor.
//!
//! Network model, per connection (= one server backend):
//! - a message written at time t leaves when the uplink is free, takes
//!   `bytes / bandwidth` to transmit and `rtt / 2` to arrive;
//! - the backend runs queries one after another: a query starts when it has arrived and
//!   the backend is free, and takes the server cost (its executor's cost-model time
//!   plus `server_row_ns` per row sent and `server_query_ns` per statement; a startup
//!   packet takes `connect_ns`, the backend's start);
//! - the response leaves when the downlink is free, takes `bytes / bandwidth`, then
//!   `rtt / 2`.
//! On the virtual clock the host jumps to the next arrival when the executor waits, so
//! runs are deterministic; on the real clock it sleeps until then.

// The simulated server (server.rs) and its parts: its settings (guc.rs), its
// statements' shapes (statement.rs) and its side of the wire protocol (wire.rs).
mod guc;
mod server;
mod statement;
mod wire;
pub use crate::host::sim::{LinkParams, LinkStats, SimHost, Sleeper};
pub use server::{ServerCosts, ShardServer};
