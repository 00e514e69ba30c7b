//! Remote access like postgres_fdw: one connection per foreign server, shared by every
//! foreign table on that server, speaking the PostgreSQL wire protocol.
//!
//! The connection is sans-IO: the executor writes queries into its outbox (with the
//! clock time they were written) and the host moves those bytes to the network; the
//! host hands received bytes to `Connection::receive`, which parses them with
//! `postgres-protocol` and completes queries at ReadyForQuery.
//!
//! Invariants:
//! - Responses arrive in the order queries were sent (the server runs them in order),
//!   so in-flight queries form a FIFO.
//! - Without `pipeline`, at most one query is in flight; others wait in `queued`
//!   and are written when the one in flight completes. This is postgres_fdw's rule
//!   that a pending request must be drained before the connection is used again, done
//!   without blocking: postgres_fdw reads the pending answer synchronously
//!   (`process_pending_request`) and lets only one request wait on the socket; here
//!   answers are buffered per query as they arrive, and every scan waiting on the
//!   connection registers it, so no scan can be left without an event (seed 000).
//! - A connection with queued queries always has one in flight, so whoever waits on a
//!   busy connection waits on something that will complete — unless an answer failed:
//!   then nothing more is sent and the waiting scans fail with that first error.

mod connection;
pub use connection::{Connection, QueryResult, QueryRole, RemoteError, Ticket, BEGIN_SQL};

/// postgres_fdw's server options, plus our `pipeline`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ServerOptions {
    pub async_capable: bool,
    pub fetch_size: usize,
    /// Beyond postgres_fdw: allow several queries in flight on the connection.
    pub pipeline: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions { async_capable: false, fetch_size: 100, pipeline: false }
    }
}

/// A foreign server (`CREATE SERVER … OPTIONS (…)`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ForeignServer {
    pub name: String,
    pub options: ServerOptions,
}
