//! Materialize (nodeMaterial.c): keeps every row its child returns, so that a rescan
//! (a Nested Loop's inner side, once per outer row) replays them instead of running
//! the child again — for foreign scans, instead of declaring their cursors again.
//!
//! Invariants:
//! - the child is read at most once, row after row, only when the rows kept so far
//!   are used up; a rescan rewinds to the first kept row and never rescans the child
//!   (PostgreSQL's `EXEC_FLAG_REWIND` case: the child has no parameters);
//! - a Wait passes up with the kept rows and the position intact.
//!
//! With `async_through_nodes` it reads its child through `AsyncInputs::next`, like
//! Result (`async_through.rs`).
//!
//! Where it departs from PostgreSQL: the rows are kept in memory (no `work_mem` spill
//! of the tuplestore to disk); no mark/restore (no Merge Join here).

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::{copy_row, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::types::Datum;

#[derive(Clone)]
pub struct MaterialState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    /// Every row read from the child so far (the tuplestore).
    kept: Vec<Vec<Datum>>,
    /// The next kept row to return.
    position: usize,
    /// The child returned its end.
    eof: bool,
    slot: Vec<Datum>,
}

impl MaterialState {
    pub fn init(child: PlanState) -> Self {
        MaterialState {
            children: vec![child],
            inputs: AsyncInputs::default(),
            kept: Vec::new(),
            position: 0,
            eof: false,
            slot: Vec::new(),
        }
    }
}

impl Through for MaterialState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for MaterialState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }

    /// ExecMaterial.
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.position < self.kept.len() {
            copy_row(&mut self.slot, &self.kept[self.position]);
            self.position += 1;
            return Ok(ExecStatus::Row);
        }
        if self.eof {
            return Ok(ExecStatus::Done);
        }
        match self.inputs.next(&mut self.children, 0, es)? {
            ExecStatus::Row => {
                let row = self.children[0].node.slot().to_vec();
                copy_row(&mut self.slot, &row);
                self.kept.push(row);
                self.position += 1;
                Ok(ExecStatus::Row)
            }
            ExecStatus::Done => {
                self.eof = true;
                Ok(ExecStatus::Done)
            }
            ExecStatus::Wait => Ok(ExecStatus::Wait),
        }
    }

    /// ExecReScanMaterial: rewinds; the child goes on from where it was when asked.
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        self.position = 0;
        Ok(())
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
        e.node_type = "Materialize".into();
    }
}
