//! The cooperative event loop's state: which requests wait for which connection, in
//! the order they started waiting, and the set of connections the executor waits on.
//!
//! PostgreSQL builds a WaitEventSet for each wait (ExecAppendAsyncEventWait); here the
//! executor registers connections during a poll and, if it cannot progress, returns
//! Wait to the host, which waits on `wait_set`. Invariants:
//! - a request is in `waiting` at most once (seed 001's double-queueing bug);
//! - `waiting` is FIFO: the first request to wait is the first notified;
//! - at most `max_events` requests are notified per turn (PostgreSQL's EVENT_BUFFER_SIZE);
//! - the executor never returns Wait with an empty `wait_set` while requests are
//!   outstanding (seed 000's `Assert(added)` crash): the driver reports it as an error.

use std::collections::VecDeque;

/// PostgreSQL's EVENT_BUFFER_SIZE in nodeAppend.c.
pub const EVENT_BUFFER_SIZE: usize = 16;

#[derive(Clone, Debug)]
pub struct EventLoop {
    /// Waiting requests (ids), oldest first.
    waiting: VecDeque<usize>,
    /// Connections to wait on in this turn, in registration order.
    wait_set: Vec<usize>,
    pub max_events: usize,
    /// Requests notified in the current turn (shown by the demo).
    pub fired: Vec<usize>,
    /// The most requests notified by one event wait so far (bounded by `max_events`).
    pub max_fired: usize,
}

impl Default for EventLoop {
    fn default() -> Self {
        EventLoop {
            waiting: VecDeque::new(),
            wait_set: Vec::new(),
            max_events: EVENT_BUFFER_SIZE,
            fired: Vec::new(),
            max_fired: 0,
        }
    }
}

impl EventLoop {
    /// Starts a turn: the previous wait set was consumed by the host.
    pub fn begin_turn(&mut self) {
        self.wait_set.clear();
        self.fired.clear();
    }

    /// Continues a turn after a step boundary (step mode): the wait set keeps growing
    /// as it would in a turn without steps; only the step's own events are forgotten.
    pub fn continue_turn(&mut self) {
        self.fired.clear();
    }

    /// Adds a connection to this turn's wait set (once).
    pub fn add_wait_conn(&mut self, conn: usize) {
        if !self.wait_set.contains(&conn) {
            self.wait_set.push(conn);
        }
    }

    /// Queues a request as waiting; returns false if it was already queued.
    pub fn enqueue(&mut self, request: usize) -> bool {
        // exercise:queued-twice begin
        if self.waiting.contains(&request) {
            return false;
        }
        self.waiting.push_back(request);
        true
        // exercise:queued-twice end
    }

    /// Records that a request was notified in this turn.
    pub fn note_fired(&mut self, request: usize) {
        self.fired.push(request);
    }

    pub fn dequeue(&mut self, request: usize) {
        self.waiting.retain(|&r| r != request);
    }

    /// The queued requests, oldest first.
    pub fn waiting(&self) -> impl Iterator<Item = usize> + '_ {
        self.waiting.iter().copied()
    }

    pub fn wait_set(&self) -> &[usize] {
        &self.wait_set
    }

    /// Forgets everything (after an error or at the end of a query).
    pub fn clear(&mut self) {
        self.waiting.clear();
        self.wait_set.clear();
        self.fired.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty() && self.wait_set.is_empty()
    }
}
