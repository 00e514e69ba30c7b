//! What the executor needs from its host: move bytes between the connections and the
//! servers, and wait. The core calls these; it never touches a socket or a clock.

use crate::estate::{EState, ExecResult};

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
