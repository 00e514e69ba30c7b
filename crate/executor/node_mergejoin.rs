//! Merge Join (nodeMergejoin.c): both inputs arrive ordered by their join key
//! (ascending, NULLs last: a Sort under each, or an input already in that order), and
//! the join walks them side by side. Rows of the inner side with equal keys form a
//! group; every outer row with that key is joined to the whole group, and the next
//! outer row with the same key is joined to it again.
//!
//! The protocol, as a state machine (`Phase`) that resumes across Waits:
//!
//! ```text
//! NeedOuter ──row──▶ Compare ◀──row── NeedInner
//!     ▲  same key as      │ outer < inner: next outer (Left/Full: outer row + NULLs)
//!     │  the group        │ outer > inner: next inner (Right/Full: NULLs + inner row)
//!     │     ▼             │ equal: FillGroup (read the inner side past the group)
//!     └── Emit ◀──────────┘
//! outer exhausted ──▶ InnerRest (Right/Full: the inner rows never matched) ──▶ Done
//! ```
//!
//! Invariants:
//! - The outer child is not called again while the current outer row's output
//!   remains: output rows copy the outer child's slot, which must still hold it. The
//!   inner rows the join keeps (the group, the row past it) are copies.
//! - A NULL key never matches (SQL's `=`). Sorted NULLs last, a NULL outer key means
//!   every outer row left has one: an inner join ends there (`MJEVAL_ENDOFJOIN`),
//!   a Left/Full join returns them null-extended. A NULL inner key sorts above every
//!   outer key, so it is never matched and comes out null-extended in Right/Full.
//! - Without `fills_outer`, the join ends as soon as the inner side is exhausted
//!   (the outer side is not read to its end, as nodeMergejoin.c does not).
//! - An output row is the outer row's columns, then the inner row's; a side with no
//!   row is all NULLs.
//! - A Semi join joins an outer row to the group's first row only; an Anti join
//!   returns the outer rows that found no group, null-extended (as a Left join's
//!   unmatched ones).
//! - Rescan forgets the group and rescans both children.
//!
//! Where it departs from PostgreSQL: nodeMergejoin.c marks the inner side's position
//! at a group's first row (`ExecMarkPos`) and restores it (`ExecRestrPos`) for the
//! next outer row with the same key, re-reading the group from the inner child (a
//! Sort or Materialize supports mark/restore). Here the join keeps the group's rows
//! itself, so the inner child returns each row once and EXPLAIN ANALYZE counts no
//! re-fetched rows on it. One equality is the whole merge condition.

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::{exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{Expr, JoinType};
use crate::types::Datum;
use std::cmp::Ordering;

/// Where the join stands (nodeMergejoin.c's `mj_JoinState`, in fewer states).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The next outer row is wanted.
    NeedOuter,
    /// The next inner row is wanted (the current one was passed or used).
    NeedInner,
    /// An outer row (non-NULL key) and maybe an inner row to compare.
    Compare,
    /// The inner group of the current key is being read.
    FillGroup,
    /// The current outer row is joined to the group, `group_pos` onwards.
    Emit,
    /// The outer side is exhausted: the inner rows left come out null-extended.
    InnerRest,
    Done,
}

#[derive(Clone)]
pub struct MergeJoinState {
    /// [outer, inner]
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    outer_key: Expr,
    inner_key: Expr,
    join_type: JoinType,
    outer_width: usize,
    inner_width: usize,
    phase: Phase,
    /// The current outer row's key.
    outer_val: Datum,
    /// The current outer row was joined to some inner row.
    outer_matched: bool,
    /// An inner row read but not yet placed (a copy) and its key.
    look: Vec<Datum>,
    look_val: Datum,
    have_look: bool,
    inner_done: bool,
    /// The inner rows of `group_val`, flat.
    group: Vec<Datum>,
    group_val: Option<Datum>,
    group_pos: usize,
    slot: Vec<Datum>,
}

impl MergeJoinState {
    pub fn init(
        outer: PlanState,
        inner: PlanState,
        keys: (Expr, Expr),
        join_type: JoinType,
        widths: (usize, usize),
    ) -> Self {
        MergeJoinState {
            children: vec![outer, inner],
            inputs: AsyncInputs::default(),
            outer_key: keys.0,
            inner_key: keys.1,
            join_type,
            outer_width: widths.0,
            inner_width: widths.1,
            phase: Phase::NeedOuter,
            outer_val: Datum::Null,
            outer_matched: false,
            look: Vec::new(),
            look_val: Datum::Null,
            have_look: false,
            inner_done: false,
            group: Vec::new(),
            group_val: None,
            group_pos: 0,
            slot: Vec::new(),
        }
    }

    /// The output row: the outer row (or NULLs) and an inner row (or NULLs).
    fn fill_slot(&mut self, outer: bool, inner: Option<(bool, usize)>) {
        self.slot.clear();
        if outer {
            self.slot.extend_from_slice(self.children[0].node.slot());
        } else {
            self.slot.extend(std::iter::repeat_n(Datum::Null, self.outer_width));
        }
        match inner {
            // From the group, at a position.
            Some((true, at)) => self.slot.extend_from_slice(&self.group[at..at + self.inner_width]),
            Some((false, _)) => self.slot.extend_from_slice(&self.look),
            None => self.slot.extend(std::iter::repeat_n(Datum::Null, self.inner_width)),
        }
    }

    /// The current outer row has no (more) match: null-extended when the join
    /// returns such rows. True when a row is in the slot.
    fn outer_unmatched(&mut self) -> bool {
        let fill = self.join_type.fills_outer() && !self.outer_matched;
        if fill {
            self.fill_slot(true, None);
        }
        fill
    }

    /// The held inner row has no match: null-extended when the join returns such
    /// rows. True when a row is in the slot.
    fn inner_unmatched(&mut self) -> bool {
        self.have_look = false;
        let fill = self.join_type.fills_inner();
        if fill {
            self.fill_slot(false, Some((false, 0)));
        }
        fill
    }

    /// The outer side is done (exhausted, or only NULL keys left for a join that
    /// does not return them): the inner rows left, if the join returns them.
    fn after_outer(&self) -> Phase {
        if self.join_type.fills_inner() {
            Phase::InnerRest
        } else {
            Phase::Done
        }
    }

    /// Keeps the inner child's current row as the held row.
    fn hold_inner(&mut self) -> ExecResult<()> {
        let row = self.children[1].node.slot();
        self.look_val = self.inner_key.eval(row)?;
        super::copy_row(&mut self.look, row);
        self.have_look = true;
        Ok(())
    }

    /// One step of the state machine: Some(status) to return, None to go on.
    fn step(&mut self, es: &mut EState) -> ExecResult<Option<ExecStatus>> {
        match self.phase {
            Phase::NeedOuter => match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => {
                    es.clock.charge(es.cost.hashjoin_row_ns);
                    self.outer_val = self.outer_key.eval(self.children[0].node.slot())?;
                    self.outer_matched = false;
                    if self.outer_val.is_null() {
                        if self.join_type.fills_outer() {
                            self.fill_slot(true, None);
                            return Ok(Some(ExecStatus::Row));
                        }
                        self.phase = self.after_outer();
                    } else if self.group_val.as_ref() == Some(&self.outer_val) {
                        self.group_pos = 0;
                        self.phase = Phase::Emit;
                    } else {
                        self.phase = Phase::Compare;
                    }
                }
                ExecStatus::Done => self.phase = self.after_outer(),
                ExecStatus::Wait => return Ok(Some(ExecStatus::Wait)),
            },
            Phase::NeedInner => match self.inputs.next(&mut self.children, 1, es)? {
                ExecStatus::Row => {
                    es.clock.charge(es.cost.hashjoin_row_ns);
                    self.hold_inner()?;
                    self.phase = Phase::Compare;
                }
                ExecStatus::Done => {
                    self.inner_done = true;
                    self.phase = Phase::Compare;
                }
                ExecStatus::Wait => return Ok(Some(ExecStatus::Wait)),
            },
            Phase::Compare => {
                if !self.have_look {
                    if !self.inner_done {
                        self.phase = Phase::NeedInner;
                        return Ok(None);
                    }
                    // The inner side is exhausted: no outer row left can match.
                    if !self.join_type.fills_outer() {
                        self.phase = Phase::Done;
                        return Ok(None);
                    }
                    self.phase = Phase::NeedOuter;
                    return Ok(self.outer_unmatched().then_some(ExecStatus::Row));
                }
                match self.outer_val.cmp(&self.look_val) {
                    Ordering::Less => {
                        self.phase = Phase::NeedOuter;
                        return Ok(self.outer_unmatched().then_some(ExecStatus::Row));
                    }
                    Ordering::Greater => {
                        self.phase = Phase::NeedInner;
                        return Ok(self.inner_unmatched().then_some(ExecStatus::Row));
                    }
                    Ordering::Equal => {
                        self.group.clear();
                        self.group.extend_from_slice(&self.look);
                        self.group_val = Some(self.look_val.clone());
                        self.have_look = false;
                        self.phase = Phase::FillGroup;
                    }
                }
            }
            Phase::FillGroup => match self.inputs.next(&mut self.children, 1, es)? {
                ExecStatus::Row => {
                    es.clock.charge(es.cost.hashjoin_row_ns);
                    let row = self.children[1].node.slot();
                    if Some(self.inner_key.eval(row)?) == self.group_val {
                        self.group.extend_from_slice(row);
                    } else {
                        self.hold_inner()?;
                        self.group_pos = 0;
                        self.phase = Phase::Emit;
                    }
                }
                ExecStatus::Done => {
                    self.inner_done = true;
                    self.group_pos = 0;
                    self.phase = Phase::Emit;
                }
                ExecStatus::Wait => return Ok(Some(ExecStatus::Wait)),
            },
            Phase::Emit => {
                // A semi or anti join is done with the outer row at its first match
                // (`single_match`); an anti join returns no matched row.
                let done = self.join_type.single_match() && self.outer_matched;
                if self.group_pos < self.group.len() && !done {
                    self.outer_matched = true;
                    if !self.join_type.returns_matches() {
                        self.phase = Phase::NeedOuter;
                        return Ok(None);
                    }
                    self.fill_slot(true, Some((true, self.group_pos)));
                    self.group_pos += self.inner_width.max(1);
                    return Ok(Some(ExecStatus::Row));
                }
                self.phase = Phase::NeedOuter;
            }
            Phase::InnerRest => {
                if self.have_look {
                    return Ok(self.inner_unmatched().then_some(ExecStatus::Row));
                }
                if self.inner_done {
                    self.phase = Phase::Done;
                    return Ok(None);
                }
                match self.inputs.next(&mut self.children, 1, es)? {
                    ExecStatus::Row => self.hold_inner()?,
                    ExecStatus::Done => self.inner_done = true,
                    ExecStatus::Wait => return Ok(Some(ExecStatus::Wait)),
                }
            }
            Phase::Done => return Ok(Some(ExecStatus::Done)),
        }
        Ok(None)
    }
}

impl Through for MergeJoinState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for MergeJoinState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }

    /// ExecMergeJoin.
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            if let Some(status) = self.step(es)? {
                return Ok(status);
            }
        }
    }

    /// ExecReScanMergeJoin.
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.inputs.cancel_all(es);
        self.phase = Phase::NeedOuter;
        self.outer_matched = false;
        self.have_look = false;
        self.inner_done = false;
        self.group.clear();
        self.group_val = None;
        self.group_pos = 0;
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
        e.node_type = "Merge Join".into();
        e.set_join_type(self.join_type);
        // Over a semi join's unique-ified inner side the inner is unique (PostgreSQL's
        // `inner_unique`, which EXPLAIN VERBOSE prints).
        if self.join_type == JoinType::UniqueInner {
            e.details.push(("Inner Unique".into(), "true".into()));
        }
        // create_mergejoin_plan switches each clause to put the outer side first.
        let (outer, inner) = super::join_input_refs(self.outer_width, self.inner_width);
        e.details.push((
            "Merge Cond".into(),
            format!("({} = {})", self.outer_key.to_sql(&outer), self.inner_key.to_sql(&inner)),
        ));
    }
}
