//! Running one query: the host loop around the executor (PostgreSQL's ExecutorRun plus
//! the remote transaction's commit at ExecutorEnd).
//!
//! Each `step` is one turn: poll the root once; on a row, collect it; on Wait, let the
//! host wait on the connections registered during the turn. After end of data, the
//! remote transactions are committed — one after another in sync mode (as
//! postgres_fdw's transaction callback does), all at once in async mode. On an error,
//! every outstanding request is cancelled, a cancel is sent for every query in flight,
//! every open transaction is rolled back, and the connections are drained: a finished
//! or failed run leaves nothing outstanding (`leftovers` is empty).

use crate::estate::{EState, ExecError, ExecResult};
use crate::exec_async::{exec_async_cancel, AsyncState};
use crate::executor::{exec_end_node, exec_proc_node, explain_tree, ExecStatus, PlanState};
use crate::host::Host;
use crate::instrument::{explain_json, explain_text, ExplainNode};
use crate::remote::QueryRole;
use crate::sim::SimHost;
use crate::trace::TraceKind;
use crate::types::{Column, Datum};

#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    Executing,
    /// Committing remote transactions; the connections still to commit.
    Committing,
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
    Committed,
    Finished,
    Failed,
}

/// A query being run by a host: `SimHost` (simulated shards, the default) or a host
/// that talks to real servers (`host_tcp::TcpHost`, natively).
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
    /// COMMITs in flight: (connection, ticket).
    commits: Vec<(usize, u64)>,
    ended: bool,
    /// The last step ended at a step boundary (step mode): the turn continues.
    resuming: bool,
}

impl<H: Host> QueryRun<H> {
    pub fn new(es: EState, root: PlanState, host: H, columns: Vec<Column>) -> QueryRun<H> {
        let started_at = es.now();
        QueryRun {
            es,
            root,
            host,
            columns,
            phase: Phase::Executing,
            rows: Vec::new(),
            keep_rows: true,
            row_count: 0,
            started_at,
            finished_at: None,
            commits: Vec::new(),
            ended: false,
            resuming: false,
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Finished | Phase::Failed(_))
    }

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

    /// One turn of the loop.
    pub fn step(&mut self) -> Step {
        let r = match self.phase {
            Phase::Executing => self.step_execute(),
            Phase::Committing => self.step_commit(),
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

    fn step_execute(&mut self) -> ExecResult<Step> {
        if self.resuming {
            self.es.event_loop.continue_turn();
        } else {
            self.es.event_loop.begin_turn();
        }
        self.resuming = false;
        match exec_proc_node(&mut self.root, &mut self.es)? {
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
                // input earlier than a run without steps would change the run.
                self.es.yielded = false;
                self.resuming = true;
                Ok(Step::Event)
            }
            ExecStatus::Wait => {
                // Input that arrived during local work is ready now: poll again first.
                if self.host.pump(&mut self.es)? > 0 {
                    return Ok(Step::Waited);
                }
                let set = self.es.event_loop.wait_set().to_vec();
                self.host.wait(&mut self.es, &set)?;
                Ok(Step::Waited)
            }
            ExecStatus::Done => {
                self.end_nodes();
                self.phase = Phase::Committing;
                Ok(Step::Committed)
            }
        }
    }

    fn end_nodes(&mut self) {
        if !self.ended {
            self.ended = true;
            exec_end_node(&mut self.root, &mut self.es);
        }
    }

    /// Sends COMMIT (sync: to one connection at a time; async: to all), then waits.
    fn step_commit(&mut self) -> ExecResult<Step> {
        // An answer nobody read may have failed (a discarded FETCH): that fails the query.
        if let Some(e) = self.es.conns.iter().find_map(|c| c.first_error.clone()) {
            return Err(ExecError::Remote(e));
        }
        let open: Vec<usize> = (0..self.es.conns.len()).filter(|&k| self.es.conns[k].xact_open).collect();
        let concurrent = self.es.async_enabled;
        for k in open {
            if !concurrent && !self.commits.is_empty() {
                break;
            }
            self.es.conns[k].xact_open = false;
            let t = self.es.send_query(k, "COMMIT", None, QueryRole::EndTransaction);
            self.commits.push((k, t));
        }
        self.host.pump(&mut self.es)?;
        // Take finished COMMITs; a failed COMMIT fails the query.
        let mut still = Vec::new();
        for (k, t) in std::mem::take(&mut self.commits) {
            match self.es.conns[k].take_result(t) {
                Some(r) => {
                    if let Some(e) = r.error {
                        return Err(ExecError::Remote(e));
                    }
                }
                None => still.push((k, t)),
            }
        }
        self.commits = still;
        let busy: Vec<usize> = (0..self.es.conns.len()).filter(|&k| self.es.conns[k].is_busy()).collect();
        if self.commits.is_empty() && busy.is_empty() && !self.es.conns.iter().any(|c| c.xact_open) {
            self.phase = Phase::Finished;
            self.es.event_loop.clear();
            self.finished_at = Some(self.es.now());
            return Ok(Step::Finished);
        }
        if !busy.is_empty() {
            self.host.wait(&mut self.es, &busy)?;
        }
        Ok(Step::Waited)
    }

    /// Cancels everything outstanding after an error and drains the connections.
    fn abort(&mut self, error: ExecError) {
        let msg = error.to_string();
        self.es.record(|| TraceKind::Error { message: msg });
        for r in 0..self.es.requests.len() {
            exec_async_cancel(&mut self.es, r);
        }
        self.end_nodes();
        self.es.event_loop.clear();
        self.commits.clear();
        for k in 0..self.es.conns.len() {
            let c = &mut self.es.conns[k];
            if c.inflight_count() > 0 {
                c.cancel_requested = true;
            }
            c.discard_all();
            c.first_error = None;
            if c.xact_open {
                c.xact_open = false;
                self.es.send_query(k, "ROLLBACK", None, QueryRole::Abandon);
            }
        }
        // Drain: every connection gets its answers (errors or not) and goes idle. Each
        // wait delivers an answer or fails, so this ends; the bound only guards against
        // a host that breaks that promise.
        for _ in 0..100_000 {
            if self.host.pump(&mut self.es).is_err() {
                break;
            }
            let busy: Vec<usize> = (0..self.es.conns.len()).filter(|&k| self.es.conns[k].is_busy()).collect();
            if busy.is_empty() || self.host.wait(&mut self.es, &busy).is_err() {
                break;
            }
        }
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

    pub fn explain(&self) -> ExplainNode {
        explain_tree(&self.root, &self.es, None)
    }

    pub fn explain_text(&self) -> String {
        explain_text(&self.explain(), self.elapsed_ns())
    }

    pub fn explain_json(&self) -> serde_json::Value {
        explain_json(&self.explain(), self.elapsed_ns())
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
        if !self.es.event_loop.is_empty() && self.is_done() {
            v.push("the event loop still has waiting requests or connections".into());
        }
        v
    }
}
