//! Nested Loop (nodeNestloop.c), inner or left join on one equality (a Join Filter): for each
//! outer row, the inner side is rescanned (ExecReScan) and read to its end; each inner
//! row whose key equals the outer row's is joined.
//!
//! Invariants:
//! - The outer child is not called again while the current outer row's inner scan
//!   runs: each output row copies the outer child's slot, which must still hold it.
//! - The inner side is rescanned before each outer row's pass but the first (a fresh
//!   inner side needs none; nodeNestloop.c rescans it anyway, which for a scan that
//!   has not started is a no-op).
//! - A NULL key never matches (SQL's `=`). An output row is the outer row's columns,
//!   then the inner row's. Rescan rescans the outer side and restarts.
//! - A Wait passes up with the state intact: no outer row is lost or joined twice.
//!
//! With `async_through_nodes` (`async_through.rs`), Nested Loop reads both sides
//! through `AsyncInputs::next` (requests to async-capable children), and is Kyotaro
//! Horiguchi's async-aware NestLoop (seed 000: "NestLoop over two Appends … all of the
//! ForeignScans can run asynchronously"): while its outer side *sleeps* (a Wait on its
//! wait set, not a blocked libpq call and not a demo step), it starts the inner side's
//! first pass, so both sides' remote scans are in flight at once. A row the inner side
//! returns early is held for the first outer row. In pg15 it does none of this. In the
//! demo's step mode a step is not a sleep, so a stepped run may start the inner side at
//! another moment than a run without steps: the same rows, maybe in another order.
//!
//! A parameterized inner side (an Index Scan whose Index Cond compares its key with the
//! Nested Loop's parameter: `Plan::IndexScan`'s `nest_param`) gets the outer row's key
//! in `EState::nest_params` before each pass, as ExecNestLoop sets `nestParams`; it
//! then reads only the matching entries, and no Join Filter is printed. A Memoize
//! over that scan (`node_memoize.rs`) reads the same parameter as its cache key, and
//! runs the scan only for keys it has not seen.
//!
//! A parameterized foreign inner side (Foreign Scans whose Remote SQL reads `$1`, or
//! an Append of them: `coordinator_sql::paramfdw`) gets the outer row's key as the
//! PARAM_EXEC value `exec_param` (`EState::param_values`), and each rescan marks it
//! changed (`es.chg_param`, PostgreSQL's `chgParam`), as ExecNestLoop does.
//!
//! Where it departs from PostgreSQL: the only parameterized inner sides are a local
//! table's Index Scan on the join key and those foreign scans (a plan that wants the inner side read once puts
//! a Materialize over it, `node_material.rs`, as PostgreSQL 15's planner does), one
//! equality as the whole join qual. A Semi join returns an outer row at its first match
//! and leaves the inner pass there (the next outer row's pass rescans it), an Anti join
//! returns the outer rows whose pass found none. A
//! Left join returns an outer row that no inner row matched with NULLs for the inner
//! side; Right and Full joins are not Nested Loops (as in PostgreSQL).

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::{exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{Expr, JoinType};
use crate::types::Datum;

/// Where the inner side's early start (async-aware NestLoop) stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EarlyInner {
    /// Not started early (pg15, or nothing to overlap).
    No,
    /// Started while the outer side slept; blocked in a libpq call: call it again
    /// first.
    Blocked,
    /// Started; it sleeps or its first row is not asked for yet.
    Started,
    /// Started, and its first row is in its slot, held for the first outer row.
    RowHeld,
    /// Its first pass ended before the first outer row came (no inner row at all).
    Done,
}

#[derive(Clone)]
pub struct NestLoopState {
    /// [outer, inner]
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    outer_key: Expr,
    inner_key: Expr,
    outer_width: usize,
    inner_width: usize,
    /// nl_NeedNewOuter, inverted: an outer row is in the outer child's slot.
    have_outer: bool,
    /// The inner side ran since its last rescan (it needs one before the next pass).
    inner_dirty: bool,
    early: EarlyInner,
    slot: Vec<Datum>,
    /// Inner rows the Join Filter rejected, over every loop (PostgreSQL's
    /// `InstrCountFiltered1`): EXPLAIN ANALYZE's `Rows Removed by Join Filter`.
    nfiltered1: u64,
    /// EXPLAIN's Join Filter names the inner key first (`Plan::NestLoop`).
    pub filter_inner_first: bool,
    /// `Inner` or `Left`: a Left join returns an outer row no inner row matched with
    /// NULLs for the inner side, once its inner pass ends (`nl_MatchedOuter`).
    pub join_type: JoinType,
    /// The current outer row was joined to some inner row.
    matched_outer: bool,
    /// The inner side is a parameterized Index Scan reading `es.nest_params[n]`: the
    /// outer row's key is set there before each inner pass, and the Index Cond, not
    /// a Join Filter, joins the rows (PostgreSQL's `nestParams`).
    pub nest_param: Option<usize>,
    /// The inner side is parameterized Foreign Scans (or an Append of them) reading
    /// the PARAM_EXEC `n` (`coordinator_sql::paramfdw`): the outer row's key is set
    /// in `es.param_values` before each pass, and each rescan marks it changed
    /// (`chgParam`), so the scans declare their cursors again with the new value.
    pub exec_param: Option<usize>,
}

impl NestLoopState {
    pub fn init(outer: PlanState, inner: PlanState, outer_key: Expr, inner_key: Expr, widths: (usize, usize)) -> Self {
        NestLoopState {
            children: vec![outer, inner],
            inputs: AsyncInputs::default(),
            outer_key,
            inner_key,
            outer_width: widths.0,
            inner_width: widths.1,
            have_outer: false,
            inner_dirty: false,
            early: EarlyInner::No,
            slot: Vec::new(),
            nfiltered1: 0,
            filter_inner_first: false,
            join_type: JoinType::Inner,
            matched_outer: false,
            nest_param: None,
            exec_param: None,
        }
    }

    /// A new outer row: the inner side's pass for it starts (rescanned if it ran).
    fn next_outer(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.early == EarlyInner::Blocked {
            // Finish the inner side's blocked call first; then the outer side is asked
            // again (it registers its wait in this turn, so the host has a wait set).
            self.start_inner_early(es)?;
            if self.early == EarlyInner::Blocked {
                return Ok(ExecStatus::Wait);
            }
        }
        let status = self.inputs.next(&mut self.children, 0, es)?;
        match status {
            ExecStatus::Row => {
                self.have_outer = true;
                self.matched_outer = false;
                if let Some(n) = self.nest_param {
                    // ExecNestLoop: the outer row's values into the inner side's
                    // parameters, before its rescan.
                    if es.nest_params.len() <= n {
                        es.nest_params.resize(n + 1, Datum::Null);
                    }
                    es.nest_params[n] = self.outer_key.eval(self.children[0].node.slot())?;
                }
                if let Some(n) = self.exec_param {
                    let v = self.outer_key.eval(self.children[0].node.slot())?;
                    es.param_values.retain(|(p, _)| *p != n);
                    es.param_values.push((n, v));
                }
                let rescan = self.inner_dirty && !matches!(self.early, EarlyInner::Started | EarlyInner::RowHeld);
                if rescan {
                    // ExecNestLoop flags the parameter changed (`chgParam`) before
                    // ExecReScan: an Append defers its children's rescans to their
                    // next run, a Foreign Scan declares its cursor again.
                    es.chg_param = self.exec_param.is_some();
                    let r = exec_rescan(&mut self.children[1], es);
                    es.chg_param = false;
                    r?;
                }
                self.inner_dirty = true;
                if rescan && !es.remote_commands.is_empty() {
                    // The rescan's statements (a Foreign Scan's CLOSE) are waited for
                    // before the inner pass starts, as postgres_fdw waits inside
                    // ExecReScan: the run loop sends them, then calls the plan again
                    // (the outer row is kept).
                    return Ok(ExecStatus::Wait);
                }
            }
            ExecStatus::Wait if self.may_start_inner_early(es) => {
                self.start_inner_early(es)?;
            }
            _ => {}
        }
        Ok(status)
    }

    /// Kyotaro's async NestLoop: the outer side sleeps on its wait set (not blocked,
    /// not a demo step), and the inner side has not run yet.
    fn may_start_inner_early(&self, es: &EState) -> bool {
        // A parameterized inner side cannot start before the outer row gives it its key.
        self.nest_param.is_none()
            && self.exec_param.is_none()
            && es.async_enabled
            && es.behaviour.async_through_nodes
            && !es.interrupted()
            && self.early == EarlyInner::No
            && !self.inner_dirty
    }

    /// Calls the inner side once, for its first row, while the outer side sleeps.
    fn start_inner_early(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        self.early = match self.inputs.next(&mut self.children, 1, es)? {
            ExecStatus::Row => EarlyInner::RowHeld,
            ExecStatus::Done => EarlyInner::Done,
            ExecStatus::Wait if es.blocked_on.is_some() => EarlyInner::Blocked,
            ExecStatus::Wait => EarlyInner::Started,
        };
        Ok(ExecStatus::Wait)
    }

    /// The inner side's next row for the current outer row (a held early row first).
    fn next_inner(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        match std::mem::replace(&mut self.early, EarlyInner::No) {
            EarlyInner::RowHeld => Ok(ExecStatus::Row),
            EarlyInner::Done => Ok(ExecStatus::Done),
            _ => self.inputs.next(&mut self.children, 1, es),
        }
    }

    fn joined(&mut self) -> ExecResult<bool> {
        let (outer, inner) = (self.children[0].node.slot(), self.children[1].node.slot());
        let k = self.outer_key.eval(outer)?;
        if k.is_null() || k != self.inner_key.eval(inner)? {
            return Ok(false);
        }
        self.slot.clear();
        self.slot.extend_from_slice(outer);
        self.slot.extend_from_slice(inner);
        self.matched_outer = true;
        Ok(true)
    }
}

impl Through for NestLoopState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for NestLoopState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }

    /// ExecNestLoop.
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            if !self.have_outer {
                match self.next_outer(es)? {
                    ExecStatus::Row => {}
                    other => return Ok(other),
                }
            }
            match self.next_inner(es)? {
                ExecStatus::Row => {
                    es.clock.charge(es.cost.hashjoin_row_ns);
                    if self.joined()? {
                        // A semi or anti join needs one match per outer row
                        // (`single_match`): the next outer row comes next (its pass
                        // rescans the inner side), and an anti join drops this one.
                        if self.join_type.single_match() {
                            self.have_outer = false;
                        }
                        if self.join_type.returns_matches() {
                            return Ok(ExecStatus::Row);
                        }
                        continue;
                    }
                    self.nfiltered1 += 1;
                }
                ExecStatus::Done => {
                    self.have_outer = false;
                    if self.join_type.fills_outer() && !self.matched_outer {
                        // The outer child's slot still holds the row.
                        self.slot.clear();
                        self.slot.extend_from_slice(self.children[0].node.slot());
                        self.slot.extend(std::iter::repeat_n(Datum::Null, self.inner_width));
                        return Ok(ExecStatus::Row);
                    }
                }
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
            }
        }
    }

    /// ExecReScanNestLoop: the outer side is rescanned; the inner side on the next
    /// outer row.
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.inputs.cancel_all(es);
        self.have_outer = false;
        self.early = EarlyInner::No;
        self.inner_dirty = true;
        exec_rescan(&mut self.children[0], es)
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
        e.node_type = "Nested Loop".into();
        e.set_join_type(self.join_type);
        let (outer, inner) = super::join_input_refs(self.outer_width, self.inner_width);
        if self.nest_param.is_some() || self.exec_param.is_some() {
            // The join clause is the inner Index Scan's Index Cond, or in the inner
            // Foreign Scans' Remote SQL: no Join Filter.
            return;
        }
        if crate::plan::is_clauseless_join(&self.outer_key, &self.inner_key) {
            // No join clause (an equivalence class's constant made it redundant).
            return;
        }
        e.details.push((
            "Join Filter".into(),
            match self.filter_inner_first {
                false => format!("({} = {})", self.outer_key.to_sql(&outer), self.inner_key.to_sql(&inner)),
                true => format!("({} = {})", self.inner_key.to_sql(&inner), self.outer_key.to_sql(&outer)),
            },
        ));
        // The total; EXPLAIN prints it per loop, and in TEXT only when some were.
        if self.nfiltered1 > 0 {
            e.details.push(("Rows Removed by Join Filter".into(), self.nfiltered1.to_string()));
        }
    }
}
