//! HashJoin (nodeHashjoin.c, with nodeHash.c's table), inner equi-join on one key:
//! builds a hash table on the inner child, then probes it with each outer row. Both
//! phases resume across Waits.
//!
//! Invariants:
//! - The outer child is called before the build only to see whether the outer side is
//!   empty, as ExecHashJoin does (`first_outer_first`: a Left or Full join, or an outer
//!   side whose startup cost is below the Hash's total cost): an empty outer side skips
//!   the build (the inner side is never executed), and that first row is probed first,
//!   not fetched again. Otherwise the inner child is read to its end before the outer
//!   child is first called, so an async Append on the outer side starts its requests
//!   only after the build.
//! - A table with no row hashed ends an inner, semi or Right join without reading the
//!   outer side (further) (`hashtable->totalTuples == 0 && !HJ_FILL_OUTER`).
//! - A Wait in either phase returns with `built`, the table and `matches` intact: no
//!   inner row is hashed twice, no match is lost or returned twice.
//! - The outer child is not called again while matches of its current row remain:
//!   each output row is copied from the outer child's slot, which must still hold it.
//! - A NULL key never matches (SQL's `=`): NULL inner keys are not stored, so a NULL
//!   outer key finds nothing.
//! - An output row is the outer row's columns, then the inner row's; a side with no
//!   row is all NULLs: a Left (Full) join returns each outer row no inner row matched
//!   with NULLs for the inner side, right after it is probed; a Right (Full) join,
//!   once the outer side is exhausted, each inner row no outer row matched (those
//!   with a NULL key too) with NULLs for the outer side, in the order they were read.
//! - A Semi join returns an outer row at its first match (with that inner row, which
//!   nothing above reads) and probes no further; an Anti join returns only the outer
//!   rows with no match, null-extended, as a Left join returns its unmatched ones
//!   (`HJ_FILL_OUTER_TUPLE` with `JOIN_ANTI`).
//! - Rescan drops the table and rescans both children.
//!
//! Where it departs from PostgreSQL:
//! - PostgreSQL builds the table in a separate Hash node (`MultiExecHash`); here the
//!   join owns it, and EXPLAIN prints the Hash node above the inner child
//!   (`instrument::explain`).
//! - One batch in memory: no `work_mem` batching, skew buckets or Parallel Hash; the
//!   table is hashed on the first Hash Cond key, the others checked on each row found
//!   (PostgreSQL hashes all of them).
//! - The inner rows are kept in one array with a matched flag each; PostgreSQL marks
//!   the match in the hashed tuple's header and scans the buckets for the unmatched.
//! - `ExecReScanHashJoin` reuses a single-batch table when the inner side's
//!   parameters did not change; here a rescan rebuilds it.

use super::async_through::{through_requestee, AsyncInputs, Through};
pub use super::hash_space::HashSizing;
use super::hash_space::{hash_space, HashSpace};
use super::{exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{Expr, JoinType};
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
    /// Which side's unmatched rows come out null-extended.
    pub join_type: JoinType,
    /// The Hash Cond's other equalities (outer, inner): a row hashed under the outer
    /// row's first key matches only if these are equal too (none NULL).
    pub more_keys: Vec<(Expr, Expr)>,
    /// The inner rows, flat, in the order read (NULL keys too: a Right or Full join
    /// returns them).
    rows: Vec<Datum>,
    /// key -> the inner rows with it (their numbers in `rows`)
    table: HashMap<Datum, Vec<usize>>,
    /// Per inner row: joined to some outer row (`HeapTupleHeaderSetMatch`).
    matched: Vec<bool>,
    built: bool,
    /// Matches of the current outer row still to return: its key, the next one.
    matches: Option<(Datum, usize)>,
    /// The current outer row was joined to some inner row.
    outer_matched: bool,
    /// The outer side is exhausted: the unmatched inner rows are returned from this
    /// row number on (`HJ_FILL_INNER_TUPLES`).
    fill_inner_from: Option<usize>,
    /// Inner rows read but not inserted into the table, over all builds: EXPLAIN's
    /// Hash node counts the rows inserted (MultiExecHash stops its instrumentation with
    /// `hashtable->partialTuples`), not the rows its child returned.
    unhashed: u64,
    slot: Vec<Datum>,
    /// The planner's figures the table is sized with (`hash_space`).
    pub sizing: HashSizing,
    /// This build's figures, worked out when EXPLAIN first asks.
    space: std::cell::OnceCell<HashSpace>,
    /// The largest figures of the builds before a rescan.
    earlier: Option<HashSpace>,
    /// ExecHashJoin fetches the first outer row before building the table (a Left or
    /// Full join, or the outer's startup cost below the Hash's total cost; never a
    /// Right or Full join's, which must build: HJ_FILL_INNER).
    pub first_outer_first: bool,
    /// `hj_OuterNotEmpty`: the outer side has returned a row (kept across rescans
    /// that keep the table; here every rescan rebuilds, so reset with it).
    outer_not_empty: bool,
    /// The first outer row was fetched before the build and is still in the outer
    /// child's slot, to be probed first (`hj_FirstOuterTupleSlot`).
    first_outer_pending: bool,
    /// The empty-outer check before the build is done for this scan.
    first_outer_checked: bool,
    /// The join ended early: the outer side was empty, or the table is.
    outer_empty: bool,
    /// Rows inserted into this build's table (`hashtable->totalTuples`).
    hashed_this_build: u64,
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
            join_type: JoinType::Inner,
            more_keys: Vec::new(),
            rows: Vec::new(),
            table: HashMap::new(),
            matched: Vec::new(),
            built: false,
            matches: None,
            // No outer row yet: nothing to null-extend.
            outer_matched: true,
            fill_inner_from: None,
            unhashed: 0,
            slot: Vec::new(),
            sizing: HashSizing::default(),
            space: std::cell::OnceCell::new(),
            earlier: None,
            first_outer_first: false,
            outer_not_empty: false,
            first_outer_pending: false,
            first_outer_checked: false,
            outer_empty: false,
            hashed_this_build: 0,
        }
    }

    /// Does the Hash node insert this inner row? Those with every key non-null, or
    /// every row when a Right or Full join keeps them (ExecHashGetHashValue's
    /// `keepNulls`, which is HJ_FILL_INNER).
    fn hashes(&self, row: &[Datum]) -> bool {
        let keep_nulls = matches!(self.join_type, JoinType::Right | JoinType::Full);
        let non_null = |e: &Expr| e.eval(row).is_ok_and(|v| !v.is_null());
        keep_nulls || (non_null(&self.inner_key) && self.more_keys.iter().all(|(_, ik)| non_null(ik)))
    }

    /// This build's table figures: the rows hashed (`hashes`).
    fn build_space(&self) -> HashSpace {
        *self.space.get_or_init(|| {
            let w = self.inner_width.max(1);
            let hashed = self.rows.chunks(w).filter(|row| self.hashes(row));
            hash_space(&self.sizing, hashed)
        })
    }

    /// Next match for the current outer row, if any.
    fn next_match(&mut self) -> bool {
        let Some((key, pos)) = &mut self.matches else {
            return false;
        };
        let w = self.inner_width;
        let outer = self.children[0].node.slot();
        // The next row under the key whose other Hash Cond keys are equal too.
        let candidates = &self.table[key];
        let found = candidates[*pos..].iter().position(|&n| {
            let inner = &self.rows[n * w..(n + 1) * w];
            // Both sides' keys were evaluated when the rows came (an error raised
            // there): here they cannot fail.
            self.more_keys.iter().all(|(ok, ik)| {
                let v = ok.eval(outer).unwrap_or(Datum::Null);
                !v.is_null() && Ok(v) == ik.eval(inner)
            })
        });
        let Some(at) = found else {
            self.matches = None;
            return false;
        };
        let n = candidates[*pos + at];
        *pos += at + 1;
        self.matched[n] = true;
        self.outer_matched = true;
        self.slot.clear();
        self.slot.extend_from_slice(self.children[0].node.slot());
        self.slot.extend_from_slice(&self.rows[n * w..(n + 1) * w]);
        true
    }

    /// The next inner row no outer row matched, NULLs for the outer side
    /// (`ExecScanHashTableForUnmatched`); false when none is left.
    fn next_unmatched_inner(&mut self) -> bool {
        let w = self.inner_width;
        let Some(from) = self.fill_inner_from else { return false };
        let Some(n) = (from..self.matched.len()).find(|&n| !self.matched[n]) else {
            self.fill_inner_from = Some(self.matched.len());
            return false;
        };
        self.fill_inner_from = Some(n + 1);
        self.slot.clear();
        self.slot.extend(std::iter::repeat_n(Datum::Null, self.outer_width));
        self.slot.extend_from_slice(&self.rows[n * w..(n + 1) * w]);
        true
    }

    /// The current outer row, NULLs for the inner side (`HJ_FILL_OUTER_TUPLE`).
    fn outer_null_extended(&mut self) {
        self.slot.clear();
        self.slot.extend_from_slice(self.children[0].node.slot());
        self.slot.extend(std::iter::repeat_n(Datum::Null, self.inner_width));
    }

    /// The build phase (the inner side into the table), then the probe phase: each
    /// outer row's matches, or (a Left or Full join) the row null-extended.
    fn hash_and_probe(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        // HJ_BUILD_HASHTABLE: maybe one outer row first, to skip the build when the
        // outer side is empty.
        if !self.first_outer_checked {
            if self.first_outer_first && !self.join_type.fills_inner() && !self.outer_not_empty {
                match self.inputs.next(&mut self.children, 0, es)? {
                    ExecStatus::Row => {
                        self.outer_not_empty = true;
                        self.first_outer_pending = true;
                    }
                    ExecStatus::Wait => return Ok(ExecStatus::Wait),
                    ExecStatus::Done => {
                        self.first_outer_checked = true;
                        self.outer_empty = true;
                        return Ok(ExecStatus::Done);
                    }
                }
            }
            self.first_outer_checked = true;
        }
        if self.outer_empty {
            return Ok(ExecStatus::Done);
        }
        let was_built = self.built;
        while !self.built {
            match self.inputs.next(&mut self.children, 1, es)? {
                ExecStatus::Row => {
                    es.clock.charge(es.cost.hashjoin_row_ns);
                    let row = self.children[1].node.slot();
                    let k = self.inner_key.eval(row)?;
                    for (_, ik) in &self.more_keys {
                        ik.eval(row)?;
                    }
                    let n = self.matched.len();
                    // A NULL key is never hashed: no outer row can match it.
                    if !k.is_null() {
                        self.table.entry(k).or_default().push(n);
                    }
                    // The Hash node counts only the rows it inserts (MultiExecPrivateHash:
                    // a NULL key under a strict operator is dropped unless keepNulls).
                    if self.hashes(row) {
                        self.hashed_this_build += 1;
                    } else {
                        self.unhashed += 1;
                    }
                    self.rows.extend_from_slice(row);
                    self.matched.push(false);
                }
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => self.built = true,
            }
        }
        // An empty table: no outer row can match, so an inner, semi or Right join ends
        // without scanning the outer side.
        if !was_built && self.hashed_this_build == 0 && !self.join_type.fills_outer() {
            self.outer_empty = true;
            return Ok(ExecStatus::Done);
        }
        loop {
            if self.next_match() {
                // A semi or anti join is done with the outer row at its first match
                // (`single_match`): a semi join returns it once, an anti join drops it.
                if self.join_type.single_match() {
                    self.matches = None;
                }
                if self.join_type.returns_matches() {
                    return Ok(ExecStatus::Row);
                }
                continue;
            }
            // The current outer row is done: null-extended if nothing matched it.
            if std::mem::replace(&mut self.outer_matched, true) == false && self.join_type.fills_outer() {
                self.outer_null_extended();
                return Ok(ExecStatus::Row);
            }
            // The row fetched before the build is probed first (hj_FirstOuterTupleSlot).
            if std::mem::take(&mut self.first_outer_pending) {
                self.probe_outer_row(es)?;
                continue;
            }
            // exercise:hashjoin-probe begin
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => {}
                other => return Ok(other),
            }
            // exercise:hashjoin-probe end
            self.probe_outer_row(es)?;
        }
    }

    /// Looks up the outer child's current row in the table: its matches are next.
    fn probe_outer_row(&mut self, es: &mut EState) -> ExecResult<()> {
        es.clock.charge(es.cost.hashjoin_row_ns);
        self.outer_matched = false;
        let outer = self.children[0].node.slot();
        let k = self.outer_key.eval(outer)?;
        for (ok, _) in &self.more_keys {
            ok.eval(outer)?;
        }
        if self.table.contains_key(&k) {
            self.matches = Some((k, 0));
        }
        Ok(())
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
    /// ExecHashJoin: the join's rows, then (a Right or Full join) the inner rows no
    /// outer row matched (`HJ_FILL_INNER_TUPLES`).
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.fill_inner_from.is_none() {
            match self.hash_and_probe(es)? {
                ExecStatus::Done if self.join_type.fills_inner() => self.fill_inner_from = Some(0),
                other => return Ok(other),
            }
        }
        Ok(if self.next_unmatched_inner() { ExecStatus::Row } else { ExecStatus::Done })
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.inputs.cancel_all(es);
        if self.built {
            let this = self.build_space();
            self.earlier = Some(self.earlier.map_or(this, |e| e.max(this)));
        }
        self.space = std::cell::OnceCell::new();
        self.rows.clear();
        self.table.clear();
        self.matched.clear();
        self.built = false;
        self.matches = None;
        self.outer_matched = true;
        self.fill_inner_from = None;
        // ExecReScanHashJoin, the table rebuilt: hj_OuterNotEmpty = false.
        self.outer_not_empty = false;
        self.first_outer_pending = false;
        self.first_outer_checked = false;
        self.outer_empty = false;
        self.hashed_this_build = 0;
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
        e.set_join_type(self.join_type);
        // `$N` over the outer's outputs then the inner's (EXPLAIN names them).
        let (outer, inner) = super::join_input_refs(self.outer_width, self.inner_width);
        let eq = |o: &Expr, i: &Expr| format!("({} = {})", o.to_sql(&outer), i.to_sql(&inner));
        let conds: Vec<String> = std::iter::once(eq(&self.outer_key, &self.inner_key))
            .chain(self.more_keys.iter().map(|(o, i)| eq(o, i)))
            .collect();
        let cond = if conds.len() == 1 { conds[0].clone() } else { format!("({})", conds.join(" AND ")) };
        e.details.push(("Hash Cond".into(), cond));
        // show_hash_info, for the Hash node EXPLAIN prints under the join: a table
        // that was built says how.
        let this = self.built.then(|| self.build_space());
        if let Some(space) = match (this, self.earlier) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        } {
            e.details.push(("Buckets".into(), space.text()));
        }
        if self.unhashed > 0 {
            e.details.push((crate::instrument::HASH_UNHASHED.into(), self.unhashed.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::executor::test_rows::{child, empty_explain};

    /// The rows the Hash node inserted, as EXPLAIN ANALYZE prints them, after a join
    /// of type `jt` of outer [1] with `inner`.
    fn hash_rows(jt: JoinType, inner: &[Option<i64>]) -> u64 {
        let mut es = EState::new(Clock::virtual_clock(), vec![], false, false);
        for _ in 0..3 {
            es.instr.push(Default::default());
        }
        let mut hj = HashJoinState::init(child(1, &[Some(1)]), child(2, inner), Expr::Col(0), Expr::Col(0), (1, 1));
        hj.join_type = jt;
        while hj.exec_next(&mut es).unwrap() == ExecStatus::Row {}
        let mut e = empty_explain();
        hj.explain(&mut e);
        let unhashed: u64 = e.detail(crate::instrument::HASH_UNHASHED).map_or(0, |v| v.parse().unwrap());
        es.instr[2].ntuples - unhashed
    }

    /// Runs a join of `outer` with `inner`; the rows each child returned, and whether
    /// the inner child ran at all.
    fn early_end(
        jt: JoinType,
        first_outer_first: bool,
        outer: &[Option<i64>],
        inner: &[Option<i64>],
    ) -> (u64, u64, bool) {
        let mut es = EState::new(Clock::virtual_clock(), vec![], false, false);
        for _ in 0..3 {
            es.instr.push(Default::default());
        }
        let mut hj = HashJoinState::init(child(1, outer), child(2, inner), Expr::Col(0), Expr::Col(0), (1, 1));
        hj.join_type = jt;
        hj.first_outer_first = first_outer_first;
        let mut rows = 0;
        while hj.exec_next(&mut es).unwrap() == ExecStatus::Row {
            rows += 1;
        }
        let want = outer.iter().filter(|o| jt == JoinType::Left || (o.is_some() && inner.contains(o))).count();
        assert_eq!(rows, want, "the join's rows");
        (es.instr[1].ntuples, es.instr[2].ntuples, es.instr[2].running)
    }

    #[test]
    fn an_empty_side_ends_the_join_where_exec_hash_join_does() {
        // The first outer row fetched before the build: an empty outer side skips it.
        assert_eq!(early_end(JoinType::Inner, true, &[], &[Some(1)]), (0, 0, false));
        // Without that fetch the table is built first.
        assert_eq!(early_end(JoinType::Inner, false, &[], &[Some(1)]), (0, 1, true));
        // An empty table (NULL keys only): the outer side is not read (further).
        assert_eq!(early_end(JoinType::Inner, true, &[Some(1), Some(2)], &[None]), (1, 1, true));
        assert_eq!(early_end(JoinType::Inner, false, &[Some(1), Some(2)], &[None]), (0, 1, true));
        // A Left join reads every outer row (each comes out null-extended).
        assert_eq!(early_end(JoinType::Left, true, &[Some(1), Some(2)], &[None]), (2, 1, true));
        // The row fetched first is probed, not lost.
        assert_eq!(early_end(JoinType::Inner, true, &[Some(1), Some(2)], &[Some(1), Some(2)]), (2, 2, true));
    }

    #[test]
    fn the_hash_node_counts_only_the_rows_it_inserts() {
        let inner = [Some(1), None, Some(2), None];
        // A strict `=`: NULL keys are not inserted (MultiExecPrivateHash).
        assert_eq!(hash_rows(JoinType::Inner, &inner), 2);
        assert_eq!(hash_rows(JoinType::Left, &inner), 2);
        // A Right or Full join keeps them, to return them null-extended.
        assert_eq!(hash_rows(JoinType::Right, &inner), 4);
        assert_eq!(hash_rows(JoinType::Full, &inner), 4);
    }
}
