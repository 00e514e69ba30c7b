//! Simulated shards: in-process servers that speak the PostgreSQL protocol, a network
//! with per-connection round-trip time and bandwidth, and the host that moves bytes and
//! (virtual) time between them and the executor (`host::sim`, re-exported here with the
//! server's types: the folder's real files are `server`, `guc`, `statement`, `wire`).
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
//!
//! On the virtual clock the host jumps to the next arrival when the executor waits, so
//! runs are deterministic; on the real clock it sleeps until then.
//!
//! Invariants:
//! - A simulated server is reached only through bytes: the client code that talks to it
//!   is the code that talks to a real PostgreSQL (`remote::Connection`), so the wire
//!   inspector shows the same messages in every mode.
//! - One `ShardServer` per connection, as PostgreSQL forks one backend per connection;
//!   its tables are the catalog's `Rc`s, only read (the shard's SQL has no DML), so
//!   servers share them without copies and a run leaves them as they were.
//! - Nothing here reads a clock: time is the cost model and the link figures, so the same
//!   run gives the same trace natively and in wasm32.
//!
//! PostgreSQL has no counterpart to the network; the server follows `postgres.c` (see
//! `server`), with the departures listed there.

// The simulated server (server.rs) and its parts: its settings (guc.rs), its
// statements' shapes (statement.rs) and its side of the wire protocol (wire.rs).
mod guc;
mod server;
mod statement;
mod wire;
pub use server::{ServerCosts, ShardServer};
