//! Instrumentation: EXPLAIN ANALYZE counters, kept in one place per node.
//!
//! The dispatcher (`executor::exec_proc_node`) is the only code that starts and stops
//! a node's timing and counts its rows; async requests (which reach a ForeignScan
//! without going through the dispatcher) are timed by `exec_async`. The remote
//! counters (requests, waits, bytes, round trips) are bumped by the code that does the
//! work, through `EState::instr`.
//!
//! Times are nanoseconds of the executor's clock (virtual or real).
//!
//! Invariants:
//! - a call is timed from its start to its row or end of data: `call_started_at` is set
//!   only when unset and a call that returned Wait keeps it, so a call resumed after a
//!   wait is not restarted (its waiting counts, as a blocked call's does in PostgreSQL);
//! - an async request's time in Waiting is not in its node's time (`pause_call`) but in
//!   `remote.wait_ns`, counted once per wait;
//! - `nloops`, `startup_ns` and `total_ns` change only in `end_loop`, once per loop (end
//!   of data, rescan); `finished` counts a loop still open, for an EXPLAIN mid-run;
//! - the counters are plain data, copied with the run (the demo's checkpoints).
//!
//! Where it departs from PostgreSQL (instrument.c): InstrStartNode/InstrStopNode pair up
//! on every call and a loop ends at InstrEndLoop (at rescan, and before EXPLAIN prints);
//! here a call can return Wait without ending, so a call's timing spans its Waits, and
//! end of data also ends the loop.

mod explain;
pub use explain::{
    estimate_as_printed, explain_doc_json_text, explain_doc_text, explain_json, explain_json_text, explain_json_with,
    explain_text, explain_text_with, printed_as, printed_estimates, qualifiable, with_resolved_details, ExplainDoc,
    ExplainNode, ExplainOptions, EMPTY_TLIST, GROUP_OUTPUTS, HASH_UNHASHED, IMPLICIT_CAST, PAIR_PARENT, PHYSICAL_TLIST,
    ROW_MARK_OUTPUT, SORT_OUTPUTS, TARGET_REMOTE_SQL, TARGET_TABLE, TLIST_NEEDED, TLIST_ORDER,
};

use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Instrumentation {
    /// Loops completed (a loop ends when the node returns end of data, or at rescan).
    pub nloops: u64,
    /// Rows returned, over all loops.
    pub ntuples: u64,
    /// Time to the first row of each loop, summed over loops.
    pub startup_ns: u64,
    /// Time in the node (children included) summed over loops.
    pub total_ns: u64,
    /// Has the node ever been called?
    pub running: bool,
    #[serde(skip)]
    pub loop_started: bool,
    #[serde(skip)]
    pub first_tuple_seen: bool,
    #[serde(skip)]
    pub loop_startup_ns: u64,
    #[serde(skip)]
    pub loop_total_ns: u64,
    /// Start of the call in progress; a call that returned Wait keeps running, so
    /// waiting time counts in the node's time as it does in PostgreSQL's sync plans.
    #[serde(skip)]
    pub call_started_at: Option<u64>,
    #[serde(skip)]
    pub loop_rows: u64,
    pub remote: RemoteCounters,
}

/// What an async-capable node adds to EXPLAIN ANALYZE, and what PostgreSQL's own
/// output leaves out: the time its requestor spent waiting for it.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct RemoteCounters {
    /// Async requests received (ExecAsyncRequest calls).
    pub requests: u64,
    /// Requests that had to wait for the connection (ExecAsyncRequestPending).
    pub waits: u64,
    /// Time requests spent Waiting, from request to result.
    pub wait_ns: u64,
    /// Batches (FETCH results) read by the scan: counted when it reads one
    /// (fetch_more_data), which may be after the batch arrived.
    pub batches: u64,
    /// Bytes of the answers to this node's statements, counted when an answer has
    /// fully arrived on the connection: the moment the connection's own counter and the
    /// trace's `Response` count them (so the page's panels agree at every step).
    pub bytes_received: u64,
    /// Bytes of this node's statements, counted when written to the connection.
    pub bytes_sent: u64,
    /// This node's statements written to the connection (each one a round trip unless
    /// pipelined); one queued behind a busy connection counts when it goes out.
    pub round_trips: u64,
}

impl Instrumentation {
    /// Called by the dispatcher before a node's `next`.
    pub fn start_call(&mut self, now: u64) {
        self.running = true;
        if !self.loop_started {
            self.loop_started = true;
            self.first_tuple_seen = false;
            self.loop_rows = 0;
            self.loop_startup_ns = 0;
            self.loop_total_ns = 0;
        }
        if self.call_started_at.is_none() {
            self.call_started_at = Some(now);
        }
    }

    /// Called by the dispatcher after `next` returned a row (`Some(true)`), end of
    /// data (`Some(false)`) or Wait (`None`).
    pub fn stop_call(&mut self, now: u64, result: Option<bool>) {
        let Some(started) = self.call_started_at else {
            return;
        };
        if result.is_none() {
            return; // still in the call: it resumes after the wait
        }
        self.call_started_at = None;
        self.loop_total_ns += now.saturating_sub(started);
        if !self.first_tuple_seen {
            self.first_tuple_seen = true;
            self.loop_startup_ns = self.loop_total_ns;
        }
        match result {
            Some(true) => {
                self.loop_rows += 1;
                self.ntuples += 1;
            }
            _ => self.end_loop(),
        }
    }

    /// `stop_call` after a page-mode call (`executor::exec_proc_node_page`) that
    /// returned `rows` rows at once (0: end of data), the first of them ready at
    /// `first_row_at`: the counters come out as if each row had been a call of its own
    /// (the rows are counted one by one, and a loop's startup time is the time to its
    /// first row, not to the end of the page).
    pub fn stop_call_page(&mut self, now: u64, rows: u64, first_row_at: u64) {
        if rows == 0 {
            return self.stop_call(now, Some(false));
        }
        let Some(started) = self.call_started_at.take() else {
            return;
        };
        if !self.first_tuple_seen {
            self.first_tuple_seen = true;
            self.loop_startup_ns = self.loop_total_ns + first_row_at.saturating_sub(started);
        }
        self.loop_total_ns += now.saturating_sub(started);
        self.loop_rows += rows;
        self.ntuples += rows;
    }

    /// InstrUpdateTupleCount (instrument.c): `rows` returned outside a timed call, by
    /// code that does its own instrumentation — postgres_fdw's
    /// `complete_pending_request` (a row delivered while its requestor configures its
    /// wait), and the rows a Merge Join's inner child returns again after
    /// `ExecRestrPos` (which the join keeps itself, see `node_mergejoin`). No time.
    pub fn update_tuple_count(&mut self, rows: u64) {
        self.loop_rows += rows;
        self.ntuples += rows;
    }

    /// Stops timing a call that will resume later without counting the gap (an async
    /// request that went Waiting: its waiting time is counted as wait time instead).
    pub fn pause_call(&mut self, now: u64) {
        if let Some(started) = self.call_started_at.take() {
            self.loop_total_ns += now.saturating_sub(started);
        }
    }

    /// Closes the current loop (end of data or rescan), like PostgreSQL's `InstrEndLoop`.
    pub fn end_loop(&mut self) {
        if !self.loop_started {
            return;
        }
        self.loop_started = false;
        self.call_started_at = None;
        self.nloops += 1;
        self.startup_ns += self.loop_startup_ns;
        self.total_ns += self.loop_total_ns;
    }

    /// Counters as EXPLAIN shows them, with an unfinished loop counted as finished.
    pub fn finished(&self) -> Instrumentation {
        let mut i = self.clone();
        i.end_loop();
        i
    }
}
