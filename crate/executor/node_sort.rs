//! Sort (nodeSort.c): reads its whole input (resuming across Waits, since the buffer
//! lives in the node), sorts, then returns rows in order.
//!
//! Invariants:
//! - No row comes out before the child is exhausted: a Sort over an async Append
//!   returns its first row only after the last shard's last row.
//! - Keys compare by `Datum`'s order: NULL above every value, so ASC puts NULLs last
//!   and DESC first (PostgreSQL's defaults; there is no `NULLS FIRST/LAST` here); text
//!   by bytes (the `C` collation). [`compare_rows`] is MergeAppend's comparison too.
//! - Rows with equal keys come out in PostgreSQL's order: tuplesort's quicksort
//!   ([`pg_qsort`]) over the rows in input order, or under a bound its top-N heap's
//!   (`tuplesort_space::bounded_order`); a run's output is the same every time.
//! - Rows are buffered flat (`width` values each) and sorted through an index vector;
//!   rescan drops the buffer and rescans the child.
//!
//! Where it departs from PostgreSQL: nodeSort.c feeds tuplesort.c, which sorts in
//! `work_mem` or merges runs on disk, becomes a top-N heapsort under a Limit's bound
//! (`ExecSetTupleBound`); here everything is in memory, and a sort past `work_mem`
//! returns the quicksort's order rather than the merge of its runs'. `ExecReScanSort` rewinds a finished random-access
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
    /// The InitPlans a select list computed below this Sort reads
    /// (`ExecNode::set_projection_params`), run at the first input row; emptied then.
    projection_params: Vec<usize>,
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
/// `keys`, as PostgreSQL's tuplesort orders them in memory: its quicksort
/// ([`pg_qsort`]) over the rows in input order, so that rows with equal keys come
/// out in PostgreSQL's order. Sort and Incremental Sort share it.
pub fn sorted_order(keys: &[SortKey], rows: &[Datum], w: usize) -> Vec<usize> {
    let n = rows.len() / w.max(1);
    let mut order: Vec<usize> = (0..n).collect();
    let row = |i: usize| &rows[i * w..(i + 1) * w];
    pg_qsort(&mut order, &|i, j| compare_rows(keys, row(i), row(j)));
    order
}

/// PostgreSQL's quicksort (`src/include/lib/sort_template.h`, which tuplesort's
/// `qsort_tuple` and its specializations instantiate): insertion sort below 7 items, a
/// pass that returns when the items are already in order, the pivot the median of
/// three (of three medians above 40 items), a partition that gathers the pivot's
/// equals at both ends and swaps them to the middle, recursion into the smaller side
/// and iteration over the larger. Not stable: equal items come out in the order
/// these steps leave them, which is PostgreSQL's.
pub fn pg_qsort(items: &mut [usize], cmp: &dyn Fn(usize, usize) -> Ordering) {
    let mut a = items;
    loop {
        let n = a.len();
        if n < 7 {
            for m in 1..n {
                let mut l = m;
                while l > 0 && cmp(a[l - 1], a[l]) == Ordering::Greater {
                    a.swap(l, l - 1);
                    l -= 1;
                }
            }
            return;
        }
        if (1..n).all(|m| cmp(a[m - 1], a[m]) != Ordering::Greater) {
            return;
        }
        let med3 = |a: &[usize], x: usize, y: usize, z: usize| -> usize {
            if cmp(a[x], a[y]) == Ordering::Less {
                if cmp(a[y], a[z]) == Ordering::Less {
                    y
                } else if cmp(a[x], a[z]) == Ordering::Less {
                    z
                } else {
                    x
                }
            } else if cmp(a[y], a[z]) == Ordering::Greater {
                y
            } else if cmp(a[x], a[z]) == Ordering::Less {
                x
            } else {
                z
            }
        };
        let mut pm = n / 2;
        if n > 7 {
            let (mut pl, mut pn) = (0, n - 1);
            if n > 40 {
                let d = n / 8;
                pl = med3(a, pl, pl + d, pl + 2 * d);
                pm = med3(a, pm - d, pm, pm + d);
                pn = med3(a, pn - 2 * d, pn - d, pn);
            }
            pm = med3(a, pl, pm, pn);
        }
        a.swap(0, pm);
        let (mut pa, mut pb) = (1, 1);
        let (mut pc, mut pd) = (n - 1, n - 1);
        loop {
            while pb <= pc {
                let r = cmp(a[pb], a[0]);
                if r == Ordering::Greater {
                    break;
                }
                if r == Ordering::Equal {
                    a.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let r = cmp(a[pc], a[0]);
                if r == Ordering::Less {
                    break;
                }
                if r == Ordering::Equal {
                    a.swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            a.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        let swapn = |a: &mut [usize], x: usize, y: usize, k: usize| (0..k).for_each(|i| a.swap(x + i, y + i));
        let d1 = pa.min(pb - pa);
        swapn(a, 0, pb - d1, d1);
        let d1 = (pd - pc).min(n - pd - 1);
        swapn(a, pb, n - d1, d1);
        let (d1, d2) = (pb - pa, pd - pc);
        let whole = a;
        if d1 <= d2 {
            if d1 > 1 {
                pg_qsort(&mut whole[..d1], cmp);
            }
            if d2 <= 1 {
                return;
            }
            a = &mut whole[n - d2..];
        } else {
            if d2 > 1 {
                pg_qsort(&mut whole[n - d2..], cmp);
            }
            if d1 <= 1 {
                return;
            }
            a = &mut whole[..d1];
        }
    }
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
            projection_params: vec![],
        }
    }

    fn sort(&mut self, es: &mut EState) {
        let n = self.rows.len() / self.width.max(1);
        let w = self.width.max(1);
        // A bound under which tuplesort keeps a heap (more than twice the bound's
        // rows): the bound's least rows in the order its heap leaves them.
        self.order = match self.bound.filter(|&b| b > 0 && n as u64 > 2 * b) {
            Some(b) => {
                let row = |i: usize| &self.rows[i * w..(i + 1) * w];
                super::tuplesort_space::bounded_order(n, b as usize, &|i, j| compare_rows(&self.keys, row(i), row(j)))
            }
            None => sorted_order(&self.keys, &self.rows, w),
        };
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

    fn set_projection_params(&mut self, params: Vec<usize>, values: Vec<crate::plan::SqlType>) {
        self.projection_params = params;
        // PostgreSQL sorts the projected tuples, the values among their columns.
        self.junk.extend(values);
    }

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        while !self.sorted {
            // A row is in: the projection computed below ran its InitPlans with it.
            if !self.projection_params.is_empty() && !self.rows.is_empty() {
                if !super::node_subplan::run_projection_params(es, &self.projection_params)? {
                    return Ok(ExecStatus::Wait);
                }
                self.projection_params.clear();
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// pg_qsort sorts (a permutation, in order) inputs of every size class: the
    /// insertion sort, the presorted pass, the median of three and of nine.
    #[test]
    fn pg_qsort_sorts() {
        for n in [0usize, 1, 5, 6, 7, 8, 40, 41, 100, 1000] {
            let keys: Vec<u64> = (0..n as u64).map(|i| (i * 7919 + 13) % 97 % (n as u64 / 3 + 1)).collect();
            let mut order: Vec<usize> = (0..n).collect();
            pg_qsort(&mut order, &|i, j| keys[i].cmp(&keys[j]));
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "a permutation of {n}");
            assert!(order.windows(2).all(|w| keys[w[0]] <= keys[w[1]]), "{n} items in order");
        }
    }

    /// Ties come out in the order PostgreSQL 15's quicksort leaves them: `select a,
    /// b from (values (1, 1), (2, 0), …, (12, 0)) t(a, b) order by b` (b = a % 2)
    /// printed a = 4, 8, 2, 10, 6, 12, 7, 3, 5, 1, 9, 11.
    #[test]
    fn ties_in_postgresql_order() {
        let b: Vec<u64> = (1..=12u64).map(|a| a % 2).collect();
        let mut order: Vec<usize> = (0..12).collect();
        pg_qsort(&mut order, &|i, j| b[i].cmp(&b[j]));
        let a: Vec<usize> = order.iter().map(|i| i + 1).collect();
        assert_eq!(a, [4, 8, 2, 10, 6, 12, 7, 3, 5, 1, 9, 11]);
    }

    /// Above 40 rows (the pivot a median of three medians), and under a LIMIT's
    /// bound (the top-N heap): `create table tt as select i as a, (i * 37) % 11 as b
    /// from generate_series(1, 60) i`, then `select a from tt order by b` and the same
    /// with `limit 7`, in PostgreSQL 15.
    #[test]
    fn ties_in_postgresql_order_many_rows_and_bounded() {
        let b: Vec<u64> = (1..=60u64).map(|i| (i * 37) % 11).collect();
        let cmp = |i: usize, j: usize| b[i].cmp(&b[j]);
        let mut order: Vec<usize> = (0..60).collect();
        pg_qsort(&mut order, &cmp);
        let a: Vec<usize> = order.iter().map(|i| i + 1).collect();
        let want = [
            22, 33, 55, 44, 11, 58, 36, 3, 47, 25, 14, 17, 6, 28, 39, 50, 53, 42, 9, 20, 31, 56, 23, 1, 34, 45, 12, 26,
            59, 15, 37, 4, 48, 51, 7, 40, 29, 18, 54, 21, 32, 10, 43, 46, 2, 13, 24, 35, 57, 16, 60, 27, 5, 49, 38, 19,
            52, 30, 41, 8,
        ];
        assert_eq!(a, want);
        let top: Vec<usize> =
            crate::executor::tuplesort_space::bounded_order(60, 7, &cmp).iter().map(|i| i + 1).collect();
        assert_eq!(top, [55, 11, 44, 22, 33, 3, 14]);
    }
}
