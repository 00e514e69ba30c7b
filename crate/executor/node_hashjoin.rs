//! HashJoin (nodeHashjoin.c, with nodeHash.c's table), inner equi-join on one key:
//! builds a hash table on the inner child, then probes it with each outer row. Both
//! phases resume across Waits.
//!
//! Invariants:
//! - The inner child is read to its end before the outer child is first called, so an
//!   async Append on the outer side starts its requests only after the build.
//! - A Wait in either phase returns with `built`, the table and `matches` intact: no
//!   inner row is hashed twice, no match is lost or returned twice.
//! - The outer child is not called again while matches of its current row remain:
//!   each output row is copied from the outer child's slot, which must still hold it.
//! - A NULL key never matches (SQL's `=`): NULL inner keys are not stored, so a NULL
//!   outer key finds nothing.
//! - An output row is the outer row's columns, then the inner row's.
//! - Rescan drops the table and rescans both children.
//!
//! Where it departs from PostgreSQL:
//! - PostgreSQL builds the table in a separate Hash node (`MultiExecHash`); here the
//!   join owns it, and EXPLAIN prints the Hash node above the inner child
//!   (`instrument::explain`).
//! - `ExecHashJoin` may fetch the first outer row before building (when the outer's
//!   startup cost is below the Hash's total cost) and then skips the build if the outer
//!   is empty, and it skips the outer when the inner is empty; here the inner is always
//!   built first and the outer always read.
//! - One batch in memory: no `work_mem` batching, skew buckets or Parallel Hash; inner
//!   joins on a single key only.
//! - `ExecReScanHashJoin` reuses a single-batch table when the inner side's
//!   parameters did not change; here a rescan rebuilds it.

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::{exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::Expr;
use crate::types::Datum;
use std::collections::HashMap;

#[derive(Clone)]
pub struct HashJoinState {
    /// [outer, inner]
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    outer_key: Expr,
    inner_key: Expr,
    inner_width: usize,
    outer_width: usize,
    /// key -> flat inner rows
    table: HashMap<Datum, Vec<Datum>>,
    built: bool,
    /// Matches of the current outer row still to return.
    matches: Option<(Datum, usize)>,
    slot: Vec<Datum>,
}

impl HashJoinState {
    pub fn init(outer: PlanState, inner: PlanState, outer_key: Expr, inner_key: Expr, widths: (usize, usize)) -> Self {
        HashJoinState {
            children: vec![outer, inner],
            inputs: AsyncInputs::default(),
            outer_key,
            inner_key,
            inner_width: widths.1,
            outer_width: widths.0,
            table: HashMap::new(),
            built: false,
            matches: None,
            slot: Vec::new(),
        }
    }

    /// Next match for the current outer row, if any.
    fn next_match(&mut self) -> bool {
        let Some((key, pos)) = &mut self.matches else {
            return false;
        };
        let rows = &self.table[key];
        if *pos >= rows.len() {
            self.matches = None;
            return false;
        }
        let w = self.inner_width;
        self.slot.clear();
        self.slot.extend_from_slice(self.children[0].node.slot());
        self.slot.extend_from_slice(&rows[*pos..*pos + w]);
        *pos += w;
        true
    }
}

impl Through for HashJoinState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for HashJoinState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        while !self.built {
            match self.inputs.next(&mut self.children, 1, es)? {
                ExecStatus::Row => {
                    es.clock.charge(es.cost.hashjoin_row_ns);
                    let row = self.children[1].node.slot();
                    let k = self.inner_key.eval(row);
                    if !k.is_null() {
                        self.table.entry(k).or_default().extend_from_slice(row);
                    }
                }
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => self.built = true,
            }
        }
        loop {
            if self.next_match() {
                return Ok(ExecStatus::Row);
            }
            // exercise:hashjoin-probe begin
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => {}
                other => return Ok(other),
            }
            // exercise:hashjoin-probe end
            es.clock.charge(es.cost.hashjoin_row_ns);
            let k = self.outer_key.eval(self.children[0].node.slot());
            if self.table.contains_key(&k) {
                self.matches = Some((k, 0));
            }
        }
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.inputs.cancel_all(es);
        self.table.clear();
        self.built = false;
        self.matches = None;
        exec_rescan(&mut self.children[0], es)?;
        exec_rescan(&mut self.children[1], es)
    }
    fn exec_end(&mut self, es: &mut EState) {
        self.inputs.cancel_all(es);
        for c in self.children.iter_mut() {
            super::exec_end_node(c, es);
        }
    }
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn children(&self) -> &[PlanState] {
        &self.children
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Hash Join".into();
        // `$N` over the outer's outputs then the inner's (EXPLAIN names them).
        let (outer, inner) = super::join_input_refs(self.outer_width, self.inner_width);
        e.details.push((
            "Hash Cond".into(),
            format!("({} = {})", self.outer_key.to_sql(&outer), self.inner_key.to_sql(&inner)),
        ));
    }
}
