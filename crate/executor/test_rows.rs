//! A child node for the join nodes' unit tests: fixed one-column rows, counted by
//! the dispatcher like any node's (so a test reads how far a join read each side).

use super::{ExecNode, ExecResult, ExecStatus, PlanState};
use crate::executor::estate::EState;
use crate::instrument::ExplainNode;
use crate::types::Datum;

/// Returns `rows` in order (None: NULL); a rescan starts them over.
#[derive(Clone)]
pub(super) struct Rows {
    rows: Vec<Option<i64>>,
    next: usize,
    slot: Vec<Datum>,
}

impl ExecNode for Rows {
    fn exec_next(&mut self, _es: &mut EState) -> ExecResult<ExecStatus> {
        let Some(v) = self.rows.get(self.next) else { return Ok(ExecStatus::Done) };
        self.slot = vec![v.map_or(Datum::Null, Datum::Int)];
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

/// Plan node `id` returning `rows`.
pub(super) fn child(id: usize, rows: &[Option<i64>]) -> PlanState {
    PlanState { id, node: Box::new(Rows { rows: rows.to_vec(), next: 0, slot: vec![] }) }
}
