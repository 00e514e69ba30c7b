//! Running one query: the host loop around the executor (PostgreSQL's ExecutorRun plus
//! the remote transaction's commit at ExecutorEnd).
//!
//! Each `step` is one turn: poll the root once; on a row, collect it; on Wait, let the
//! host wait on the connections registered during the turn. After end of data, the
//! remote transactions are committed — one after another (as postgres_fdw's
//! transaction callback does by default), all at once with the `parallel_commit`
//! behaviour (postgres_fdw's server option), in either mode. On an error,
//! every outstanding request is cancelled, a cancel is sent for every query in flight,
//! every open transaction is rolled back, and the connections are drained: a finished
//! or failed run leaves nothing outstanding (`leftovers` is empty).
//!
//! Invariants:
//! - the phases go Starting → Executing → Ending → Committing → Finished, or from any of
//!   them to Aborting → Failed; Finished and Failed are final;
//! - the run never asks its host to wait on no connection (`block_on` makes that an
//!   internal error): an empty wait set would hang the run;
//! - ExecEnd runs once (`ended`), at end of data or on abort;
//! - a step boundary does not pump the host: input delivered earlier than in a run
//!   without steps would change the run, and the demo's stepped run must be the same run;
//! - an error answer, even to a statement nobody reads (a discarded FETCH), fails the
//!   query: every connection's first error is checked before each COMMIT goes out;
//! - only connections with an open transaction are committed, and the run is Finished
//!   only when none is open or busy;
//! - an EXPLAIN without ANALYZE (`es.explain_only`) never calls the plan: Starting
//!   sends what planning sent (use_remote_estimate's EXPLAINs), then the commit.
//!
//! Where it departs from PostgreSQL (execMain.c's ExecutorRun, postgres_fdw's
//! `pgfdw_xact_callback` in connection.c): PostgreSQL blocks inside ExecutorRun; here
//! `poll` returns Blocked and the caller waits (`step` does, with a `WaitingHost`), so the
//! same loop runs in a browser, which cannot block. The commit and abort are steps of this
//! loop, not a transaction callback.

use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::executor::exec_async::{exec_async_cancel, AsyncState};
use crate::executor::{exec_end_node, exec_proc_node, explain_tree, ExecStatus, PlanState};
use crate::host::sim::SimHost;
use crate::host::{Host, WaitingHost};
use crate::instrument::{explain_json, explain_text, ExplainNode};
use crate::trace::TraceKind;
use crate::types::{Column, Datum};

#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    Starting,
    Executing,
    /// Closing cursors (ExecEnd).
    Ending,
    /// Committing remote transactions.
    Committing,
    /// After an error: cancels sent, transactions aborted, the connections draining.
    Aborting(ExecError),
    Finished,
    Failed(ExecError),
}

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Row,
    /// Step mode: an async request changed state; nothing to wait for yet.
    Event,
    Waited,
    /// Nothing can progress until one of `waiting_on()` has input: the caller waits its
    /// own way (`step` does it with a `WaitingHost`), then calls `poll` again.
    Blocked,
    Committed,
    Finished,
    Failed,
}

/// A query being run by a host: `SimHost` (simulated shards, the default) or a host
/// that talks to real servers (`host::tcp::TcpHost`, natively).
#[derive(Clone)]
pub struct QueryRun<H: Host = SimHost> {
    pub es: EState,
    pub root: PlanState,
    pub host: H,
    pub columns: Vec<Column>,
    pub phase: Phase,
    /// Result rows (kept unless `keep_rows` is off, for benchmarks).
    pub rows: Vec<Vec<Datum>>,
    pub keep_rows: bool,
    pub row_count: u64,
    pub started_at: u64,
    pub finished_at: Option<u64>,
    /// When ExecutorEnd finished (EXPLAIN's Execution Time ends there).
    pub execution_end: Option<u64>,
    /// When the set-up statements were done and execution began (Starting ended).
    pub executing_at: Option<u64>,
    /// When the plan was done and the CLOSEs began (Executing ended).
    pub ending_at: Option<u64>,
    /// Remote commands or COMMITs in flight: (connection, ticket).
    commits: Vec<(usize, u64)>,
    /// Aborting: the next connection whose remote transaction is to be cleaned up
    /// (`pgfdw_xact_callback` walks them one after another).
    abort_next: usize,
    ended: bool,
    /// The last step ended at a step boundary (step mode): the turn continues.
    resuming: bool,
    /// The connections a Blocked poll waits on.
    waiting_on: Vec<usize>,
}

/// With a host that can wait in place (the simulator, native sockets): `step` waits
/// when the run is blocked, and `run_to_end` runs the whole query.
impl<H: WaitingHost> QueryRun<H> {
    /// Runs to the end; the error of a failed run.
    pub fn run_to_end(&mut self) -> ExecResult<()> {
        while !self.is_done() {
            self.step();
        }
        match &self.phase {
            Phase::Failed(e) => Err(e.clone()),
            _ => Ok(()),
        }
    }

    /// One turn of the loop; if it blocks, waits for input (the turn then counts as
    /// Waited).
    pub fn step(&mut self) -> Step {
        let step = self.poll();
        if step != Step::Blocked {
            return step;
        }
        let conns = std::mem::take(&mut self.waiting_on);
        match self.host.wait(&mut self.es, &conns) {
            Ok(()) => Step::Waited,
            Err(e) => {
                self.wait_failed(e);
                if self.is_done() {
                    Step::Failed
                } else {
                    Step::Waited
                }
            }
        }
    }
}

impl<H: Host> QueryRun<H> {
    pub fn new(es: EState, root: PlanState, host: H, columns: Vec<Column>) -> QueryRun<H> {
        let started_at = es.now();
        QueryRun {
            es,
            root,
            host,
            columns,
            phase: Phase::Starting,
            rows: Vec::new(),
            keep_rows: true,
            row_count: 0,
            started_at,
            finished_at: None,
            execution_end: None,
            executing_at: None,
            ending_at: None,
            commits: Vec::new(),
            abort_next: 0,
            ended: false,
            resuming: false,
            waiting_on: Vec::new(),
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Finished | Phase::Failed(_))
    }

    /// One turn of the loop, without waiting: Blocked means the caller must wait for
    /// input on `waiting_on()` (and hand it to the host) before polling again.
    pub fn poll(&mut self) -> Step {
        self.waiting_on.clear();
        let r = match self.phase {
            Phase::Starting => self.step_remote_commands(),
            Phase::Executing => self.step_execute(),
            Phase::Ending => self.step_remote_commands(),
            Phase::Committing => self.step_commit(),
            Phase::Aborting(_) => return self.step_abort(),
            Phase::Finished => return Step::Finished,
            Phase::Failed(_) => return Step::Failed,
        };
        match r {
            Ok(s) => s,
            Err(e) => {
                self.abort(e);
                Step::Failed
            }
        }
    }

    /// The connections a Blocked poll waits on.
    pub fn waiting_on(&self) -> &[usize] {
        &self.waiting_on
    }

    /// Asks the caller to wait on `conns`.
    fn block_on(&mut self, conns: Vec<usize>) -> ExecResult<Step> {
        if conns.is_empty() {
            return Err(ExecError::Internal("the executor waits on an empty set of connections".into()));
        }
        let list = conns.clone();
        self.es.record(|| TraceKind::Wait { conns: list });
        self.waiting_on = conns;
        Ok(Step::Blocked)
    }

    /// The wait failed (a host that cannot deliver): the run fails, or, while it was
    /// already aborting, ends with the first error.
    pub fn wait_failed(&mut self, e: ExecError) {
        match std::mem::replace(&mut self.phase, Phase::Finished) {
            Phase::Aborting(first) => self.fail(first),
            other => {
                self.phase = other;
                self.abort(e);
                if let Phase::Aborting(first) = std::mem::replace(&mut self.phase, Phase::Finished) {
                    self.fail(first); // cannot drain through a host that cannot wait
                }
            }
        }
    }

    fn step_execute(&mut self) -> ExecResult<Step> {
        if !self.commits.is_empty() || !self.es.remote_commands.is_empty() {
            return self.step_rescan_statements();
        }
        if self.es.explain_only {
            // EXPLAIN without ANALYZE: ExecutorRun is not called; the transaction
            // ends, committing what planning opened (`pgfdw_xact_callback`).
            self.end_nodes();
            self.ending_at = Some(self.es.now());
            self.phase = Phase::Ending;
            return Ok(Step::Committed);
        }
        if self.resuming {
            self.es.event_loop.continue_turn();
        } else {
            self.es.event_loop.begin_turn();
        }
        self.resuming = false;
        self.es.blocked_on = None;
        self.es.wake_also.clear();
        // The main plan's end, then ExecPostprocessPlan: the data-modifying CTEs run
        // to their ends (`node_ctescan`).
        let status = match self.es.ctes.main_done {
            true => crate::executor::node_ctescan::exec_postprocess_plan(&mut self.es)?,
            false => match exec_proc_node(&mut self.root, &mut self.es)? {
                ExecStatus::Done => crate::executor::node_ctescan::exec_postprocess_plan(&mut self.es)?,
                other => other,
            },
        };
        match status {
            ExecStatus::Row => {
                self.row_count += 1;
                if self.keep_rows {
                    self.rows.push(self.root.node.slot().to_vec());
                }
                let n = self.row_count;
                self.es.record(|| TraceKind::Row { n });
                self.host.pump(&mut self.es)?;
                Ok(Step::Row)
            }
            ExecStatus::Wait if self.es.yielded => {
                // A step boundary, not a wait. The host is not pumped here: delivering
                // input earlier than a run without steps would change the run. What was
                // written goes out now (on real servers; the simulator stamps writes).
                self.es.yielded = false;
                self.host.flush_writes(&mut self.es)?;
                self.resuming = true;
                Ok(Step::Event)
            }
            ExecStatus::Wait if !self.es.remote_commands.is_empty() => self.step_rescan_statements(),
            ExecStatus::Wait => {
                // A blocking call waits on its connection only; otherwise the turn's
                // wait set. Input that arrived during local work is ready now: poll
                // again first.
                let set = match self.es.blocked_on {
                    Some(conn) => std::iter::once(conn).chain(self.es.wake_also.iter().copied()).collect(),
                    None => self.es.event_loop.wait_set().to_vec(),
                };
                if self.host.pump(&mut self.es)? > 0 {
                    return Ok(Step::Waited);
                }
                self.block_on(set)
            }
            ExecStatus::Done => {
                self.end_nodes();
                self.ending_at = Some(self.es.now());
                self.phase = Phase::Ending;
                Ok(Step::Committed)
            }
        }
    }

    /// Executing: statements a rescan queued (postgresReScanForeignScan's CLOSE),
    /// one after another, each waited for, before the plan is called again.
    fn step_rescan_statements(&mut self) -> ExecResult<Step> {
        self.host.pump(&mut self.es)?;
        self.take_finished()?;
        if self.commits.is_empty() {
            if let Some(cmd) = self.es.remote_commands.pop_front() {
                let ticket = match cmd.statement {
                    None => self.es.connect(cmd.conn),
                    Some((proto, sql, role)) => self.es.send(cmd.conn, proto, &sql, cmd.owner, role),
                };
                self.commits.push((cmd.conn, ticket));
                self.host.pump(&mut self.es)?;
                self.take_finished()?;
            }
        }
        if self.commits.is_empty() {
            return Ok(Step::Waited);
        }
        self.wait_for_commits()
    }

    fn end_nodes(&mut self) {
        if !self.ended {
            self.ended = true;
            exec_end_node(&mut self.root, &mut self.es);
            crate::executor::node_subplan::end_init_plans(&mut self.es);
            crate::executor::node_ctescan::end_ctes(&mut self.es);
        }
    }

    /// Starting and Ending: the queued remote statements, one after another, each
    /// waited for (the CLOSEs all at once with `parallel_close`, not a PostgreSQL
    /// option: `parallel_commit` leaves them serial, as PostgreSQL 15 does).
    fn step_remote_commands(&mut self) -> ExecResult<Step> {
        self.host.pump(&mut self.es)?;
        self.take_finished()?;
        if self.commits.is_empty() {
            let parallel = self.phase == Phase::Ending && self.es.behaviour.parallel_close;
            while let Some(cmd) = self.es.remote_commands.pop_front() {
                let ticket = match cmd.statement {
                    None => self.es.connect(cmd.conn),
                    Some((proto, sql, role)) => self.es.send(cmd.conn, proto, &sql, cmd.owner, role),
                };
                self.commits.push((cmd.conn, ticket));
                if !parallel {
                    break;
                }
            }
            self.host.pump(&mut self.es)?;
            self.take_finished()?;
        }
        if self.commits.is_empty() && self.es.remote_commands.is_empty() {
            if self.phase == Phase::Starting {
                self.executing_at = Some(self.es.now());
                self.phase = Phase::Executing;
            } else {
                self.execution_end = Some(self.es.now());
                self.phase = Phase::Committing;
            }
            return Ok(Step::Committed);
        }
        if self.commits.is_empty() {
            return Ok(Step::Waited); // that answer was quick: the next statement goes out now
        }
        self.wait_for_commits()
    }

    /// Collects the answers to the statements in `commits`; an error fails the query.
    fn take_finished(&mut self) -> ExecResult<()> {
        let mut still = Vec::new();
        for (k, t) in std::mem::take(&mut self.commits) {
            match self.es.conns[k].take_result(t) {
                Some(r) => {
                    if let Some(e) = r.error {
                        return Err(ExecError::Remote(e));
                    }
                }
                None => {
                    // An answer nobody read failed (a discarded FETCH): that fails the query.
                    if let Some(e) = &self.es.conns[k].first_error {
                        return Err(ExecError::Remote(e.clone()));
                    }
                    still.push((k, t))
                }
            }
        }
        self.commits = still;
        Ok(())
    }

    fn wait_for_commits(&mut self) -> ExecResult<Step> {
        let mut conns: Vec<usize> = self.commits.iter().map(|&(k, _)| k).collect();
        conns.sort_unstable();
        conns.dedup();
        self.block_on(conns)
    }

    /// `pgfdw_xact_callback` at commit: COMMIT TRANSACTION on each connection with an
    /// open transaction, one after another (all at once with `parallel_commit`).
    fn step_commit(&mut self) -> ExecResult<Step> {
        if let Some(e) = self.es.conns.iter().find_map(|c| c.first_error.clone()) {
            return Err(ExecError::Remote(e));
        }
        self.host.pump(&mut self.es)?;
        self.take_finished()?;
        if self.commits.is_empty() {
            let parallel = self.es.behaviour.parallel_commit;
            for k in 0..self.es.conns.len() {
                let now = self.es.now();
                if let Some(t) = self.es.conns[k].commit(now) {
                    self.es.record_written(k);
                    self.commits.push((k, t));
                    if !parallel {
                        break;
                    }
                }
            }
            self.host.pump(&mut self.es)?;
            self.take_finished()?;
        }
        if !self.commits.is_empty() {
            return self.wait_for_commits();
        }
        if self.es.conns.iter().any(|c| c.xact_open) {
            return Ok(Step::Waited); // that COMMIT was quick: the next one goes out now
        }
        let busy: Vec<usize> = (0..self.es.conns.len()).filter(|&k| self.es.conns[k].is_busy()).collect();
        if !busy.is_empty() {
            return self.block_on(busy);
        }
        self.phase = Phase::Finished;
        self.es.event_loop.clear();
        self.finished_at = Some(self.es.now());
        Ok(Step::Finished)
    }

    /// Cancels everything outstanding after an error; the connections are cleaned up
    /// and drain in the Aborting phase. (PostgreSQL runs no ExecEndNode after an
    /// ERROR: no CLOSE goes out; `end_nodes` here only ends the nodes' own state, and
    /// what they queued is dropped.)
    fn abort(&mut self, error: ExecError) {
        let msg = error.to_string();
        self.es.record(|| TraceKind::Error { message: msg });
        for r in 0..self.es.requests.len() {
            exec_async_cancel(&mut self.es, r);
        }
        self.end_nodes();
        self.es.event_loop.clear();
        self.es.remote_commands.clear();
        self.es.blocked_on = None;
        self.commits.clear();
        self.abort_next = 0;
        self.phase = Phase::Aborting(error);
    }

    /// Aborting, the transaction callback at abort (`pgfdw_xact_callback` →
    /// `pgfdw_abort_cleanup`): one connection after another, its query in progress
    /// cancelled and drained, ABORT TRANSACTION (and DEALLOCATE ALL) answered, before
    /// the next connection's turn, as `pgfdw_exec_cleanup_query` waits for each. Then
    /// every connection has its answers and is idle, and the run has failed with the
    /// first error.
    fn step_abort(&mut self) -> Step {
        if self.host.pump(&mut self.es).is_err() {
            return self.finish_abort();
        }
        while self.abort_next < self.es.conns.len() {
            if self.abort_next > 0 && self.es.conns[self.abort_next - 1].is_busy() {
                return match self.block_on(vec![self.abort_next - 1]) {
                    Ok(step) => step,
                    Err(_) => self.finish_abort(),
                };
            }
            let (k, now) = (self.abort_next, self.es.now());
            self.es.conns[k].abort(now);
            self.es.record_written(k);
            self.abort_next += 1;
            if self.host.pump(&mut self.es).is_err() {
                return self.finish_abort();
            }
        }
        let busy: Vec<usize> = (0..self.es.conns.len()).filter(|&k| self.es.conns[k].is_busy()).collect();
        if busy.is_empty() {
            return self.finish_abort();
        }
        match self.block_on(busy) {
            Ok(step) => step,
            Err(_) => self.finish_abort(),
        }
    }

    fn finish_abort(&mut self) -> Step {
        if let Phase::Aborting(e) = std::mem::replace(&mut self.phase, Phase::Finished) {
            self.fail(e);
        }
        Step::Failed
    }

    fn fail(&mut self, error: ExecError) {
        self.finished_at = Some(self.es.now());
        self.phase = Phase::Failed(error);
    }

    /// ExecReScan of the whole plan: outstanding requests are cancelled, pending
    /// results drained, and the query starts over (rows so far are dropped).
    pub fn rescan(&mut self) -> ExecResult<()> {
        if self.phase != Phase::Executing {
            return Err(ExecError::Internal("rescan of a query that is no longer executing".into()));
        }
        let r = crate::executor::exec_rescan(&mut self.root, &mut self.es).and_then(|_| self.host.pump(&mut self.es));
        if let Err(e) = r {
            self.abort(e.clone());
            return Err(e);
        }
        self.es.event_loop.clear();
        self.rows.clear();
        self.row_count = 0;
        Ok(())
    }

    /// Elapsed time of the query (clock of the EState).
    pub fn elapsed_ns(&self) -> u64 {
        self.finished_at.unwrap_or_else(|| self.es.now()) - self.started_at
    }

    /// Time in the phases around execution: (set-up statements before the plan runs,
    /// CLOSEs and COMMITs after it). Zero for a phase not reached.
    pub fn setup_close_commit_ns(&self) -> (u64, u64, u64) {
        let setup = self.executing_at.map_or(0, |t| t - self.started_at);
        let span = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        };
        // ExecEnd's CLOSEs, then the COMMITs at transaction end.
        let close = span(self.ending_at, self.execution_end);
        let commit = span(self.execution_end.or(self.ending_at), self.finished_at);
        (setup, close, commit)
    }

    pub fn explain(&self) -> ExplainNode {
        explain_tree(&self.root, &self.es, None)
    }

    /// EXPLAIN ANALYZE's Execution Time: from ExecutorStart through ExecutorEnd (the
    /// CLOSEs), without the remote COMMITs at transaction end.
    pub fn execution_ns(&self) -> u64 {
        self.execution_end.or(self.finished_at).unwrap_or_else(|| self.es.now()) - self.started_at
    }

    pub fn explain_text(&self) -> String {
        explain_text(&self.explain(), self.execution_ns())
    }

    pub fn explain_json(&self) -> serde_json::Value {
        explain_json(&self.explain(), self.execution_ns())
    }

    /// EXPLAIN with chosen options (VERBOSE, our counters), planning time 0.
    pub fn explain_text_with(&self, opts: &crate::instrument::ExplainOptions) -> String {
        crate::instrument::explain_text_with(&self.explain(), opts, 0, self.execution_ns())
    }

    pub fn explain_json_with(&self, opts: &crate::instrument::ExplainOptions) -> serde_json::Value {
        crate::instrument::explain_json_with(&self.explain(), opts, 0, self.execution_ns())
    }

    /// What is still outstanding: requests not finished, busy connections, queued
    /// waits, unsent bytes. Empty after a finished or failed run.
    pub fn leftovers(&self) -> Vec<String> {
        let mut v = Vec::new();
        for r in &self.es.requests {
            if matches!(r.state, AsyncState::Waiting | AsyncState::CallbackPending) {
                v.push(format!("request {} is {:?}", r.id, r.state));
            }
        }
        for c in &self.es.conns {
            if !c.is_quiescent() {
                v.push(format!("connection {} ({}) is busy", c.id, c.server));
            }
            if c.xact_open {
                v.push(format!("connection {} ({}) has an open transaction", c.id, c.server));
            }
            if self.host.in_transit(c.id) > 0 {
                v.push(format!("connection {} ({}) has responses in transit", c.id, c.server));
            }
        }
        if !self.es.remote_commands.is_empty() && self.is_done() {
            v.push("remote statements were never sent".into());
        }
        if !self.es.event_loop.is_empty() && self.is_done() {
            v.push("the event loop still has waiting requests or connections".into());
        }
        v
    }
}
