//! A simulated PostgreSQL 15 backend: one connection to a shard. It decodes frontend
//! messages, runs their statements with the sandbox's own executor over the shard's
//! in-memory tables, and writes the backend messages PostgreSQL writes, in the same
//! order and with the same SQLSTATEs and texts. The functions carry the names of
//! their counterparts in `src/backend/tcop/postgres.c`.
//!
//! # Protocol
//! - **Startup** (`process_startup_packet`, postmaster.c): SSLRequest and GSSENCRequest
//!   get `N`; a 3.0 StartupMessage (`user` required, other options applied as settings,
//!   `_pq_.` options or a newer minor version answered with NegotiateProtocolVersion)
//!   gets AuthenticationOk (trust), ParameterStatus for PostgreSQL 15's thirteen reported
//!   parameters, BackendKeyData, ReadyForQuery. A CancelRequest closes the connection.
//! - **Simple Query** (`exec_simple_query`): each statement answers its rows and
//!   CommandComplete (`BEGIN`/`START TRANSACTION`, `COMMIT`, `ROLLBACK`, `SET`,
//!   `DECLARE CURSOR`, `FETCH n`, `CLOSE CURSOR`, `SELECT n`, and postgres_fdw's
//!   modifications `INSERT 0 n`, `UPDATE n`, `DELETE n` (with RETURNING's rows),
//!   `DEALLOCATE`), an empty query EmptyQueryResponse; then ReadyForQuery.
//! - **Extended** (`exec_parse_message`, `exec_bind_message`, `exec_describe_*_message`,
//!   `exec_execute_message`, `exec_close_message`, Flush, `exec_sync`): ParseComplete,
//!   BindComplete, ParameterDescription + RowDescription or NoData, rows + CommandComplete
//!   (or PortalSuspended when the row limit is reached, EmptyQueryResponse for an empty
//!   query), CloseComplete, nothing, ReadyForQuery. After an ERROR in one of these
//!   messages everything up to Sync is discarded, and Sync answers ReadyForQuery.
//! - **Terminate** ends the session; the next bytes are a new connection's startup packet.
//!
//! # Invariants
//! - ReadyForQuery says `I` (idle), `T` (in a transaction block) or `E` (failed block);
//!   a reported parameter whose value changed goes out as ParameterStatus just before it.
//! - In a failed block only COMMIT and ROLLBACK run; anything else is 25P02.
//! - A Query message is one implicit transaction: an error undoes its SETs (unless a
//!   block was opened) and drops its portals. A transaction's INSERT, UPDATE and
//!   DELETE change a copy of the table list (tables shared until written); ROLLBACK
//!   (or an error outside a block) puts the tables back as they were. A syntax error anywhere in it rejects it
//!   before any statement runs (and before it is logged); other errors stop at their
//!   statement, the statements before it having run.
//! - Framing errors are FATAL: an unknown message type, a length word below 4 or above
//!   the type's bound (`wire::message_limit`), a bad startup packet. The last message is
//!   an ErrorResponse (SQLSTATE 08P01 mostly), the connection is closed and `receive`
//!   returns `Err`; later input is refused. (PostgreSQL closes without a message on a
//!   bad length word, logging it as COMMERROR; the sandbox tells the client why.) Errors
//!   inside a message body (a truncated field, a string without its terminator, bytes
//!   left over, invalid UTF-8) are ERRORs, as in PostgreSQL: the session goes on.
//! - At most one incomplete message is buffered, and only once its length word has been
//!   checked: never more than `LARGE_MESSAGE_LIMIT + 5` bytes.
//! - The statement log is PostgreSQL's with `log_statement = 'all'`: `statement: <sql>`
//!   per Query, `execute <unnamed>: <sql>` per Execute (`execute fetch from` when a
//!   portal resumes, `name` and `<unnamed>/portal` for named ones).
//! - Server time (the cost model): `connect_ns` for a startup packet that starts a
//!   session, `server_query_ns` per statement of a simple Query and once per
//!   extended-protocol cycle up to Sync however many messages it has, plus the
//!   executor's cost-model time and `server_row_ns` per row sent.
//!
//! Where it departs from PostgreSQL on purpose: one database (the startup packet's is
//! not checked) and no authentication; parameters only as postgres_fdw sends them:
//! each `$n` written with its cast (`$1::integer`), its value in the Bind message in
//! text format (Parse declaring parameter types is rejected); text format only; WITH HOLD cursors end with their
//! transaction; parse analysis of a Parse message runs even in a failed transaction.

use super::guc::{self, Reporter, Settings};
use super::statement::{is_syntax_error, split_statements, statement_info, Piece, StmtInfo};
use super::wire::{self, command_complete, put_msg, MsgReader, PgError};
use crate::clock::Clock;
use crate::executor::estate::EState;
use crate::executor::{exec_proc_node, init_plan, ExecStatus, InitContext, PlanState};
use crate::plan::{use_indexes, Plan};
use crate::shard_sql::{parse_shard_sql, ShardStatement, SqlError};
use crate::types::{Catalog, Column};
use std::rc::Rc;

/// Server-side costs of the model, in nanoseconds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ServerCosts {
    /// Producing and sending one row (on top of the executor's cost model).
    pub server_row_ns: u64,
    /// Parsing and running one statement (one per extended-protocol cycle).
    pub server_query_ns: u64,
    /// Accepting a connection: the postmaster's fork, authentication and the backend's
    /// start-up (InitPostgres), charged when the startup packet is answered. Zero by
    /// default, so the built-in figures stay the documented ones; `pgasync calibrate
    /// --live` measures it (about 3 ms for a local PostgreSQL 15).
    pub connect_ns: u64,
}

impl Default for ServerCosts {
    fn default() -> Self {
        ServerCosts { server_row_ns: 300, server_query_ns: 20_000, connect_ns: 0 }
    }
}

/// What the server wrote in answer to some input, and the server time it took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answer {
    pub bytes: Vec<u8>,
    pub cost_ns: u64,
}

/// The server closed the connection: after a FATAL error (the last message of
/// `answer`), after a CancelRequest packet (silently), or earlier (input refused).
#[derive(Clone, Debug, PartialEq)]
pub struct Closed {
    pub sqlstate: &'static str,
    pub message: String,
    pub answer: Answer,
}

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "connection closed by the server: {} ({})", self.message, self.sqlstate)
    }
}

/// The statements of Query texts that parse the same on every shard and in every
/// state: transaction control, SET, FETCH, CLOSE, DEALLOCATE (no plan, no name
/// looked up while parsing). postgres_fdw sends the same few texts on every
/// connection (its five SETs, START TRANSACTION, `FETCH 100 FROM c1`, CLOSE, COMMIT),
/// and tokenizing and parsing them again was a tenth of the page's recording. Only a
/// memo of the parse: a text is run exactly as when it is parsed (logged, checked
/// against a failed transaction, its statements run one by one), and errors are
/// never kept, so what a client sees does not depend on it. A text that plans
/// anything (a SELECT, a DECLARE, a modification) is parsed each time: its plan
/// depends on the shard's tables.
mod parsed_memo {
    use super::Stmt;
    use crate::shard_sql::ShardStatement;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Texts kept; the oldest goes first. A run sends about ten distinct ones.
    const ENTRIES: usize = 32;

    thread_local! {
        static MEMO: RefCell<Vec<(Box<str>, Rc<[Stmt]>)>> = const { RefCell::new(Vec::new()) };
    }

    /// The statements of `sql`, if it was parsed before.
    pub(super) fn get(sql: &str) -> Option<Rc<[Stmt]>> {
        MEMO.with(|m| m.borrow().iter().rev().find(|(text, _)| &**text == sql).map(|(_, s)| s.clone()))
    }

    /// Keeps `stmts`, the statements `sql` parsed to, if none of them depends on
    /// anything but the text.
    pub(super) fn keep(sql: &str, stmts: &[Stmt]) {
        if !stmts.iter().all(|s| same_everywhere(&s.kind)) {
            return;
        }
        MEMO.with(|m| {
            let mut m = m.borrow_mut();
            if m.len() == ENTRIES {
                m.remove(0);
            }
            m.push((sql.into(), stmts.into()));
        })
    }

    fn same_everywhere(kind: &ShardStatement) -> bool {
        use ShardStatement as S;
        match kind {
            S::Begin | S::Commit | S::Rollback | S::Set | S::Fetch { .. } | S::Close { .. } => true,
            S::Deallocate { .. } | S::DeallocateAll => true,
            S::DeclareCursor { .. } | S::Select { .. } => false,
            S::Insert { .. } | S::Update { .. } | S::Delete { .. } => false,
        }
    }
}

/// A statement ready to run: the front end's plan, the server's extra facts, its text.
#[derive(Clone, Debug)]
struct Stmt {
    kind: ShardStatement,
    info: StmtInfo,
    text: String,
}

/// A Parse message's result (PostgreSQL's CachedPlanSource); `stmt` None for an empty query.
#[derive(Clone)]
struct PreparedStatement {
    name: String,
    sql: String,
    stmt: Option<Stmt>,
}

/// A running plan: a DECLAREd cursor, or a SELECT portal that has started.
#[derive(Clone)]
struct RowSource {
    es: EState,
    root: PlanState,
    columns: Vec<Column>,
    done: bool,
}

#[derive(Clone)]
enum PortalState {
    /// Bound by Bind, not run yet.
    Bound(Box<Stmt>),
    /// Bound to an empty query.
    Empty,
    /// Produces rows.
    Rows(Box<RowSource>),
    /// A FETCH that has started: `left` more rows (None: all) to draw from `cursor`.
    Fetching { cursor: String, left: Option<u64> },
    /// A statement without rows that has run (PostgreSQL's PORTAL_DONE).
    Done,
}

/// PostgreSQL's portal: what Bind creates, and what DECLARE creates (a cursor).
#[derive(Clone)]
struct Portal {
    name: String,
    /// The prepared statement it came from (None for a DECLAREd cursor), for the log.
    stmt_name: Option<String>,
    source_text: String,
    at_start: bool,
    state: PortalState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for the startup packet (after an SSLRequest was refused, `ssl_done`).
    Startup {
        ssl_done: bool,
    },
    Ready,
    Closed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Xact {
    Idle,
    InBlock,
    Failed,
}

/// How `receive` stops: a FATAL error, or a close without a message.
#[derive(Clone)]
enum Stop {
    Fatal(PgError),
    Silent(&'static str),
}

impl From<PgError> for Stop {
    fn from(e: PgError) -> Stop {
        Stop::Fatal(e)
    }
}

/// Where rows go and what they cost: the server's counters, lent to `send_rows`.
struct RowBudget<'a> {
    shard: &'a str,
    sent: &'a mut u64,
    fail_after: Option<u64>,
    row_ns: u64,
}

#[derive(Clone)]
pub struct ShardServer {
    pub name: String,
    pub catalog: Catalog,
    /// Its user-defined functions and operators (what a query it is sent may call).
    pub routines: crate::shard_sql::inline::Routines,
    pub costs: ServerCosts,
    /// Fault injection: fail a FETCH once this many rows have been sent in all.
    pub fail_after_rows: Option<u64>,
    /// ReadyForQuery messages written so far (one per answered Query, Sync or startup).
    pub answers_sent: usize,
    /// Keep the statement log (on by default; a long run may turn it off to save memory).
    pub log_statements: bool,
    rows_sent: u64,
    pid: i32,
    phase: Phase,
    inbuf: Vec<u8>,
    xact: Xact,
    settings: Settings,
    /// The settings to restore if the current transaction (block or implicit) rolls back.
    saved_settings: Option<Settings>,
    /// The tables as they were before the transaction's first INSERT, restored if it
    /// rolls back (a copy of the table list: tables are shared until written).
    saved_catalog: Option<Catalog>,
    reporter: Reporter,
    statements: Vec<PreparedStatement>,
    portals: Vec<Portal>,
    ignore_till_sync: bool,
    /// `server_query_ns` was charged in the current extended-protocol cycle.
    cycle_charged: bool,
    /// Each line shared by the copies of the session (the page's checkpoints copy it
    /// whole, and it grows by a line per statement).
    log: Vec<Rc<str>>,
    /// use_remote_estimate: the answers to the planning's `EXPLAIN …` statements
    /// (statement, top line), as the sandbox's planner priced each remote query on
    /// this shard's tables (`coordinator_sql::remote_estimate::explain_on_shard`).
    /// Any other EXPLAIN is refused.
    pub explain_answers: Vec<(String, String)>,
}

impl ShardServer {
    /// Parses (and plans) SQL against this shard's tables, with its own functions and
    /// operators in scope.
    fn parse_sql(&self, sql: &str) -> Result<Vec<ShardStatement>, SqlError> {
        crate::shard_sql::inline::with_routines(&self.routines, || parse_shard_sql(sql, &self.catalog))
    }

    /// PostgreSQL's bound on the startup packet body.
    pub const MAX_STARTUP_PACKET_LEN: usize = wire::MAX_STARTUP_PACKET_LEN;
    /// The bound on Query, Parse and Bind messages (64 MiB; PostgreSQL's is 1 GiB).
    pub const LARGE_MESSAGE_LIMIT: usize = wire::LARGE_MESSAGE_LIMIT;
    /// PostgreSQL's bound on the other messages.
    pub const SMALL_MESSAGE_LIMIT: usize = wire::SMALL_MESSAGE_LIMIT;

    pub fn new(name: &str, catalog: Catalog, pid: i32) -> ShardServer {
        ShardServer {
            name: name.to_string(),
            catalog,
            routines: Default::default(),
            costs: ServerCosts::default(),
            fail_after_rows: None,
            answers_sent: 0,
            log_statements: true,
            rows_sent: 0,
            pid,
            phase: Phase::Startup { ssl_done: false },
            inbuf: Vec::new(),
            xact: Xact::Idle,
            settings: Settings::default(),
            saved_settings: None,
            saved_catalog: None,
            reporter: Reporter::default(),
            statements: Vec::new(),
            portals: Vec::new(),
            ignore_till_sync: false,
            cycle_charged: false,
            log: Vec::new(),
            explain_answers: Vec::new(),
        }
    }

    /// Handles bytes from the client (any split of frontend messages); returns the
    /// response bytes and the server time it took. A closed connection answers nothing.
    pub fn handle(&mut self, bytes: &[u8]) -> (Vec<u8>, u64) {
        match self.receive(bytes) {
            Ok(a) => (a.bytes, a.cost_ns),
            Err(c) => (c.answer.bytes, c.answer.cost_ns),
        }
    }

    /// Like `handle`, with the closing of the connection as an `Err` (see the module doc).
    pub fn receive(&mut self, bytes: &[u8]) -> Result<Answer, Closed> {
        if self.phase == Phase::Closed {
            let message = "the connection is closed".to_string();
            return Err(Closed { sqlstate: "08003", message, answer: Answer::default() });
        }
        self.inbuf.extend_from_slice(bytes);
        let buf = std::mem::take(&mut self.inbuf);
        let mut answer = Answer::default();
        let mut pos = 0;
        match self.process_input(&buf, &mut pos, &mut answer) {
            Ok(()) => {
                self.keep_unread(buf, pos);
                Ok(answer)
            }
            Err(stop) => Err(self.close(stop, answer)),
        }
    }

    /// The statement log, like PostgreSQL's with `log_statement = 'all'`: each line
    /// with the backend's process id (the one in BackendKeyData).
    pub fn statement_log(&self) -> Vec<(i32, String)> {
        self.log.iter().map(|l| (self.pid, l.to_string())).collect()
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// A session setting's current value (`TimeZone`, `search_path`, ...; any case).
    pub fn setting(&self, name: &str) -> Option<String> {
        self.settings.get(name).map(str::to_string)
    }

    /// ReadyForQuery's status byte now: `I`, `T` or `E`.
    pub fn transaction_status(&self) -> u8 {
        match self.xact {
            Xact::Idle => b'I',
            Xact::InBlock => b'T',
            Xact::Failed => b'E',
        }
    }

    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Bytes received but not yet handled (part of one message at most).
    pub fn buffered_bytes(&self) -> usize {
        self.inbuf.len()
    }

    /// Cancels what is running: the client will get a 57014 error; the transaction is aborted.
    pub fn cancel_response(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        self.abort_current_transaction();
        let e = PgError::error("57014", "canceling statement due to user request");
        wire::error_response(&mut out, &e, b'E', "ERROR");
        self.ready(&mut out);
        out
    }

    // ---- input ----------------------------------------------------------------

    /// Frames and processes every complete message (or startup packet) of `buf` from `pos`.
    fn process_input(&mut self, buf: &[u8], pos: &mut usize, answer: &mut Answer) -> Result<(), Stop> {
        loop {
            let rest = &buf[*pos..];
            let consumed = match self.phase {
                Phase::Closed => return Ok(()),
                Phase::Startup { ssl_done } => {
                    let Some(body) = wire::frame_startup(rest)? else { return Ok(()) };
                    self.process_startup_packet(&rest[body.clone()], ssl_done, &mut answer.bytes)?;
                    if self.phase == Phase::Ready {
                        answer.cost_ns += self.costs.connect_ns; // a session started (not an SSLRequest's N)
                    }
                    body.end
                }
                Phase::Ready => {
                    let Some((tag, body)) = wire::frame_message(rest)? else { return Ok(()) };
                    self.process_message(tag, &rest[body.clone()], answer)?;
                    body.end
                }
            };
            *pos += consumed;
        }
    }

    /// Keeps the unread tail of `buf` (one incomplete message at most) for next time.
    fn keep_unread(&mut self, mut buf: Vec<u8>, pos: usize) {
        buf.drain(..pos);
        if buf.capacity() > 1 << 16 && buf.len() < buf.capacity() / 4 {
            buf.shrink_to_fit();
        }
        self.inbuf = buf;
    }

    fn close(&mut self, stop: Stop, mut answer: Answer) -> Closed {
        let (sqlstate, message) = match stop {
            Stop::Fatal(e) => {
                wire::error_response(&mut answer.bytes, &e, b'E', "FATAL");
                (e.code, e.message)
            }
            Stop::Silent(why) => ("08006", why.to_string()),
        };
        self.reset_session();
        self.phase = Phase::Closed;
        self.inbuf = Vec::new();
        Closed { sqlstate, message, answer }
    }

    fn reset_session(&mut self) {
        self.xact = Xact::Idle;
        self.settings = Settings::default();
        self.saved_settings = None;
        self.reporter = Reporter::default();
        self.statements.clear();
        self.portals.clear();
        self.ignore_till_sync = false;
        self.cycle_charged = false;
    }

    // ---- startup (postmaster.c's ProcessStartupPacket) --------------------------

    #[inline(never)] // its own function in the wasm module: see process_message
    fn process_startup_packet(&mut self, body: &[u8], ssl_done: bool, out: &mut Vec<u8>) -> Result<(), Stop> {
        let mut r = MsgReader::new(body);
        let code = r.int32().map_err(PgError::into_fatal)?;
        match code {
            wire::CANCEL_REQUEST_CODE => return Err(Stop::Silent("a cancel request packet closes its connection")),
            wire::SSL_REQUEST_CODE | wire::GSSENC_REQUEST_CODE if !ssl_done => {
                out.push(b'N'); // not supported: the client goes on in the clear
                self.phase = Phase::Startup { ssl_done: true };
                return Ok(());
            }
            _ => {}
        }
        let (major, minor) = ((code as u32) >> 16, (code as u32) & 0xffff);
        if code >> 16 != wire::PROTOCOL_3_0 >> 16 {
            let msg = format!("unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0");
            return Err(PgError::fatal("0A000", msg).into());
        }
        let options = startup_options(&body[4..])?;
        self.start_session(minor, options, out)?;
        Ok(())
    }

    /// Applies the startup options and answers the startup packet.
    fn start_session(&mut self, minor: u32, options: Vec<(String, String)>, out: &mut Vec<u8>) -> Result<(), PgError> {
        let mut user = None;
        let mut unrecognized = Vec::new();
        let mut gucs = Vec::new();
        for (name, value) in options {
            match name.as_str() {
                "user" => user = Some(value),
                "database" | "options" | "replication" => {} // one database; no command-line options
                n if n.starts_with("_pq_.") => unrecognized.push(name),
                _ => gucs.push((name, value)),
            }
        }
        let user = user.filter(|u| !u.is_empty());
        let user =
            user.ok_or_else(|| PgError::fatal("28000", "no PostgreSQL user name specified in startup packet"))?;
        let mut settings = Settings::default();
        for (name, value) in &gucs {
            settings.apply_startup(name, value).map_err(PgError::into_fatal)?;
        }
        settings.set_internal("session_authorization", &user);
        if minor > 0 || !unrecognized.is_empty() {
            wire::negotiate_protocol_version(out, 0, &unrecognized);
        }
        self.reset_session();
        self.settings = settings;
        put_msg(out, b'R', &0i32.to_be_bytes()); // AuthenticationOk
        for (name, value) in self.reporter.report_all(&self.settings) {
            wire::parameter_status(out, name, &value);
        }
        let mut key = self.pid.to_be_bytes().to_vec();
        key.extend_from_slice(&(self.pid.wrapping_mul(7919)).to_be_bytes());
        put_msg(out, b'K', &key);
        self.phase = Phase::Ready;
        self.ready(out);
        Ok(())
    }

    // ---- the main loop (PostgresMain) -----------------------------------------

    /// One frontend message. Returns Err only for a FATAL error (the connection ends).
    ///
    /// Each kind of message is handled by a function of its own in the compiled code
    /// (`#[inline(never)]` here for LLVM, the Makefile's PAGE_OPT_INLINE for wasm-opt:
    /// both inline a function called from one place): with every handler inlined, the
    /// simulated host's `flush_outboxes` was one 23 KB function in the page's module,
    /// which Chrome's optimizing compiler took 100-150 ms of CPU for while the page
    /// loaded (issue 20). Apart, only the handlers a run uses are optimized, each
    /// quickly. It is one call per message.
    fn process_message(&mut self, tag: u8, body: &[u8], answer: &mut Answer) -> Result<(), PgError> {
        let extended = matches!(tag, b'P' | b'B' | b'C' | b'D' | b'E' | b'H');
        if matches!(tag, b'S' | b'X') {
            self.ignore_till_sync = false;
        }
        if self.ignore_till_sync {
            return Ok(()); // discarding until Sync after an error
        }
        let (out, cost) = (&mut answer.bytes, &mut answer.cost_ns);
        let result = match tag {
            b'Q' => self.exec_simple_query(body, out, cost),
            b'P' => self.exec_parse_message(body, out, cost),
            b'B' => self.exec_bind_message(body, out),
            b'E' => self.exec_execute_message(body, out, cost),
            b'D' => self.exec_describe_message(body, out),
            b'C' => self.exec_close_message(body, out),
            b'H' => MsgReader::new(body).end(), // Flush: our answers are never held back
            b'S' => self.exec_sync(body),
            b'X' => {
                self.terminate();
                return Ok(());
            }
            b'F' => Err(PgError::error("0A000", "function calls are not supported by the simulated shard")),
            _ => Ok(()), // CopyData, CopyDone, CopyFail outside COPY: ignored, as PostgreSQL does
        };
        if let Err(e) = result {
            if e.fatal {
                return Err(e);
            }
            self.abort_current_transaction();
            wire::error_response(out, &e, b'E', "ERROR");
            self.ignore_till_sync = extended;
        }
        if matches!(tag, b'Q' | b'S' | b'F') {
            self.ready(out);
        }
        Ok(())
    }

    /// Terminate: the session ends; the next bytes start a new connection.
    fn terminate(&mut self) {
        self.reset_session();
        self.phase = Phase::Startup { ssl_done: false };
    }

    /// ReadyForQuery, after ParameterStatus for every reported setting that changed.
    fn ready(&mut self, out: &mut Vec<u8>) {
        for (name, value) in self.reporter.changes(&self.settings) {
            wire::parameter_status(out, name, &value);
        }
        self.answers_sent += 1;
        put_msg(out, b'Z', &[self.transaction_status()]);
    }

    fn log_statement(&mut self, line: String) {
        if self.log_statements {
            self.log.push(line.into());
        }
    }

    // ---- transactions (xact.c, as far as a shard needs) -------------------------

    /// Starts the implicit transaction of a message when no block is open.
    fn start_xact_command(&mut self) {
        if self.xact == Xact::Idle && self.saved_settings.is_none() {
            self.saved_settings = Some(self.settings.clone());
        }
    }

    /// Commits the implicit transaction (end of a Query, Sync) when no block is open.
    fn finish_xact_command(&mut self) {
        if self.xact == Xact::Idle {
            self.end_transaction(true);
        }
    }

    /// After an ERROR: a block becomes failed; an implicit transaction rolls back.
    fn abort_current_transaction(&mut self) {
        match self.xact {
            Xact::InBlock => self.xact = Xact::Failed,
            Xact::Failed => {}
            Xact::Idle => self.end_transaction(false),
        }
    }

    fn end_transaction(&mut self, commit: bool) {
        if let Some(saved) = self.saved_settings.take() {
            if !commit {
                self.settings = saved;
            }
        }
        if let Some(saved) = self.saved_catalog.take() {
            if !commit {
                self.catalog = saved;
            }
        }
        self.portals.clear(); // cursors and portals end with their transaction
        self.xact = Xact::Idle;
    }

    fn check_not_aborted(&self, is_exit: bool) -> Result<(), PgError> {
        if self.xact == Xact::Failed && !is_exit {
            let msg = "current transaction is aborted, commands ignored until end of transaction block";
            return Err(PgError::error("25P02", msg));
        }
        Ok(())
    }

    fn warning(out: &mut Vec<u8>, code: &'static str, message: &str) {
        wire::error_response(out, &PgError::error(code, message), b'N', "WARNING");
    }

    // ---- simple query ---------------------------------------------------------

    #[inline(never)] // its own function in the wasm module: see process_message
    fn exec_simple_query(&mut self, body: &[u8], out: &mut Vec<u8>, cost: &mut u64) -> Result<(), PgError> {
        let mut r = MsgReader::new(body);
        let sql = r.string()?;
        r.end()?;
        self.drop_unnamed();
        self.start_xact_command();
        if let Some(line) = self.explain_answers.iter().find(|(q, _)| q == sql).map(|a| a.1.clone()) {
            self.log_statement(format!("statement: {sql}"));
            self.check_not_aborted(false)?;
            *cost += self.costs.server_query_ns;
            exec_explain(&line, out);
            self.finish_xact_command();
            return Ok(());
        }
        if let Some(stmts) = parsed_memo::get(sql) {
            self.log_statement(format!("statement: {sql}"));
            for stmt in stmts.iter() {
                self.run_simple(stmt.clone(), out, cost)?;
            }
            self.finish_xact_command();
            return Ok(());
        }
        let parsed = self.parse_sql(sql);
        if let Err(e) = &parsed {
            if is_syntax_error(e) {
                return Err(sql_error(e.clone(), 0));
            }
        }
        self.log_statement(format!("statement: {sql}"));
        let pieces = split_statements(sql);
        match parsed {
            Ok(stmts) if stmts.is_empty() => put_msg(out, b'I', &[]), // EmptyQueryResponse
            Ok(stmts) if stmts.len() == pieces.len() => {
                let stmts: Vec<Stmt> = stmts
                    .into_iter()
                    .zip(&pieces)
                    .map(|(kind, piece)| Stmt { kind, info: statement_info(&piece.tokens), text: piece.text.clone() })
                    .collect();
                parsed_memo::keep(sql, &stmts);
                for stmt in stmts {
                    self.run_simple(stmt, out, cost)?;
                }
            }
            _ => self.exec_pieces(&pieces, out, cost)?,
        }
        self.finish_xact_command();
        Ok(())
    }

    /// Runs the statements one by one, each parsed on its own, up to the first error
    /// (the whole query had one that was not a syntax error).
    fn exec_pieces(&mut self, pieces: &[Piece], out: &mut Vec<u8>, cost: &mut u64) -> Result<(), PgError> {
        for piece in pieces {
            let info = statement_info(&piece.tokens);
            self.check_not_aborted(info.is_exit)?;
            let stmts = self.parse_sql(&piece.text).map_err(|e| sql_error(e, piece.char_start))?;
            for kind in stmts {
                self.run_simple(Stmt { kind, info: info.clone(), text: piece.text.clone() }, out, cost)?;
            }
        }
        Ok(())
    }

    fn run_simple(&mut self, stmt: Stmt, out: &mut Vec<u8>, cost: &mut u64) -> Result<(), PgError> {
        self.check_not_aborted(stmt.info.is_exit)?;
        self.start_xact_command();
        *cost += self.costs.server_query_ns;
        *cost += self.exec_statement(stmt, out)?;
        Ok(())
    }

    /// Drops the unnamed statement and portal, as a Query message does.
    fn drop_unnamed(&mut self) {
        self.statements.retain(|s| !s.name.is_empty());
        self.portals.retain(|p| !p.name.is_empty());
    }

    /// Runs one statement (FETCH and SELECT as the simple protocol answers them);
    /// returns the server time of its rows.
    fn exec_statement(&mut self, stmt: Stmt, out: &mut Vec<u8>) -> Result<u64, PgError> {
        match stmt.kind {
            ShardStatement::Begin => self.exec_begin(stmt.info.begin_tag, out),
            ShardStatement::Commit => self.exec_commit(out),
            ShardStatement::Rollback => self.exec_rollback(out),
            ShardStatement::Set => self.exec_set(stmt.info.set.as_ref(), out)?,
            ShardStatement::DeclareCursor { name, plan, columns, for_update } => {
                self.exec_declare(name, plan, columns, for_update, stmt.text, out)?
            }
            ShardStatement::Fetch { cursor, count } => return self.exec_fetch(&cursor, count, out),
            ShardStatement::Close { cursor } => self.exec_close(&cursor, out)?,
            ShardStatement::Select { plan, columns } => return self.exec_select(plan, columns, out),
            ShardStatement::Insert { table, targets, rows, returning, returning_cols } => {
                let ret = (returning.as_slice(), returning_cols.as_slice(), true);
                return self.exec_insert(&table, &targets, &rows, ret, out);
            }
            ShardStatement::Deallocate { name } => self.exec_deallocate(&name, out)?,
            ShardStatement::DeallocateAll => {
                // The unnamed statement is not a prepared statement DEALLOCATE knows.
                self.statements.retain(|s| s.name.is_empty());
                command_complete(out, "DEALLOCATE ALL");
            }
            ShardStatement::Update { table, sets, filter, returning, returning_cols } => {
                let ret = (returning.as_slice(), returning_cols.as_slice(), true);
                return self.exec_update_delete(&table, Some(&sets), filter.as_ref(), ret, out);
            }
            ShardStatement::Delete { table, filter, returning, returning_cols } => {
                let ret = (returning.as_slice(), returning_cols.as_slice(), true);
                return self.exec_update_delete(&table, None, filter.as_ref(), ret, out);
            }
        }
        Ok(0)
    }

    // ---- utility statements ---------------------------------------------------

    fn exec_begin(&mut self, tag: &str, out: &mut Vec<u8>) {
        match self.xact {
            Xact::Idle => self.xact = Xact::InBlock,
            _ => Self::warning(out, "25001", "there is already a transaction in progress"),
        }
        command_complete(out, tag);
    }

    fn exec_commit(&mut self, out: &mut Vec<u8>) {
        let tag = match self.xact {
            Xact::InBlock => "COMMIT",
            Xact::Failed => "ROLLBACK", // a failed block can only roll back
            Xact::Idle => {
                Self::warning(out, "25P01", "there is no transaction in progress");
                "COMMIT"
            }
        };
        self.end_transaction(tag == "COMMIT");
        command_complete(out, tag);
    }

    fn exec_rollback(&mut self, out: &mut Vec<u8>) {
        if self.xact == Xact::Idle {
            Self::warning(out, "25P01", "there is no transaction in progress");
        }
        self.end_transaction(false);
        command_complete(out, "ROLLBACK");
    }

    fn exec_set(&mut self, set: Option<&guc::SetCommand>, out: &mut Vec<u8>) -> Result<(), PgError> {
        let set = set.ok_or_else(|| PgError::error("0A000", "unsupported in a shard query: this form of SET"))?;
        self.settings.apply(set)?;
        command_complete(out, "SET");
        Ok(())
    }

    fn exec_declare(
        &mut self,
        name: String,
        plan: Plan,
        columns: Vec<Column>,
        for_update: Option<String>,
        text: String,
        out: &mut Vec<u8>,
    ) -> Result<(), PgError> {
        if self.xact != Xact::InBlock {
            return Err(PgError::error("25P01", "DECLARE CURSOR can only be used in transaction blocks"));
        }
        if self.portal_index(&name).is_some() {
            return Err(PgError::error("42P03", format!("cursor \"{name}\" already exists")));
        }
        let src = match for_update {
            // FOR UPDATE: the rows as they are now, each with its ctid.
            Some(table) => {
                let catalog = crate::shard_sql::with_ctid_column(&self.catalog, &table);
                Self::start_plan_over(&catalog, plan, columns)?
            }
            None => self.start_plan(plan, columns)?,
        };
        let state = PortalState::Rows(Box::new(src));
        self.portals.push(Portal { name, stmt_name: None, source_text: text, at_start: true, state });
        command_complete(out, "DECLARE CURSOR");
        Ok(())
    }

    fn exec_fetch(&mut self, cursor: &str, count: Option<u64>, out: &mut Vec<u8>) -> Result<u64, PgError> {
        let i = self.cursor_index(cursor)?;
        self.ensure_rows(i)?;
        if let Some(columns) = self.portal_columns(i) {
            wire::row_description(out, &columns);
        }
        let (n, cost) = self.send_portal_rows(i, count, out)?;
        command_complete(out, &format!("FETCH {n}"));
        Ok(cost)
    }

    /// ExecInsert for each VALUES row, into the transaction's tables (the tables as
    /// they were are kept until it ends, for a ROLLBACK); `INSERT 0 n`.
    fn exec_insert(
        &mut self,
        table: &str,
        targets: &[usize],
        rows: &[Vec<crate::plan::Expr>],
        (columns, returning, describe): (&[Column], &[usize], bool),
        out: &mut Vec<u8>,
    ) -> Result<u64, PgError> {
        if describe && !returning.is_empty() {
            wire::row_description(out, columns);
        }
        let mut scratch = Vec::new();
        let Some(i) = self.catalog.tables.iter().position(|t| t.name == table) else {
            return Err(PgError::error("42P01", format!("relation \"{table}\" does not exist")));
        };
        if self.saved_catalog.is_none() {
            self.saved_catalog = Some(self.catalog.clone());
        }
        let t = std::rc::Rc::make_mut(&mut self.catalog.tables[i]);
        let mut row = vec![crate::types::Datum::Null; t.ncols()];
        for values in rows {
            row.iter_mut().for_each(|d| *d = crate::types::Datum::Null);
            for (e, &c) in values.iter().zip(targets) {
                row[c] = e.eval(&[]).map_err(eval_error)?;
            }
            t.push_row(&row);
            if !returning.is_empty() {
                let r: Vec<crate::types::Datum> = returning.iter().map(|&c| row[c].clone()).collect();
                wire::data_row(out, &r, &mut scratch);
            }
        }
        // The indexes are built from the rows: built again over the new ones.
        let indexed: Vec<usize> = t.indexes.iter().map(|x| x.column).collect();
        for c in indexed {
            t.create_index(c);
        }
        command_complete(out, &format!("INSERT 0 {}", rows.len()));
        Ok(self.costs.server_row_ns * rows.len() as u64)
    }

    /// UPDATE (`sets`) or DELETE (None) of the rows the filter passes, in the
    /// transaction's tables (kept as they were for a ROLLBACK); `UPDATE n`, `DELETE n`.
    fn exec_update_delete(
        &mut self,
        table: &str,
        sets: Option<&[(usize, crate::plan::Expr)]>,
        filter: Option<&crate::plan::Expr>,
        (columns, returning, describe): (&[Column], &[usize], bool),
        out: &mut Vec<u8>,
    ) -> Result<u64, PgError> {
        // RETURNING: a RowDescription (in the simple protocol; Describe sent it in the
        // extended one), then each modified row's columns.
        if describe && !returning.is_empty() {
            wire::row_description(out, columns);
        }
        let mut scratch = Vec::new();
        let mut returned: Vec<Vec<crate::types::Datum>> = Vec::new();
        let Some(i) = self.catalog.tables.iter().position(|t| t.name == table) else {
            return Err(PgError::error("42P01", format!("relation \"{table}\" does not exist")));
        };
        if self.saved_catalog.is_none() {
            self.saved_catalog = Some(self.catalog.clone());
        }
        let old = std::rc::Rc::clone(&self.catalog.tables[i]);
        let mut new = crate::types::Table::new(&old.name, old.columns.clone());
        new.indexes = old.indexes.clone();
        // An updated row is a new version: it takes a tid never used (a row left as
        // it was keeps its own).
        new.next_tid = old.next_tid;
        // `WHERE ctid = $1`: the filter reads the row with its ctid after it.
        let by_ctid = crate::shard_sql::ctid_column(filter, old.ncols());
        let mut with_ctid: Vec<crate::types::Datum> = Vec::new();
        let mut n = 0u64;
        for r in 0..old.nrows() {
            let row = old.row(r);
            let hit = match filter {
                None => true,
                Some(f) if by_ctid => {
                    with_ctid.clear();
                    with_ctid.extend_from_slice(row);
                    with_ctid.push(crate::types::Datum::text(&old.ctid(r)));
                    f.qual(&with_ctid).map_err(eval_error)?
                }
                Some(f) => f.qual(row).map_err(eval_error)?,
            };
            let tid = old.tids.get(r).copied().unwrap_or(r as u32);
            match (hit, sets) {
                (false, _) => new.push_row_with_tid(row, tid),
                (true, None) => {
                    n += 1;
                    if !returning.is_empty() {
                        returned.push(returning.iter().map(|&c| row[c].clone()).collect());
                    }
                }
                (true, Some(sets)) => {
                    let mut updated = row.to_vec();
                    for (c, e) in sets {
                        updated[*c] = e.eval(row).map_err(eval_error)?;
                    }
                    new.push_row(&updated);
                    n += 1;
                    if !returning.is_empty() {
                        returned.push(returning.iter().map(|&c| updated[c].clone()).collect());
                    }
                }
            }
        }
        let cols: Vec<usize> = new.indexes.iter().map(|x| x.column).collect();
        for c in cols {
            new.create_index(c);
        }
        self.catalog.tables[i] = std::rc::Rc::new(new);
        for r in &returned {
            wire::data_row(out, r, &mut scratch);
        }
        let verb = if sets.is_some() { "UPDATE" } else { "DELETE" };
        command_complete(out, &format!("{verb} {n}"));
        Ok(self.costs.server_row_ns * old.nrows() as u64)
    }

    /// DEALLOCATE: drops a named prepared statement.
    fn exec_deallocate(&mut self, name: &str, out: &mut Vec<u8>) -> Result<(), PgError> {
        let j = self.statement_index(name)?;
        self.statements.remove(j);
        command_complete(out, "DEALLOCATE");
        Ok(())
    }

    fn exec_close(&mut self, cursor: &str, out: &mut Vec<u8>) -> Result<(), PgError> {
        let i = self.cursor_index(cursor)?;
        self.portals.remove(i);
        command_complete(out, "CLOSE CURSOR");
        Ok(())
    }

    fn exec_select(&mut self, plan: Plan, columns: Vec<Column>, out: &mut Vec<u8>) -> Result<u64, PgError> {
        let mut src = self.start_plan(plan, columns)?;
        wire::row_description(out, &src.columns);
        let mut budget = RowBudget {
            shard: &self.name,
            sent: &mut self.rows_sent,
            fail_after: self.fail_after_rows,
            row_ns: self.costs.server_row_ns,
        };
        let (n, cost) = send_rows(&mut src, None, &mut budget, out)?;
        command_complete(out, &format!("SELECT {n}"));
        Ok(cost)
    }

    // ---- portals and rows -------------------------------------------------------

    fn start_plan(&self, plan: Plan, columns: Vec<Column>) -> Result<RowSource, PgError> {
        Self::start_plan_over(&self.catalog, plan, columns)
    }

    /// A row source of `plan` over `catalog`.
    fn start_plan_over(catalog: &Catalog, plan: Plan, columns: Vec<Column>) -> Result<RowSource, PgError> {
        let plan = crate::plan::order_quals(use_indexes(plan, catalog));
        let mut es = EState::new(Clock::virtual_clock(), vec![], false, false);
        let root = init_plan(&plan, &InitContext { catalog }, &mut es).map_err(|m| PgError::error("42P01", m))?;
        Ok(RowSource { es, root, columns, done: false })
    }

    fn portal_index(&self, name: &str) -> Option<usize> {
        self.portals.iter().position(|p| p.name == name)
    }

    fn cursor_index(&self, name: &str) -> Result<usize, PgError> {
        self.portal_index(name)
            .filter(|_| !name.is_empty())
            .ok_or_else(|| PgError::error("34000", format!("cursor \"{name}\" does not exist")))
    }

    fn statement_index(&self, name: &str) -> Result<usize, PgError> {
        self.statements.iter().position(|s| s.name == name).ok_or_else(|| match name {
            "" => PgError::error("26000", "unnamed prepared statement does not exist"),
            _ => PgError::error("26000", format!("prepared statement \"{name}\" does not exist")),
        })
    }

    /// Makes portal `i` a row source: a SELECT portal not yet run starts here.
    fn ensure_rows(&mut self, i: usize) -> Result<(), PgError> {
        match std::mem::replace(&mut self.portals[i].state, PortalState::Done) {
            PortalState::Bound(stmt) => match *stmt {
                Stmt { kind: ShardStatement::Select { plan, columns }, .. } => {
                    let src = self.start_plan(plan, columns)?;
                    self.portals[i].state = PortalState::Rows(Box::new(src));
                    Ok(())
                }
                other => {
                    self.portals[i].state = PortalState::Bound(Box::new(other));
                    Err(cannot_run(&self.portals[i].name))
                }
            },
            state => {
                let rows = matches!(state, PortalState::Rows(_));
                self.portals[i].state = state;
                if rows {
                    Ok(())
                } else {
                    Err(cannot_run(&self.portals[i].name))
                }
            }
        }
    }

    /// Up to `limit` rows of row-source portal `i` as DataRows: (rows, server time).
    fn send_portal_rows(&mut self, i: usize, limit: Option<u64>, out: &mut Vec<u8>) -> Result<(u64, u64), PgError> {
        let Some(Portal { state: PortalState::Rows(src), .. }) = self.portals.get_mut(i) else {
            return Err(PgError::error("XX000", "internal error: the portal has no rows"));
        };
        let mut budget = RowBudget {
            shard: &self.name,
            sent: &mut self.rows_sent,
            fail_after: self.fail_after_rows,
            row_ns: self.costs.server_row_ns,
        };
        send_rows(src, limit, &mut budget, out)
    }

    /// The columns the statement returns (None: no rows, Describe says NoData).
    fn stmt_columns(&self, stmt: &Stmt) -> Option<Vec<Column>> {
        match &stmt.kind {
            ShardStatement::Select { columns, .. } => Some(columns.clone()),
            ShardStatement::Update { returning, .. }
            | ShardStatement::Delete { returning, .. }
            | ShardStatement::Insert { returning, .. }
                if !returning.is_empty() =>
            {
                Some(returning.clone())
            }
            ShardStatement::Fetch { cursor, .. } => self.portal_index(cursor).and_then(|j| self.portal_columns(j)),
            _ => None,
        }
    }

    /// The columns portal `i` returns. A FETCH portal returns its cursor's, and that
    /// cursor may itself be a FETCH portal (Bind can name a portal `c1` and bind it to
    /// `FETCH FROM c1`): the chain is followed at most once round the portals, and a
    /// FETCH that comes back to where it started returns nothing (running it fails).
    fn portal_columns(&self, i: usize) -> Option<Vec<Column>> {
        let mut at = i;
        for _ in 0..=self.portals.len() {
            let cursor = match &self.portals.get(at)?.state {
                PortalState::Bound(stmt) => match &stmt.kind {
                    ShardStatement::Select { columns, .. } => return Some(columns.clone()),
                    ShardStatement::Update { returning, .. }
                    | ShardStatement::Delete { returning, .. }
                    | ShardStatement::Insert { returning, .. }
                        if !returning.is_empty() =>
                    {
                        return Some(returning.clone())
                    }
                    ShardStatement::Fetch { cursor, .. } => cursor,
                    _ => return None,
                },
                PortalState::Rows(src) => return Some(src.columns.clone()),
                PortalState::Fetching { cursor, .. } => cursor,
                PortalState::Empty | PortalState::Done => return None,
            };
            at = self.portal_index(cursor)?;
        }
        None
    }

    // ---- extended query protocol ----------------------------------------------

    fn charge_cycle(&mut self, cost: &mut u64) {
        if !self.cycle_charged {
            self.cycle_charged = true;
            *cost += self.costs.server_query_ns;
        }
    }

    #[inline(never)] // its own function in the wasm module: see process_message
    fn exec_parse_message(&mut self, body: &[u8], out: &mut Vec<u8>, cost: &mut u64) -> Result<(), PgError> {
        let mut r = MsgReader::new(body);
        let name = r.string()?.to_string();
        let sql = r.string()?.to_string();
        let nparams = r.uint16()?;
        for _ in 0..nparams {
            r.int32()?;
        }
        r.end()?;
        self.start_xact_command();
        self.charge_cycle(cost);
        if nparams > 0 {
            let msg = format!("the simulated shard takes no parameters, but Parse declares {nparams} parameter types");
            return Err(PgError::error("0A000", msg));
        }
        if name.is_empty() {
            self.statements.retain(|s| !s.name.is_empty());
        } else if self.statement_index(&name).is_ok() {
            return Err(PgError::error("42P05", format!("prepared statement \"{name}\" already exists")));
        }
        let stmt = self.parse_prepared(&sql)?;
        self.statements.push(PreparedStatement { name, sql, stmt });
        put_msg(out, b'1', &[]); // ParseComplete
        Ok(())
    }

    /// Parses the query of a Parse message: one statement at most.
    fn parse_prepared(&self, sql: &str) -> Result<Option<Stmt>, PgError> {
        let parsed = self.parse_sql(sql);
        let pieces = split_statements(sql);
        let info = match pieces.as_slice() {
            [piece] => statement_info(&piece.tokens),
            _ => StmtInfo::default(),
        };
        let mut stmts = match parsed {
            Err(e) if is_syntax_error(&e) => return Err(sql_error(e, 0)),
            Err(e) => {
                self.check_not_aborted(info.is_exit)?;
                return Err(sql_error(e, 0));
            }
            Ok(stmts) => stmts,
        };
        if stmts.len() > 1 {
            return Err(PgError::error("42601", "cannot insert multiple commands into a prepared statement"));
        }
        let Some(kind) = stmts.pop() else { return Ok(None) };
        self.check_not_aborted(info.is_exit)?;
        Ok(Some(Stmt { kind, info, text: sql.to_string() }))
    }

    #[inline(never)] // its own function in the wasm module: see process_message
    fn exec_bind_message(&mut self, body: &[u8], out: &mut Vec<u8>) -> Result<(), PgError> {
        let mut r = MsgReader::new(body);
        let portal = r.string()?.to_string();
        let stmt_name = r.string()?.to_string();
        let j = self.statement_index(&stmt_name)?;
        let nformats = r.uint16()?;
        for _ in 0..nformats {
            r.int16()?;
        }
        let nparams = r.uint16()?;
        if nformats > 1 && nformats != nparams {
            let msg = format!("bind message has {nformats} parameter formats but {nparams} parameters");
            return Err(PgError::protocol(msg));
        }
        let mut values = Vec::with_capacity(nparams as usize);
        for _ in 0..nparams {
            let len = r.int32()?;
            values.push(if len < 0 { None } else { Some(r.take(len as usize)?.to_vec()) });
        }
        let mut stmt = self.statements[j].stmt.clone();
        let required = stmt.as_mut().map_or(0, |s| stmt_params(&mut s.kind).len());
        if nparams as usize != required {
            let msg = format!(
                "bind message supplies {nparams} parameters, but prepared statement \"{stmt_name}\" requires {required}"
            );
            return Err(PgError::protocol(msg));
        }
        self.start_xact_command();
        if let Some(s) = stmt.as_mut() {
            bind_stmt_params(&mut s.kind, &values)?;
        }
        self.check_not_aborted(stmt.as_ref().is_some_and(|s| s.info.is_exit))?;
        if portal.is_empty() {
            self.portals.retain(|p| !p.name.is_empty());
        } else if self.portal_index(&portal).is_some() {
            return Err(PgError::error("42P03", format!("cursor \"{portal}\" already exists")));
        }
        let mut formats = Vec::new();
        for _ in 0..r.uint16()? {
            formats.push(r.int16()?);
        }
        r.end()?;
        let ncols = stmt.as_ref().and_then(|s| self.stmt_columns(s)).map_or(0, |c| c.len());
        check_result_formats(&formats, ncols)?;
        let source_text = self.statements[j].sql.clone();
        let state = stmt.map_or(PortalState::Empty, |s| PortalState::Bound(Box::new(s)));
        self.portals.push(Portal { name: portal, stmt_name: Some(stmt_name), source_text, at_start: true, state });
        put_msg(out, b'2', &[]); // BindComplete
        Ok(())
    }

    #[inline(never)] // its own function in the wasm module: see process_message
    fn exec_describe_message(&mut self, body: &[u8], out: &mut Vec<u8>) -> Result<(), PgError> {
        let mut r = MsgReader::new(body);
        let kind = r.byte()?;
        let name = r.string()?;
        r.end()?;
        self.start_xact_command();
        match kind {
            b'S' => self.exec_describe_statement_message(name, out),
            b'P' => self.exec_describe_portal_message(name, out),
            k => Err(PgError::protocol(format!("invalid DESCRIBE message subtype {k}"))),
        }
    }

    fn exec_describe_statement_message(&mut self, name: &str, out: &mut Vec<u8>) -> Result<(), PgError> {
        let j = self.statement_index(name)?;
        let columns = self.statements[j].stmt.as_ref().and_then(|s| self.stmt_columns(s));
        // In a failed transaction, only what returns no rows may be described.
        self.check_not_aborted(columns.is_none())?;
        wire::parameter_description_none(out);
        describe_rows(out, columns.as_deref());
        Ok(())
    }

    fn exec_describe_portal_message(&mut self, name: &str, out: &mut Vec<u8>) -> Result<(), PgError> {
        let i = self.portal_index(name).ok_or_else(|| no_portal(name))?;
        let columns = self.portal_columns(i);
        self.check_not_aborted(columns.is_none())?; // as for statements
        describe_rows(out, columns.as_deref());
        Ok(())
    }

    #[inline(never)] // its own function in the wasm module: see process_message
    fn exec_execute_message(&mut self, body: &[u8], out: &mut Vec<u8>, cost: &mut u64) -> Result<(), PgError> {
        let mut r = MsgReader::new(body);
        let name = r.string()?;
        let max_rows = r.int32()?;
        r.end()?;
        let i = self.portal_index(name).ok_or_else(|| no_portal(name))?;
        if matches!(self.portals[i].state, PortalState::Empty) {
            put_msg(out, b'I', &[]); // EmptyQueryResponse
            return Ok(());
        }
        self.start_xact_command();
        self.log_execute(i);
        let is_exit = matches!(&self.portals[i].state, PortalState::Bound(s) if s.info.is_exit);
        self.check_not_aborted(is_exit)?;
        self.charge_cycle(cost);
        self.portals[i].at_start = false;
        let limit = u64::try_from(max_rows).ok().filter(|&n| n > 0);
        *cost += self.run_portal(i, limit, out)?;
        Ok(())
    }

    /// `execute <unnamed>: <sql>`, as `exec_execute_message` logs it.
    fn log_execute(&mut self, i: usize) {
        let p = &self.portals[i];
        let verb = if p.at_start { "execute" } else { "execute fetch from" };
        let stmt = p.stmt_name.as_deref().filter(|s| !s.is_empty()).unwrap_or("<unnamed>");
        let slash = if p.name.is_empty() { "" } else { "/" };
        let line = format!("{verb} {stmt}{slash}{}: {}", p.name, p.source_text);
        self.log_statement(line);
    }

    /// PortalRun: runs portal `i` until it ends or `limit` rows were sent.
    fn run_portal(&mut self, i: usize, limit: Option<u64>, out: &mut Vec<u8>) -> Result<u64, PgError> {
        match std::mem::replace(&mut self.portals[i].state, PortalState::Done) {
            PortalState::Bound(stmt) => self.run_bound(i, *stmt, limit, out),
            PortalState::Done => Err(cannot_run(&self.portals[i].name)),
            state @ PortalState::Rows(_) => {
                self.portals[i].state = state;
                self.run_rows(i, limit, out)
            }
            state @ PortalState::Fetching { .. } => {
                self.portals[i].state = state;
                self.run_fetching(i, limit, out)
            }
            PortalState::Empty => {
                self.portals[i].state = PortalState::Empty;
                put_msg(out, b'I', &[]);
                Ok(0)
            }
        }
    }

    /// The first run of portal `i`: a SELECT or FETCH becomes a row source, anything
    /// else runs once and leaves the portal done.
    fn run_bound(&mut self, i: usize, stmt: Stmt, limit: Option<u64>, out: &mut Vec<u8>) -> Result<u64, PgError> {
        match stmt.kind {
            ShardStatement::Select { plan, columns } => {
                let src = self.start_plan(plan, columns)?;
                self.portals[i].state = PortalState::Rows(Box::new(src));
                self.run_rows(i, limit, out)
            }
            ShardStatement::Fetch { cursor, count } => {
                self.portals[i].state = PortalState::Fetching { cursor, left: count };
                self.run_fetching(i, limit, out)
            }
            // Describe sent the RETURNING columns' RowDescription already.
            ShardStatement::Insert { table, targets, rows, returning, returning_cols } => {
                let ret = (returning.as_slice(), returning_cols.as_slice(), false);
                self.exec_insert(&table, &targets, &rows, ret, out)
            }
            ShardStatement::Update { table, sets, filter, returning, returning_cols } => {
                let ret = (returning.as_slice(), returning_cols.as_slice(), false);
                self.exec_update_delete(&table, Some(&sets), filter.as_ref(), ret, out)
            }
            ShardStatement::Delete { table, filter, returning, returning_cols } => {
                let ret = (returning.as_slice(), returning_cols.as_slice(), false);
                self.exec_update_delete(&table, None, filter.as_ref(), ret, out)
            }
            _ => self.exec_statement(stmt, out),
        }
    }

    fn run_rows(&mut self, i: usize, limit: Option<u64>, out: &mut Vec<u8>) -> Result<u64, PgError> {
        let (n, cost) = self.send_portal_rows(i, limit, out)?;
        finish_portal_run(out, "SELECT", n, limit);
        Ok(cost)
    }

    /// A FETCH portal: draws its rows from the cursor, `limit` at a time.
    fn run_fetching(&mut self, i: usize, limit: Option<u64>, out: &mut Vec<u8>) -> Result<u64, PgError> {
        let PortalState::Fetching { cursor, left } = &self.portals[i].state else {
            return Err(PgError::error("XX000", "internal error: not a FETCH portal"));
        };
        let (cursor, left) = (cursor.clone(), *left);
        let j = self.cursor_index(&cursor)?;
        self.ensure_rows(j)?;
        let cap = match (limit, left) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let (n, cost) = self.send_portal_rows(j, cap, out)?;
        if let Some(PortalState::Fetching { left: l, .. }) = self.portals.get_mut(i).map(|p| &mut p.state) {
            *l = left.map(|x| x.saturating_sub(n));
        }
        finish_portal_run(out, "FETCH", n, limit);
        Ok(cost)
    }

    #[inline(never)] // its own function in the wasm module: see process_message
    fn exec_close_message(&mut self, body: &[u8], out: &mut Vec<u8>) -> Result<(), PgError> {
        let mut r = MsgReader::new(body);
        let kind = r.byte()?;
        let name = r.string()?;
        r.end()?;
        self.start_xact_command();
        match kind {
            b'S' => self.statements.retain(|s| s.name != name),
            b'P' => self.portals.retain(|p| p.name != name),
            k => return Err(PgError::protocol(format!("invalid CLOSE message subtype {k}"))),
        }
        put_msg(out, b'3', &[]); // CloseComplete
        Ok(())
    }

    /// Sync: ends the cycle (and the implicit transaction); ReadyForQuery follows.
    #[inline(never)] // its own function in the wasm module: see process_message
    fn exec_sync(&mut self, body: &[u8]) -> Result<(), PgError> {
        self.cycle_charged = false;
        MsgReader::new(body).end()?;
        self.finish_xact_command();
        Ok(())
    }
}

/// Sends up to `limit` rows of `src` as DataRows; returns (rows, server time).
/// EXPLAIN's answer: one text column `QUERY PLAN`, here one row (the top line,
/// the only one postgres_fdw's `get_remote_estimate` reads), and `EXPLAIN`.
fn exec_explain(line: &str, out: &mut Vec<u8>) {
    wire::row_description(out, &[Column::new("QUERY PLAN", crate::types::ColType::Text)]);
    wire::data_row(out, &[crate::types::Datum::text(line)], &mut Vec::new());
    command_complete(out, "EXPLAIN");
}

/// An expression's ERROR as the backend reports it (`ereport(ERROR)` in the executor:
/// its SQLSTATE and message).
fn eval_error(e: crate::plan::eval::EvalError) -> PgError {
    // The message as psql prints it may carry its DETAIL line: a field of its own here.
    let text = e.to_string();
    match text.split_once("\nDETAIL:  ") {
        Some((message, detail)) => {
            PgError { detail: Some(detail.to_string()), ..PgError::error(e.sqlstate(), message) }
        }
        None => PgError::error(e.sqlstate(), text),
    }
}

/// An executor's error while a portal runs: an expression's with its SQLSTATE, any
/// other as an internal error.
fn exec_error(e: crate::executor::estate::ExecError) -> PgError {
    match e {
        crate::executor::estate::ExecError::Eval(e) => eval_error(e),
        other => PgError::error("XX000", other.to_string()),
    }
}

fn send_rows(
    src: &mut RowSource,
    limit: Option<u64>,
    budget: &mut RowBudget,
    out: &mut Vec<u8>,
) -> Result<(u64, u64), PgError> {
    let start = src.es.now();
    let mut n = 0u64;
    let mut scratch = Vec::new();
    while limit.is_none_or(|l| n < l) && !src.done {
        let status = exec_proc_node(&mut src.root, &mut src.es).map_err(exec_error)?;
        if !matches!(status, ExecStatus::Row) {
            src.done = true;
            break;
        }
        if budget.fail_after.is_some_and(|limit| *budget.sent >= limit) {
            let msg = format!("injected failure on shard \"{}\" after {} rows", budget.shard, budget.sent);
            return Err(PgError::error("XX000", msg));
        }
        wire::data_row(out, src.root.node.slot(), &mut scratch);
        n += 1;
        *budget.sent += 1;
    }
    Ok((n, src.es.now() - start + n * budget.row_ns))
}

/// PortalSuspended when the row limit was reached, else CommandComplete.
fn finish_portal_run(out: &mut Vec<u8>, verb: &str, n: u64, limit: Option<u64>) {
    if limit == Some(n) {
        put_msg(out, b's', &[]);
    } else {
        command_complete(out, &format!("{verb} {n}"));
    }
}

/// RowDescription of what a Describe found, or NoData.
fn describe_rows(out: &mut Vec<u8>, columns: Option<&[Column]>) {
    match columns {
        Some(c) => wire::row_description(out, c),
        None => put_msg(out, b'n', &[]),
    }
}

/// The parameters (`$n::type`) of a statement's plan, by number.
fn stmt_params(kind: &mut ShardStatement) -> Vec<(u16, crate::plan::SqlType)> {
    match kind {
        ShardStatement::DeclareCursor { plan, .. } | ShardStatement::Select { plan, .. } => plan.params(),
        ShardStatement::Insert { rows, .. } => {
            let mut out: Vec<(u16, crate::plan::SqlType)> = Vec::new();
            for e in rows.iter().flatten() {
                if let crate::plan::Expr::Param(n, t, _) = e {
                    if !out.iter().any(|(m, _)| m == n) {
                        out.push((*n, *t));
                    }
                }
            }
            crate::types::sort_short_by_key(&mut out, |(n, _)| *n);
            out
        }
        // A foreign modify's `SET c = $2 WHERE ctid = $1`.
        ShardStatement::Update { sets, filter, .. } => expr_params(sets.iter().map(|(_, e)| e).chain(filter.iter())),
        ShardStatement::Delete { filter, .. } => expr_params(filter.iter()),
        _ => Vec::new(),
    }
}

/// The parameters the expressions read, by number.
fn expr_params<'e>(exprs: impl Iterator<Item = &'e crate::plan::Expr>) -> Vec<(u16, crate::plan::SqlType)> {
    fn walk(e: &crate::plan::Expr, out: &mut Vec<(u16, crate::plan::SqlType)>) {
        use crate::plan::Expr;
        match e {
            Expr::Param(n, t, _) => {
                if !out.iter().any(|(m, _)| m == n) {
                    out.push((*n, *t));
                }
            }
            Expr::Col(_) | Expr::Const(_) | Expr::ExecParam(..) => {}
            Expr::Bin(_, l, r) => {
                walk(l, out);
                walk(r, out);
            }
            Expr::Not(x) | Expr::IsNull(x, _) => walk(x, out),
            Expr::Func(_, args) => args.iter().for_each(|a| walk(a, out)),
        }
    }
    let mut out = Vec::new();
    exprs.for_each(|e| walk(e, &mut out));
    crate::types::sort_short_by_key(&mut out, |(n, _)| *n);
    out
}

/// Bind's parameter values (text format), each read by its parameter's type's input
/// function, into the statement's plan (PostgreSQL's ParamListInfo).
fn bind_stmt_params(kind: &mut ShardStatement, values: &[Option<Vec<u8>>]) -> Result<(), PgError> {
    let types = stmt_params(kind);
    let mut datums = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let ty = types.iter().find(|(n, _)| usize::from(*n) == i + 1).map(|(_, t)| *t);
        datums.push(match (v, ty) {
            (None, _) => crate::types::Datum::Null,
            (Some(bytes), Some(ty)) => {
                let text = std::str::from_utf8(bytes)
                    .map_err(|_| PgError::error("22021", "invalid byte sequence for encoding \"UTF8\""))?;
                crate::plan::eval::cast(crate::types::Datum::text(text), None, ty)
                    .map_err(|k| PgError::error("22P02", crate::plan::eval::EvalError::from(k).to_string()))?
            }
            (Some(_), None) => {
                return Err(PgError::protocol(format!("could not determine data type of parameter ${}", i + 1)))
            }
        });
    }
    if let ShardStatement::DeclareCursor { plan, .. } | ShardStatement::Select { plan, .. } = kind {
        plan.for_each_expr_mut(&mut |e| e.bind_params(&datums));
    }
    if let ShardStatement::Insert { rows, .. } = kind {
        rows.iter_mut().flatten().for_each(|e| e.bind_params(&datums));
    }
    if let ShardStatement::Update { sets, filter, .. } = kind {
        sets.iter_mut().for_each(|(_, e)| e.bind_params(&datums));
        filter.iter_mut().for_each(|e| e.bind_params(&datums));
    }
    if let ShardStatement::Delete { filter, .. } = kind {
        filter.iter_mut().for_each(|e| e.bind_params(&datums));
    }
    Ok(())
}

/// Bind's result format codes: text only; one code for all columns or one per column.
fn check_result_formats(formats: &[i16], ncols: usize) -> Result<(), PgError> {
    if let Some(&f) = formats.iter().find(|&&f| f != 0 && f != 1) {
        return Err(PgError::error("22023", format!("unsupported format code: {f}")));
    }
    if formats.contains(&1) {
        return Err(PgError::error("0A000", "binary format is not supported by the simulated shard"));
    }
    if formats.len() > 1 && formats.len() != ncols {
        let msg = format!("bind message has {} result formats but query has {ncols} columns", formats.len());
        return Err(PgError::protocol(msg));
    }
    Ok(())
}

fn no_portal(name: &str) -> PgError {
    PgError::error("34000", format!("portal \"{name}\" does not exist"))
}

fn cannot_run(name: &str) -> PgError {
    PgError::error("55000", format!("portal \"{name}\" cannot be run"))
}

/// A front-end error as PostgreSQL reports it: its SQLSTATE from its wording, its
/// position moved by `char_start` (the statement's place in the whole query).
fn sql_error(e: SqlError, char_start: usize) -> PgError {
    let m = e.message.as_str();
    let missing = m.ends_with("does not exist");
    let code = if m.starts_with("syntax error") || m.starts_with("invalid numeric literal") {
        "42601"
    } else if (missing && m.starts_with("relation")) || m.starts_with("missing FROM-clause") {
        "42P01"
    } else if missing && m.starts_with("column") {
        "42703"
    } else if missing && m.starts_with("function") {
        "42883"
    } else if m.starts_with("unsupported in a shard query") {
        "0A000"
    } else if m.starts_with("invalid input syntax") {
        "22P02"
    } else if m.ends_with("is ambiguous") {
        "42702"
    } else if m == "stack depth limit exceeded" {
        "54001"
    } else if m.starts_with("LIMIT must not be negative") {
        "2201W"
    } else if m.starts_with("OFFSET must not be negative") {
        "2201X"
    } else if m.ends_with("is not in select list") {
        "42P10"
    } else if m.contains("parameterless aggregate") {
        "42809"
    } else {
        "42601"
    };
    PgError { position: e.position.map(|p| p + char_start), ..PgError::error(code, e.message) }
}

/// The options of a startup packet (after the protocol version): name/value pairs
/// ended by an empty name, which must be the last byte (PostgreSQL's layout check).
fn startup_options(buf: &[u8]) -> Result<Vec<(String, String)>, PgError> {
    let cstr_at = |at: usize| {
        let rest = buf.get(at..).unwrap_or(&[]);
        let len = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        (String::from_utf8_lossy(&rest[..len]).into_owned(), len)
    };
    let mut options = Vec::new();
    let mut offset = 0;
    while offset < buf.len() {
        let (name, name_len) = cstr_at(offset);
        if name_len == 0 {
            break; // the terminator
        }
        let value_at = offset + name_len + 1;
        if value_at >= buf.len() {
            break; // a name without a value: the layout check below fails
        }
        let (value, value_len) = cstr_at(value_at);
        options.push((name, value));
        offset = value_at + value_len + 1;
    }
    if offset + 1 != buf.len() {
        let msg = "invalid startup packet layout: expected terminator as last byte";
        return Err(PgError::fatal("08P01", msg));
    }
    Ok(options)
}
