//! Aggregate (nodeAgg.c), plain, hashed or sorted: count, sum, min, max, avg. Plain and
//! hashed read their whole input first (resuming across Waits), then return one row
//! per group. Sorted (GroupAggregate, `agg_retrieve_direct`) reads input sorted by the
//! group keys and returns a group as soon as a row with another key (or the end)
//! arrives, so a Limit above it stops its input early, as in PostgreSQL. The
//! transition step for a plain aggregate over integers allocates nothing. In a partial
//! aggregation (`AggSplit`) the Partial half returns each group's transition values
//! (a count, a sum, a min or max) and the Finalize half combines them (counts add up;
//! `combinefn`): avg, whose partial state is a pair, is not planned partially.
//!
//! Invariants:
//! - Plain and hashed: no row comes out before the child is exhausted (`filled`).
//!   Sorted: a group comes out when the first row of the next one (or the end) has
//!   been read; that row is already in the next group's state. The transition states
//!   live in the node, so a Wait from below loses nothing and adds no row twice.
//! - Without GROUP BY exactly one row comes out, also from an empty input (`count` 0,
//!   the others NULL); with GROUP BY one per distinct key, none from an empty input.
//!   The GROUP BY list decides this; `strategy` decides when a group goes out.
//! - NULL inputs are skipped (`count(*)` counts every row); NULL keys form one group.
//! - Groups come out in the order their first row arrived: the same output order on
//!   every run, natively and in wasm.
//! - Rescan forgets every group and rescans the child.
//!
//! Where it departs from PostgreSQL:
//! - PostgreSQL's hash aggregate returns groups in hash-table order and spills to disk
//!   past `work_mem`; here groups stay in memory, in first-seen order.
//! - `ExecReScanAgg` keeps a filled hash table when the child's parameters did not
//!   change (and it never spilled); here a rescan always reads the child again.
//! - Result types: `sum` over integers adds in int8 and carries on in numeric past
//!   int8's range, so it never overflows (PostgreSQL's `sum(int)` is bigint); the
//!   sum of a bigint goes out as a numeric (`numeric_poly_sum`'s result type), so
//!   that what is computed over it (`sum(val) / 3`) is numeric arithmetic; `sum` over numeric is exact with the
//!   largest display scale of its inputs (`do_numeric_accum`); `avg` of integers or
//!   numerics is their numeric sum divided by the count (`numeric_avg`: `numeric_div`,
//!   so its scale is `select_div_scale`'s), of float8s a float8. Min and max compare by
//!   `Datum`'s order, text by bytes (the `C` collation).
//! - A numeric sum past the sandbox's 38 significant digits cannot be an error here
//!   (the executor does not abort): it becomes NULL, as other failed operations do.
//! - HAVING is not evaluated here but in a Result above (EXPLAIN folds it back in).
//! - PostgreSQL has no Wait: a node above an async Append blocks inside it
//!   (`ExecAppendAsyncEventWait`); here the Wait returns through this node to the host.
//! - Plain and hashed aggregation over a SeqScan read its rows a page at a time
//!   (`advance_page`, the executor's page mode), not one ExecProcNode per row: the
//!   same rows in the same order, counted and charged the same, without a dispatch
//!   and a slot copy per row (most of a row's cost otherwise, in wasm above all).

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::{exec_proc_node_page, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::numeric::Numeric;
use crate::plan::{AggCall, AggFunc, AggSplit, AggStrategy, Expr};
use crate::types::{ColType, Column, Datum};
use std::collections::HashMap;

/// Transition state of one aggregate.
#[derive(Clone, Debug)]
pub(crate) struct Trans {
    count: i64,
    sum: Datum,
    best: Datum,
    /// A DISTINCT aggregate's values seen so far in the group, in order (PostgreSQL
    /// sorts each group's inputs and skips repeats, `process_ordered_aggregate_single`;
    /// the same values reach the transition, each once).
    seen: Vec<Datum>,
}

impl Trans {
    pub(crate) fn new() -> Trans {
        Trans { count: 0, sum: Datum::Null, best: Datum::Null, seen: Vec::new() }
    }

    /// For a DISTINCT aggregate: is `v` new in the group (then remembered)? NULLs are
    /// left to `advance`, which skips them.
    fn first_seen(&mut self, v: &Datum) -> bool {
        if v.is_null() {
            return true;
        }
        match self.seen.binary_search_by(|x| x.partial_cmp(v).unwrap_or(std::cmp::Ordering::Equal)) {
            Ok(_) => false,
            Err(at) => {
                self.seen.insert(at, v.clone());
                true
            }
        }
    }

    #[inline]
    pub(crate) fn advance(&mut self, func: AggFunc, v: Datum) {
        if func == AggFunc::CountStar {
            self.count += 1;
            return;
        }
        if v.is_null() {
            return; // aggregates ignore NULL inputs
        }
        self.count += 1;
        match func {
            AggFunc::Sum | AggFunc::Avg => {
                // Two int8s add in place (the hot path: no Datum built or dropped).
                if let (Datum::Int(a), Datum::Int(b)) = (&mut self.sum, &v) {
                    if let Some(s) = a.checked_add(*b) {
                        *a = s;
                        return;
                    }
                }
                self.sum = sum_slow(&self.sum, v, self.count);
            }
            AggFunc::Min if self.best.is_null() || v < self.best => self.best = v,
            AggFunc::Max if self.best.is_null() || v > self.best => self.best = v,
            _ => {}
        }
    }

    /// `advance`'s hot path by reference, sum or avg of an int8 within int8's range:
    /// nothing cloned or dropped. False: not that case (nothing done).
    #[inline]
    fn advance_int(&mut self, func: AggFunc, v: &Datum) -> bool {
        if let (AggFunc::Sum | AggFunc::Avg, Datum::Int(a), Datum::Int(b)) = (func, &mut self.sum, v) {
            if let Some(s) = a.checked_add(*b) {
                *a = s;
                self.count += 1;
                return true;
            }
        }
        false
    }

    /// `advance` of sum or avg down column `col` of a page (`width` columns a row),
    /// from its first row while each value is an int8 (or NULL, which aggregates skip)
    /// and the sum stays in range: the number of rows taken (0 when the sum is not an
    /// int8 yet: its first value decides, row by row). Nothing is decided per row but
    /// the value, so the loop stays tight at any optimisation level (the page's wasm
    /// module is built for size, and its loops are not unswitched). An index stepping
    /// by `width`, not `skip(col).step_by(width)`: at opt-level s the iterator's
    /// first-step and remaining-length bookkeeping stayed in the wasm loop (about twice
    /// its instructions); here a row is one bounds test, its tag, its add.
    fn sum_int_column(&mut self, rows: &[Datum], width: usize, col: usize) -> usize {
        let Datum::Int(mut sum) = self.sum else { return 0 };
        if width == 0 {
            return 0; // no row to step over (and no column to read)
        }
        let (mut at, mut added) = (col, 0);
        while let Some(v) = rows.get(at) {
            match v {
                Datum::Int(b) => match sum.checked_add(*b) {
                    Some(s) => {
                        sum = s;
                        added += 1;
                    }
                    None => break,
                },
                Datum::Null => {}
                _ => break,
            }
            at += width;
        }
        self.sum = Datum::Int(sum);
        self.count += added;
        // `at` is `col` plus `width` per row taken; past the page's end when all were.
        (at - col) / width
    }

    /// The Finalize half's step (`combinefn`): `v` is one partition's partial value
    /// of the aggregate; counts add up, sums add, min and max compare.
    #[inline]
    fn combine(&mut self, func: AggFunc, v: Datum) {
        match func {
            AggFunc::CountStar | AggFunc::Count => {
                if let Datum::Int(n) = v {
                    self.count += n;
                }
            }
            // avg's partial state (a sum and a count) is not planned (refused).
            _ => self.advance(func, v),
        }
    }

    /// The aggregate's final value. `numeric`: the result type is numeric where the
    /// state is kept as an int8 while it fits (`sum(bigint)`, whose final function
    /// `numeric_poly_sum` returns numeric): the int8 sum then goes out as a numeric.
    pub(crate) fn finish(&self, func: AggFunc, numeric: bool) -> Datum {
        if let (AggFunc::Sum, true, Datum::Int(v)) = (func, numeric, &self.sum) {
            return Datum::numeric(Numeric::from_i64(*v));
        }
        match func {
            AggFunc::CountStar | AggFunc::Count => Datum::Int(self.count),
            AggFunc::Sum => self.sum.clone(),
            AggFunc::Min | AggFunc::Max => self.best.clone(),
            AggFunc::Avg if self.count == 0 => Datum::Null,
            AggFunc::Avg => match &self.sum {
                Datum::Float(s) => Datum::Float(s / self.count as f64),
                sum => match sum.as_numeric() {
                    Some(s) => numeric_or_null(s.div(&Numeric::from_i64(self.count))),
                    None => Datum::Null,
                },
            },
        }
    }
}

/// The transition of a sum that is not two int8s within int8's range: the first value
/// starts it; two int8s past the range carry on in numeric; float8 if either is one,
/// else exact numeric (`numeric_add`); NULL once it fails (past the digit limit), and a
/// NULL sum after the first value stays NULL.
#[inline(never)]
fn sum_slow(sum: &Datum, v: Datum, count: i64) -> Datum {
    match (sum, &v) {
        (Datum::Null, _) if count == 1 => v,
        (Datum::Null, _) => Datum::Null,
        (Datum::Int(a), Datum::Int(b)) => numeric_or_null(Numeric::from_i128(*a as i128 + *b as i128)),
        (a, b) => add_slow(a, b),
    }
}

fn add_slow(a: &Datum, b: &Datum) -> Datum {
    match (a, b) {
        (Datum::Float(_), _) | (_, Datum::Float(_)) => {
            Datum::Float(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0))
        }
        _ => match (a.as_numeric(), b.as_numeric()) {
            (Some(x), Some(y)) => numeric_or_null(x.add(&y)),
            _ => Datum::Null,
        },
    }
}

/// One input row into a group's transition states (combined, for the Finalize half:
/// the row holds partial values). Inline in every row loop (issue 20: as a call it was
/// a large part of a plain aggregate's work per row).
#[inline(always)]
fn advance_trans(trans: &mut [Trans], aggs: &[AggCall], row: &[Datum], split: AggSplit) -> ExecResult<()> {
    for (t, a) in trans.iter_mut().zip(aggs) {
        advance_one(t, a, row, split)?;
    }
    Ok(())
}

/// One input row into one aggregate's transition state. The hot path (sum or avg of
/// an int8 column, `Trans::advance_int`) is inline in the row loop; every other case
/// is `advance_one_general`, out of line, so the row loop stays small (issue 20).
#[inline(always)]
fn advance_one(t: &mut Trans, a: &AggCall, row: &[Datum], split: AggSplit) -> ExecResult<()> {
    // A column (`sum(a)`) is read here, without the evaluator's call.
    if let (false, Some(Expr::Col(i))) = (a.distinct, &a.arg) {
        if split != AggSplit::Finalize && t.advance_int(a.func, &row[*i]) {
            return Ok(());
        }
    }
    advance_one_general(t, a, row, split)
}

/// `advance_one` but its hot path (which, for a column argument, did nothing).
#[inline(never)]
fn advance_one_general(t: &mut Trans, a: &AggCall, row: &[Datum], split: AggSplit) -> ExecResult<()> {
    if a.distinct {
        let v = match &a.arg {
            Some(e) => e.eval(row)?,
            None => Datum::Null,
        };
        if t.first_seen(&v) {
            t.advance(a.func, v);
        }
        return Ok(());
    }
    let v = match &a.arg {
        Some(Expr::Col(i)) => row[*i].clone(),
        Some(e) => e.eval(row)?,
        None => Datum::Null,
    };
    match split {
        AggSplit::Finalize => t.combine(a.func, v),
        _ => t.advance(a.func, v),
    }
    Ok(())
}

/// A page of rows into a plain aggregate's states, an aggregate at a time: each
/// takes its argument down the page in one loop. The states are independent of each
/// other, so each still sees the rows in their order, and ends the page as row by row.
/// Only for arguments that cannot raise (columns, or none: `reads_columns_only`): an
/// ERROR must come from the row and the aggregate PostgreSQL's row-by-row loop meets
/// it at.
fn advance_plain_page(trans: &mut [Trans], aggs: &[AggCall], rows: &[Datum], width: usize, split: AggSplit) {
    for (t, a) in trans.iter_mut().zip(aggs) {
        // sum/avg of an int8 column: as many rows as stay in the hot path, in a loop
        // with nothing decided per row but the value (the rest, row by row below).
        let done = match (&a.arg, a.func) {
            (Some(Expr::Col(i)), AggFunc::Sum | AggFunc::Avg) if split != AggSplit::Finalize && *i < width => {
                t.sum_int_column(rows, width, *i)
            }
            _ => 0,
        };
        for row in rows[done * width..].chunks_exact(width) {
            // A column argument never raises (see above).
            let _ = advance_one(t, a, row, split);
        }
    }
}

/// Whether every aggregate's argument is a column or none (nothing to evaluate, so
/// nothing that can raise).
fn reads_columns_only(aggs: &[AggCall]) -> bool {
    aggs.iter().all(|a| !a.distinct && matches!(a.arg, None | Some(Expr::Col(_))))
}

fn numeric_or_null(n: Result<Numeric, crate::numeric::NumericError>) -> Datum {
    n.map(Datum::numeric).unwrap_or(Datum::Null)
}

#[derive(Clone)]
pub struct AggState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    strategy: AggStrategy,
    /// Whole, or the Partial or Finalize half of a partial aggregation.
    split: AggSplit,
    group_by: Vec<Expr>,
    aggs: Vec<AggCall>,
    /// Per aggregate: is its result numeric while its state may be an int8 sum
    /// (`sum(bigint)`: [`AggCall::output_column`]'s type)?
    numeric: Vec<bool>,
    input_names: Vec<String>,
    /// Plain aggregate: one group.
    plain: Vec<Trans>,
    /// Sorted: the group being read (its key and states), none before the first row.
    current: Option<(Vec<Datum>, Vec<Trans>)>,
    /// Hashed: group key -> index in `groups` (insertion order keeps output stable).
    index: HashMap<Vec<Datum>, usize>,
    groups: Vec<(Vec<Datum>, Vec<Trans>)>,
    key: Vec<Datum>,
    filled: bool,
    next_group: usize,
    slot: Vec<Datum>,
    /// Page mode (`advance_page`): undecided before the first input row, then off, or
    /// on with the group keys and arguments rewritten over the scan's stored rows.
    page_mode: PageMode,
}

/// Does this node read its input a page at a time?
#[derive(Clone)]
enum PageMode {
    Unknown,
    Off,
    /// `group_by` and `aggs` with each input column `i` read as the stored row's
    /// column `columns[i]` (the scan's target list), so nothing is copied per row.
    On {
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
    },
    /// On, the expressions not rewritten yet (at the first page).
    Ready,
}

/// The transition states of the group `row` belongs to: the one group of a plain
/// aggregate, else the group of its key (`lookup_hash_entries`), made at its first
/// row and kept in first-seen order.
#[inline]
fn group_states<'g>(
    group_by: &[Expr],
    naggs: usize,
    row: &[Datum],
    plain: &'g mut [Trans],
    key: &mut Vec<Datum>,
    index: &mut HashMap<Vec<Datum>, usize>,
    groups: &'g mut Vec<(Vec<Datum>, Vec<Trans>)>,
) -> ExecResult<&'g mut [Trans]> {
    if group_by.is_empty() {
        return Ok(plain);
    }
    hashed_group_states(group_by, naggs, row, key, index, groups)
}

/// `group_states` of a grouped aggregate, out of line (a plain aggregate's row loop
/// only tests `group_by`).
#[inline(never)]
fn hashed_group_states<'g>(
    group_by: &[Expr],
    naggs: usize,
    row: &[Datum],
    key: &mut Vec<Datum>,
    index: &mut HashMap<Vec<Datum>, usize>,
    groups: &'g mut Vec<(Vec<Datum>, Vec<Trans>)>,
) -> ExecResult<&'g mut [Trans]> {
    key.clear();
    for e in group_by {
        key.push(e.eval(row)?);
    }
    let g = match index.get(key) {
        Some(&g) => g,
        None => {
            groups.push((key.clone(), vec![Trans::new(); naggs]));
            index.insert(key.clone(), groups.len() - 1);
            groups.len() - 1
        }
    };
    Ok(&mut groups[g].1)
}

impl AggState {
    pub fn init(
        child: PlanState,
        strategy: AggStrategy,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
        input: &[Column],
    ) -> Self {
        let plain = vec![Trans::new(); aggs.len()];
        let numeric =
            aggs.iter().map(|a| a.func == AggFunc::Sum && a.output_column(input).ty == ColType::Numeric).collect();
        AggState {
            children: vec![child],
            inputs: AsyncInputs::default(),
            strategy,
            split: AggSplit::Simple,
            group_by,
            aggs,
            numeric,
            input_names: input.iter().map(|c| c.name.clone()).collect(),
            plain,
            current: None,
            index: HashMap::new(),
            groups: Vec::new(),
            key: Vec::new(),
            filled: false,
            next_group: 0,
            slot: Vec::new(),
            page_mode: PageMode::Unknown,
        }
    }

    /// The half of a partial aggregation this node is (Simple by default).
    pub fn with_split(mut self, split: AggSplit) -> Self {
        self.split = split;
        self
    }

    #[inline]
    fn advance(&mut self, es: &mut EState) -> ExecResult<()> {
        es.clock.charge(es.cost.agg_row_ns);
        let row = self.children[0].node.slot();
        let (key, index, groups) = (&mut self.key, &mut self.index, &mut self.groups);
        let trans = group_states(&self.group_by, self.aggs.len(), row, &mut self.plain, key, index, groups)?;
        advance_trans(trans, &self.aggs, row, self.split)
    }

    /// Page mode: the child's next page of rows into the transition states, charged
    /// as row by row. False when page mode is off, or not usable for this call
    /// (`exec_proc_node_page`): the row-by-row loop then takes the next row.
    fn advance_page(&mut self, es: &mut EState) -> ExecResult<bool> {
        if let PageMode::Unknown = self.page_mode {
            // Only over a node that has it (a SeqScan), called synchronously.
            let on = self.inputs.is_sync(0) && self.children[0].node.has_page_mode();
            self.page_mode = if on { PageMode::Ready } else { PageMode::Off };
        }
        if let PageMode::Off = self.page_mode {
            return Ok(false);
        }
        let Some(page) = exec_proc_node_page(&mut self.children[0], es) else { return Ok(false) };
        let n = page.nrows();
        if n == 0 {
            self.filled = true;
            return Ok(true);
        }
        if let PageMode::Ready = self.page_mode {
            // At the first page: the scan's target list does not change during the run.
            let col = |i: usize| page.columns.map_or(i, |cols| cols[i]);
            let group_by = self.group_by.iter().map(|e| e.map_cols(&col)).collect();
            let aggs = self.aggs.iter().map(|a| AggCall {
                func: a.func,
                arg: a.arg.as_ref().map(|e| e.map_cols(&col)),
                distinct: a.distinct,
            });
            self.page_mode = PageMode::On { group_by, aggs: aggs.collect() };
        }
        es.clock.charge(es.cost.agg_row_ns * n as u64);
        if let PageMode::On { group_by, aggs } = &self.page_mode {
            if group_by.is_empty() && reads_columns_only(aggs) {
                advance_plain_page(&mut self.plain, aggs, page.rows, page.width, self.split);
                return Ok(true);
            }
            for row in page.rows.chunks_exact(page.width) {
                let (key, index, groups) = (&mut self.key, &mut self.index, &mut self.groups);
                let trans = group_states(group_by, aggs.len(), row, &mut self.plain, key, index, groups)?;
                advance_trans(trans, aggs, row, self.split)?;
            }
        }
        Ok(true)
    }

    /// GroupAggregate's step (`agg_retrieve_direct` over sorted input): the row joins
    /// the current group if its key is the same; otherwise the current group is
    /// finished into the slot (true: a row to return) and the row starts the next.
    fn advance_sorted(&mut self, es: &mut EState) -> ExecResult<bool> {
        es.clock.charge(es.cost.agg_row_ns);
        let row = self.children[0].node.slot();
        self.key.clear();
        for e in &self.group_by {
            self.key.push(e.eval(row)?);
        }
        let finished = match &mut self.current {
            Some((k, trans)) if *k == self.key => {
                advance_trans(trans, &self.aggs, row, self.split)?;
                return Ok(false);
            }
            current => current.replace((self.key.clone(), vec![Trans::new(); self.aggs.len()])),
        };
        if let Some((_, trans)) = &mut self.current {
            advance_trans(trans, &self.aggs, row, self.split)?;
        }
        Ok(match finished {
            Some(group) => {
                self.fill_slot(group);
                true
            }
            None => false,
        })
    }

    /// A finished group's output row: its key, then each aggregate's final value.
    fn fill_slot(&mut self, (key, trans): (Vec<Datum>, Vec<Trans>)) {
        self.slot.clear();
        self.slot.extend(key);
        self.slot.extend(trans.iter().zip(&self.aggs).zip(&self.numeric).map(|((t, a), n)| t.finish(a.func, *n)));
    }

    /// A DISTINCT's Unique (nodeUnique.c's `ExecUnique`): a row goes out as soon as
    /// its key differs from the previous row's, so a LIMIT above stops the input
    /// at the first row of the last group it needs, not past that group's end as a
    /// GroupAggregate would read.
    fn next_unique(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        while !self.filled {
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => {
                    es.clock.charge(es.cost.agg_row_ns);
                    let row = self.children[0].node.slot();
                    self.key.clear();
                    for e in &self.group_by {
                        self.key.push(e.eval(row)?);
                    }
                    if matches!(&self.current, Some((k, _)) if *k == self.key) {
                        continue;
                    }
                    self.current = Some((self.key.clone(), Vec::new()));
                    self.slot.clear();
                    self.slot.extend(self.key.iter().cloned());
                    return Ok(ExecStatus::Row);
                }
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => self.filled = true,
            }
        }
        Ok(ExecStatus::Done)
    }

    /// GroupAggregate: read until a group is complete; at the end, the last group.
    fn next_sorted(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        while !self.filled {
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row if self.advance_sorted(es)? => return Ok(ExecStatus::Row),
                ExecStatus::Row => {}
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => self.filled = true,
            }
        }
        Ok(match self.current.take() {
            Some(group) => {
                self.fill_slot(group);
                ExecStatus::Row
            }
            None => ExecStatus::Done,
        })
    }

    fn emit(&mut self) -> ExecStatus {
        if self.group_by.is_empty() {
            if self.next_group > 0 {
                return ExecStatus::Done;
            }
            self.next_group = 1;
            self.slot.clear();
            self.slot
                .extend(self.plain.iter().zip(&self.aggs).zip(&self.numeric).map(|((t, a), n)| t.finish(a.func, *n)));
            return ExecStatus::Row;
        }
        let Some((key, trans)) = self.groups.get(self.next_group) else {
            return ExecStatus::Done;
        };
        self.next_group += 1;
        self.slot.clear();
        self.slot.extend_from_slice(key);
        self.slot.extend(trans.iter().zip(&self.aggs).zip(&self.numeric).map(|((t, a), n)| t.finish(a.func, *n)));
        ExecStatus::Row
    }
}

impl Through for AggState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for AggState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.strategy == AggStrategy::Unique && !self.group_by.is_empty() {
            return self.next_unique(es);
        }
        if self.strategy == AggStrategy::Sorted && !self.group_by.is_empty() {
            return self.next_sorted(es);
        }
        while !self.filled {
            if self.advance_page(es)? {
                continue;
            }
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => self.advance(es)?,
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => self.filled = true,
            }
        }
        Ok(self.emit())
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.inputs.cancel_all(es);
        self.plain = vec![Trans::new(); self.aggs.len()];
        self.current = None;
        self.index.clear();
        self.groups.clear();
        self.filled = false;
        self.next_group = 0;
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
        if self.strategy == AggStrategy::Unique {
            // create_upper_unique_plan's Unique: its output, no keys shown.
            e.node_type = "Unique".into();
            let refs: Vec<String> = (0..self.input_names.len()).map(|i| format!("${i}")).collect();
            for g in &self.group_by {
                e.push_output(g.to_sql(&refs));
            }
            return;
        }
        e.node_type = "Aggregate".into();
        e.strategy = Some(match self.strategy {
            AggStrategy::Plain => "Plain".into(),
            AggStrategy::Hashed => "Hashed".into(),
            AggStrategy::Sorted | AggStrategy::Unique => "Sorted".into(),
        });
        // `$N` is the child's N-th output column; EXPLAIN resolves it (sum(ft1.a)).
        let refs: Vec<String> = (0..self.input_names.len()).map(|i| format!("${i}")).collect();
        for g in &self.group_by {
            e.push_output(g.to_sql(&refs));
        }
        let partial = if self.split == AggSplit::Partial { "PARTIAL " } else { "" };
        for a in &self.aggs {
            e.push_output(match (&a.func, &a.arg) {
                (AggFunc::CountStar, _) | (_, None) => format!("{partial}{}(*)", a.func.name()),
                (f, Some(arg)) => {
                    let d = if a.distinct { "DISTINCT " } else { "" };
                    format!("{partial}{}({d}{})", f.name(), arg.to_sql(&refs))
                }
            });
        }
        match self.split {
            AggSplit::Simple => {}
            AggSplit::Partial => e.details.push(("Partial Mode".into(), "Partial".into())),
            AggSplit::Finalize => e.details.push(("Partial Mode".into(), "Finalize".into())),
        }
        if !self.group_by.is_empty() {
            let k: Vec<String> = self.group_by.iter().map(|g| g.to_sql(&refs)).collect();
            e.details.push(("Group Key".into(), k.join(", ")));
            if self.split != AggSplit::Partial {
                // The keys a select list folded into this node leaves out are still
                // returned (resjunk entries of the final target list).
                let keys: Vec<String> = (0..self.group_by.len()).map(|k| k.to_string()).collect();
                e.details.push((crate::instrument::GROUP_OUTPUTS.into(), keys.join(",")));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::clock::Clock;
    use crate::instrument::Instrumentation;
    use crate::knobs::Knobs;
    use crate::plan::{AggCall, AggFunc, AggSplit, AggStrategy, Expr, Plan};
    use crate::scenario::Scenario;
    use crate::types::{ColType, Column, Datum};

    /// Result rows, every node's counters and the clock at the end of scenario A's
    /// table (`t_local(a, b, c)`, `rows` rows) under `plan`. `row_by_row`: a rescan
    /// pending elsewhere (a node id no plan has) keeps the Aggregate off page mode
    /// (`exec_proc_node_page` declines), so each row is an `exec_proc_node` call.
    fn run(rows: usize, plan: Option<Plan>, row_by_row: bool) -> (Vec<Vec<Datum>>, Vec<Instrumentation>, u64) {
        let knobs = Knobs { shards: Some(1), rows_per_shard: Some(rows), ..Default::default() };
        let mut s = Scenario::build("A", &knobs).expect("scenario A");
        if let Some(p) = plan {
            s.plan = p;
        }
        let mut run = s.start(false, Clock::virtual_clock(), false).expect("start");
        if row_by_row {
            run.es.chg_param_pending.push(usize::MAX);
        }
        run.run_to_end().expect("runs");
        (run.rows.clone(), run.es.instr.iter().map(Instrumentation::finished).collect(), run.es.now())
    }

    /// `SELECT a, count(*), sum(b), min(b), max(b), avg(b), count(a) FROM t_local
    /// GROUP BY a`, the scan returning (b, a): its target list is not the table's
    /// column order, so the page's rows are read through it.
    fn hashed() -> Plan {
        grouped(true)
    }

    /// `grouped(false)`: the same aggregates without GROUP BY (a plain aggregate of
    /// several states, which a page advances an aggregate at a time).
    fn grouped(by_a: bool) -> Plan {
        let columns = vec![Column::new("b", ColType::Int), Column::new("a", ColType::Int)];
        let child = Plan::SeqScan { table: "t_local".into(), columns, alias: None };
        let agg = |func, arg| AggCall { func, arg, distinct: false };
        let b = || Some(Expr::Col(0));
        Plan::Agg {
            child: Box::new(child),
            strategy: if by_a { AggStrategy::Hashed } else { AggStrategy::Plain },
            group_by: if by_a { vec![Expr::Col(1)] } else { vec![] },
            aggs: vec![
                agg(AggFunc::CountStar, None),
                agg(AggFunc::Sum, b()),
                agg(AggFunc::Min, b()),
                agg(AggFunc::Max, b()),
                agg(AggFunc::Avg, b()),
                agg(AggFunc::Count, Some(Expr::Col(1))),
            ],
            split: AggSplit::Simple,
        }
    }

    /// A page's sum/avg down an int8 column (`Trans::sum_int_column`'s tight loop)
    /// ends as row by row, through NULLs, an overflow into numeric, a float, and a
    /// state that starts NULL.
    #[test]
    fn a_page_of_sums_is_row_by_row() {
        use super::{advance_plain_page, advance_trans, Trans};
        let col = |vals: &[Datum]| vals.iter().flat_map(|v| [Datum::Int(7), v.clone()]).collect::<Vec<_>>();
        let aggs = vec![
            AggCall { func: AggFunc::Sum, arg: Some(Expr::Col(1)), distinct: false },
            AggCall { func: AggFunc::Avg, arg: Some(Expr::Col(1)), distinct: false },
            AggCall { func: AggFunc::CountStar, arg: None, distinct: false },
        ];
        let pages: Vec<Vec<Datum>> = vec![
            col(&[Datum::Int(1), Datum::Null, Datum::Int(2), Datum::Int(3)]),
            col(&[Datum::Null, Datum::Int(4)]),
            col(&[Datum::Int(i64::MAX - 1), Datum::Int(5), Datum::Int(6)]),
            col(&[Datum::Float(0.5), Datum::Int(1)]),
            vec![],
        ];
        let mut paged: Vec<Trans> = (0..aggs.len()).map(|_| Trans::new()).collect();
        let mut by_row: Vec<Trans> = (0..aggs.len()).map(|_| Trans::new()).collect();
        for page in &pages {
            advance_plain_page(&mut paged, &aggs, page, 2, AggSplit::Simple);
            for row in page.chunks_exact(2) {
                advance_trans(&mut by_row, &aggs, row, AggSplit::Simple).unwrap();
            }
            for (k, a) in aggs.iter().enumerate() {
                assert_eq!(paged[k].count, by_row[k].count, "{:?}: count", a.func);
                assert_eq!(paged[k].finish(a.func, false), by_row[k].finish(a.func, false), "{:?}", a.func);
            }
        }
        assert!(!matches!(paged[0].sum, Datum::Int(_)), "the overflow went on in numeric: {:?}", paged[0].sum);
    }

    /// `sum(bigint)` is numeric in PostgreSQL (`numeric_poly_sum`), `sum(int)` bigint
    /// (`int4_sum`): the output column's type says so, and the value goes out as a
    /// numeric or an int8 accordingly.
    #[test]
    fn the_sum_of_a_bigint_is_numeric_of_an_int_bigint() {
        use crate::plan::SqlType;
        let input = vec![Column::typed("big", SqlType::Int8), Column::typed("small", SqlType::Int4)];
        let sum = |c| AggCall { func: AggFunc::Sum, arg: Some(Expr::Col(c)), distinct: false };
        assert_eq!(sum(0).output_column(&input).ty, ColType::Numeric);
        assert_eq!(sum(1).output_column(&input).ty, ColType::Int);
        assert_eq!(sum(1).output_column(&input).sql_type, Some(SqlType::Int8));
        let avg = AggCall { func: AggFunc::Avg, arg: Some(Expr::Col(0)), distinct: false };
        assert_eq!(avg.output_column(&input).ty, ColType::Numeric);
        let mut t = super::Trans::new();
        t.advance(AggFunc::Sum, Datum::Int(40));
        t.advance(AggFunc::Sum, Datum::Int(2));
        assert_eq!(t.finish(AggFunc::Sum, true), Datum::numeric(crate::numeric::Numeric::from_i64(42)));
        assert!(matches!(t.finish(AggFunc::Sum, true), Datum::Numeric(_)));
        assert!(matches!(t.finish(AggFunc::Sum, false), Datum::Int(42)));
        // The remote side's pushed-down sum is read as the same type.
        let mut remote = crate::plan::RemoteQuery::scan("t", input.clone(), &[]);
        remote.targets = vec![crate::plan::RemoteTarget::Agg(AggFunc::Sum, Some(0), false)];
        assert_eq!(remote.output_columns()[0].ty, ColType::Numeric);
    }

    #[test]
    fn page_mode_is_row_by_row_in_rows_counts_and_virtual_times() {
        // 1000 rows: pages of 256 and a short last one; 0 rows: only the empty page.
        for rows in [0, 1, 1000] {
            for plan in [None, Some(hashed()), Some(grouped(false))] {
                let paged = run(rows, plan.clone(), false);
                let by_row = run(rows, plan.clone(), true);
                assert_eq!(paged.0, by_row.0, "{rows} rows: result");
                assert_eq!(paged.1, by_row.1, "{rows} rows: instrumentation");
                assert_eq!(paged.2, by_row.2, "{rows} rows: clock at the end");
                let scan = &paged.1[1];
                assert_eq!(scan.ntuples, rows as u64, "{rows} rows: the scan's rows");
            }
        }
        // The grouped result against the data: b's sum per a (a = b % 100).
        let (rows, _, _) = run(1000, Some(hashed()), false);
        assert_eq!(rows.len(), 100);
        for r in &rows {
            let a = r[0].as_int().expect("a");
            let sum: i64 = (0..1000).filter(|b| b % 100 == a).sum();
            assert_eq!(r[1], Datum::Int(10), "count(*) of a = {a}");
            assert_eq!(r[2], Datum::Int(sum), "sum(b) of a = {a}");
        }
    }
}
