//! Executor state shared by all nodes of one query (PostgreSQL's `EState`): the clock,
//! the cost model, per-node instrumentation, the remote connections, the async
//! requests, the event loop and the trace.

use crate::behaviour::Behaviour;
use crate::clock::{Clock, CostModel};
use crate::event_loop::EventLoop;
use crate::exec_async::AsyncRequest;
use crate::instrument::Instrumentation;
use crate::remote::{Connection, ForeignServer, QueryRole, RemoteError, BEGIN_SQL};
use crate::trace::{Trace, TraceKind};

/// Why a query failed.
#[derive(Clone, Debug, PartialEq)]
pub enum ExecError {
    /// A server returned an ErrorResponse.
    Remote(RemoteError),
    /// Bytes from a server could not be understood.
    Protocol(String),
    /// The executor broke one of its own invariants (a bug, reported instead of hanging).
    Internal(String),
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Remote(e) => write!(f, "{e}"),
            ExecError::Protocol(m) => write!(f, "protocol error: {m}"),
            ExecError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for ExecError {}

pub type ExecResult<T> = Result<T, ExecError>;

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
    /// What the executor and postgres_fdw do: PostgreSQL 15 by default, each
    /// improvement a named knob (see `behaviour.rs`).
    pub behaviour: Behaviour,
}

impl EState {
    pub fn new(clock: Clock, servers: Vec<ForeignServer>, async_enabled: bool, trace: bool) -> EState {
        let conns = servers
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut c = Connection::new(i, &s.name, s.options.pipeline);
                // Async mode opens the remote transaction in the first query's message.
                c.combine_begin = async_enabled && s.options.async_capable;
                c
            })
            .collect();
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
            behaviour: Behaviour::pg15(),
        }
    }

    #[inline]
    pub fn now(&self) -> u64 {
        self.clock.now()
    }

    pub fn record(&mut self, kind: impl FnOnce() -> TraceKind) {
        let t = self.clock.now();
        self.trace.record(t, kind);
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

    /// Sends a query on a connection (or queues it behind the one in flight) and
    /// records it; `owner` is the node whose counters the round trip is charged to.
    pub fn send_query(&mut self, conn: usize, sql: &str, owner: Option<usize>, role: QueryRole) -> u64 {
        let now = self.clock.now();
        let (ticket, written) = self.conns[conn].send_query(now, sql, role);
        // Written ahead of ours in this call: the startup packet (it rides with our
        // query) or the START TRANSACTION our query needed, a round trip charged to the
        // node that needed it.
        for sql in std::mem::take(&mut self.conns[conn].released) {
            let bytes = sql.len() + 6;
            if let (Some(node), true) = (owner, sql == BEGIN_SQL) {
                self.instr[node].remote.round_trips += 1;
                self.instr[node].remote.bytes_sent += bytes as u64;
            }
            self.trace.record(now, || TraceKind::Send { conn, sql, bytes, queued: false });
        }
        let (sql, bytes, queued) = match written {
            Some((sql, n)) => (sql, n, false),
            None => (sql.to_string(), 0, true),
        };
        if let Some(node) = owner {
            let r = &mut self.instr[node].remote;
            r.round_trips += 1;
            r.bytes_sent += if queued { sql.len() as u64 + 6 } else { bytes as u64 };
        }
        self.trace.record(now, || TraceKind::Send { conn, sql, bytes, queued });
        ticket
    }
}
