//! Remote access like postgres_fdw (connection.c): one connection per foreign server,
//! shared by every foreign table on that server, speaking the PostgreSQL wire protocol.
//!
//! The connection is sans-IO: the executor writes queries into its outbox (with the
//! clock time they were written) and the host moves those bytes to the network; the
//! host hands received bytes to `Connection::receive`, which parses them with
//! `postgres-protocol` and completes queries at ReadyForQuery.
//!
//! Invariants:
//! - Responses arrive in the order statements were sent (the server runs them in
//!   order), so statements in flight form a FIFO.
//! - Without `pipeline` (PostgreSQL 15), at most one statement is in flight; others
//!   wait in `queued` and are written when the one in flight completes — libpq would
//!   refuse a second PQsendQuery, postgres_fdw first drains the pending one.
//! - `pending_areq` names the async request whose FETCH is in flight (postgres_fdw's
//!   `PgFdwConnState.pendingAreq`); it is cleared when its result is read, by its own
//!   scan (`fetch_more_data`) or by a scan that needs the connection
//!   (`process_pending_request`, which leaves the rows for their owner).
//! - The connection owns its transaction state: START TRANSACTION opens it when
//!   written, `commit` and `abort` end it.
//! - After an error answer nothing more that needs the transaction is sent, and the
//!   waiting scans fail with that first error.
//!
//! Where it departs from PostgreSQL: postgres_fdw calls libpq (`PQsendQuery`,
//! `PQgetResult`), which does its own I/O; here the parsing and the queueing libpq and
//! `pgfdw_get_result` do are in `Connection`, and the socket is the host's. Several
//! statements in flight on one connection (the behaviour knob `pipeline`) is ours:
//! postgres_fdw 15 waits for each result. Column types collapse
//! to four (`types::ColType`: integers, numeric — read exactly, with its display scale
//! —, float8 and text); authentication is trust only (`connection`).

mod connection;
pub mod frame;
pub use connection::{
    Connection, Outgoing, PendingAreq, Proto, QueryResult, QueryRole, RemoteError, Ticket, Written, ABORT_SQL,
    APPLICATION_NAME, BEGIN_SQL, COMMIT_SQL, SESSION_SETUP, USER,
};

/// postgres_fdw's server options the executor reads. (Several queries in flight on
/// one connection is not a server option: it is the behaviour knob `pipeline`, which
/// `EState::set_behaviour` applies to every connection.) No default here: the run's
/// settings (`scenario::Settings`) fill in postgres_fdw's, `knobs::DEFAULT_FETCH_SIZE`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ServerOptions {
    pub async_capable: bool,
    pub fetch_size: usize,
}

/// A foreign server (`CREATE SERVER … OPTIONS (…)`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ForeignServer {
    pub name: String,
    pub options: ServerOptions,
}
