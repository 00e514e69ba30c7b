//! ForeignScan over a postgres_fdw-like server (postgres_fdw.c in small).
//!
//! Protocol with the server, per scan:
//! - sync mode (as postgres_fdw): `START TRANSACTION ISOLATION LEVEL REPEATABLE READ`
//!   (once per connection, sent by the connection before the first query that needs
//!   it), `DECLARE cN CURSOR FOR <remote sql>`, then
//!   `FETCH fetch_size FROM cN` whenever the batch is used up, and `CLOSE cN` at the end,
//!   each one a round trip the scan waits for;
//! - async mode: the first round trip carries START TRANSACTION, DECLARE and the first
//!   FETCH in one Query; as soon as a batch arrives the next FETCH is sent (fetch-ahead),
//!   so it is in flight while the current batch is consumed; the cursor is left to the
//!   COMMIT to close.
//!
//! Where this departs from PostgreSQL 14's postgres_fdw, on purpose: postgres_fdw sends
//! the next FETCH only once the current batch is used up, and only for scans an Append
//! drives asynchronously; here every scan on an async-capable server fetches ahead in
//! async mode, as the 2016–2018 patches of the seeds did (scenario C measures exactly
//! that). Only scans a parent sends requests to print as "Async Foreign Scan".
//!
//! The same `produce` step serves the plain `exec_next` (sync) and the requestee side of
//! the async protocol: it returns a row, end of data, or Wait when the result it needs is
//! not on the connection yet. Another scan's query in flight on a shared connection is
//! drained by the connection before ours is sent (postgres_fdw's pending request).

use super::{copy_row, ExecNode, ExecStatus};
use crate::estate::{EState, ExecError, ExecResult};
use crate::exec_async::{exec_async_request_done, exec_async_request_pending};
use crate::instrument::ExplainNode;
use crate::plan::{deparse_remote_query, ForeignScanPlan};
use crate::remote::{QueryResult, QueryRole, Ticket};
use crate::types::Datum;

#[derive(Clone, Copy, Debug, PartialEq)]
enum PendingKind {
    Declare,
    Fetch,
    Close,
}

pub struct ForeignScanState {
    id: usize,
    relation: String,
    server: String,
    conn: usize,
    sql: String,
    fetch_size: usize,
    /// The server is async_capable and the query runs in async mode: the scan uses the
    /// async round-trip pattern (transaction and cursor in the first query, fetch-ahead).
    async_capable: bool,
    /// An async-aware parent sends this scan requests (EXPLAIN's "Async Foreign Scan").
    requestee: bool,
    cursor: Option<String>,
    /// The query this scan waits for, if any.
    pending: Option<(Ticket, PendingKind)>,
    batch: QueryResult,
    next_tuple: usize,
    /// The last FETCH returned fewer rows than asked: no more rows on the server.
    eof_reached: bool,
    finished: bool,
    slot: Vec<Datum>,
}

impl ForeignScanState {
    pub fn init(id: usize, plan: &ForeignScanPlan, es: &mut EState) -> Result<ForeignScanState, String> {
        let conn = es.server_index(&plan.server).ok_or_else(|| format!("server \"{}\" does not exist", plan.server))?;
        let options = &es.servers[conn].options;
        if options.fetch_size == 0 {
            return Err(format!("server \"{}\": fetch_size must be positive", plan.server));
        }
        Ok(ForeignScanState {
            id,
            relation: plan.relation.clone(),
            server: plan.server.clone(),
            conn,
            sql: deparse_remote_query(&plan.remote),
            fetch_size: options.fetch_size,
            async_capable: es.async_enabled && options.async_capable,
            requestee: false,
            cursor: None,
            pending: None,
            batch: QueryResult::default(),
            next_tuple: 0,
            eof_reached: false,
            finished: false,
            slot: Vec::new(),
        })
    }

    pub fn connection(&self) -> usize {
        self.conn
    }

    fn send(&mut self, es: &mut EState, sql: &str, kind: PendingKind) {
        let ticket = es.send_query(self.conn, sql, Some(self.id), QueryRole::InTransaction);
        self.pending = Some((ticket, kind));
    }

    /// One step of the scan: a row, end of data, or Wait for the pending result.
    fn produce(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            if self.next_tuple < self.batch.nrows {
                es.clock.charge(es.cost.foreign_row_ns);
                copy_row(&mut self.slot, self.batch.row(self.next_tuple));
                self.next_tuple += 1;
                return Ok(ExecStatus::Row);
            }
            if self.finished {
                return Ok(ExecStatus::Done);
            }
            if let Some((ticket, kind)) = self.pending {
                let Some(result) = es.conns[self.conn].take_result(ticket) else {
                    // An earlier answer on our connection failed: ours will never come.
                    if let Some(e) = &es.conns[self.conn].first_error {
                        return Err(ExecError::Remote(e.clone()));
                    }
                    return Ok(ExecStatus::Wait);
                };
                self.pending = None;
                self.take_result(es, kind, result)?;
                continue;
            }
            self.send_next(es);
        }
    }

    /// Handles the response to our pending query.
    fn take_result(&mut self, es: &mut EState, kind: PendingKind, result: QueryResult) -> ExecResult<()> {
        es.clock.charge(es.cost.message_ns);
        es.instr[self.id].remote.bytes_received += result.bytes as u64;
        if let Some(e) = result.error {
            return Err(ExecError::Remote(e));
        }
        match kind {
            PendingKind::Declare => {}
            PendingKind::Close => self.finished = true,
            PendingKind::Fetch => {
                es.instr[self.id].remote.batches += 1;
                self.eof_reached = result.nrows < self.fetch_size;
                self.batch = result;
                self.next_tuple = 0;
                if self.async_capable && !self.eof_reached {
                    self.send_fetch(es); // fetch-ahead: in flight while this batch is consumed
                }
            }
        }
        Ok(())
    }

    fn send_fetch(&mut self, es: &mut EState) {
        let sql = format!("FETCH {} FROM {}", self.fetch_size, self.cursor.as_deref().unwrap_or("c"));
        self.send(es, &sql, PendingKind::Fetch);
    }

    /// Sends what the scan needs next: the cursor, a batch, or the close. The
    /// connection opens the remote transaction before the first of them.
    fn send_next(&mut self, es: &mut EState) {
        if self.eof_reached {
            if self.async_capable {
                self.finished = true; // COMMIT closes the cursor
            } else {
                let sql = format!("CLOSE {}", self.cursor.as_deref().unwrap_or("c"));
                self.send(es, &sql, PendingKind::Close);
            }
            return;
        }
        if self.cursor.is_none() {
            let cursor = es.conns[self.conn].next_cursor_name();
            let declare = format!("DECLARE {cursor} CURSOR FOR {}", self.sql);
            if self.async_capable {
                let sql = format!("{declare}; FETCH {} FROM {cursor}", self.fetch_size);
                self.cursor = Some(cursor);
                self.send(es, &sql, PendingKind::Fetch);
            } else {
                self.cursor = Some(cursor);
                self.send(es, &declare, PendingKind::Declare);
            }
        } else {
            self.send_fetch(es);
        }
    }

    /// Forgets the result we wait for (rescan, end): the connection drains it.
    fn discard_pending(&mut self, es: &mut EState) {
        if let Some((ticket, _)) = self.pending.take() {
            es.conns[self.conn].discard(ticket);
        }
    }
}

impl ExecNode for ForeignScanState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        let status = self.produce(es)?;
        if status == ExecStatus::Wait {
            es.event_loop.add_wait_conn(self.conn);
        }
        Ok(status)
    }

    /// Restarts the scan with a new cursor on its next call. The old cursor is not
    /// closed here: its DECLARE may still be queued or in flight, and the COMMIT closes
    /// it in any case; the result we waited for is drained and dropped.
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.discard_pending(es);
        self.cursor = None;
        self.batch = QueryResult::default();
        self.next_tuple = 0;
        self.eof_reached = false;
        self.finished = false;
        Ok(())
    }

    fn exec_end(&mut self, es: &mut EState) {
        self.discard_pending(es);
    }

    fn slot(&self) -> &[Datum] {
        &self.slot
    }

    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Foreign Scan".into();
        e.async_capable = self.requestee;
        e.relation = Some(self.relation.clone());
        e.details.push(("Server".into(), self.server.clone()));
        e.details.push(("Remote SQL".into(), self.sql.clone()));
    }

    fn is_async_capable(&self) -> bool {
        self.async_capable
    }

    fn mark_async_requestee(&mut self) {
        self.requestee = true;
    }

    /// postgresForeignAsyncRequest: a row now if the batch has one, else wait.
    fn async_request(&mut self, es: &mut EState, r: usize) -> ExecResult<()> {
        self.respond(es, r)
    }

    fn async_ready(&self, es: &EState) -> bool {
        self.next_tuple < self.batch.nrows
            || self.finished
            || self.pending.is_some_and(|(t, _)| es.conns[self.conn].is_ready(t))
            || es.conns[self.conn].first_error.is_some()
    }

    /// postgresForeignAsyncNotify: our connection has input; try again.
    fn async_notify(&mut self, es: &mut EState, r: usize) -> ExecResult<()> {
        self.respond(es, r)
    }
}

impl ForeignScanState {
    fn respond(&mut self, es: &mut EState, r: usize) -> ExecResult<()> {
        match self.produce(es)? {
            ExecStatus::Row => exec_async_request_done(es, r, true),
            ExecStatus::Done => exec_async_request_done(es, r, false),
            ExecStatus::Wait => exec_async_request_pending(es, r, self.conn),
        }
        Ok(())
    }
}
