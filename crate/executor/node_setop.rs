//! SetOp (nodeSetOp.c): INTERSECT, INTERSECT ALL, EXCEPT and EXCEPT ALL over one
//! input, the Append of the two branches, in which every row carries the flag of the
//! branch it came from (column `ncols`: 0 for the query's left branch, 1 for its
//! right; the planner may put the right one first for INTERSECT, and then
//! `first_flag` is 1). For each group of rows equal on the other columns it counts the
//! rows of the first input (`numLeft`) and of the second (`numRight`) and returns the
//! group's row
//!
//! | command | times |
//! |---|---|
//! | INTERSECT | 1 if `numLeft > 0 && numRight > 0` |
//! | INTERSECT ALL | `min(numLeft, numRight)` |
//! | EXCEPT | 1 if `numLeft > 0 && numRight == 0` |
//! | EXCEPT ALL | `max(numLeft - numRight, 0)` |
//!
//! (`set_output_count`). Two strategies, as PostgreSQL's:
//! - **Sorted** (`SetOp`): the input is sorted on every column (not the flag), so a group
//!   is a run of adjacent rows; the node reads one run, then returns its row the
//!   computed number of times (`setop_retrieve_direct`);
//! - **Hashed** (`HashSetOp`): the node first reads its whole input into a table keyed
//!   by the columns (only rows of the first input start a group: a row of the second
//!   that matches none can never be returned), then walks the table
//!   (`setop_fill_hash_table`, `setop_retrieve_hash_table`).
//!
//! Protocol: a Wait from the child passes straight up; every piece of progress (the
//! table being filled, the run being read, the copies left to return) lives in the
//! node, so the next call resumes where this one stopped.
//!
//! Invariants: the output is the columns without the flag; NULLs are equal to each
//! other (set operations compare "not distinct"); a rescan drops the table or run
//! and rescans the child.
//!
//! Where it departs from PostgreSQL: the hash table is walked in the order groups were
//! first seen (PostgreSQL's is its hash order: SQL leaves the order open); it never
//! spills to disk.

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::node_unique::rows_match;
use super::{copy_row, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{SetOpCmd, SetOpStrategy};
use crate::types::Datum;
use std::collections::HashMap;

/// One group's counts (PostgreSQL's `SetOpStatePerGroupData`).
#[derive(Clone, Copy, Debug, Default)]
struct PerGroup {
    num_left: u64,
    num_right: u64,
}

#[derive(Clone)]
pub struct SetOpState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    cmd: SetOpCmd,
    strategy: SetOpStrategy,
    ncols: usize,
    first_flag: i64,
    /// Hashed: the groups in the order first seen, and the index of each key.
    groups: Vec<(Vec<Datum>, PerGroup)>,
    index: HashMap<Vec<Datum>, usize>,
    table_filled: bool,
    /// Hashed: the next group to look at.
    next_group: usize,
    /// Sorted: the first row of the next run, read from the child already.
    pending: Option<Vec<Datum>>,
    /// Sorted: the run being read (its row and its counts so far).
    run: Option<(Vec<Datum>, PerGroup)>,
    child_done: bool,
    /// Copies of the current row still to return.
    num_output: u64,
    slot: Vec<Datum>,
}

impl SetOpState {
    pub fn init(child: PlanState, cmd: SetOpCmd, strategy: SetOpStrategy, ncols: usize, first_flag: i64) -> Self {
        SetOpState {
            children: vec![child],
            inputs: AsyncInputs::default(),
            cmd,
            strategy,
            ncols,
            first_flag,
            groups: Vec::new(),
            index: HashMap::new(),
            table_filled: false,
            next_group: 0,
            pending: None,
            run: None,
            child_done: false,
            num_output: 0,
            slot: Vec::new(),
        }
    }

    /// `set_output_count`: how many times a group's row is returned.
    fn output_count(&self, g: PerGroup) -> u64 {
        match self.cmd {
            SetOpCmd::Intersect => u64::from(g.num_left > 0 && g.num_right > 0),
            SetOpCmd::IntersectAll => g.num_left.min(g.num_right),
            SetOpCmd::Except => u64::from(g.num_left > 0 && g.num_right == 0),
            SetOpCmd::ExceptAll => g.num_left.saturating_sub(g.num_right),
        }
    }

    /// Is this input row from the first input (its flag is `first_flag`)?
    fn from_first(&self, row: &[Datum]) -> bool {
        matches!(row.get(self.ncols), Some(Datum::Int(f)) if *f == self.first_flag)
    }

    fn count(&self, g: &mut PerGroup, row: &[Datum]) {
        if self.from_first(row) {
            g.num_left += 1;
        } else {
            g.num_right += 1;
        }
    }

    /// Returns a copy of the current row if any is left to return.
    fn emit(&mut self) -> bool {
        if self.num_output == 0 {
            return false;
        }
        self.num_output -= 1;
        true
    }

    /// setop_fill_hash_table + setop_retrieve_hash_table.
    fn next_hashed(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        while !self.table_filled {
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => self.table_filled = true,
                ExecStatus::Row => {
                    es.clock.charge(es.cost.agg_row_ns);
                    let row = self.children[0].node.slot();
                    let first = self.from_first(row);
                    let key: Vec<Datum> = row[..self.ncols.min(row.len())].to_vec();
                    match self.index.get(&key) {
                        Some(&i) => {
                            let g = &mut self.groups[i].1;
                            if first {
                                g.num_left += 1;
                            } else {
                                g.num_right += 1;
                            }
                        }
                        // Only the first input starts a group.
                        None if first => {
                            self.index.insert(key.clone(), self.groups.len());
                            self.groups.push((key, PerGroup { num_left: 1, num_right: 0 }));
                        }
                        None => {}
                    }
                }
            }
        }
        loop {
            if self.emit() {
                return Ok(ExecStatus::Row);
            }
            let Some((key, g)) = self.groups.get(self.next_group) else { return Ok(ExecStatus::Done) };
            let (key, g) = (key.clone(), *g);
            self.next_group += 1;
            self.num_output = self.output_count(g);
            copy_row(&mut self.slot, &key);
        }
    }

    /// setop_retrieve_direct: one run of equal rows at a time.
    fn next_sorted(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            if self.emit() {
                return Ok(ExecStatus::Row);
            }
            if self.run.is_none() {
                // The row read ahead starts the next run.
                if let Some(first) = self.pending.take() {
                    let mut g = PerGroup::default();
                    self.count(&mut g, &first);
                    self.run = Some((first, g));
                }
            }
            // Read the run to its end: the first row that differs is kept for later.
            while !self.child_done {
                match self.inputs.next(&mut self.children, 0, es)? {
                    ExecStatus::Wait => return Ok(ExecStatus::Wait),
                    ExecStatus::Done => self.child_done = true,
                    ExecStatus::Row => {
                        es.clock.charge(es.cost.result_row_ns);
                        let row = self.children[0].node.slot().to_vec();
                        let first = self.from_first(&row);
                        match &mut self.run {
                            Some((r, g)) if rows_match(r, &row, self.ncols) => {
                                if first {
                                    g.num_left += 1;
                                } else {
                                    g.num_right += 1;
                                }
                            }
                            Some(_) => {
                                self.pending = Some(row);
                                break;
                            }
                            None => {
                                let g = PerGroup { num_left: u64::from(first), num_right: u64::from(!first) };
                                self.run = Some((row, g));
                            }
                        }
                    }
                }
            }
            let Some((row, g)) = self.run.take() else { return Ok(ExecStatus::Done) };
            self.num_output = self.output_count(g);
            self.slot.clear();
            self.slot.extend_from_slice(&row[..self.ncols.min(row.len())]);
        }
    }
}

impl Through for SetOpState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for SetOpState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }

    /// ExecSetOp.
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        match self.strategy {
            SetOpStrategy::Hashed => self.next_hashed(es),
            SetOpStrategy::Sorted => self.next_sorted(es),
        }
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.groups.clear();
        self.index.clear();
        self.table_filled = false;
        self.next_group = 0;
        self.pending = None;
        self.run = None;
        self.child_done = false;
        self.num_output = 0;
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
        let kind = match self.strategy {
            SetOpStrategy::Hashed => "HashSetOp",
            SetOpStrategy::Sorted => "SetOp",
        };
        e.node_type = format!("{kind} {}", self.cmd.explain_name());
        // PostgreSQL's target list: the input's columns and its flag, which the input
        // computes (EXPLAIN prints it in parentheses, as every reference to a computed
        // column).
        for i in 0..=self.ncols {
            e.push_output(format!("${i}"));
        }
    }
}
