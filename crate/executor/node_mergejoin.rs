//! Merge Join (nodeMergejoin.c): both inputs arrive ordered by their join key
//! (ascending, NULLs last: a Sort under each, or an input already in that order), and
//! the join walks them side by side, with nodeMergejoin.c's states (`MjState`, the
//! `EXEC_MJ_*` of `ExecMergeJoin`), so each side is read exactly as far as PostgreSQL
//! reads it — which EXPLAIN ANALYZE's row counts show when a join stops early (a LIMIT
//! above, a semi join's first match, the end of one side).
//!
//! ```text
//! INITIALIZE_OUTER ─▶ INITIALIZE_INNER ─▶ SKIP_TEST ──equal: mark──▶ JOINTUPLES ─▶ NEXTINNER
//!                         outer < inner ◀─┘   └─▶ outer > inner          │ (semi, anti, │ inner equal:
//!                    SKIPOUTER_ADVANCE      SKIPINNER_ADVANCE            │ unique inner)│ JOINTUPLES
//!                                                                         ▼              ▼ else
//!            TESTOUTER ◀──────────────────────────────────────────────── NEXTOUTER ◀────┘
//!  new outer = marked inner: restore the mark, JOINTUPLES; greater: SKIP_TEST with the
//!  current inner; a side exhausted: ENDOUTER / ENDINNER (the other side's rows left,
//!  null-extended, for a Right/Full or Left/Full/Anti join) or the end.
//! ```
//!
//! Invariants:
//! - The outer child is not called again while the current outer row's output
//!   remains: output rows copy the outer child's slot, which must still hold it. The
//!   inner rows the join keeps are copies.
//! - An inner row is read only when PostgreSQL's state machine reads it: the row past
//!   a group is read after the group's last join row is returned, not before; a semi or
//!   anti join (and an inner join whose inner side is unique) goes to the next outer row
//!   at its first match without reading further (`single_match`).
//! - A NULL key never matches (SQL's `=`); sorted NULLs last, a NULL key ends the join
//!   unless that side's unmatched rows are returned (MJEvalOuterValues /
//!   MJEvalInnerValues: `MJEVAL_ENDOFJOIN`, else `MJEVAL_NONMATCHABLE`).
//! - Each state's work before its fetch is idempotent (the Matched flags are set before
//!   a null-extended row is returned), so a fetch that returned Wait is simply repeated.
//! - Rescan forgets the mark and rescans both children.
//!
//! Where it departs from PostgreSQL: nodeMergejoin.c marks the inner child's position
//! at a group's first row (`ExecMarkPos`) and restores it (`ExecRestrPos`) for the next
//! outer row with the same key, re-reading the group from the inner child (a Sort,
//! Materialize or index scan supports mark/restore). Here the join keeps the rows read
//! since the mark itself (`InnerCursor`) and re-reads them from there; each row re-read
//! is counted on the inner child's instrumentation (InstrUpdateTupleCount), as
//! PostgreSQL's ExecProcNode on the restored child counts it, so EXPLAIN ANALYZE shows
//! the child's rows as PostgreSQL does. One equality is the whole merge condition.

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::{exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{Expr, JoinType};
use crate::types::Datum;
use std::cmp::Ordering;

/// nodeMergejoin.c's `mj_JoinState` (`EXEC_MJ_*`), and the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MjState {
    InitializeOuter,
    InitializeInner,
    JoinTuples,
    NextInner,
    NextOuter,
    TestOuter,
    SkipTest,
    SkipOuterAdvance,
    SkipInnerAdvance,
    /// The outer side is exhausted: the inner rows left, null-extended.
    EndOuter,
    /// The inner side is exhausted: the outer rows left, null-extended.
    EndInner,
    Done,
}

/// MJEvalOuterValues / MJEvalInnerValues: can the row join at all?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MjEval {
    Matchable,
    /// A NULL key on a side whose unmatched rows are returned.
    NonMatchable,
    /// End of data, or a NULL key (sorted last) on a side whose unmatched rows are not.
    EndOfJoin,
}

/// The inner side with PostgreSQL's mark and restore: the rows read since the mark are
/// kept, so that a restore returns them again.
#[derive(Clone, Default)]
struct InnerCursor {
    /// The rows from the marked one on (the marked row first), while a mark is set.
    since_mark: Vec<Vec<Datum>>,
    /// The next row of `since_mark` to return again; at its end, the child is read.
    pos: usize,
    /// The child returned end of data.
    eof: bool,
    /// The current inner row (`mj_InnerTupleSlot`); None at the end.
    cur: Option<Vec<Datum>>,
    /// Its key.
    cur_val: Datum,
}

impl InnerCursor {
    fn marked(&self) -> bool {
        !self.since_mark.is_empty()
    }

    /// ExecMarkPos at the current row.
    fn mark(&mut self) {
        self.since_mark.clear();
        self.since_mark.extend(self.cur.clone());
        self.pos = self.since_mark.len();
    }

    /// ExecRestrPos: the marked row is current again (`mj_MarkedTupleSlot`), and the
    /// rows after it will be returned again.
    fn restore(&mut self, key: &Expr) -> ExecResult<()> {
        self.pos = 1;
        self.cur = self.since_mark.first().cloned();
        self.cur_val = match &self.cur {
            Some(row) => key.eval(row)?,
            None => Datum::Null,
        };
        Ok(())
    }

    /// The mark will not be restored again (the outer side has passed it).
    fn unmark(&mut self) {
        self.since_mark.clear();
        self.pos = 0;
    }
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
    state: MjState,
    /// The current outer row's key (its row is the outer child's slot).
    outer_val: Datum,
    /// The current outer row was joined (or returned null-extended): `mj_MatchedOuter`.
    matched_outer: bool,
    /// The current inner row was joined (or returned null-extended): `mj_MatchedInner`.
    matched_inner: bool,
    inner: InnerCursor,
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
            state: MjState::InitializeOuter,
            outer_val: Datum::Null,
            matched_outer: false,
            matched_inner: false,
            inner: InnerCursor::default(),
            slot: Vec::new(),
        }
    }

    /// The output row: the outer row (or NULLs) and the current inner row (or NULLs).
    fn fill_slot(&mut self, outer: bool, inner: bool) {
        self.slot.clear();
        if outer {
            self.slot.extend_from_slice(self.children[0].node.slot());
        } else {
            self.slot.extend(std::iter::repeat_n(Datum::Null, self.outer_width));
        }
        match (&self.inner.cur, inner) {
            (Some(row), true) => self.slot.extend_from_slice(row),
            _ => self.slot.extend(std::iter::repeat_n(Datum::Null, self.inner_width)),
        }
    }

    /// The next outer row: Some(true) a row (its key in `outer_val`), Some(false) end
    /// of data, None: Wait.
    fn fetch_outer(&mut self, es: &mut EState) -> ExecResult<Option<bool>> {
        match self.inputs.next(&mut self.children, 0, es)? {
            ExecStatus::Row => {
                es.clock.charge(es.cost.hashjoin_row_ns);
                self.outer_val = self.outer_key.eval(self.children[0].node.slot())?;
                Ok(Some(true))
            }
            ExecStatus::Done => Ok(Some(false)),
            ExecStatus::Wait => Ok(None),
        }
    }

    /// The next inner row (ExecProcNode on the inner child): one kept since the mark
    /// if a restore went back over it — counted on the child, which PostgreSQL's
    /// restored child would have returned again — else the child's next row.
    fn fetch_inner(&mut self, es: &mut EState) -> ExecResult<Option<bool>> {
        let c = &mut self.inner;
        if c.pos < c.since_mark.len() {
            let row = c.since_mark[c.pos].clone();
            c.pos += 1;
            c.cur_val = self.inner_key.eval(&row)?;
            c.cur = Some(row);
            es.instr[self.children[1].id].update_tuple_count(1);
            return Ok(Some(true));
        }
        if c.eof {
            c.cur = None;
            return Ok(Some(false));
        }
        match self.inputs.next(&mut self.children, 1, es)? {
            ExecStatus::Row => {
                es.clock.charge(es.cost.hashjoin_row_ns);
                let row = self.children[1].node.slot().to_vec();
                let c = &mut self.inner;
                c.cur_val = self.inner_key.eval(&row)?;
                if c.marked() {
                    c.since_mark.push(row.clone());
                    c.pos = c.since_mark.len();
                }
                c.cur = Some(row);
                Ok(Some(true))
            }
            ExecStatus::Done => {
                self.inner.eof = true;
                self.inner.cur = None;
                Ok(Some(false))
            }
            ExecStatus::Wait => Ok(None),
        }
    }

    /// MJEvalOuterValues for the row just fetched (`has_row` false: end of data).
    fn eval_outer(&self, has_row: bool) -> MjEval {
        if !has_row {
            MjEval::EndOfJoin
        } else if !self.outer_val.is_null() {
            MjEval::Matchable
        } else if self.join_type.fills_outer() {
            MjEval::NonMatchable
        } else {
            MjEval::EndOfJoin
        }
    }

    /// MJEvalInnerValues for the current inner row.
    fn eval_inner(&self) -> MjEval {
        if self.inner.cur.is_none() {
            MjEval::EndOfJoin
        } else if !self.inner.cur_val.is_null() {
            MjEval::Matchable
        } else if self.join_type.fills_inner() {
            MjEval::NonMatchable
        } else {
            MjEval::EndOfJoin
        }
    }

    /// MJCompare: the outer key against the current inner key (both non-NULL).
    fn compare(&self) -> Ordering {
        self.outer_val.cmp(&self.inner.cur_val)
    }

    fn out_of_order() -> ExecError {
        ExecError::Internal("mergejoin input data is out of order".into())
    }

    /// Where the join goes when the outer side ends (or a NULL outer key ends it):
    /// the inner rows left for a Right/Full join — if the inner side has a current row
    /// (`inner_left`: NEXTOUTER and SKIPOUTER_ADVANCE check mj_InnerTupleSlot) — else
    /// the end.
    fn outer_ended(&mut self, inner_left: bool) -> Option<ExecStatus> {
        if self.join_type.fills_inner() && inner_left {
            self.state = MjState::EndOuter;
            None
        } else {
            self.state = MjState::Done;
            Some(ExecStatus::Done)
        }
    }

    /// Where the join goes when the inner side ends: the outer rows left for a
    /// Left/Full/Anti join, else the end.
    fn inner_ended(&mut self) -> Option<ExecStatus> {
        if self.join_type.fills_outer() {
            self.state = MjState::EndInner;
            None
        } else {
            self.state = MjState::Done;
            Some(ExecStatus::Done)
        }
    }

    /// The current outer row null-extended, if the join returns it and has not yet
    /// (MJFillOuter). True when a row is in the slot.
    fn fill_outer_once(&mut self) -> bool {
        if self.join_type.fills_outer() && !self.matched_outer {
            self.matched_outer = true;
            self.fill_slot(true, false);
            return true;
        }
        false
    }

    /// The current inner row null-extended, if the join returns it and has not yet
    /// (MJFillInner). True when a row is in the slot.
    fn fill_inner_once(&mut self) -> bool {
        if self.join_type.fills_inner() && !self.matched_inner {
            self.matched_inner = true;
            self.fill_slot(false, true);
            return true;
        }
        false
    }

    /// One step of ExecMergeJoin's loop: Some(status) to return, None to go on.
    fn step(&mut self, es: &mut EState) -> ExecResult<Option<ExecStatus>> {
        const ROW: Option<ExecStatus> = Some(ExecStatus::Row);
        const WAIT: Option<ExecStatus> = Some(ExecStatus::Wait);
        match self.state {
            MjState::InitializeOuter => {
                let Some(has_row) = self.fetch_outer(es)? else { return Ok(WAIT) };
                match self.eval_outer(has_row) {
                    MjEval::Matchable => self.state = MjState::InitializeInner,
                    // Stay here for the next outer row, this one null-extended.
                    MjEval::NonMatchable => {
                        if self.join_type.fills_outer() {
                            self.fill_slot(true, false);
                            return Ok(ROW);
                        }
                    }
                    MjEval::EndOfJoin => {
                        // ENDOUTER must read the inner side first: nothing to emit yet.
                        self.matched_inner = true;
                        return Ok(self.outer_ended(true));
                    }
                }
            }
            MjState::InitializeInner => {
                let Some(_) = self.fetch_inner(es)? else { return Ok(WAIT) };
                match self.eval_inner() {
                    MjEval::Matchable => self.state = MjState::SkipTest,
                    MjEval::NonMatchable => {
                        if self.join_type.fills_inner() {
                            self.fill_slot(false, true);
                            return Ok(ROW);
                        }
                    }
                    MjEval::EndOfJoin => {
                        // ENDINNER returns the outer row just read first.
                        self.matched_outer = false;
                        return Ok(self.inner_ended());
                    }
                }
            }
            MjState::JoinTuples => {
                self.state = MjState::NextInner;
                self.matched_outer = true;
                self.matched_inner = true;
                // An anti join drops the outer row at its first match; a semi join
                // (or a unique inner side) returns it once and reads no further inner row.
                if self.join_type.single_match() {
                    self.state = MjState::NextOuter;
                }
                if !self.join_type.returns_matches() {
                    return Ok(None);
                }
                self.fill_slot(true, true);
                return Ok(ROW);
            }
            MjState::NextInner => {
                if self.fill_inner_once() {
                    return Ok(ROW);
                }
                let Some(_) = self.fetch_inner(es)? else { return Ok(WAIT) };
                self.matched_inner = false;
                self.state = match self.eval_inner() {
                    MjEval::Matchable => match self.compare() {
                        Ordering::Equal => MjState::JoinTuples,
                        Ordering::Less => MjState::NextOuter,
                        Ordering::Greater => return Err(Self::out_of_order()),
                    },
                    MjEval::NonMatchable => MjState::NextOuter,
                    MjEval::EndOfJoin => {
                        // Effective end (a NULL key) or real: read no further inner row
                        // unless a restore goes back to the mark.
                        self.inner.cur = None;
                        MjState::NextOuter
                    }
                };
            }
            MjState::NextOuter => {
                if self.fill_outer_once() {
                    return Ok(ROW);
                }
                let Some(has_row) = self.fetch_outer(es)? else { return Ok(WAIT) };
                self.matched_outer = false;
                match self.eval_outer(has_row) {
                    MjEval::Matchable => self.state = MjState::TestOuter,
                    MjEval::NonMatchable => {} // returned null-extended, then the next
                    MjEval::EndOfJoin => return Ok(self.outer_ended(self.inner.cur.is_some())),
                }
            }
            MjState::TestOuter => {
                // The new outer row against the marked inner row (mj_MarkedTupleSlot).
                let Some(marked) = self.inner.since_mark.first() else {
                    return Err(ExecError::Internal("merge join: TESTOUTER without a mark".into()));
                };
                let marked_val = self.inner_key.eval(marked)?;
                match self.outer_val.cmp(&marked_val) {
                    Ordering::Equal => {
                        self.inner.restore(&self.inner_key)?;
                        self.state = MjState::JoinTuples;
                    }
                    Ordering::Greater => {
                        // Every outer row left is above the marked group: go on from
                        // the current inner row.
                        self.inner.unmark();
                        match self.eval_inner() {
                            MjEval::Matchable => self.state = MjState::SkipTest,
                            MjEval::NonMatchable => self.state = MjState::SkipInnerAdvance,
                            MjEval::EndOfJoin => return Ok(self.inner_ended()),
                        }
                    }
                    Ordering::Less => return Err(Self::out_of_order()),
                }
            }
            MjState::SkipTest => match self.compare() {
                Ordering::Equal => {
                    self.inner.mark();
                    self.state = MjState::JoinTuples;
                }
                Ordering::Less => self.state = MjState::SkipOuterAdvance,
                Ordering::Greater => self.state = MjState::SkipInnerAdvance,
            },
            MjState::SkipOuterAdvance => {
                if self.fill_outer_once() {
                    return Ok(ROW);
                }
                let Some(has_row) = self.fetch_outer(es)? else { return Ok(WAIT) };
                self.matched_outer = false;
                match self.eval_outer(has_row) {
                    MjEval::Matchable => self.state = MjState::SkipTest,
                    MjEval::NonMatchable => {}
                    MjEval::EndOfJoin => return Ok(self.outer_ended(self.inner.cur.is_some())),
                }
            }
            MjState::SkipInnerAdvance => {
                if self.fill_inner_once() {
                    return Ok(ROW);
                }
                let Some(_) = self.fetch_inner(es)? else { return Ok(WAIT) };
                self.matched_inner = false;
                match self.eval_inner() {
                    MjEval::Matchable => self.state = MjState::SkipTest,
                    MjEval::NonMatchable => {}
                    MjEval::EndOfJoin => {
                        self.inner.cur = None;
                        return Ok(self.inner_ended());
                    }
                }
            }
            MjState::EndOuter => {
                if self.fill_inner_once() {
                    return Ok(ROW);
                }
                let Some(has_row) = self.fetch_inner(es)? else { return Ok(WAIT) };
                self.matched_inner = false;
                if !has_row {
                    self.state = MjState::Done;
                }
            }
            MjState::EndInner => {
                if self.fill_outer_once() {
                    return Ok(ROW);
                }
                let Some(has_row) = self.fetch_outer(es)? else { return Ok(WAIT) };
                self.matched_outer = false;
                if !has_row {
                    self.state = MjState::Done;
                }
            }
            MjState::Done => return Ok(Some(ExecStatus::Done)),
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
        self.state = MjState::InitializeOuter;
        self.matched_outer = false;
        self.matched_inner = false;
        self.inner = InnerCursor::default();
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
        // create_mergejoin_plan switches each clause to put the outer side first.
        let (outer, inner) = super::join_input_refs(self.outer_width, self.inner_width);
        e.details.push((
            "Merge Cond".into(),
            format!("({} = {})", self.outer_key.to_sql(&outer), self.inner_key.to_sql(&inner)),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::executor::test_rows::child;

    /// Runs a merge join of `outer` and `inner` (ids 1 and 2) for at most `limit`
    /// rows; returns the rows and how many rows each child returned (EXPLAIN's rows).
    fn run(
        jt: JoinType,
        outer: &[Option<i64>],
        inner: &[Option<i64>],
        limit: usize,
    ) -> (Vec<(Option<i64>, Option<i64>)>, u64, u64) {
        let mut es = EState::new(Clock::virtual_clock(), vec![], false, false);
        for _ in 0..3 {
            es.instr.push(Default::default());
        }
        let keys = (Expr::Col(0), Expr::Col(0));
        let mut mj = MergeJoinState::init(child(1, outer), child(2, inner), keys, jt, (1, 1));
        let mut out = vec![];
        while out.len() < limit && mj.exec_next(&mut es).unwrap() == ExecStatus::Row {
            let v = |d: &Datum| match d {
                Datum::Int(i) => Some(*i),
                _ => None,
            };
            out.push((v(&mj.slot()[0]), v(&mj.slot()[1])));
        }
        (out, es.instr[1].ntuples, es.instr[2].ntuples)
    }

    #[test]
    fn a_restored_mark_counts_the_inner_rows_read_again() {
        // Outer 1, 1, 1 each join inner 1; PostgreSQL restores the mark for the second
        // and third and reads inner 2 (past the group) again each time.
        let (rows, outer, inner) =
            run(JoinType::Inner, &[Some(1), Some(1), Some(1), Some(2)], &[Some(1), Some(2), Some(3)], 99);
        assert_eq!(rows, vec![(Some(1), Some(1)), (Some(1), Some(1)), (Some(1), Some(1)), (Some(2), Some(2))]);
        assert_eq!((outer, inner), (4, 5));
        // A group of two: the second outer row reads the group's second row and the
        // row past it again.
        let (rows, _, inner) = run(JoinType::Inner, &[Some(1), Some(1)], &[Some(1), Some(1), Some(2)], 99);
        assert_eq!(rows.len(), 4);
        assert_eq!(inner, 3 + 2);
    }

    #[test]
    fn a_semi_join_reads_no_inner_row_past_its_last_match() {
        let (rows, outer, inner) =
            run(JoinType::Semi, &[Some(1), Some(2), Some(3)], &[Some(1), Some(2), Some(3), Some(4)], 99);
        assert_eq!(rows, vec![(Some(1), Some(1)), (Some(2), Some(2)), (Some(3), Some(3))]);
        assert_eq!((outer, inner), (3, 3));
        // An anti join keeps the outer rows with no match, reading as far.
        let (rows, _, inner) = run(JoinType::Anti, &[Some(1), Some(2), Some(5)], &[Some(1), Some(1), Some(3)], 99);
        assert_eq!(rows, vec![(Some(2), None), (Some(5), None)]);
        assert_eq!(inner, 3);
    }

    #[test]
    fn a_join_stopped_early_has_read_no_further_than_its_last_row_needed() {
        // A LIMIT 1 above: the first join row is returned before the rest of the
        // inner group is read.
        let (rows, outer, inner) = run(JoinType::Inner, &[Some(1), Some(2)], &[Some(1), Some(1), Some(5)], 1);
        assert_eq!(rows, vec![(Some(1), Some(1))]);
        assert_eq!((outer, inner), (1, 1));
    }

    #[test]
    fn outer_joins_return_the_unmatched_rows_of_their_sides() {
        let outer = [Some(1), Some(3), Some(3), None];
        let inner = [Some(2), Some(3), Some(4), None];
        let (mut rows, outer_n, inner_n) = run(JoinType::Full, &outer, &inner, 99);
        rows.sort();
        let mut want = vec![
            (Some(1), None),
            (None, Some(2)),
            (Some(3), Some(3)),
            (Some(3), Some(3)),
            (None, Some(4)),
            (None, None), // the outer NULL key, null-extended
            (None, None), // the inner NULL key, null-extended
        ];
        want.sort();
        assert_eq!(rows, want);
        assert_eq!((outer_n, inner_n), (4, 4 + 1)); // inner 4 read again after the restore
        let (rows, _, _) = run(JoinType::Left, &outer, &inner, 99);
        assert_eq!(rows, vec![(Some(1), None), (Some(3), Some(3)), (Some(3), Some(3)), (None, None)]);
        // An inner join ends at the first NULL outer key and an empty side ends it.
        let (rows, _, _) = run(JoinType::Inner, &outer, &inner, 99);
        assert_eq!(rows, vec![(Some(3), Some(3)), (Some(3), Some(3))]);
        let (rows, _, inner_n) = run(JoinType::Right, &[], &inner, 99);
        assert_eq!(rows, vec![(None, Some(2)), (None, Some(3)), (None, Some(4)), (None, None)]);
        assert_eq!(inner_n, 4);
    }
}
