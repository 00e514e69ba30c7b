//! What the executor needs from its host: move bytes between the connections and the
//! servers. The core calls these; it never touches a socket or a clock, and never
//! waits: `QueryRun::poll` returns Blocked with the connections to wait on, and the
//! caller waits its own way (`WaitingHost::wait` where blocking is allowed). Three hosts
//! implement it: `sim` (simulated shards, virtual time), `tcp` (native sockets), `ws`
//! (the browser's WebSockets to the relay).
//!
//! Invariants:
//! - Bytes enter a connection only through [`deliver`], in the order they arrived, and
//!   it records them in one order: `Arrive`, then a `Response` per answer they completed
//!   (charged to the node that sent the statement), then the `Send`s of the queued
//!   statements those answers released. So the trace never shows a released statement
//!   before the answer that released it.
//! - `Host::pump` takes only what has already arrived (a write may wait for room in a
//!   socket, as libpq's does); only `WaitingHost::wait` waits for an answer, and a wait
//!   on no connection is an error, a wait on nothing in flight an error (`sim`) or a
//!   timeout (`tcp`), never a hang (seed 000's infinite loop).
//! - Connection `k` of the executor is server `k` of the host, in every host.
//!
//! Where it departs from PostgreSQL: a backend does its socket I/O through libpq
//! (`PQsendQuery`, `PQconsumeInput`, `PQgetResult`) and blocks in `WaitEventSetWait`
//! (`src/backend/storage/ipc/latch.c`, from `ExecAppendAsyncEventWait` in nodeAppend.c).
//! Here nothing below the host blocks: the wait is the caller's, so a browser, which
//! cannot block, runs the same core.

use crate::executor::estate::{EState, ExecError, ExecResult};

pub mod sim;
#[cfg(not(target_arch = "wasm32"))]
pub mod tcp;
#[cfg(target_arch = "wasm32")]
pub mod ws;
use crate::trace::TraceKind;

pub trait Host {
    /// Sends what the executor wrote (and any cancel requests), and hands the
    /// connections whatever has arrived by now. Returns how many answers arrived.
    fn pump(&mut self, es: &mut EState) -> ExecResult<usize>;
    /// Answers still on their way on a connection (for the leak check).
    fn in_transit(&self, conn: usize) -> usize;
    /// Sends what the executor wrote, now, without reading anything (a step boundary
    /// of a run on real servers: libpq writes a query when it is sent, not when the
    /// caller next waits). The simulator needs nothing: it stamps each write with the
    /// time it was made.
    fn flush_writes(&mut self, _es: &mut EState) -> ExecResult<()> {
        Ok(())
    }
}

/// A host that can wait in place: the simulator (it moves its clock) and native
/// sockets. A browser cannot block: its driver waits on its WebSockets itself when
/// `QueryRun::poll` says Blocked, and hands the bytes to `deliver`.
pub trait WaitingHost: Host {
    /// Waits until one of `conns` has input and delivers it. Waiting on nothing, or on
    /// connections with nothing on the way, is an error, never a hang.
    fn wait(&mut self, es: &mut EState, conns: &[usize]) -> ExecResult<()>;
}

/// Hands bytes that arrived on connection `k` to it, and records in the trace what
/// they completed and which queued queries that released. Returns the answers completed.
pub fn deliver(es: &mut EState, k: usize, bytes: &[u8]) -> ExecResult<usize> {
    let now = es.now();
    let n = bytes.len();
    es.record(|| TraceKind::Arrive { conn: k, bytes: n });
    let done = es.conns[k].receive(now, bytes).map_err(ExecError::Protocol)?;
    let answers = done.len();
    for c in done {
        let node = es.answer_arrived(k, c.ticket, c.bytes);
        let (proto, sql, rows, bytes, error) = (c.proto, c.sql, c.rows, c.bytes, c.error);
        es.record(|| TraceKind::Response { conn: k, proto, sql, rows, bytes, error, node });
    }
    es.record_written(k);
    Ok(answers)
}
