//! The execution trace: every async request transition, every message sent and
//! received, every wait, with its time. Two runs of the same scenario on the virtual
//! clock give identical traces; the demo replays and scrubs through it.

use crate::exec_async::AsyncState;
use crate::remote::Proto;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind")]
pub enum TraceKind {
    /// An async request changed state.
    Request { request: usize, requestor: usize, requestee: usize, from: AsyncState, to: AsyncState },
    /// A message was written to a connection (or a statement queued behind a busy
    /// one): the startup packet, a simple Query or an extended-protocol batch.
    Send { conn: usize, proto: Proto, sql: String, bytes: usize, queued: bool },
    /// A whole response arrived (through ReadyForQuery).
    Response { conn: usize, proto: Proto, sql: String, rows: usize, bytes: usize, error: Option<String> },
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
    pub events: Vec<TraceEvent>,
}

impl Trace {
    pub fn new(enabled: bool) -> Trace {
        Trace { enabled, events: Vec::new() }
    }
    #[inline]
    pub fn record(&mut self, time_ns: u64, kind: impl FnOnce() -> TraceKind) {
        if self.enabled {
            self.events.push(TraceEvent { time_ns, kind: kind() });
        }
    }
}
