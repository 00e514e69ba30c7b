//! Limit with OFFSET (nodeLimit.c): skips `offset` rows, returns at most `count`, and
//! stops pulling from its child once the count is reached.
//!
//! Invariants:
//! - After `offset + count` rows the child is not called again (as nodeLimit.c's
//!   `LIMIT_WINDOWEND`), so the scans below start no new request; what is already in
//!   flight is left to ExecEnd.
//! - `LIMIT 0` without OFFSET never calls the child.
//! - A Wait from the child passes up with `position` unchanged: no row is skipped or
//!   counted twice when the call is repeated.
//! - Rescan resets the position and rescans the child.
//!
//! Where it departs from PostgreSQL (nodeLimit.c, `ExecLimit`, `recompute_limits`):
//! - With a count of 0 PostgreSQL returns nothing without running the child at all
//!   (`LIMIT_EMPTY`), OFFSET or not; here `LIMIT 0 OFFSET n` still pulls `n` rows.
//! - PostgreSQL passes `offset + count` down to a Sort child as a bound (top-N
//!   heapsort, `ExecSetTupleBound`); here only an Incremental Sort takes it (through
//!   a projection), and the Sort below sorts everything.
//! - OFFSET and LIMIT are constants fixed at init (PostgreSQL evaluates expressions at
//!   the first call and at rescan); forward scans only; no `WITH TIES`. The row is
//!   copied into this node's slot, where PostgreSQL returns the child's.

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::{copy_row, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::types::Datum;

#[derive(Clone)]
pub struct LimitState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    offset: u64,
    count: Option<u64>,
    position: u64,
    slot: Vec<Datum>,
    /// The bound was passed down (`recompute_limits` at the first call).
    bounded: bool,
}

impl LimitState {
    pub fn init(child: PlanState, offset: u64, count: Option<u64>) -> Self {
        LimitState {
            children: vec![child],
            inputs: AsyncInputs::default(),
            offset,
            count,
            position: 0,
            slot: Vec::new(),
            bounded: false,
        }
    }
}

impl Through for LimitState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for LimitState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if !self.bounded {
            // ExecSetTupleBound: offset + count rows needed (all without a count).
            self.bounded = true;
            let needed = self.count.map(|c| c + self.offset);
            self.children[0].node.set_tuple_bound(needed);
        }
        loop {
            if let Some(c) = self.count {
                if self.position >= self.offset + c {
                    return Ok(ExecStatus::Done);
                }
            }
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => {}
                other => return Ok(other),
            }
            es.clock.charge(es.cost.passthrough_row_ns);
            self.position += 1;
            if self.position > self.offset {
                copy_row(&mut self.slot, self.children[0].node.slot());
                return Ok(ExecStatus::Row);
            }
        }
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.inputs.cancel_all(es);
        self.position = 0;
        self.bounded = false;
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
        e.node_type = "Limit".into();
    }
}
