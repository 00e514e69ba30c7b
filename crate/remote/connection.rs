//! One client connection: outbox, inbox, the FIFO of queries in flight, and the queue
//! of queries waiting for the connection. The executor `send`s statements and collects
//! answers by ticket (`is_ready`, `take_result`); the host drains `outbox` and hands
//! arrived bytes to `receive`. The rules every connection keeps are in the module doc of
//! `remote`; these are this file's own.
//!
//! Invariants:
//! - Every backend message belongs to the oldest query in flight, and ReadyForQuery
//!   completes it: one Query message, or one Parse…Sync batch, is one answer, and a
//!   message with no query in flight is a protocol error (the FIFO cannot drift).
//! - A statement is written only when `can_write`: behind nothing, behind the startup
//!   packet (trust authentication needs no exchange: how `pipelined_setup` saves its
//!   round trip), or behind anything with `pipeline`.
//! - Once an answer carried an error (`first_error`), statements that need the
//!   transaction (`InTransaction`, `Unread`) stay queued; COMMIT and ABORT may still go.
//! - An answer nobody will read (`discard`) is still read off the wire, then dropped:
//!   the server sends it anyway, and skipping it would hand it to the next query. A
//!   statement discarded before it was written is never written.
//! - `xact_open` is set when START TRANSACTION is written, not answered: a later
//!   statement may already go behind it (pipelined) and a discarded one opened nothing.
//! - Rows are stored flat, `ncols` per row, so a RowDescription may not change the width
//!   under rows already read and every DataRow must be exactly that wide.
//! - A bad frame header is refused before its body is awaited (`frame`).
//!
//! Where it departs from libpq and postgres_fdw (`contrib/postgres_fdw/connection.c`):
//! a whole answer up to ReadyForQuery is one `QueryResult`, where `PQgetResult` returns
//! one result per statement; the startup packet carries `user`, `database` and
//! `application_name` only (postgres_fdw's `connect_pg_server` also sets
//! `client_encoding`); only trust authentication (a server that asks for a password is
//! refused: the relay authenticates for the browser); no TLS; an ErrorResponse keeps its
//! SQLSTATE, message and position (`pgfdw_report_error` also reports detail, hint and
//! context); notices are dropped.

use crate::types::{ColType, Datum};
use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{DataRowBody, ErrorResponseBody, Message, RowDescriptionBody};
use postgres_protocol::message::frontend;
use std::collections::VecDeque;

pub type Ticket = u64;

/// What a query is to the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryRole {
    /// Session set-up before the transaction (`configure_remote_session`'s SETs).
    Setup,
    /// `begin_remote_xact`'s START TRANSACTION: the remote transaction is open once it
    /// is written.
    BeginTransaction,
    /// A scan's statement (DECLARE, FETCH, CLOSE): it needs the open transaction, so
    /// after an error on the connection it is held back.
    InTransaction,
    /// Like `InTransaction`, but nobody reads the answer (a rescan's CLOSE).
    Unread,
    /// COMMIT TRANSACTION: ends the transaction; its answer is read.
    EndTransaction,
    /// ABORT TRANSACTION after an error: ends the transaction; nobody reads the answer.
    Abandon,
}

/// How a statement travels (what the trace and the wire inspector show).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    /// The StartupMessage (user, database, application_name).
    Startup,
    /// A simple Query message (libpq's PQsendQuery / PQexec).
    Simple,
    /// Parse, Bind, Describe, Execute, Sync with the unnamed statement and portal
    /// (libpq's PQsendQueryParams, which postgres_fdw's `create_cursor` uses).
    Extended,
    /// Parse of a named statement, then Sync (libpq's PQprepare, which postgres_fdw's
    /// `prepare_foreign_modify` uses): no parameter types, the server infers them.
    Prepare,
    /// Bind of a named statement with text parameters, Describe of the portal,
    /// Execute, Sync (libpq's PQsendQueryPrepared, `execute_foreign_modify`).
    #[serde(rename = "exec_prepared")]
    ExecPrepared,
}

/// A message the connection wrote, for the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    pub ticket: Ticket,
    pub proto: Proto,
    /// The statement (empty for the startup packet).
    pub sql: String,
    /// Bytes on the wire.
    pub bytes: usize,
}

/// Bytes for the network, with the clock time they were written.
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub at: u64,
    pub bytes: Vec<u8>,
    /// It carries a statement (not the startup packet): a cancel can hit its answer.
    pub statement: bool,
    /// The statement is a FETCH (for the simulator's busy-time accounting).
    pub fetch: bool,
}

/// The role the sandbox connects as (its "user mapping"; no password: the sandbox's
/// servers trust it, and it may only read).
pub const USER: &str = "pgasync";
/// postgres_fdw's default `application_name`.
pub const APPLICATION_NAME: &str = "postgres_fdw";

/// How postgres_fdw opens its remote transaction (`begin_remote_xact`).
pub const BEGIN_SQL: &str = "START TRANSACTION ISOLATION LEVEL REPEATABLE READ";
/// How it ends one (`pgfdw_xact_callback`).
pub const COMMIT_SQL: &str = "COMMIT TRANSACTION";
pub const ABORT_SQL: &str = "ABORT TRANSACTION";
/// What `pgfdw_abort_cleanup` sends after it when the transaction prepared statements.
pub const DEALLOCATE_ALL_SQL: &str = "DEALLOCATE ALL";

/// `configure_remote_session`: the settings postgres_fdw gives every new connection
/// (for a server of version 9.0 or later), each its own waited round trip.
pub const SESSION_SETUP: [&str; 5] = [
    "SET search_path = pg_catalog",
    "SET timezone = 'GMT'",
    "SET datestyle = ISO",
    "SET intervalstyle = postgres",
    "SET extra_float_digits = 3",
];

/// postgres_fdw's `PgFdwConnState.pendingAreq`: the async request whose FETCH is in
/// flight on the connection. Only that request may wait on the socket; anyone else who
/// needs the connection drains it first (`process_pending_request`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingAreq {
    pub request: usize,
    pub requestor: usize,
    /// The ForeignScan node that sent the FETCH.
    pub requestee: usize,
    pub ticket: Ticket,
}

/// An ErrorResponse from a server, with PostgreSQL's fields.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RemoteError {
    pub server: String,
    pub sqlstate: String,
    pub message: String,
    /// 1-based character position in the remote query, when the server gave one.
    pub position: Option<usize>,
    pub query: String,
    /// The ErrorResponse's DETAIL, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The statement postgres_fdw names in its `CONTEXT:  remote SQL command: …`
    /// (`pgfdw_report_error`'s `sql`): a scan's query rather than its FETCH; None
    /// until the executor says (then `query`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "server \"{}\": ERROR {}: {}", self.server, self.sqlstate, self.message)?;
        if let Some(p) = self.position {
            write!(f, " (position {p} of remote query \"{}\")", self.query)?;
        }
        Ok(())
    }
}

/// The whole response to one Query message. Rows are stored flat, `ncols` per row, so
/// a batch is one allocation however many rows it has.
#[derive(Clone, Debug, Default)]
pub struct QueryResult {
    pub sql: String,
    pub types: Vec<ColType>,
    pub data: Vec<Datum>,
    pub nrows: usize,
    pub tags: Vec<String>,
    pub error: Option<RemoteError>,
    pub bytes: usize,
}

impl QueryResult {
    pub fn ncols(&self) -> usize {
        self.types.len()
    }
    pub fn row(&self, i: usize) -> &[Datum] {
        let n = self.ncols();
        &self.data[i * n..(i + 1) * n]
    }
}

#[derive(Clone, Debug)]
struct Pending {
    ticket: Ticket,
    proto: Proto,
    sql: String,
    /// The Bind message's parameter values, in text (None: NULL); extended protocol only.
    params: Vec<Option<String>>,
    /// The prepared statement's name (`Prepare`, `ExecPrepared`; empty otherwise).
    stmt_name: String,
    role: QueryRole,
    /// Nobody will read the result (ABORT, a scan's FETCH after its end).
    discard: bool,
    result: QueryResult,
}

impl Pending {
    fn is_startup(&self) -> bool {
        self.proto == Proto::Startup
    }
}

/// What the connection did with a completed response, for the trace.
#[derive(Debug, Clone)]
pub struct Completed {
    pub ticket: Ticket,
    pub proto: Proto,
    pub sql: String,
    pub rows: usize,
    pub bytes: usize,
    pub error: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Connection {
    pub id: usize,
    pub server: String,
    /// The server option `dbname` (the startup packet's database).
    pub database: String,
    /// Beyond postgres_fdw: several statements may be in flight at once.
    pub pipeline: bool,
    pub outbox: VecDeque<Outgoing>,
    /// Set when the executor wants the query in progress cancelled; the host sends the
    /// cancel request (in PostgreSQL, over a separate connection) and clears it.
    pub cancel_requested: bool,
    /// The startup packet was written (`connect_pg_server`).
    pub connected: bool,
    /// A remote transaction is open (START TRANSACTION was written).
    pub xact_open: bool,
    /// See `PendingAreq`.
    pub pending_areq: Option<PendingAreq>,
    inbox: BytesMut,
    inflight: VecDeque<Pending>,
    queued: VecDeque<Pending>,
    completed: Vec<(Ticket, QueryResult)>,
    next_ticket: Ticket,
    pub backend_key: Option<(i32, i32)>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// The first error any answer on this connection carried (even one nobody reads):
    /// the remote transaction is aborted, so queued statements that need it are held
    /// back and every scan waiting on the connection fails with this error, as
    /// postgres_fdw reports the pending request's error rather than the "transaction is
    /// aborted" that follows it.
    pub first_error: Option<RemoteError>,
    /// Messages written and not yet recorded in the trace.
    pub written: Vec<Written>,
    /// postgres_fdw's `have_prep_stmt`: a statement was prepared (`Proto::Prepare`)
    /// in the current transaction, so an abort also sends `DEALLOCATE ALL`.
    pub have_prep_stmt: bool,
}

impl Connection {
    pub fn new(id: usize, server: &str, pipeline: bool) -> Connection {
        Connection {
            id,
            server: server.to_string(),
            database: "postgres".to_string(),
            pipeline,
            outbox: VecDeque::new(),
            cancel_requested: false,
            connected: false,
            xact_open: false,
            pending_areq: None,
            inbox: BytesMut::new(),
            inflight: VecDeque::new(),
            queued: VecDeque::new(),
            completed: Vec::new(),
            next_ticket: 1,
            backend_key: None,
            bytes_sent: 0,
            bytes_received: 0,
            written: Vec::new(),
            first_error: None,
            have_prep_stmt: false,
        }
    }

    /// Is a statement in flight or waiting for this connection?
    pub fn is_busy(&self) -> bool {
        !self.inflight.is_empty() || !self.queued.is_empty()
    }

    pub fn inflight_count(&self) -> usize {
        self.inflight.len()
    }
    pub fn queued_count(&self) -> usize {
        self.queued.len()
    }
    /// SQL of the statements in flight, oldest first (for the demo's connection view).
    pub fn inflight_sql(&self) -> Vec<String> {
        self.inflight.iter().map(|p| if p.is_startup() { "(startup)".into() } else { p.sql.clone() }).collect()
    }

    /// `connect_pg_server`: writes the StartupMessage. Its answer (through the first
    /// ReadyForQuery) completes the returned ticket if `waited`; otherwise (the
    /// `pipelined_setup` knob) statements follow it at once and nobody reads it.
    pub fn connect(&mut self, now: u64, waited: bool) -> Ticket {
        self.connected = true;
        let mut buf = BytesMut::new();
        let params = [("user", USER), ("database", self.database.as_str()), ("application_name", APPLICATION_NAME)];
        frontend::startup_message(params.iter().copied(), &mut buf).expect("startup message");
        let ticket = self.new_ticket();
        self.written.push(Written { ticket, proto: Proto::Startup, sql: String::new(), bytes: buf.len() });
        self.push_out(now, buf, false, false);
        let result = QueryResult::default();
        let p = Pending {
            ticket,
            proto: Proto::Startup,
            sql: String::new(),
            params: Vec::new(),
            stmt_name: String::new(),
            role: QueryRole::Setup,
            discard: !waited,
            result,
        };
        self.inflight.push_back(p);
        ticket
    }

    /// Sends a statement now if the connection allows it, else queues it behind the one
    /// in flight. Returns the ticket to collect the result with and whether it was
    /// written now.
    pub fn send(&mut self, now: u64, proto: Proto, sql: &str, role: QueryRole) -> (Ticket, bool) {
        self.send_params(now, proto, sql, Vec::new(), role)
    }

    /// `send` with parameter values for the Bind message (libpq's PQsendQueryParams
    /// with `nParams` > 0, text format, no types: the statement casts each `$n`).
    pub fn send_params(
        &mut self,
        now: u64,
        proto: Proto,
        sql: &str,
        params: Vec<Option<String>>,
        role: QueryRole,
    ) -> (Ticket, bool) {
        self.send_named(now, proto, "", sql, params, role)
    }

    /// `send_params` of a named prepared statement (`Proto::Prepare`,
    /// `Proto::ExecPrepared`): `name` is the statement's, `sql` its text (for the trace).
    pub fn send_named(
        &mut self,
        now: u64,
        proto: Proto,
        name: &str,
        sql: &str,
        params: Vec<Option<String>>,
        role: QueryRole,
    ) -> (Ticket, bool) {
        let ticket = self.new_ticket();
        let discard = matches!(role, QueryRole::Abandon | QueryRole::Unread);
        let result = QueryResult::default();
        let stmt_name = name.to_string();
        self.queued.push_back(Pending {
            ticket,
            proto,
            sql: sql.to_string(),
            params,
            stmt_name,
            role,
            discard,
            result,
        });
        self.write_queued(now);
        (ticket, !self.queued.iter().any(|p| p.ticket == ticket))
    }

    /// `pgfdw_xact_callback` at commit: COMMIT TRANSACTION, if a transaction is open.
    pub fn commit(&mut self, now: u64) -> Option<Ticket> {
        if !self.xact_open {
            return None;
        }
        self.xact_open = false;
        self.have_prep_stmt = false;
        Some(self.send(now, Proto::Simple, COMMIT_SQL, QueryRole::EndTransaction).0)
    }

    /// `pgfdw_abort_cleanup`: cancel what runs (`pgfdw_cancel_query` when a query is
    /// in progress), forget every answer, ABORT TRANSACTION, and `DEALLOCATE ALL` if
    /// the transaction prepared a statement (`have_prep_stmt`; `have_error` is always
    /// set on abort). Each goes out after the answer to the one before, as
    /// `pgfdw_exec_cleanup_query` waits for each.
    pub fn abort(&mut self, now: u64) {
        if self.inflight.iter().any(|p| !p.is_startup()) {
            self.cancel_requested = true;
        }
        self.discard_all();
        self.first_error = None;
        self.pending_areq = None;
        if self.xact_open {
            self.xact_open = false;
            self.send(now, Proto::Simple, ABORT_SQL, QueryRole::Abandon);
            if self.have_prep_stmt {
                self.send(now, Proto::Simple, DEALLOCATE_ALL_SQL, QueryRole::Abandon);
            }
        }
        self.have_prep_stmt = false;
    }

    fn new_ticket(&mut self) -> Ticket {
        let t = self.next_ticket;
        self.next_ticket += 1;
        t
    }

    /// Can a statement go on the wire now? Behind the startup packet it may (trust
    /// authentication needs no exchange: this is how `pipelined_setup` saves the round
    /// trip); behind a statement only with `pipeline`.
    fn can_write(&self) -> bool {
        self.pipeline || self.inflight.iter().all(|q| q.is_startup())
    }

    /// Writes queued statements while the connection allows.
    fn write_queued(&mut self, now: u64) {
        while self.can_write() && !self.queued.is_empty() {
            let front = self.queued.front().unwrap();
            if matches!(front.role, QueryRole::InTransaction | QueryRole::Unread) && self.first_error.is_some() {
                break; // the transaction is aborted: only COMMIT/ABORT may go
            }
            let p = self.queued.pop_front().unwrap();
            let buf = encode(p.proto, &p.stmt_name, &p.sql, &p.params);
            if p.role == QueryRole::BeginTransaction || p.sql.contains(BEGIN_SQL) {
                self.xact_open = true;
            }
            if p.proto == Proto::Prepare {
                self.have_prep_stmt = true;
            }
            self.written.push(Written { ticket: p.ticket, proto: p.proto, sql: p.sql.clone(), bytes: buf.len() });
            let fetch = p.sql.contains("FETCH ");
            self.push_out(now, buf, true, fetch);
            self.inflight.push_back(p);
        }
    }

    fn push_out(&mut self, now: u64, buf: BytesMut, statement: bool, fetch: bool) {
        self.bytes_sent += buf.len() as u64;
        self.outbox.push_back(Outgoing { at: now, bytes: buf.to_vec(), statement, fetch });
    }

    /// Has any response arrived that nobody has read yet (the socket is readable)?
    pub fn has_answer(&self) -> bool {
        !self.completed.is_empty()
    }

    /// Is the response to `ticket` complete?
    pub fn is_ready(&self, ticket: Ticket) -> bool {
        self.completed.iter().any(|(t, _)| *t == ticket)
    }

    pub fn take_result(&mut self, ticket: Ticket) -> Option<QueryResult> {
        let i = self.completed.iter().position(|(t, _)| *t == ticket)?;
        Some(self.completed.swap_remove(i).1)
    }

    /// Marks a query's result as unwanted: it is drained from the connection when it
    /// arrives (or dropped from the queue if it was not sent yet; a query that was never
    /// sent opened no transaction, since the transaction is opened on writing).
    /// Returns whether the statement had been written (it reaches the server).
    pub fn discard(&mut self, ticket: Ticket) -> bool {
        let before = self.queued.len();
        self.queued.retain(|p| p.ticket != ticket);
        let written = self.queued.len() == before;
        for p in self.inflight.iter_mut() {
            if p.ticket == ticket {
                p.discard = true;
            }
        }
        self.completed.retain(|(t, _)| *t != ticket);
        written
    }

    /// Drops every queued query and discards every result in flight (after an error).
    pub fn discard_all(&mut self) {
        self.queued.clear();
        for p in self.inflight.iter_mut() {
            p.discard = true;
        }
        self.completed.clear();
    }

    /// Takes bytes that arrived; returns the queries they completed (for the trace).
    /// A malformed message is a protocol error the caller reports.
    pub fn receive(&mut self, now: u64, bytes: &[u8]) -> Result<Vec<Completed>, String> {
        self.bytes_received += bytes.len() as u64;
        self.inbox.extend_from_slice(bytes);
        let mut done = Vec::new();
        loop {
            let before = self.inbox.len();
            // A bad type or length word is an error now, not a wait for its body.
            super::frame::check_backend_frame(&self.inbox)
                .map_err(|e| format!("connection {} ({}): protocol error: {e}", self.id, self.server))?;
            let msg = match Message::parse(&mut self.inbox) {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(e) => return Err(format!("connection {} ({}): protocol error: {e}", self.id, self.server)),
            };
            let size = before - self.inbox.len();
            if let Some(c) = self.handle_message(msg, size)? {
                done.push(c);
                self.send_next_queued(now);
            }
        }
        Ok(done)
    }

    fn send_next_queued(&mut self, now: u64) {
        self.write_queued(now);
    }

    /// One backend message of the answer in flight; the answer is complete at
    /// ReadyForQuery.
    fn handle_message(&mut self, msg: Message, size: usize) -> Result<Option<Completed>, String> {
        // Borrowed, not cloned: this runs once per DataRow, and the hot path allocates
        // nothing per row.
        let server = self.server.as_str();
        let Some(cur) = self.inflight.front_mut() else {
            return Err(format!("connection {} ({server}): unexpected message with no query in flight", self.id));
        };
        cur.result.bytes += size;
        match msg {
            Message::RowDescription(body) => row_description(&mut cur.result, &body, server)?,
            Message::DataRow(body) => data_row(&mut cur.result, &body, server)?,
            Message::CommandComplete(body) => cur.result.tags.push(body.tag().map_err(|e| e.to_string())?.to_string()),
            Message::ErrorResponse(body) => {
                let err = error_response(&body, server, &cur.sql)?;
                // An error while connecting is fatal: the server closes the connection.
                if cur.is_startup() {
                    return Err(format!(
                        "server \"{server}\" refused the connection: {} ({})",
                        err.message, err.sqlstate
                    ));
                }
                cur.result.error.get_or_insert(err);
            }
            Message::BackendKeyData(body) => self.backend_key = Some((body.process_id(), body.secret_key())),
            Message::ReadyForQuery(_) => return Ok(Some(self.complete_front())),
            Message::AuthenticationOk
            | Message::ParseComplete
            | Message::BindComplete
            | Message::NoData
            | Message::CloseComplete
            | Message::ParameterStatus(_)
            | Message::NoticeResponse(_)
            | Message::EmptyQueryResponse => {}
            Message::AuthenticationCleartextPassword
            | Message::AuthenticationMd5Password(_)
            | Message::AuthenticationSasl(_) => {
                return Err(format!(
                    "server \"{server}\" asks for a password; the sandbox connects with trust authentication only"
                ));
            }
            _ => return Err(format!("server \"{server}\": unexpected protocol message")),
        }
        Ok(None)
    }

    fn complete_front(&mut self) -> Completed {
        let p = self.inflight.pop_front().expect("a query in flight");
        let c = Completed {
            ticket: p.ticket,
            proto: p.proto,
            sql: p.sql.clone(),
            rows: p.result.nrows,
            bytes: p.result.bytes,
            error: p.result.error.as_ref().map(|e| e.message.clone()),
        };
        if let (Some(e), None) = (&p.result.error, &self.first_error) {
            self.first_error = Some(e.clone());
        }
        if !p.discard {
            let mut result = p.result;
            result.sql = p.sql;
            self.completed.push((p.ticket, result));
        }
        c
    }

    /// Nothing in flight, nothing queued, no unread result, no unsent bytes.
    pub fn is_quiescent(&self) -> bool {
        self.inflight.is_empty() && self.queued.is_empty() && self.completed.is_empty() && self.outbox.is_empty()
    }
}

/// RowDescription: the column types of the rows that follow.
fn row_description(r: &mut QueryResult, body: &RowDescriptionBody, server: &str) -> Result<(), String> {
    let types: Vec<ColType> =
        body.fields().map(|f| Ok(ColType::from_oid(f.type_oid()))).collect().map_err(|e| e.to_string())?;
    // Rows are stored flat, `ncols` per row: the width cannot change under them.
    if r.nrows > 0 && types.len() != r.types.len() {
        return Err(format!("server \"{server}\": a RowDescription changes the width of the rows"));
    }
    r.types = types;
    Ok(())
}

/// DataRow: one row, exactly as wide as the RowDescription said.
fn data_row(r: &mut QueryResult, body: &DataRowBody, server: &str) -> Result<(), String> {
    let buf = body.buffer();
    let mut ranges = body.ranges();
    let mut n = 0;
    while let Some(range) = ranges.next().map_err(|e| e.to_string())? {
        let ty = r
            .types
            .get(n)
            .copied()
            .ok_or_else(|| format!("server \"{server}\": a DataRow has more columns than the RowDescription"))?;
        r.data.push(match range {
            None => Datum::Null,
            Some(rg) => ty.parse(&buf[rg]),
        });
        n += 1;
    }
    if n != r.types.len() {
        return Err(format!("server \"{server}\": a DataRow has {n} columns, the RowDescription {}", r.types.len()));
    }
    r.nrows += 1;
    Ok(())
}

/// ErrorResponse: the fields postgres_fdw reports (SQLSTATE, message, position).
fn error_response(body: &ErrorResponseBody, server: &str, query: &str) -> Result<RemoteError, String> {
    let mut err = RemoteError {
        server: server.to_string(),
        sqlstate: String::new(),
        message: String::new(),
        position: None,
        query: query.to_string(),
        detail: None,
        context: None,
    };
    let mut fields = body.fields();
    while let Some(f) = fields.next().map_err(|e| e.to_string())? {
        let value = String::from_utf8_lossy(f.value_bytes()).into_owned();
        match f.type_() {
            b'C' => err.sqlstate = value,
            b'M' => err.message = value,
            b'P' => err.position = value.parse().ok(),
            b'D' => err.detail = Some(value),
            _ => {}
        }
    }
    Ok(err)
}

/// The bytes of one statement: a Query message, or the extended-protocol batch libpq's
/// PQsendQueryParams writes (parameters in text format, no types, text results).
fn encode(proto: Proto, name: &str, sql: &str, params: &[Option<String>]) -> BytesMut {
    let mut buf = BytesMut::new();
    match proto {
        Proto::Startup => unreachable!("the startup packet is written by `connect`"),
        Proto::Simple => frontend::query(sql, &mut buf).expect("query message"),
        Proto::Prepare => {
            frontend::parse(name, sql, std::iter::empty(), &mut buf).expect("parse message");
            frontend::sync(&mut buf);
        }
        Proto::Extended | Proto::ExecPrepared => {
            if proto == Proto::Extended {
                frontend::parse("", sql, std::iter::empty(), &mut buf).expect("parse message");
            }
            let values = params.iter().map(|v| v.as_deref().map(str::as_bytes));
            let r = frontend::bind(
                "",
                name,
                std::iter::empty::<i16>(),
                values,
                |v, buf| match v {
                    Some(bytes) => {
                        buf.extend_from_slice(bytes);
                        Ok(postgres_protocol::IsNull::No)
                    }
                    None => Ok(postgres_protocol::IsNull::Yes),
                },
                Some(0),
                &mut buf,
            );
            if r.is_err() {
                unreachable!("a Bind of text values cannot fail");
            }
            frontend::describe(b'P', "", &mut buf).expect("describe message");
            frontend::execute("", 0, &mut buf).expect("execute message");
            frontend::sync(&mut buf);
        }
    }
    buf
}
