//! Sort (nodeSort.c): reads its whole input (resuming across Waits, since the buffer
//! lives in the node), sorts, then returns rows in order.
//!
//! Invariants:
//! - No row comes out before the child is exhausted: a Sort over an async Append
//!   returns its first row only after the last shard's last row.
//! - Keys compare by `Datum`'s order: NULL above every value, so ASC puts NULLs last
//!   and DESC first (PostgreSQL's defaults; there is no `NULLS FIRST/LAST` here); text
//!   by bytes (the `C` collation). [`compare_rows`] is MergeAppend's comparison too.
//! - The sort is stable: rows with equal keys keep their input order, so a run's
//!   output is the same every time.
//! - Rows are buffered flat (`width` values each) and sorted through an index vector;
//!   rescan drops the buffer and rescans the child.
//!
//! Where it departs from PostgreSQL: nodeSort.c feeds tuplesort.c, which sorts in
//! `work_mem` or merges runs on disk, becomes a top-N heapsort under a Limit's bound
//! (`ExecSetTupleBound`), and leaves the order of equal keys open; here everything is
//! in memory, unbounded and stable. `ExecReScanSort` rewinds a finished random-access
//! sort when the child's parameters did not change; here a rescan sorts again.

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::tuplesort_space::{sort_space, SortInput, SortSpace};
use super::{exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::SortKey;
use crate::types::Datum;
use std::cmp::Ordering;

#[derive(Clone)]
pub struct SortState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    keys: Vec<SortKey>,
    width: usize,
    rows: Vec<Datum>,
    order: Vec<usize>,
    sorted: bool,
    next: usize,
    slot: Vec<Datum>,
    /// The keys as EXPLAIN prints them.
    pub key_text: String,
    /// The rows' column types where the planner knows them (tuple sizes).
    types: Vec<Option<crate::plan::SqlType>>,
    /// The columns in PostgreSQL's tuple order (`tlist_order`; tuple sizes).
    pub stored_order: Vec<usize>,
    /// Columns PostgreSQL's tuples hold that the rows do not (`tlist_order`).
    pub junk: Vec<crate::plan::SqlType>,
    /// The rows a Limit above needs (`ExecSetTupleBound`): tuplesort's bound.
    bound: Option<u64>,
    /// The finished sort's method and memory, worked out when EXPLAIN first asks.
    space: std::cell::OnceCell<SortSpace>,
    /// `work_mem` (kB) when the plan started: tuplesort's memory.
    pub work_mem_kb: u64,
}

/// Sort keys as EXPLAIN prints them, e.g. `score DESC`.
pub fn sort_key_text(keys: &[SortKey], names: &[String]) -> String {
    let keys: Vec<String> =
        keys.iter().map(|k| format!("{}{}", k.expr.to_sql(names), if k.desc { " DESC" } else { "" })).collect();
    keys.join(", ")
}

/// Evaluates the keys that are expressions over a row as it comes in, so that an
/// error in one (`ORDER BY 1/a`) is raised for that row, as PostgreSQL's child
/// projection computes them as (resjunk) columns before the Sort sees the row; the
/// comparisons then cannot meet an error.
pub fn check_keys(keys: &[SortKey], row: &[Datum]) -> ExecResult<()> {
    for k in keys {
        if !matches!(k.expr, crate::plan::Expr::Col(_)) {
            k.expr.eval(row)?;
        }
    }
    Ok(())
}

/// A key's value: rows were checked when they came in ([`check_keys`]); NULL for
/// an error there cannot be (MergeAppend's children's keys are columns).
fn key_value(k: &SortKey, row: &[Datum]) -> Datum {
    k.expr.eval(row).unwrap_or(Datum::Null)
}

/// Compares two rows by sort keys (shared with MergeAppend).
pub fn compare_rows(keys: &[SortKey], a: &[Datum], b: &[Datum]) -> Ordering {
    for k in keys {
        let ord = key_value(k, a).cmp(&key_value(k, b));
        let ord = if k.desc { ord.reverse() } else { ord };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// The order of the rows of width `w` packed in `rows` (row i at `rows[i*w..]`) by
/// `keys`, stable. Sort and Incremental Sort share it: one instance of the standard
/// library's stable sort in the wasm module instead of one per caller.
pub fn sorted_order(keys: &[SortKey], rows: &[Datum], w: usize) -> Vec<usize> {
    let n = rows.len() / w.max(1);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| compare_rows(keys, &rows[i * w..(i + 1) * w], &rows[j * w..(j + 1) * w]));
    order
}

impl SortState {
    pub fn init(child: PlanState, keys: Vec<SortKey>, width: usize, types: Vec<Option<crate::plan::SqlType>>) -> Self {
        SortState {
            children: vec![child],
            inputs: AsyncInputs::default(),
            keys,
            width,
            rows: vec![],
            order: vec![],
            sorted: false,
            next: 0,
            slot: vec![],
            key_text: String::new(),
            types,
            stored_order: vec![],
            junk: vec![],
            bound: None,
            space: std::cell::OnceCell::new(),
            work_mem_kb: 4096,
        }
    }

    fn sort(&mut self, es: &mut EState) {
        let n = self.rows.len() / self.width.max(1);
        let w = self.width.max(1);
        self.order = sorted_order(&self.keys, &self.rows, w);
        let log = (usize::BITS - n.leading_zeros()) as u64;
        es.clock.charge(es.cost.sort_cmp_ns * n as u64 * log.max(1));
        self.sorted = true;
    }
}

impl Through for SortState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for SortState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        while !self.sorted {
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => {
                    let row = self.children[0].node.slot();
                    check_keys(&self.keys, row)?;
                    self.rows.extend_from_slice(row);
                }
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => self.sort(es),
            }
        }
        let Some(&i) = self.order.get(self.next) else {
            return Ok(ExecStatus::Done);
        };
        self.next += 1;
        let w = self.width;
        self.slot.clear();
        self.slot.extend_from_slice(&self.rows[i * w..(i + 1) * w]);
        Ok(ExecStatus::Row)
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.inputs.cancel_all(es);
        self.rows.clear();
        self.order.clear();
        self.sorted = false;
        self.next = 0;
        self.space = std::cell::OnceCell::new();
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
    fn set_tuple_bound(&mut self, bound: Option<u64>) {
        self.bound = bound;
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Sort".into();
        e.details.push(("Sort Key".into(), self.key_text.clone()));
        // show_sort_info: a sort that ran (sort_Done) says how.
        if self.sorted {
            let space = self.space.get_or_init(|| {
                let input = SortInput {
                    rows: &self.rows,
                    width: self.width,
                    types: &self.types,
                    keys: &self.keys,
                    bound: self.bound,
                    order: &self.stored_order,
                    junk: &self.junk,
                    work_mem_kb: self.work_mem_kb,
                };
                sort_space(&input)
            });
            e.details.push(("Sort Method".into(), space.text()));
        }
    }
}
