//! WindowAgg (nodeWindowAgg.c): window functions over input sorted on the window's
//! PARTITION BY then ORDER BY columns. The sandbox's subset: `row_number()`, `rank()`,
//! `dense_rank()`, and count, sum, avg, min and max as window aggregates, each with
//! the default frame (`RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`: a row's
//! value covers its partition from the start to its last peer, so peers — rows equal
//! on the ORDER BY columns — share it; without ORDER BY every row of the partition is
//! a peer of every other, so the value is the whole partition's).
//!
//! Protocol: `exec_next` returns the next row of the current partition, its input
//! columns followed by one value per window function. When the partition's rows are
//! all returned it spools the next partition (`spool_tuples`: reads the child until a
//! row of another partition, which it keeps as the first row of the one after,
//! PostgreSQL's `first_part_slot`), computes every function's value for every row of it
//! (`eval_partition`), and returns its first row. A Wait from the child passes
//! straight up; the spooled rows and the kept first row stay in the node, so the call
//! after it resumes spooling where it stopped.
//!
//! Invariants:
//! - rows come out in input order, each once, with the values of its partition;
//! - partitions and peers are compared "not distinct" (NULL equals NULL), as
//!   `execTuplesMatch` compares them; the planner puts a Sort on the partition and
//!   order columns below (or reads an input already in that order);
//! - a rescan forgets the partition and the kept row and rescans the child.
//!
//! Names against nodeWindowAgg.c:
//!
//! | here                    | PostgreSQL                                       |
//! |-------------------------|--------------------------------------------------|
//! | `WindowAggState`        | `WindowAggState`                                 |
//! | `WindowSpec`            | `WindowAgg` plan node (partColIdx, ordColIdx)    |
//! | `exec_next`             | `ExecWindowAgg`                                  |
//! | `spool_partition`       | `begin_partition` + `spool_tuples`               |
//! | `buffer`                | the partition's `buffer` tuplestore              |
//! | `next_first`            | `first_part_slot`                                |
//! | `eval_partition`        | `eval_windowaggregates` + `eval_windowfunction`  |
//! | `peer_end`              | `update_frametailpos` (RANGE … CURRENT ROW)       |
//! | `ranking_values`        | `window_row_number`, `window_rank`, `window_dense_rank` |
//! | `aggregate_values`      | `advance_windowaggregate`, `finalize_windowaggregate` |
//! | `exec_rescan`           | `ExecReScanWindowAgg`                            |
//!
//! Where it departs from PostgreSQL: a partition is spooled whole before its first
//! row goes out (PostgreSQL reads ahead only as far as a function needs: one row for
//! `row_number()`), which changes when the child is read, never what comes out; an
//! aggregate's value is recomputed per peer group from a running state (PostgreSQL's
//! moving aggregate does the same for a frame whose start never moves).

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::node_agg::Trans;
use super::{exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{Expr, SortKey, WinKind, WindowFunc};
use crate::types::Datum;

/// The window every function of the node shares: its functions, its PARTITION BY
/// and ORDER BY columns (of the input row), and the input's width.
#[derive(Clone, Debug)]
pub struct WindowSpec {
    funcs: Vec<WindowFunc>,
    part: Vec<usize>,
    order: Vec<usize>,
    width: usize,
}

impl WindowSpec {
    /// Checks that every column is one of the input's (the planner gives columns, not
    /// expressions: PostgreSQL's `partColIdx` / `ordColIdx`).
    pub fn new(funcs: Vec<WindowFunc>, part: Vec<usize>, order: &[SortKey], width: usize) -> Result<Self, String> {
        let mut cols = Vec::with_capacity(order.len());
        for k in order {
            match k.expr {
                Expr::Col(i) => cols.push(i),
                _ => return Err("internal error: a WindowAgg ordered by an expression".into()),
            }
        }
        let args = funcs.iter().filter_map(|f| f.arg);
        if part.iter().chain(&cols).copied().chain(args).any(|c| c >= width) {
            return Err("internal error: a WindowAgg column past its input".into());
        }
        Ok(WindowSpec { funcs, part, order: cols, width })
    }

    /// Are two rows in the same partition?
    fn same_partition(&self, a: &[Datum], b: &[Datum]) -> bool {
        self.part.iter().all(|&c| a[c] == b[c])
    }

    /// Are two rows of a partition peers (equal on the ORDER BY columns)?
    fn peers(&self, a: &[Datum], b: &[Datum]) -> bool {
        self.order.iter().all(|&c| a[c] == b[c])
    }
}

#[derive(Clone)]
pub struct WindowAggState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    spec: WindowSpec,
    /// The current partition's rows, then (once spooled) each one's function values.
    buffer: Vec<Vec<Datum>>,
    values: Vec<Vec<Datum>>,
    /// The next row of `buffer` to return; `buffer.len()` when the partition is done.
    current: usize,
    /// The first row of the next partition, read while spooling this one.
    next_first: Option<Vec<Datum>>,
    /// The child returned its last row.
    input_done: bool,
    slot: Vec<Datum>,
}

impl WindowAggState {
    pub fn init(child: PlanState, spec: WindowSpec) -> Self {
        WindowAggState {
            children: vec![child],
            inputs: AsyncInputs::default(),
            spec,
            buffer: Vec::new(),
            values: Vec::new(),
            current: 0,
            next_first: None,
            input_done: false,
            slot: Vec::new(),
        }
    }

    /// Reads the next partition into `buffer`: Row when one is complete (the child
    /// ended or a row of the next one arrived), Done when there is none, Wait when the
    /// child waits (what was read so far stays).
    fn spool_partition(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.values.len() == self.buffer.len() && !self.buffer.is_empty() {
            // The previous partition is done: start the next one with its kept row.
            self.buffer.clear();
            self.values.clear();
            self.current = 0;
        }
        if self.buffer.is_empty() {
            if let Some(first) = self.next_first.take() {
                self.buffer.push(first);
            }
        }
        while !self.input_done {
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => {}
                ExecStatus::Done => {
                    self.input_done = true;
                    break;
                }
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
            }
            let row = self.children[0].node.slot().to_vec();
            if self.buffer.first().is_some_and(|f| !self.spec.same_partition(f, &row)) {
                self.next_first = Some(row);
                break;
            }
            self.buffer.push(row);
        }
        if self.buffer.is_empty() {
            return Ok(ExecStatus::Done);
        }
        self.values = eval_partition(&self.spec, &self.buffer);
        Ok(ExecStatus::Row)
    }
}

/// For each row of a partition, one past the index of its last peer (the default
/// frame's end, `update_frametailpos`): every row without ORDER BY.
fn peer_end(spec: &WindowSpec, rows: &[Vec<Datum>]) -> Vec<usize> {
    let mut ends = vec![rows.len(); rows.len()];
    let mut start = 0;
    for i in 1..=rows.len() {
        if i == rows.len() || !spec.peers(&rows[start], &rows[i]) {
            ends[start..i].iter_mut().for_each(|e| *e = i);
            start = i;
        }
    }
    ends
}

/// Every function's value for every row of a partition (rows in input order).
fn eval_partition(spec: &WindowSpec, rows: &[Vec<Datum>]) -> Vec<Vec<Datum>> {
    let ends = peer_end(spec, rows);
    let mut out = vec![Vec::with_capacity(spec.funcs.len()); rows.len()];
    for f in &spec.funcs {
        let column = match f.kind {
            WinKind::Agg(func) => aggregate_values(func, f.arg, rows, &ends),
            kind => ranking_values(kind, &ends),
        };
        out.iter_mut().zip(column).for_each(|(o, v)| o.push(v));
    }
    out
}

/// row_number (the row's position), rank (its first peer's position) and dense_rank
/// (its peer group's number), 1-based, as bigint; peers are given by `ends`.
fn ranking_values(kind: WinKind, ends: &[usize]) -> Vec<Datum> {
    let (mut group_start, mut groups) = (0, 0);
    (0..ends.len())
        .map(|i| {
            if i == 0 || ends[i - 1] == i {
                group_start = i;
                groups += 1;
            }
            Datum::Int(match kind {
                WinKind::Rank => group_start as i64 + 1,
                WinKind::DenseRank => groups,
                _ => i as i64 + 1,
            })
        })
        .collect()
}

/// An aggregate over each row's frame (the partition's start to its last peer): one
/// running transition state, finished at the end of each peer group.
fn aggregate_values(func: crate::plan::AggFunc, arg: Option<usize>, rows: &[Vec<Datum>], ends: &[usize]) -> Vec<Datum> {
    let mut trans = Trans::new();
    let (mut read, mut value) = (0, Datum::Null);
    (0..rows.len())
        .map(|i| {
            if read < ends[i] {
                for r in &rows[read..ends[i]] {
                    trans.advance(func, arg.map_or(Datum::Null, |c| r[c].clone()));
                }
                read = ends[i];
                value = trans.finish(func);
            }
            value.clone()
        })
        .collect()
}

impl Through for WindowAggState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for WindowAggState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }

    /// ExecWindowAgg.
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.current >= self.values.len() || self.values.len() != self.buffer.len() {
            match self.spool_partition(es)? {
                ExecStatus::Row => {}
                other => return Ok(other),
            }
        }
        es.clock.charge(es.cost.result_row_ns);
        let i = self.current;
        self.slot.clear();
        self.slot.extend_from_slice(&self.buffer[i]);
        self.slot.extend_from_slice(&self.values[i]);
        self.current += 1;
        Ok(ExecStatus::Row)
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.buffer.clear();
        self.values.clear();
        self.current = 0;
        self.next_first = None;
        self.input_done = false;
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
    /// Output: the input's columns (`$N`), then each function as PostgreSQL 15's
    /// ruleutils prints a window function in EXPLAIN: `row_number() OVER (?)` (the
    /// window's definition is not resolved there).
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "WindowAgg".into();
        // The window's PARTITION BY and ORDER BY columns: resjunk entries of the final
        // target list where the select list lacks them (`findTargetlistEntrySQL99`),
        // which a select list folded into this node prints after its own.
        let mut junk: Vec<String> = Vec::new();
        for c in self.spec.part.iter().chain(&self.spec.order) {
            if !junk.contains(&c.to_string()) {
                junk.push(c.to_string());
            }
        }
        if !junk.is_empty() {
            e.details.push((crate::instrument::SORT_OUTPUTS.into(), junk.join(",")));
        }
        for i in 0..self.spec.width {
            e.push_output(format!("${i}"));
        }
        for f in &self.spec.funcs {
            let arg = match (f.kind, f.arg) {
                (WinKind::Agg(_), None) => "*".to_string(),
                (_, Some(c)) => format!("${c}"),
                (_, None) => String::new(),
            };
            e.push_output(format!("{}({arg}) OVER (?)", f.kind.name()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::AggFunc;

    fn spec(funcs: Vec<WindowFunc>, part: Vec<usize>, order: Vec<usize>) -> WindowSpec {
        let keys: Vec<SortKey> = order.into_iter().map(SortKey::asc).collect();
        WindowSpec::new(funcs, part, &keys, 2).unwrap()
    }

    fn rows(v: &[(i64, i64)]) -> Vec<Vec<Datum>> {
        v.iter().map(|&(a, b)| vec![Datum::Int(a), Datum::Int(b)]).collect()
    }

    /// Peers (equal order values) share rank and the running aggregate; row_number
    /// does not; dense_rank counts peer groups.
    #[test]
    fn peers_share_rank_and_running_value() {
        let f = |kind, arg| WindowFunc { kind, arg };
        let s = spec(
            vec![
                f(WinKind::RowNumber, None),
                f(WinKind::Rank, None),
                f(WinKind::DenseRank, None),
                f(WinKind::Agg(AggFunc::Sum), Some(1)),
                f(WinKind::Agg(AggFunc::CountStar), None),
            ],
            vec![],
            vec![1],
        );
        let got = eval_partition(&s, &rows(&[(1, 10), (2, 20), (3, 20), (4, 30)]));
        let want: Vec<Vec<i64>> =
            vec![vec![1, 1, 1, 10, 1], vec![2, 2, 2, 50, 3], vec![3, 2, 2, 50, 3], vec![4, 4, 3, 80, 4]];
        let got: Vec<Vec<i64>> =
            got.iter().map(|r| r.iter().map(|d| if let Datum::Int(i) = d { *i } else { -1 }).collect()).collect();
        assert_eq!(got, want);
    }

    /// Without ORDER BY every row is a peer: the whole partition's value everywhere.
    #[test]
    fn no_order_is_whole_partition() {
        let s = spec(vec![WindowFunc { kind: WinKind::Agg(AggFunc::Max), arg: Some(1) }], vec![0], vec![]);
        let got = eval_partition(&s, &rows(&[(1, 5), (1, 7), (1, 6)]));
        assert!(got.iter().all(|r| r == &vec![Datum::Int(7)]), "{got:?}");
    }

    /// A column past the input is an error, not a panic at run time.
    #[test]
    fn column_past_input_refused() {
        let f = vec![WindowFunc { kind: WinKind::Agg(AggFunc::Sum), arg: Some(5) }];
        assert!(WindowSpec::new(f, vec![], &[], 2).is_err());
    }
}
