//! WindowAgg (nodeWindowAgg.c): window functions over input sorted on the window's
//! PARTITION BY then ORDER BY columns. The sandbox's subset: `row_number()`, `rank()`,
//! `dense_rank()`, and count, sum, avg, min and max as window aggregates, each with
//! the default frame (`RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`: a row's
//! value covers its partition from the start to its last peer, so peers — rows equal
//! on the ORDER BY columns — share it; without ORDER BY every row of the partition is
//! a peer of every other, so the value is the whole partition's).
//!
//! Protocol: `exec_next` returns the next row of the current partition, its input
//! columns followed by one value per window function. When the rows whose values are
//! known are all returned it reads the next peer group (`next_group`: reads the child
//! until a row that is not a peer of the group's first, or is of another partition,
//! which it keeps as the next group's first row, PostgreSQL's `first_part_slot`),
//! computes the group's values from the running state (`Running::group_values`), and
//! returns its first row. A Wait from the child passes straight up; the rows read and
//! the kept row stay in the node, so the call after it resumes reading where it
//! stopped.
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
//! | `begin_partition`       | `begin_partition`                                |
//! | `next_group`            | `spool_tuples` to the frame's end (`update_frametailpos`) |
//! | `buffer`                | the partition's `buffer` tuplestore              |
//! | `pending`               | `first_part_slot`                                |
//! | `Running::group_values` | `eval_windowaggregates` (`advance_windowaggregate`, `finalize_windowaggregate`) and `eval_windowfunction` (`window_row_number`, `window_rank`, `window_dense_rank`) |
//! | `exec_rescan`           | `ExecReScanWindowAgg`                            |
//!
//! Where it departs from PostgreSQL: every node reads to the end of the current peer
//! group, whatever its functions (PostgreSQL does so when a function needs the
//! frame's end; its ranking functions alone read as far too in the corpus' plans); the
//! partition's rows stay in memory until the partition ends.

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::node_agg::Trans;
use super::{exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{AggFunc, Expr, SortKey, WinKind, WindowFunc};
use crate::types::{ColType, Column, Datum};

/// The window every function of the node shares: its functions, its PARTITION BY
/// and ORDER BY columns (of the input row), and the input's width.
#[derive(Clone, Debug)]
pub struct WindowSpec {
    funcs: Vec<WindowFunc>,
    part: Vec<usize>,
    order: Vec<usize>,
    width: usize,
    /// Per function: a `sum` whose result type is numeric over an int8 state
    /// (`sum(bigint)`, `numeric_poly_sum`), as the Agg node's `numeric`.
    numeric: Vec<bool>,
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
        let numeric = vec![false; funcs.len()];
        Ok(WindowSpec { funcs, part, order: cols, width, numeric })
    }

    /// The functions' result types over the input's columns: a `sum` typed numeric
    /// (of a bigint) goes out as a numeric, as an Aggregate's does.
    pub fn with_result_types(mut self, input: &[Column]) -> Self {
        self.numeric = self
            .funcs
            .iter()
            .map(|f| matches!(f.kind, WinKind::Agg(AggFunc::Sum)) && f.output_column(input).ty == ColType::Numeric)
            .collect();
        self
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
    /// The current partition's rows read so far; the first `values.len()` (whole peer
    /// groups) have their function values.
    buffer: Vec<Vec<Datum>>,
    values: Vec<Vec<Datum>>,
    /// The next row of `buffer` to return.
    current: usize,
    /// The row read past the current peer group (the next group's first, perhaps the
    /// next partition's: PostgreSQL's `first_part_slot`).
    pending: Option<Vec<Datum>>,
    /// The functions' running state over the partition's groups so far.
    running: Running,
    /// The child returned its last row.
    input_done: bool,
    slot: Vec<Datum>,
}

/// The window functions' state across a partition's peer groups: each aggregate's
/// transition state (the frame only grows: it starts at the partition's start), and
/// the number of peer groups so far (dense_rank).
#[derive(Clone, Debug)]
struct Running {
    trans: Vec<Trans>,
    groups: i64,
}

impl Running {
    fn new(spec: &WindowSpec) -> Running {
        Running { trans: vec![Trans::new(); spec.funcs.len()], groups: 0 }
    }

    /// The values of every function for one peer group, `rows`, whose first row is
    /// the partition's `start`-th (0-based): every row of it shares them but
    /// row_number (`eval_windowaggregates` over the frame ending at the group's last
    /// row, `window_rank` / `window_dense_rank` / `window_row_number`).
    fn group_values(&mut self, spec: &WindowSpec, rows: &[Vec<Datum>], start: usize) -> Vec<Vec<Datum>> {
        self.groups += 1;
        let shared: Vec<Datum> = spec
            .funcs
            .iter()
            .zip(self.trans.iter_mut())
            .zip(&spec.numeric)
            .map(|((f, t), &numeric)| match f.kind {
                WinKind::Agg(func) => {
                    for r in rows {
                        t.advance(func, f.arg.map_or(Datum::Null, |c| r[c].clone()));
                    }
                    t.finish(func, numeric)
                }
                WinKind::Rank => Datum::Int(start as i64 + 1),
                WinKind::DenseRank => Datum::Int(self.groups),
                WinKind::RowNumber => Datum::Null,
            })
            .collect();
        (0..rows.len())
            .map(|i| {
                let mut v = shared.clone();
                for (f, x) in spec.funcs.iter().zip(v.iter_mut()) {
                    if f.kind == WinKind::RowNumber {
                        *x = Datum::Int((start + i) as i64 + 1);
                    }
                }
                v
            })
            .collect()
    }
}

impl WindowAggState {
    pub fn init(child: PlanState, spec: WindowSpec) -> Self {
        WindowAggState {
            children: vec![child],
            inputs: AsyncInputs::default(),
            running: Running::new(&spec),
            spec,
            buffer: Vec::new(),
            values: Vec::new(),
            current: 0,
            pending: None,
            input_done: false,
            slot: Vec::new(),
        }
    }

    /// The next input row: Ok(Some) a row, Ok(None) at the end (then `input_done`),
    /// Err(Wait) passed up as is.
    fn read(&mut self, es: &mut EState) -> ExecResult<Result<Option<Vec<Datum>>, ExecStatus>> {
        match self.inputs.next(&mut self.children, 0, es)? {
            ExecStatus::Row => Ok(Ok(Some(self.children[0].node.slot().to_vec()))),
            ExecStatus::Done => {
                self.input_done = true;
                Ok(Ok(None))
            }
            other => Ok(Err(other)),
        }
    }

    /// A new partition starts: its rows, values and running state start empty.
    fn begin_partition(&mut self) {
        self.buffer.clear();
        self.values.clear();
        self.current = 0;
        self.running = Running::new(&self.spec);
    }

    /// Reads the next peer group (`spool_tuples` as far as the frame's end, the
    /// group's last row, needs: one row past it) and computes its values: Row when
    /// one is ready, Done at the end of the input, Wait when the child waits (what
    /// was read stays in `buffer` and `pending`).
    fn next_group(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        let start = self.values.len();
        loop {
            if self.buffer.len() == start {
                // The group's first row: the one kept, else the next one read.
                let row = match self.pending.take() {
                    Some(r) => r,
                    None if self.input_done => return Ok(ExecStatus::Done),
                    None => match self.read(es)? {
                        Ok(Some(r)) => r,
                        Ok(None) => return Ok(ExecStatus::Done),
                        Err(wait) => return Ok(wait),
                    },
                };
                if self.buffer.first().is_some_and(|f| !self.spec.same_partition(f, &row)) {
                    self.begin_partition();
                    return self.start_group(row, es);
                }
                self.buffer.push(row);
                continue;
            }
            if self.input_done {
                break;
            }
            let row = match self.read(es)? {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(wait) => return Ok(wait),
            };
            let first = &self.buffer[start];
            if self.spec.same_partition(first, &row) && self.spec.peers(first, &row) {
                self.buffer.push(row);
            } else {
                self.pending = Some(row);
                break;
            }
        }
        let group = self.running.group_values(&self.spec, &self.buffer[start..], start);
        self.values.extend(group);
        Ok(ExecStatus::Row)
    }

    /// `next_group` from a new partition's first row.
    fn start_group(&mut self, row: Vec<Datum>, es: &mut EState) -> ExecResult<ExecStatus> {
        self.buffer.push(row);
        self.next_group(es)
    }
}

/// Every function's value for every row of a whole partition (rows in input order),
/// a peer group at a time as the node computes them.
#[cfg(test)]
fn eval_partition(spec: &WindowSpec, rows: &[Vec<Datum>]) -> Vec<Vec<Datum>> {
    let mut running = Running::new(spec);
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=rows.len() {
        if i == rows.len() || !spec.peers(&rows[start], &rows[i]) {
            out.extend(running.group_values(spec, &rows[start..i], start));
            start = i;
        }
    }
    out
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
        if self.current >= self.values.len() {
            match self.next_group(es)? {
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
        self.pending = None;
        self.running = Running::new(&self.spec);
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
