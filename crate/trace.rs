//! The execution trace: every async request transition, every message sent and
//! received, every wait, with its time. The executor, the run and the hosts record into
//! it (through `EState::record`); the demo replays and scrubs through it, lessons and
//! breakpoints match its events, and `demo::export` writes it out.
//!
//! Invariants:
//! - Events are in the order they happened, and their times never decrease: every
//!   event is stamped with the run's clock when it is recorded, and the clock never goes
//!   backwards.
//! - Two runs of the same scenario on the virtual clock give identical traces (tests
//!   compare them).
//! - With recording off, nothing is built: `record` takes a closure, so the event's
//!   strings are never made, and `EState::record` does not even read the clock.
//! - `NodeCall` and `NodeRow` exist only with `EState::trace_calls`; every other kind is
//!   recorded whenever the trace is on.
//! - The serialized names (`kind`, the variants' fields) are an interface: the page and
//!   the JSON/CSV export read them.
//!
//! PostgreSQL has no counterpart: a backend records no event trace. The nearest are the
//! statement log (`log_statement`) and wait events (`pg_stat_activity.wait_event`);
//! the event names here follow the functions they stand for (`ExecAsyncNotify`,
//! `ExecAsyncConfigureWait`, `process_pending_request`).

use crate::executor::exec_async::AsyncState;
use crate::remote::Proto;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind")]
pub enum TraceKind {
    /// An async request changed state.
    Request { request: usize, requestor: usize, requestee: usize, from: AsyncState, to: AsyncState },
    /// A message was written to a connection (or a statement queued behind a busy
    /// one): the startup packet, a simple Query or an extended-protocol batch. `node`:
    /// the plan node charged with it (a foreign scan's DECLARE, FETCH, CLOSE; None for
    /// the connection's own set-up and transaction statements).
    Send { conn: usize, proto: Proto, sql: String, bytes: usize, queued: bool, node: Option<usize> },
    /// A whole response arrived (through ReadyForQuery); `node` as for its `Send`. Its
    /// bytes count on the connection and on that node at this moment, together.
    Response {
        conn: usize,
        proto: Proto,
        sql: String,
        rows: usize,
        bytes: usize,
        error: Option<String>,
        node: Option<usize>,
    },
    /// The executor could not progress and waits on these connections.
    Wait { conns: Vec<usize> },
    /// Bytes arrived on a connection.
    Arrive { conn: usize, bytes: usize },
    /// A node was called for the first time.
    NodeStart { node: usize },
    /// A row reached the top of the plan.
    Row { n: u64 },
    /// The query failed; outstanding work is being cancelled.
    Error { message: String },
    /// A cancel request was sent for the query running on a connection.
    Cancel { conn: usize },
    /// ExecAsyncConfigureWait for a Waiting request: whether its requestee added its
    /// connection to the wait set (postgres_fdw adds only the connection's pendingAreq).
    ConfigureWait { request: usize, added: bool },
    /// ExecAsyncNotify: a Waiting request's connection had input and its requestee was
    /// told (postgresForeignAsyncNotify).
    Notify { request: usize },
    /// process_pending_request (postgres_fdw.c): scan `node` needed the connection and
    /// first drained the FETCH in flight for another scan's `request` (the pendingAreq).
    Drain { conn: usize, request: usize, node: usize },
    /// A new call of `node` by its parent (ExecAppend asked for its next row; a step-mode
    /// resume is not a new call). Recorded by Append, only with `EState::trace_calls`.
    NodeCall { node: usize },
    /// `node` returned a row to its parent. Recorded by Append for itself and for its
    /// synchronous children, only with `EState::trace_calls` (the demo's breakpoints
    /// ask for them; off elsewhere: two or three events per row).
    NodeRow { node: usize },
    /// The hazard (teaching knob `no_descendant_check`): while `waiting` waited in
    /// place, `request` of another subtree had input; dispatching it would re-enter
    /// `node`, which is executing its `child`. The run ends with `message`.
    Reentry { node: usize, child: usize, waiting: usize, request: usize, message: String },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceEvent {
    pub time_ns: u64,
    #[serde(flatten)]
    pub kind: TraceKind,
}

/// Recording is optional: benchmarks over millions of rows switch it off.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub enabled: bool,
    /// Keep only the wire's events (`Send`, `Response`): what a comparison of two runs
    /// draws. The other events are still made (their closures run as before), not kept.
    pub wire_only: bool,
    pub events: Vec<TraceEvent>,
}

impl Trace {
    pub fn new(enabled: bool) -> Trace {
        Trace { enabled, wire_only: false, events: Vec::new() }
    }
    #[inline]
    pub fn record(&mut self, time_ns: u64, kind: impl FnOnce() -> TraceKind) {
        if self.enabled {
            let kind = kind();
            if !self.wire_only || matches!(kind, TraceKind::Send { .. } | TraceKind::Response { .. }) {
                self.events.push(TraceEvent { time_ns, kind });
            }
        }
    }
}
