//! What the executor needs from its host: move bytes between the connections and the
//! servers, and wait. The core calls these; it never touches a socket or a clock.

use crate::estate::{EState, ExecError, ExecResult};
use crate::trace::TraceKind;

pub trait Host {
    /// Sends what the executor wrote (and any cancel requests), and hands the
    /// connections whatever has arrived by now. Returns how many answers arrived.
    fn pump(&mut self, es: &mut EState) -> ExecResult<usize>;
    /// Waits until one of `conns` has input and delivers it. Waiting on nothing, or on
    /// connections with nothing on the way, is an error, never a hang.
    fn wait(&mut self, es: &mut EState, conns: &[usize]) -> ExecResult<()>;
    /// Answers still on their way on a connection (for the leak check).
    fn in_transit(&self, conn: usize) -> usize;
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
        let (proto, sql, rows, bytes, error) = (c.proto, c.sql, c.rows, c.bytes, c.error);
        es.record(|| TraceKind::Response { conn: k, proto, sql, rows, bytes, error });
    }
    es.record_written(k);
    Ok(answers)
}
