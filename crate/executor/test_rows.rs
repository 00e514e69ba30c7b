//! A child node for the executor's unit tests: fixed rows, counted by the dispatcher
//! like any node's (so a test reads how far a join read each side), optionally with a
//! Wait before each (so a test sees its node resume); and the empty EXPLAIN node a
//! test fills with a node's `explain`.

use super::{ExecNode, ExecResult, ExecStatus, PlanState};
use crate::executor::estate::EState;
use crate::instrument::ExplainNode;
use crate::types::Datum;

/// Returns `rows` in order; a rescan starts them over. With `wait`, each call that
/// would return a row (or the end) first returns Wait once.
#[derive(Clone)]
pub(super) struct Rows {
    rows: Vec<Vec<Datum>>,
    next: usize,
    wait: bool,
    waited: bool,
    slot: Vec<Datum>,
}

impl ExecNode for Rows {
    fn exec_next(&mut self, _es: &mut EState) -> ExecResult<ExecStatus> {
        if self.wait && !self.waited {
            self.waited = true;
            return Ok(ExecStatus::Wait);
        }
        self.waited = false;
        let Some(r) = self.rows.get(self.next) else { return Ok(ExecStatus::Done) };
        self.slot = r.clone();
        self.next += 1;
        Ok(ExecStatus::Row)
    }
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        self.next = 0;
        Ok(())
    }
    fn exec_end(&mut self, _es: &mut EState) {}
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn explain(&self, _e: &mut ExplainNode) {}
}

/// Plan node `id` returning one-column `rows` (None: NULL).
pub(super) fn child(id: usize, rows: &[Option<i64>]) -> PlanState {
    let rows = rows.iter().map(|v| vec![v.map_or(Datum::Null, Datum::Int)]).collect();
    PlanState { id, node: Box::new(Rows { rows, next: 0, wait: false, waited: false, slot: vec![] }) }
}

/// Plan node `id` returning `rows`, a Wait before each (and before the end).
pub(super) fn waiting_child(id: usize, rows: Vec<Vec<Datum>>) -> PlanState {
    PlanState { id, node: Box::new(Rows { rows, next: 0, wait: true, waited: false, slot: vec![] }) }
}

/// An EXPLAIN node with nothing in it yet, for a test to pass to a node's `explain`.
pub(super) fn empty_explain() -> ExplainNode {
    ExplainNode {
        id: 0,
        node_type: String::new(),
        async_capable: false,
        strategy: None,
        relation: None,
        parent_relationship: None,
        details: vec![],
        instr: Default::default(),
        timed: false,
        children: vec![],
    }
}
