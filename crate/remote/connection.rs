//! One client connection: outbox, inbox, the FIFO of queries in flight, and the queue
//! of queries waiting for the connection. See the module doc of `remote`.

use crate::types::{ColType, Datum};
use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::{backend::Message, frontend};
use std::collections::VecDeque;

pub type Ticket = u64;

/// What a query is to the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryRole {
    /// A scan's query (DECLARE, FETCH, CLOSE): it runs in the remote transaction,
    /// which is opened first if none is, and its answer is read.
    InTransaction,
    /// COMMIT: ends the transaction; its answer is read.
    EndTransaction,
    /// ROLLBACK after an error: ends the transaction; nobody reads the answer.
    Abandon,
}

/// How postgres_fdw opens its remote transaction.
pub const BEGIN_SQL: &str = "START TRANSACTION ISOLATION LEVEL REPEATABLE READ";

/// An ErrorResponse from a server, with PostgreSQL's fields.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RemoteError {
    pub server: String,
    pub sqlstate: String,
    pub message: String,
    /// 1-based character position in the remote query, when the server gave one.
    pub position: Option<usize>,
    pub query: String,
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

#[derive(Debug)]
struct Pending {
    ticket: Ticket,
    sql: String,
    /// The startup exchange has no Query; its response ends at the first ReadyForQuery too.
    startup: bool,
    /// Nobody will read the result (a cancelled scan's FETCH, a fire-and-forget CLOSE).
    discard: bool,
    /// The query must run inside the remote transaction (opened first if need be).
    in_xact: bool,
    result: QueryResult,
}

/// What the connection did with a completed response, for the trace.
#[derive(Debug, Clone)]
pub struct Completed {
    pub ticket: Ticket,
    pub sql: String,
    pub rows: usize,
    pub bytes: usize,
    pub error: Option<String>,
}

#[derive(Debug)]
pub struct Connection {
    pub id: usize,
    pub server: String,
    pub pipeline: bool,
    /// Bytes to send, each with the clock time it was written.
    pub outbox: VecDeque<(u64, Vec<u8>)>,
    /// Set when the executor wants the query in progress cancelled; the host sends the
    /// cancel request (in PostgreSQL, over a separate connection) and clears it.
    pub cancel_requested: bool,
    /// A remote transaction is open (START TRANSACTION was written to the wire).
    pub xact_open: bool,
    /// How a query that needs a transaction opens one when none is open: in the same
    /// Query message (`true`, async mode) or as its own round trip first, as
    /// postgres_fdw does (`false`).
    pub combine_begin: bool,
    inbox: BytesMut,
    inflight: VecDeque<Pending>,
    queued: VecDeque<Pending>,
    completed: Vec<(Ticket, QueryResult)>,
    next_ticket: Ticket,
    started: bool,
    cursor_number: u32,
    pub backend_key: Option<(i32, i32)>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// The first error any answer on this connection carried (even one nobody reads):
    /// the remote transaction is aborted, so queued queries that need it are held back
    /// and every scan waiting on the connection fails with this error, as postgres_fdw
    /// reports the pending request's error rather than the "transaction is aborted" that
    /// follows it.
    pub first_error: Option<RemoteError>,
    /// Queries written other than the one being sent (released from the queue, or a
    /// START TRANSACTION sent ahead), not yet recorded in the trace.
    pub released: Vec<String>,
}

impl Connection {
    pub fn new(id: usize, server: &str, pipeline: bool) -> Connection {
        Connection {
            id,
            server: server.to_string(),
            pipeline,
            outbox: VecDeque::new(),
            cancel_requested: false,
            xact_open: false,
            combine_begin: false,
            inbox: BytesMut::new(),
            inflight: VecDeque::new(),
            queued: VecDeque::new(),
            completed: Vec::new(),
            next_ticket: 1,
            started: false,
            cursor_number: 0,
            backend_key: None,
            bytes_sent: 0,
            bytes_received: 0,
            released: Vec::new(),
            first_error: None,
        }
    }

    /// postgres_fdw names cursors c1, c2, … per connection.
    pub fn next_cursor_name(&mut self) -> String {
        self.cursor_number += 1;
        format!("c{}", self.cursor_number)
    }

    /// Is a query in flight or waiting for this connection?
    pub fn is_busy(&self) -> bool {
        !self.inflight.is_empty() || !self.queued.is_empty()
    }

    pub fn inflight_count(&self) -> usize {
        self.inflight.len()
    }
    pub fn queued_count(&self) -> usize {
        self.queued.len()
    }
    /// SQL of the queries in flight, oldest first (for the demo's connection view).
    pub fn inflight_sql(&self) -> Vec<String> {
        self.inflight.iter().map(|p| p.sql.clone()).collect()
    }

    /// Sends a query now if the connection allows it, else queues it (see `QueryRole`,
    /// and `combine_begin` for how the transaction is opened). Returns the ticket to
    /// collect the result with, and the SQL and size actually written now (None if it
    /// was queued).
    pub fn send_query(&mut self, now: u64, sql: &str, role: QueryRole) -> (Ticket, Option<(String, usize)>) {
        let in_xact = role == QueryRole::InTransaction;
        let discard = role == QueryRole::Abandon;
        if !self.started {
            self.start(now);
        }
        let ticket = self.new_ticket();
        let p =
            Pending { ticket, sql: sql.to_string(), startup: false, discard, in_xact, result: QueryResult::default() };
        self.queued.push_back(p);
        let mut mine = None;
        for (t, sql, n) in self.write_queued(now) {
            if t == ticket {
                mine = Some((sql, n));
            } else {
                self.released.push(sql);
            }
        }
        (ticket, mine)
    }

    fn new_ticket(&mut self) -> Ticket {
        let t = self.next_ticket;
        self.next_ticket += 1;
        t
    }

    /// Can a query go on the wire now? A query may follow the startup packet at once
    /// (trust authentication needs no exchange), so connecting costs no round trip.
    fn can_write(&self) -> bool {
        self.pipeline || self.inflight.iter().all(|q| q.startup)
    }

    /// Writes queued queries while the connection allows; returns what was written.
    fn write_queued(&mut self, now: u64) -> Vec<(Ticket, String, usize)> {
        let mut written = Vec::new();
        while self.can_write() && !self.queued.is_empty() {
            let front = self.queued.front_mut().unwrap();
            if front.in_xact && self.first_error.is_some() {
                break; // the transaction is aborted: only COMMIT/ROLLBACK may go
            }
            if front.in_xact && !self.xact_open {
                self.xact_open = true;
                if self.combine_begin {
                    front.sql = format!("{BEGIN_SQL}; {}", front.sql);
                } else {
                    // A round trip of its own first, as postgres_fdw's begin_remote_xact.
                    let ticket = self.new_ticket();
                    let n = self.write_query(now, BEGIN_SQL);
                    let result = QueryResult::default();
                    let p = Pending {
                        ticket,
                        sql: BEGIN_SQL.into(),
                        startup: false,
                        discard: true,
                        in_xact: false,
                        result,
                    };
                    self.inflight.push_back(p);
                    written.push((ticket, BEGIN_SQL.to_string(), n));
                    continue;
                }
            }
            let p = self.queued.pop_front().unwrap();
            let n = self.write_query(now, &p.sql);
            written.push((p.ticket, p.sql.clone(), n));
            self.inflight.push_back(p);
        }
        written
    }

    fn start(&mut self, now: u64) {
        self.started = true;
        let mut buf = BytesMut::new();
        let params = [("user", "pgasync"), ("database", "postgres"), ("application_name", "pgasync")];
        frontend::startup_message(params.iter().copied(), &mut buf).expect("startup message");
        self.push_out(now, buf);
        self.released.push("(startup)".into());
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let result = QueryResult::default();
        self.inflight.push_back(Pending {
            ticket,
            sql: "(startup)".into(),
            startup: true,
            in_xact: false,
            discard: true,
            result,
        });
    }

    fn write_query(&mut self, now: u64, sql: &str) -> usize {
        let mut buf = BytesMut::new();
        frontend::query(sql, &mut buf).expect("query message");
        let n = buf.len();
        self.push_out(now, buf);
        n
    }

    fn push_out(&mut self, now: u64, buf: BytesMut) {
        self.bytes_sent += buf.len() as u64;
        self.outbox.push_back((now, buf.to_vec()));
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
    pub fn discard(&mut self, ticket: Ticket) {
        self.queued.retain(|p| p.ticket != ticket);
        for p in self.inflight.iter_mut() {
            if p.ticket == ticket {
                p.discard = true;
            }
        }
        self.completed.retain(|(t, _)| *t != ticket);
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
        for (_, sql, _) in self.write_queued(now) {
            self.released.push(sql);
        }
    }

    fn handle_message(&mut self, msg: Message, size: usize) -> Result<Option<Completed>, String> {
        let server = self.server.clone();
        let Some(cur) = self.inflight.front_mut() else {
            return Err(format!("connection {} ({server}): unexpected message with no query in flight", self.id));
        };
        cur.result.bytes += size;
        let r = &mut cur.result;
        match msg {
            Message::RowDescription(body) => {
                r.types =
                    body.fields().map(|f| Ok(ColType::from_oid(f.type_oid()))).collect().map_err(|e| e.to_string())?;
            }
            Message::DataRow(body) => {
                let buf = body.buffer();
                let mut ranges = body.ranges();
                let mut n = 0;
                while let Some(range) = ranges.next().map_err(|e| e.to_string())? {
                    let ty = r.types.get(n).copied().ok_or_else(|| {
                        format!("server \"{server}\": a DataRow has more columns than the RowDescription")
                    })?;
                    r.data.push(match range {
                        None => Datum::Null,
                        Some(rg) => ty.parse(&buf[rg]),
                    });
                    n += 1;
                }
                if n != r.types.len() {
                    return Err(format!(
                        "server \"{server}\": a DataRow has {n} columns, the RowDescription {}",
                        r.types.len()
                    ));
                }
                r.nrows += 1;
            }
            Message::CommandComplete(body) => r.tags.push(body.tag().map_err(|e| e.to_string())?.to_string()),
            Message::ErrorResponse(body) => {
                let mut err = RemoteError {
                    server: server.clone(),
                    sqlstate: String::new(),
                    message: String::new(),
                    position: None,
                    query: cur.sql.clone(),
                };
                let mut fields = body.fields();
                while let Some(f) = fields.next().map_err(|e| e.to_string())? {
                    let value = String::from_utf8_lossy(f.value_bytes()).into_owned();
                    match f.type_() {
                        b'C' => err.sqlstate = value,
                        b'M' => err.message = value,
                        b'P' => err.position = value.parse().ok(),
                        _ => {}
                    }
                }
                // An error while connecting is fatal: the server closes the connection.
                if cur.startup {
                    return Err(format!(
                        "server \"{server}\" refused the connection: {} ({})",
                        err.message, err.sqlstate
                    ));
                }
                if cur.result.error.is_none() {
                    cur.result.error = Some(err);
                }
            }
            Message::BackendKeyData(body) => self.backend_key = Some((body.process_id(), body.secret_key())),
            Message::ReadyForQuery(_) => return Ok(Some(self.complete_front())),
            Message::AuthenticationOk
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
            sql: p.sql.clone(),
            rows: p.result.nrows,
            bytes: p.result.bytes,
            error: p.result.error.as_ref().map(|e| e.message.clone()),
        };
        if let (Some(e), None, false) = (&p.result.error, &self.first_error, p.startup) {
            self.first_error = Some(e.clone());
        }
        if !p.discard && !p.startup {
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
