//! Incremental Sort (nodeIncrementalSort.c): the input is already ordered by the first
//! `presorted` sort keys; rows are sorted a batch at a time, never the whole input.
//!
//! Two modes, as PostgreSQL's `ExecIncrementalSort` switches between them:
//!
//! - **full sort**: at least `MIN_GROUP_SIZE` (32) rows are gathered — fewer if a
//!   LIMIT above needs fewer (`set_tuple_bound`, ExecSetTupleBound) — then more while
//!   their prefix equals the last one gathered (the pivot); the batch is sorted by
//!   every key (it may hold several prefix groups). A row with another prefix ends the
//!   batch and is carried to the next one. One such batch is one `Full-sort Groups`.
//! - **presorted prefix**: a full-sort batch that grows past `MAX_FULL_SORT_GROUP_SIZE`
//!   (64) rows is taken to be one large prefix group: its rows move to a second sort
//!   by the remaining keys only (`switchToPresortedPrefixMode`; the first rows of
//!   another prefix, if the batch began with them, are sorted and returned as a batch
//!   of their own first), and rows are read while the prefix stays the same. One such
//!   batch is one `Pre-sorted Groups`.
//!
//! Under a bound (a LIMIT above), the rows still wanted (`bound - bound_done`) bound
//! each sort: past twice that many rows a sort keeps only the least ones (the
//! tuplesort's top-N heapsort, EXPLAIN's `Sort Method: top-N heapsort`).
//!
//! Invariants:
//! - every input row comes out exactly once, in the keys' order (the input's prefix
//!   order holds, ties are broken by the remaining keys; a batch's sort is stable);
//! - the node's state lives in the node: a Wait from the child returns Wait and the
//!   same call resumes where it was (the row counts of the current call included);
//! - rescan forgets every batch and rescans the child; the group counters add up
//!   over loops, as PostgreSQL's instrumentation does.
//!
//! Where it departs from PostgreSQL: the tuplesort is in memory only (no external
//! sort past `work_mem`); its top-N mode keeps the least rows by sorting and cutting
//! where tuplesort keeps a heap (the rows kept are the same up to ties); the memory
//! EXPLAIN ANALYZE prints is an estimate in PostgreSQL's terms (its sort array of at
//! least 1024 entries of 24 bytes, and a rounded allocation per row), not a
//! measurement, so it may differ from PostgreSQL's by some kB (as PostgreSQL's, each
//! batch reports the most any batch of its sort has taken so far). Backward scans and
//! mark/restore are not supported (PostgreSQL's node does not support them either).

use super::{copy_row, exec_proc_node, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::SortKey;
use crate::types::Datum;
use std::cmp::Ordering;

/// Rows gathered before prefix groups are looked for (`DEFAULT_MIN_GROUP_SIZE`).
const MIN_GROUP_SIZE: u64 = 32;
/// A full-sort batch past this many rows is taken for one large prefix group
/// (`DEFAULT_MAX_FULL_SORT_GROUP_SIZE`).
const MAX_FULL_SORT_GROUP_SIZE: u64 = 2 * MIN_GROUP_SIZE;

/// `IncrementalSortExecutionStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    LoadFullSort,
    LoadPrefixSort,
    ReadFullSort,
    ReadPrefixSort,
}

/// A minimal tuplesort: rows buffered flat, sorted stably by `keys`, read in order.
/// With a bound it keeps only the `bound` least rows once it holds more than twice
/// that many (`make_bounded_heap`).
#[derive(Clone, Default)]
struct TupleSort {
    keys: Vec<SortKey>,
    width: usize,
    rows: Vec<Datum>,
    order: Vec<usize>,
    next: usize,
    bound: Option<u64>,
    bound_used: bool,
    /// Rows put since the last reset.
    put: u64,
    /// The most memory any batch of this sort took, in kB: what tuplesort reports
    /// after each batch (`tuplesort_updatemax` keeps the maximum across resets).
    max_kb: u64,
}

impl TupleSort {
    fn new(keys: Vec<SortKey>, width: usize) -> Self {
        TupleSort { keys, width: width.max(1), ..Default::default() }
    }

    /// `tuplesort_reset`: empty, unbounded.
    fn reset(&mut self) {
        self.rows.clear();
        self.order.clear();
        self.next = 0;
        self.bound = None;
        self.bound_used = false;
        self.put = 0;
    }

    fn len(&self) -> usize {
        self.rows.len() / self.width
    }

    fn row(&self, i: usize) -> &[Datum] {
        &self.rows[i * self.width..(i + 1) * self.width]
    }

    fn put_row(&mut self, row: &[Datum], es: &mut EState) {
        self.rows.extend_from_slice(row);
        self.put += 1;
        if let Some(b) = self.bound {
            if self.len() as u64 > 2 * b {
                // The switch to a bounded heap: only the `b` least rows stay.
                self.sort(es);
                self.keep_least(b as usize);
                self.bound_used = true;
            }
        }
    }

    /// Sorts the rows held (stable: equal keys keep their arrival order).
    fn sort(&mut self, es: &mut EState) {
        let n = self.len();
        let w = self.width;
        let order = super::node_sort::sorted_order(&self.keys, &self.rows, w);
        let log = (usize::BITS - n.leading_zeros()) as u64;
        es.clock.charge(es.cost.sort_cmp_ns * n as u64 * log.max(1));
        self.order = order;
    }

    /// Keeps the first `k` rows of the sorted order, compacted.
    fn keep_least(&mut self, k: usize) {
        let w = self.width;
        let mut kept = Vec::with_capacity(k.min(self.order.len()) * w);
        for &i in self.order.iter().take(k) {
            kept.extend_from_slice(&self.rows[i * w..(i + 1) * w]);
        }
        self.rows = kept;
        self.order = (0..self.len()).collect();
    }

    /// `tuplesort_performsort`.
    fn perform_sort(&mut self, es: &mut EState) {
        self.sort(es);
        if let (Some(b), true) = (self.bound, self.bound_used) {
            self.keep_least(b as usize);
        }
        self.next = 0;
        self.max_kb = self.max_kb.max(self.space_kb());
    }

    /// `tuplesort_gettupleslot`: the next row in order, if any.
    fn next_row(&mut self) -> Option<usize> {
        let i = *self.order.get(self.next)?;
        self.next += 1;
        Some(i)
    }

    /// The memory PostgreSQL's tuplesort would report, in kB (an estimate: its
    /// SortTuple array of at least 1024 entries of 24 bytes, and ~48 bytes a row).
    fn space_kb(&self) -> u64 {
        let n = self.len() as u64;
        let bytes = 24 * n.max(1024) + 48 * n;
        bytes.div_ceil(1024)
    }

    fn method(&self) -> Method {
        if self.bound_used {
            Method::TopN
        } else {
            Method::Quicksort
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    TopN,
    Quicksort,
}

/// `IncrementalSortGroupInfo`: one mode's batches, their sort methods and memory.
#[derive(Clone, Default)]
struct GroupInfo {
    count: u64,
    max_kb: u64,
    total_kb: u64,
    top_n: bool,
    quicksort: bool,
}

impl GroupInfo {
    /// `INSTRUMENT_SORT_GROUP`: after each batch's sort.
    fn add(&mut self, s: &TupleSort) {
        self.count += 1;
        let kb = s.max_kb;
        self.max_kb = self.max_kb.max(kb);
        self.total_kb += kb;
        match s.method() {
            Method::TopN => self.top_n = true,
            Method::Quicksort => self.quicksort = true,
        }
    }

    /// `show_incremental_sort_group_info`'s TEXT after the label: the count, the
    /// methods in tuplesort's order, the average and peak memory.
    fn text(&self) -> String {
        let methods: Vec<&str> = [(self.top_n, "top-N heapsort"), (self.quicksort, "quicksort")]
            .iter()
            .filter(|m| m.0)
            .map(|m| m.1)
            .collect();
        let plural = if methods.len() > 1 { "s" } else { "" };
        format!(
            "{}  Sort Method{plural}: {}  Average Memory: {}kB  Peak Memory: {}kB",
            self.count,
            methods.join(", "),
            self.total_kb / self.count.max(1),
            self.max_kb
        )
    }
}

#[derive(Clone)]
pub struct IncrementalSortState {
    children: Vec<PlanState>,
    keys: Vec<SortKey>,
    presorted: usize,
    status: Status,
    full: TupleSort,
    prefix: TupleSort,
    /// The row the current prefix group is compared with, or a row carried over to
    /// the next batch.
    group_pivot: Option<Vec<Datum>>,
    /// The row read from the full sort that begins the next prefix group.
    transfer: Option<Vec<Datum>>,
    n_fullsort_remaining: u64,
    outer_done: bool,
    bound: Option<u64>,
    bound_done: u64,
    /// The current call's rows counted (`nTuples`), kept across a Wait.
    n_tuples: u64,
    min_group_size: u64,
    /// The full-sort batch's prologue ran (it runs once per batch, not per resume).
    loading: bool,
    /// The last call returned Wait: this one resumes it.
    resuming: bool,
    full_info: GroupInfo,
    prefix_info: GroupInfo,
    slot: Vec<Datum>,
    /// The keys as EXPLAIN prints them.
    pub key_text: String,
    pub presorted_text: String,
}

impl IncrementalSortState {
    pub fn init(child: PlanState, keys: Vec<SortKey>, presorted: usize, width: usize) -> Self {
        let presorted = presorted.clamp(1, keys.len().max(1));
        IncrementalSortState {
            children: vec![child],
            full: TupleSort::new(keys.clone(), width),
            prefix: TupleSort::new(keys[presorted.min(keys.len())..].to_vec(), width),
            keys,
            presorted,
            status: Status::LoadFullSort,
            group_pivot: None,
            transfer: None,
            n_fullsort_remaining: 0,
            outer_done: false,
            bound: None,
            bound_done: 0,
            n_tuples: 0,
            min_group_size: MIN_GROUP_SIZE,
            loading: false,
            resuming: false,
            full_info: GroupInfo::default(),
            prefix_info: GroupInfo::default(),
            slot: vec![],
            key_text: String::new(),
            presorted_text: String::new(),
        }
    }

    /// `isCurrentGroup`: equal presorted keys (NULL equals NULL here).
    fn is_current_group(&self, pivot: &[Datum], row: &[Datum]) -> bool {
        self.keys[..self.presorted]
            .iter()
            .rev()
            .all(|k| k.expr.eval(pivot).ok().cmp(&k.expr.eval(row).ok()) == Ordering::Equal)
    }

    fn remaining_bound(&self) -> Option<u64> {
        self.bound.map(|b| b.saturating_sub(self.bound_done))
    }

    fn note_bound_done(&mut self, n: u64) {
        if let Some(b) = self.bound {
            self.bound_done = b.min(self.bound_done + n);
        }
    }

    /// The start of a full-sort batch: the sort reset (bounded when fewer rows than
    /// the minimum group are still wanted), the carried-over row put first.
    fn begin_full_batch(&mut self, es: &mut EState) {
        self.full.reset();
        self.min_group_size = match self.remaining_bound() {
            Some(current) => {
                if current < MIN_GROUP_SIZE {
                    self.full.bound = Some(current);
                }
                MIN_GROUP_SIZE.min(current)
            }
            None => MIN_GROUP_SIZE,
        };
        if let Some(pivot) = self.group_pivot.take() {
            self.full.put_row(&pivot, es);
            self.n_tuples += 1;
            // Still the pivot only when the minimum group is one row.
            if self.n_tuples == self.min_group_size {
                self.group_pivot = Some(pivot);
            }
        }
    }

    /// Reads the child into the full sort until the batch ends (see the module doc).
    fn load_full(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            match exec_proc_node(&mut self.children[0], es)? {
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => {
                    self.outer_done = true;
                    self.full.perform_sort(es);
                    self.full_info.add(&self.full);
                    self.status = Status::ReadFullSort;
                    return Ok(ExecStatus::Row);
                }
                ExecStatus::Row => {}
            }
            let row = self.children[0].node.slot().to_vec();
            super::node_sort::check_keys(&self.keys, &row)?;
            if self.n_tuples < self.min_group_size {
                self.full.put_row(&row, es);
                self.n_tuples += 1;
                if self.n_tuples == self.min_group_size {
                    self.group_pivot = Some(row);
                }
            } else if self.group_pivot.as_deref().is_some_and(|p| self.is_current_group(p, &row)) {
                self.full.put_row(&row, es);
                self.n_tuples += 1;
            } else {
                // Another prefix: carried over; this batch is complete.
                self.group_pivot = Some(row);
                self.note_bound_done(self.n_tuples);
                self.full.perform_sort(es);
                self.full_info.add(&self.full);
                self.status = Status::ReadFullSort;
                return Ok(ExecStatus::Row);
            }
            if self.n_tuples > MAX_FULL_SORT_GROUP_SIZE {
                // Likely one large prefix group: move to the presorted prefix mode.
                self.group_pivot = None;
                self.full.perform_sort(es);
                self.full_info.add(&self.full);
                if self.full.bound_used {
                    self.n_tuples = self.n_tuples.min(self.remaining_bound().unwrap_or(u64::MAX));
                }
                self.n_fullsort_remaining = self.n_tuples;
                self.switch_to_prefix_mode(es);
                return Ok(ExecStatus::Row);
            }
        }
    }

    /// `switchToPresortedPrefixMode`: moves the full sort's leading prefix group to the
    /// prefix sort; all of it, so more rows of that group are read next
    /// (LoadPrefixSort), or only its first group, which is then returned
    /// (ReadPrefixSort) before the next is moved.
    fn switch_to_prefix_mode(&mut self, es: &mut EState) {
        self.prefix.reset();
        self.prefix.bound = self.remaining_bound();
        let mut moved = 0;
        while moved < self.n_fullsort_remaining {
            if moved == 0 {
                if let Some(t) = self.transfer.clone() {
                    self.prefix.put_row(&t, es);
                    self.group_pivot = Some(t);
                    moved += 1;
                    continue;
                }
            }
            let Some(i) = self.full.next_row() else { break };
            let row = self.full.row(i).to_vec();
            if self.group_pivot.is_none() {
                self.group_pivot = Some(row.clone());
            }
            let same = self.group_pivot.as_deref().is_some_and(|p| self.is_current_group(p, &row));
            self.transfer = Some(row);
            if same {
                let t = self.transfer.clone().unwrap_or_default();
                self.prefix.put_row(&t, es);
            } else {
                self.group_pivot = None;
                break;
            }
            moved += 1;
        }
        self.n_fullsort_remaining -= moved;
        if self.n_fullsort_remaining == 0 {
            self.group_pivot = self.transfer.take();
            self.status = Status::LoadPrefixSort;
        } else {
            self.prefix.perform_sort(es);
            self.prefix_info.add(&self.prefix);
            self.note_bound_done(moved);
            self.status = Status::ReadPrefixSort;
        }
    }

    /// Reads the rest of a large prefix group into the prefix sort, then sorts it.
    fn load_prefix(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            match exec_proc_node(&mut self.children[0], es)? {
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => {
                    self.outer_done = true;
                    break;
                }
                ExecStatus::Row => {}
            }
            let row = self.children[0].node.slot().to_vec();
            super::node_sort::check_keys(&self.keys, &row)?;
            if self.group_pivot.as_deref().is_some_and(|p| self.is_current_group(p, &row)) {
                self.prefix.put_row(&row, es);
                self.n_tuples += 1;
            } else {
                self.group_pivot = Some(row);
                break;
            }
        }
        self.prefix.perform_sort(es);
        self.prefix_info.add(&self.prefix);
        self.status = Status::ReadPrefixSort;
        self.note_bound_done(self.n_tuples);
        Ok(ExecStatus::Row)
    }

    /// The next row of the batch being read, into the slot.
    fn read(&mut self) -> bool {
        let sort = if self.status == Status::ReadFullSort { &mut self.full } else { &mut self.prefix };
        match sort.next_row() {
            Some(i) => {
                let w = sort.width;
                copy_row(&mut self.slot, &sort.rows[i * w..(i + 1) * w]);
                true
            }
            None => false,
        }
    }
}

impl ExecNode for IncrementalSortState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if !self.resuming {
            self.n_tuples = 0;
        }
        self.resuming = false;
        loop {
            let step = match self.status {
                Status::ReadFullSort | Status::ReadPrefixSort => {
                    if self.read() {
                        return Ok(ExecStatus::Row);
                    }
                    if self.outer_done {
                        return Ok(ExecStatus::Done);
                    }
                    if self.n_fullsort_remaining > 0 {
                        self.switch_to_prefix_mode(es);
                    } else {
                        self.status = Status::LoadFullSort;
                        self.loading = false;
                    }
                    continue;
                }
                Status::LoadFullSort => {
                    if !self.loading {
                        self.loading = true;
                        self.begin_full_batch(es);
                    }
                    self.load_full(es)?
                }
                Status::LoadPrefixSort => self.load_prefix(es)?,
            };
            if step == ExecStatus::Wait {
                self.resuming = true;
                return Ok(ExecStatus::Wait);
            }
            self.loading = false;
        }
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.status = Status::LoadFullSort;
        self.full.reset();
        self.prefix.reset();
        self.group_pivot = None;
        self.transfer = None;
        self.n_fullsort_remaining = 0;
        self.outer_done = false;
        self.bound_done = 0;
        self.n_tuples = 0;
        self.loading = false;
        self.resuming = false;
        exec_rescan(&mut self.children[0], es)
    }
    fn exec_end(&mut self, es: &mut EState) {
        super::exec_end_node(&mut self.children[0], es);
    }
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn children(&self) -> &[PlanState] {
        &self.children
    }
    fn set_tuple_bound(&mut self, bound: Option<u64>) {
        self.bound = bound;
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Incremental Sort".into();
        e.details.push(("Sort Key".into(), self.key_text.clone()));
        e.details.push(("Presorted Key".into(), self.presorted_text.clone()));
        // show_incremental_sort_info: nothing before a first full-sort batch.
        if self.full_info.count > 0 {
            e.details.push(("Full-sort Groups".into(), self.full_info.text()));
            if self.prefix_info.count > 0 {
                e.details.push(("Pre-sorted Groups".into(), self.prefix_info.text()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::executor::test_rows::waiting_child;
    use crate::plan::Expr;

    /// An EState for the Incremental Sort (node 0) and its child (node 1).
    fn estate() -> EState {
        let mut es = EState::new(Clock::virtual_clock(), vec![], false, true);
        es.instr.push(Default::default());
        es.instr.push(Default::default());
        es
    }

    /// Rows (a, b) as the child returns them.
    fn pairs(rows: &[(i64, i64)]) -> Vec<Vec<Datum>> {
        rows.iter().map(|&(a, b)| vec![Datum::Int(a), Datum::Int(b)]).collect()
    }

    /// Runs an Incremental Sort on (a, b) presorted by a over `rows`, with `bound`.
    fn run(rows: Vec<(i64, i64)>, bound: Option<u64>, take: usize) -> (Vec<(i64, i64)>, IncrementalSortState) {
        let mut es = estate();
        // A Wait before each row: the node must resume where it was.
        let child = waiting_child(1, pairs(&rows));
        let keys = vec![SortKey::asc(0), SortKey { expr: Expr::Col(1), desc: false }];
        let mut n = IncrementalSortState::init(child, keys, 1, 2);
        n.set_tuple_bound(bound);
        let mut out = vec![];
        while out.len() < take {
            match n.exec_next(&mut es).unwrap() {
                ExecStatus::Row => out.push(match (&n.slot[0], &n.slot[1]) {
                    (Datum::Int(a), Datum::Int(b)) => (*a, *b),
                    _ => (-1, -1),
                }),
                ExecStatus::Wait => continue,
                ExecStatus::Done => break,
            }
        }
        (out, n)
    }

    fn sorted(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
        v.sort();
        v
    }

    /// Small groups: every row once, in order; full-sort batches of 32+ rows only.
    #[test]
    fn small_groups_are_full_sorted_in_batches() {
        let rows: Vec<(i64, i64)> = (0..1000).map(|i| (i / 10, (i * 7) % 100)).collect();
        let (out, n) = run(rows.clone(), None, usize::MAX);
        assert_eq!(out, sorted(rows));
        assert_eq!(n.prefix_info.count, 0);
        // Batches of 40 rows (32, then the rest of the 4th group of 10): 25 of them.
        assert_eq!(n.full_info.count, 25);
    }

    /// A large group switches to the presorted prefix mode.
    #[test]
    fn a_large_group_is_sorted_by_the_remaining_keys() {
        let mut rows: Vec<(i64, i64)> = (0..5).map(|i| (0, 10 - i)).collect();
        rows.extend((0..200).map(|i| (1, (i * 13) % 97)));
        rows.extend((0..3).map(|i| (2, 3 - i)));
        let (out, n) = run(rows.clone(), None, usize::MAX);
        assert_eq!(out, sorted(rows));
        // Full sorts: the first 65 rows, then the last rows (the carried one and the
        // rest); prefix sorts: the first group out of the first full sort, then the
        // large group (its 60 rows moved over and the 140 read after them).
        assert_eq!(n.full_info.count, 2);
        assert_eq!(n.prefix_info.count, 2);
    }

    /// Under LIMIT 10 over groups of 10: one full-sort batch of 10 + the rest of
    /// their group, as PostgreSQL reads 20 rows for `LIMIT 10` here.
    #[test]
    fn a_bound_shrinks_the_first_batch() {
        let rows: Vec<(i64, i64)> = (0..1000).map(|i| (i / 10, (i * 7) % 100)).collect();
        let (out, n) = run(rows.clone(), Some(10), 10);
        assert_eq!(out, sorted(rows)[..10].to_vec());
        assert_eq!(n.full_info.count, 1);
        assert_eq!(n.full_info.text(), "1  Sort Method: quicksort  Average Memory: 25kB  Peak Memory: 25kB");
    }

    /// Rescan starts over: the same rows again.
    #[test]
    fn rescan_starts_over() {
        let rows: Vec<(i64, i64)> = (0..100).map(|i| (i / 50, 100 - i)).collect();
        let mut es = estate();
        let child = waiting_child(1, pairs(&rows));
        let keys = vec![SortKey::asc(0), SortKey::asc(1)];
        let mut n = IncrementalSortState::init(child, keys, 1, 2);
        let count = |n: &mut IncrementalSortState, es: &mut EState| {
            let mut k = 0;
            loop {
                match n.exec_next(es).unwrap() {
                    ExecStatus::Row => k += 1,
                    ExecStatus::Wait => {}
                    ExecStatus::Done => return k,
                }
            }
        };
        assert_eq!(count(&mut n, &mut es), 100);
        n.exec_rescan(&mut es).unwrap();
        assert_eq!(count(&mut n, &mut es), 100);
    }
}
