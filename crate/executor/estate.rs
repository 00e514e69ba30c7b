//! Executor state shared by all nodes of one query (PostgreSQL's `EState`): the clock,
//! the cost model, per-node instrumentation, the remote connections, the async
//! requests, the event loop and the trace.
//!
//! Invariants: `conns[i]` belongs to `servers[i]`; `requests[r].id == r`; `blocked_on`
//! is set only between a blocking call and the node's return (the run loop clears it
//! before each turn), and `yielded` only between a step boundary and the run loop's
//! Step::Event.
//!
//! Where it departs from PostgreSQL, which blocks in place: a node that would block
//! (`block_on`) or, in the demo's step mode, reaches a step boundary (`step_boundary`)
//! ends its call with Wait. Protocol code says so with `Stop::Suspended`, carried up by
//! `?` like an error and turned into Wait where the node returns
//! (`wait_if_suspended`); it never reaches the run loop as an error.
//!
//! | here | PostgreSQL |
//! |---|---|
//! | `EState` | `EState` (plus postgres_fdw's per-backend connection state) |
//! | `get_connection`, `get_cursor_number` | `GetConnection`, `GetCursorNumber` |
//! | `block_on` / `blocked_on` | a blocking libpq call (`PQexec`, `pgfdw_get_result`) |
//! | `step_boundary`, `Stop::Suspended` | none: the demo's steps |

use crate::behaviour::Behaviour;
use crate::clock::{Clock, CostModel};
use crate::executor::event_loop::EventLoop;
use crate::executor::exec_async::AsyncRequest;
use crate::instrument::Instrumentation;
use crate::remote::{Connection, ForeignServer, Proto, QueryRole, RemoteError, Ticket, BEGIN_SQL, SESSION_SETUP};
use crate::trace::{Trace, TraceKind};
use crate::types::Datum;
use std::collections::{HashMap, VecDeque};

/// Why a query failed.
#[derive(Clone, Debug, PartialEq)]
pub enum ExecError {
    /// A server returned an ErrorResponse.
    Remote(RemoteError),
    /// Bytes from a server could not be understood.
    Protocol(String),
    /// The executor broke one of its own invariants (a bug, reported instead of hanging).
    Internal(String),
    /// A node would be re-entered while it executes (only with the teaching knob
    /// `no_descendant_check`: seed 000's hazard, `async_through::reentry`).
    Reentry(String),
    /// An ERROR the query itself raises (a scalar subquery returning two rows).
    Query(String),
    /// An ERROR an expression raises (division by zero, integer out of range, an
    /// invalid input on a cast): PostgreSQL's `ereport(ERROR)` in the executor, which
    /// ends the statement.
    Eval(crate::plan::eval::EvalError),
}

impl From<crate::plan::eval::EvalError> for ExecError {
    #[cold]
    fn from(e: crate::plan::eval::EvalError) -> ExecError {
        ExecError::Eval(e)
    }
}

impl ExecError {
    /// The primary message as PostgreSQL reports it (psql's `ERROR:  …` line without
    /// the prefix): a remote error's own message, postgres_fdw's `pgfdw_report_error`
    /// passing it through.
    pub fn message(&self) -> String {
        match self {
            ExecError::Remote(e) => e.message.clone(),
            ExecError::Eval(e) => e.to_string(),
            other => other.to_string(),
        }
    }

    /// The report as psql prints it: `ERROR:  message`, then for a remote error
    /// postgres_fdw's `CONTEXT:  remote SQL command: …` (the scan's query, not the
    /// FETCH, as `fetch_more_data` reports it).
    pub fn report(&self) -> String {
        let mut out = format!("ERROR:  {}", self.message());
        if let ExecError::Remote(e) = self {
            if let Some(d) = &e.detail {
                out.push_str(&format!("\nDETAIL:  {d}"));
            }
            let sql = e.context.as_deref().unwrap_or(&e.query);
            if !sql.is_empty() {
                out.push_str(&format!("\nCONTEXT:  remote SQL command: {sql}"));
            }
        }
        out
    }
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Remote(e) => write!(f, "{e}"),
            ExecError::Protocol(m) => write!(f, "protocol error: {m}"),
            ExecError::Internal(m) => write!(f, "internal error: {m}"),
            ExecError::Reentry(m) | ExecError::Query(m) => write!(f, "{m}"),
            ExecError::Eval(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ExecError {}

pub type ExecResult<T> = Result<T, ExecError>;

/// Why an async-aware node's protocol code stops before its call is done.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// A step boundary (step mode) or a blocking call (`blocked_on`): the node returns
    /// Wait and finishes the interrupted work first on its next call. It never leaves
    /// the node (`wait_if_suspended`).
    Suspended,
    Failed(ExecError),
}

impl From<ExecError> for Stop {
    fn from(e: ExecError) -> Stop {
        Stop::Failed(e)
    }
}

/// The result of protocol code that may be suspended (see `Stop`).
pub type StepResult<T> = Result<T, Stop>;

/// A node's call as its parent sees it: a suspension is Wait.
pub fn wait_if_suspended(r: StepResult<super::ExecStatus>) -> ExecResult<super::ExecStatus> {
    match r {
        Ok(status) => Ok(status),
        Err(Stop::Suspended) => Ok(super::ExecStatus::Wait),
        Err(Stop::Failed(e)) => Err(e),
    }
}

#[derive(Clone)]
pub struct EState {
    pub clock: Clock,
    pub cost: CostModel,
    /// Instrumentation per plan node, indexed by node id.
    pub instr: Vec<Instrumentation>,
    /// One connection per foreign server: `conns[i]` belongs to `servers[i]`.
    pub servers: Vec<ForeignServer>,
    pub conns: Vec<Connection>,
    /// Every async request of the query, indexed by request id.
    pub requests: Vec<AsyncRequest>,
    pub event_loop: EventLoop,
    pub trace: Trace,
    /// `async_capable` is honoured (async mode) or ignored (sync mode).
    pub async_enabled: bool,
    /// Step mode (the demo): async-aware nodes hand control back to the host after
    /// each request transition they cause, so every transition is a visible step.
    pub step_mode: bool,
    /// Set when a node handed control back in step mode (its Wait means "call me
    /// again", not "wait for input").
    pub yielded: bool,
    /// Record each call of an Append and each row it returns (`TraceKind::NodeCall`,
    /// `NodeRow`): the demo's breakpoints use them; off by default (two events per row).
    pub trace_calls: bool,
    /// What the executor and postgres_fdw do: PostgreSQL 15 by default, each
    /// improvement a named knob (see `behaviour.rs`).
    pub behaviour: Behaviour,
    /// A libpq call blocks (PQexec, pgfdw_get_result): the node returned Wait and only
    /// this connection may wake it; nothing else runs meanwhile, as in PostgreSQL.
    pub blocked_on: Option<usize>,
    /// The query's InitPlans and their values, indexed by PARAM_EXEC number
    /// (`node_subplan`; PostgreSQL's `es_param_exec_vals`).
    pub init_plans: Vec<crate::executor::node_subplan::InitPlanState>,
    /// The planner's figures for each node and its settings (`Scenario::planner`).
    pub planner: crate::plan::costsize::PlannerFigures,
    /// The query's CTEs and their tuplestores (`node_ctescan`).
    pub ctes: crate::executor::node_ctescan::CteStates,
    /// The values of correlated SubPlans' parameters, set from the outer row before
    /// each run (`ExecScanSubPlan`): (PARAM_EXEC number, value).
    pub param_values: Vec<(usize, crate::types::Datum)>,
    /// A rescan is under way because parameters changed (PostgreSQL's `chgParam`): a
    /// foreign scan whose query reads them closes its cursor (postgresReScanForeignScan).
    pub chg_param: bool,
    /// Nodes whose rescan for changed parameters waits until they are next run (an
    /// Append's children: ExecReScanAppend leaves a child with `chgParam` to be
    /// rescanned by its next ExecProcNode or ExecAsyncRequest).
    pub chg_param_pending: Vec<usize>,
    /// With `blocked_on`, other connections that also wake the blocked node: only the
    /// teaching knob `no_descendant_check` sets them (the 2016 framework's wait on every
    /// event of the query); empty otherwise. Cleared with `blocked_on`.
    pub wake_also: Vec<usize>,
    /// The plan's shape: node ids in depth-first order, each node's subtree and
    /// parent (the nested-set check of `async_through`).
    pub shape: crate::executor::async_through::PlanShape,
    /// postgres_fdw's `cursor_number` (GetCursorNumber): cursors are numbered per
    /// coordinator backend across all connections, from 1 in each transaction.
    pub cursor_number: u32,
    /// postgres_fdw's `prep_stmt_number` (GetPrepStmtNumber): prepared statements of
    /// foreign modify are named `pgsql_fdw_prep_N`, N counted per backend.
    pub prep_stmt_number: u32,
    /// What ModifyTable did to the coordinator's own tables (`node_modifytable`),
    /// applied to them when the statement ends (the caller's catalog).
    pub local_changes: crate::executor::node_modifytable::LocalChanges,
    /// Statements run one after another outside the plan's own calls: connection
    /// set-up at ExecInit (GetConnection) and the CLOSEs at ExecEnd.
    pub remote_commands: VecDeque<RemoteCommand>,
    /// A Nested Loop's parameters (PostgreSQL's `nestParams`, PARAM_EXEC values):
    /// the outer row's join key, set by the Nested Loop before each pass of its
    /// parameterized inner Index Scan (`node_nestloop`, `node_indexscan`).
    pub nest_params: Vec<Datum>,
    /// Who is charged for a statement's bytes and round trip when it is written (it
    /// may be queued).
    ticket_owner: HashMap<(usize, Ticket), usize>,
    /// Who is charged for a statement's answer when it arrives: the scan's box, the
    /// connection table and the wire inspector count received bytes at that moment
    /// (the scan reads the batch later, when asked: its `batches` counter says when).
    answer_owner: HashMap<(usize, Ticket), usize>,
    /// A real host's socket writer: a statement goes on the wire when it is sent, as
    /// libpq's PQsendQuery writes it, not when the executor next waits. None for the
    /// simulator, which stamps each write with the time it was made.
    pub writer: Option<Writer>,
    /// The first failed immediate write; the host reports it at its next pump.
    pub write_error: Option<String>,
    /// EXPLAIN's TIMING: each node call reads the clock for the node's times. Off, as
    /// PostgreSQL's `EXPLAIN (ANALYZE, TIMING OFF)`, only rows and loops are counted:
    /// on a real clock a read costs tens of ns, several per row and more on the async
    /// path, which would weigh on a comparison with PostgreSQL's TIMING OFF.
    pub timing: bool,
    /// EXPLAIN without ANALYZE (ExecInit with `EXEC_FLAG_EXPLAIN_ONLY`): the nodes are
    /// initialized and never run; postgres_fdw's Begin callbacks return before
    /// `GetConnection`, so only what planning sent (use_remote_estimate's EXPLAINs)
    /// is on the connections, and the transaction's end commits it.
    pub explain_only: bool,
}

/// Writes bytes on connection k's socket (see `EState::writer`).
pub type Writer = std::rc::Rc<std::cell::RefCell<dyn FnMut(usize, &[u8]) -> std::io::Result<()>>>;

/// One remote statement the run loop sends and waits for (see `remote_commands`).
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteCommand {
    pub conn: usize,
    /// None: the startup packet (`connect_pg_server`).
    pub statement: Option<(Proto, String, QueryRole)>,
    /// The node charged with the round trip, if any.
    pub owner: Option<usize>,
}

impl EState {
    pub fn new(clock: Clock, servers: Vec<ForeignServer>, async_enabled: bool, trace: bool) -> EState {
        let conns = servers.iter().enumerate().map(|(i, s)| Connection::new(i, &s.name, false)).collect();
        EState {
            clock,
            cost: CostModel::default(),
            instr: Vec::new(),
            servers,
            conns,
            requests: Vec::new(),
            event_loop: EventLoop::default(),
            trace: Trace::new(trace),
            async_enabled,
            step_mode: false,
            yielded: false,
            trace_calls: false,
            behaviour: Behaviour::pg15(),
            blocked_on: None,
            init_plans: Vec::new(),
            planner: Default::default(),
            ctes: Default::default(),
            param_values: Vec::new(),
            chg_param: false,
            chg_param_pending: Vec::new(),
            wake_also: Vec::new(),
            shape: Default::default(),
            cursor_number: 0,
            prep_stmt_number: 0,
            local_changes: Default::default(),
            remote_commands: VecDeque::new(),
            nest_params: Vec::new(),
            ticket_owner: HashMap::new(),
            answer_owner: HashMap::new(),
            writer: None,
            write_error: None,
            timing: true,
            explain_only: false,
        }
    }

    #[inline]
    pub fn now(&self) -> u64 {
        self.clock.now()
    }

    pub fn record(&mut self, kind: impl FnOnce() -> TraceKind) {
        // No clock read for a trace that is off (a real clock's read is not free).
        if self.trace.enabled {
            let t = self.clock.now();
            self.trace.record(t, kind);
        }
    }

    /// The clock for a node's times: 0 with `timing` off (nothing is read).
    #[inline]
    pub fn timing_now(&self) -> u64 {
        if self.timing {
            self.clock.now()
        } else {
            0
        }
    }

    /// In step mode, marks a step boundary; returns whether the node must return Wait
    /// now (it resumes where it was on the next call).
    pub fn yield_step(&mut self) -> bool {
        if self.step_mode {
            self.yielded = true;
        }
        self.yielded
    }

    pub fn server_index(&self, name: &str) -> Option<usize> {
        self.servers.iter().position(|s| s.name == name)
    }

    /// Sets the behaviour (before ExecInit), the one place a run's behaviour knobs are
    /// applied: nodes read `es.behaviour`, and the `pipeline` knob is each connection's.
    pub fn set_behaviour(&mut self, behaviour: Behaviour) {
        self.behaviour = behaviour;
        for c in self.conns.iter_mut() {
            c.pipeline = behaviour.pipeline;
        }
    }

    /// The database every connection opens (postgres_fdw's `dbname`; the demo keeps
    /// each scenario's shard data in a database of its own).
    pub fn set_database(&mut self, database: &str) {
        for c in self.conns.iter_mut() {
            c.database = database.to_string();
        }
    }

    /// A step boundary (step mode) or a blocking call interrupted the node: it returns
    /// Wait and resumes where it was on the next call.
    pub fn interrupted(&self) -> bool {
        self.yielded || self.blocked_on.is_some()
    }

    /// Suspends the call if a step boundary or a blocking call interrupted it.
    pub fn suspend_if_interrupted(&self) -> StepResult<()> {
        if self.interrupted() {
            return Err(Stop::Suspended);
        }
        Ok(())
    }

    /// A step boundary, as protocol code marks one: in step mode the call is suspended
    /// here (`Stop::Suspended`) and goes on from here on the next call.
    pub fn step_boundary(&mut self) -> StepResult<()> {
        if self.yield_step() {
            return Err(Stop::Suspended);
        }
        Ok(())
    }

    /// The node must wait for `conn` as a blocking libpq call would.
    pub fn block_on(&mut self, conn: usize) {
        self.blocked_on = Some(conn);
    }

    /// GetCursorNumber.
    pub fn get_cursor_number(&mut self) -> u32 {
        self.cursor_number += 1;
        self.cursor_number
    }

    /// GetConnection at a ForeignScan's ExecInit: a new connection is set up
    /// (`connect_pg_server`, `configure_remote_session`) and its transaction begun
    /// (`begin_remote_xact`), each statement a waited round trip, before the plan runs.
    /// With `pipelined_setup` nothing is waited for: the first statement carries it all
    /// (`session_prefix`).
    pub fn get_connection(&mut self, conn: usize) {
        let already = self.conns[conn].connected || self.remote_commands.iter().any(|c| c.conn == conn);
        if already || self.behaviour.pipelined_setup {
            return;
        }
        self.remote_commands.push_back(RemoteCommand { conn, statement: None, owner: None });
        for sql in SESSION_SETUP {
            let statement = Some((Proto::Simple, sql.to_string(), QueryRole::Setup));
            self.remote_commands.push_back(RemoteCommand { conn, statement, owner: None });
        }
        let statement = Some((Proto::Simple, BEGIN_SQL.to_string(), QueryRole::BeginTransaction));
        self.remote_commands.push_back(RemoteCommand { conn, statement, owner: None });
    }

    /// `pipelined_setup`: connects now, without waiting, and returns the session set-up
    /// and START TRANSACTION to put in front of the first statement ("" once done).
    pub fn session_prefix(&mut self, conn: usize) -> String {
        if !self.behaviour.pipelined_setup || self.conns[conn].xact_open {
            return String::new();
        }
        if !self.conns[conn].connected {
            let now = self.clock.now();
            self.conns[conn].connect(now, false);
            self.record_written(conn);
        }
        let mut prefix: String = SESSION_SETUP.iter().map(|s| format!("{s}; ")).collect();
        prefix.push_str(BEGIN_SQL);
        prefix.push_str("; ");
        prefix
    }

    /// Writes the startup packet of a connection (`connect_pg_server`).
    pub fn connect(&mut self, conn: usize) -> Ticket {
        let now = self.clock.now();
        let ticket = self.conns[conn].connect(now, true);
        self.write_now(conn);
        self.record_written(conn);
        ticket
    }

    /// With a writer (real servers), what the connection wrote goes on the wire now.
    fn write_now(&mut self, conn: usize) {
        let Some(writer) = self.writer.clone() else { return };
        while let Some(out) = self.conns[conn].outbox.pop_front() {
            if let Err(e) = (writer.borrow_mut())(conn, &out.bytes) {
                self.write_error.get_or_insert(format!("connection {conn}: write failed: {e}"));
                return;
            }
        }
    }

    /// Sends a statement on a connection (or queues it behind the one in flight) and
    /// records it; `owner` is the node whose counters the round trip is charged to.
    pub fn send(&mut self, conn: usize, proto: Proto, sql: &str, owner: Option<usize>, role: QueryRole) -> Ticket {
        self.send_params(conn, proto, sql, Vec::new(), owner, role)
    }

    /// `send` with the Bind message's parameter values (postgres_fdw's `create_cursor`
    /// with a remote query that has parameters).
    pub fn send_params(
        &mut self,
        conn: usize,
        proto: Proto,
        sql: &str,
        params: Vec<Option<String>>,
        owner: Option<usize>,
        role: QueryRole,
    ) -> Ticket {
        self.send_named(conn, proto, "", sql, params, owner, role)
    }

    /// `send_params` of a named prepared statement (postgres_fdw's foreign modify:
    /// `Proto::Prepare` is PQprepare, `Proto::ExecPrepared` PQsendQueryPrepared).
    #[allow(clippy::too_many_arguments)]
    pub fn send_named(
        &mut self,
        conn: usize,
        proto: Proto,
        name: &str,
        sql: &str,
        params: Vec<Option<String>>,
        owner: Option<usize>,
        role: QueryRole,
    ) -> Ticket {
        let now = self.clock.now();
        let (ticket, written) = self.conns[conn].send_named(now, proto, name, sql, params, role);
        if let Some(node) = owner {
            self.ticket_owner.insert((conn, ticket), node);
            self.answer_owner.insert((conn, ticket), node);
        }
        if !written {
            let sql = sql.to_string();
            self.trace.record(now, || TraceKind::Send { conn, proto, sql, bytes: 0, queued: true, node: owner });
        }
        // PQsendQuery writes at once: an Append that goes on with other children's
        // stored rows must not hold this FETCH back until it next waits.
        self.write_now(conn);
        self.record_written(conn);
        ticket
    }

    /// Records in the trace what a connection wrote (now, or released from its queue),
    /// and charges its owner's round trip and bytes sent at the same moment: the
    /// statement is on the wire, on the connection's counters and in the trace at once.
    pub fn record_written(&mut self, conn: usize) {
        let now = if self.trace.enabled { self.clock.now() } else { 0 };
        for w in std::mem::take(&mut self.conns[conn].written) {
            let node = self.ticket_owner.remove(&(conn, w.ticket));
            if let Some(node) = node {
                self.instr[node].remote.round_trips += 1;
                self.instr[node].remote.bytes_sent += w.bytes as u64;
            }
            let (proto, sql, bytes) = (w.proto, w.sql, w.bytes);
            self.trace.record(now, || TraceKind::Send { conn, proto, sql, bytes, queued: false, node });
        }
    }

    /// An answer complete on `conn` (`ticket`, `bytes` long): charges its bytes to the
    /// node that sent the statement, now, as the connection counted them, and returns
    /// that node (None: the connection's own set-up or transaction statement).
    pub fn answer_arrived(&mut self, conn: usize, ticket: Ticket, bytes: usize) -> Option<usize> {
        let node = self.answer_owner.remove(&(conn, ticket))?;
        self.instr[node].remote.bytes_received += bytes as u64;
        Some(node)
    }
}
