//! Unique (nodeUnique.c): over input sorted on its first `ncols` columns, returns the
//! first row of every run of rows equal on those columns. A UNION without ALL whose
//! duplicates PostgreSQL removes by sorting (`make_union_unique`, when hashing costs
//! more or `enable_hashagg` is off) is `Unique` over `Sort` over the `Append`.
//!
//! Protocol: each call pulls rows from the child until one differs from the last row
//! returned (or the child ends); a Wait from the child passes straight up, and the call
//! after it resumes the same loop, since the last row returned is kept in the node.
//!
//! Invariants:
//! - Two rows are equal when every compared column is "not distinct": NULL equals NULL,
//!   as PostgreSQL's set operations treat NULLs (`execTuplesMatch`);
//! - only adjacent rows are compared: the input must be sorted on the columns, which
//!   the planner guarantees by putting a Sort on every column below;
//! - a rescan forgets the last row and rescans the child.

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::{copy_row, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::types::Datum;

#[derive(Clone)]
pub struct UniqueState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    ncols: usize,
    /// The last row returned (PostgreSQL keeps it in the node's result slot).
    slot: Vec<Datum>,
    have_prev: bool,
}

impl UniqueState {
    pub fn init(child: PlanState, ncols: usize) -> Self {
        UniqueState { children: vec![child], inputs: AsyncInputs::default(), ncols, slot: Vec::new(), have_prev: false }
    }
}

impl Through for UniqueState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

/// Are two rows equal on their first `ncols` columns (NULLs equal)?
pub(crate) fn rows_match(a: &[Datum], b: &[Datum], ncols: usize) -> bool {
    a.iter().zip(b).take(ncols).all(|(x, y)| x == y)
}

impl ExecNode for UniqueState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }

    /// ExecUnique.
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => {}
                other => return Ok(other),
            }
            es.clock.charge(es.cost.result_row_ns);
            let row = self.children[0].node.slot();
            if self.have_prev && rows_match(row, &self.slot, self.ncols) {
                continue;
            }
            copy_row(&mut self.slot, row);
            self.have_prev = true;
            return Ok(ExecStatus::Row);
        }
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.have_prev = false;
        self.inputs.cancel_all(es);
        exec_rescan(&mut self.children[0], es)
    }
    fn exec_end(&mut self, es: &mut EState) {
        self.inputs.cancel_all(es);
        super::exec_end_node(&mut self.children[0], es);
    }
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn children(&self) -> &[PlanState] {
        &self.children
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Unique".into();
    }
}
