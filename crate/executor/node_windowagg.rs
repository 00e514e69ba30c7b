//! WindowAgg (nodeWindowAgg.c): window functions over input sorted on the window's
//! PARTITION BY then ORDER BY columns. One node computes the functions of one window
//! (its partitioning, ordering and frame); a query with several windows stacks
//! WindowAggs, each passing the results of the ones below up as input columns.
//!
//! The functions: `row_number`, `rank`, `dense_rank`, `percent_rank`, `cume_dist`,
//! `ntile`, `lag`, `lead`, `first_value`, `last_value`, `nth_value` (windowfuncs.c),
//! and count, sum, avg, min and max as window aggregates over the row's frame. The
//! frame is ROWS or RANGE between UNBOUNDED PRECEDING, `n` PRECEDING, CURRENT ROW,
//! `n` FOLLOWING and UNBOUNDED FOLLOWING (by default RANGE from the partition's start
//! to the current row's last peer — rows equal on the ORDER BY columns; without
//! ORDER BY every row of the partition is a peer of every other).
//!
//! Protocol: `exec_next` returns the current row of the current partition, its input
//! columns followed by one value per function, as `ExecWindowAgg`: it reads input
//! rows into the partition's buffer only as far as the current row needs
//! (`spool_tuples`): the row itself; for each function what it reads (`lead` its
//! offset ahead, `percent_rank` / `cume_dist` / `ntile` the whole partition,
//! `first_value` / `nth_value` up to the row they fetch, `last_value` and the
//! aggregates to the frame's end); and, in RANGE mode with an ORDER BY, the frame's
//! ends whatever the functions (PostgreSQL keeps read pointers on them and updates
//! them on every row). Reading past the partition's last row reads the next
//! partition's first, which is kept (`first_part_slot`). A Wait from the child
//! passes straight up: the rows read stay in the buffer, and the call after it
//! decides again what the row needs and reads on; nothing is computed until every
//! row needed is read.
//!
//! Invariants:
//! - rows come out in input order, each once, with the values of its partition;
//! - partitions and peers are compared "not distinct" (NULL equals NULL), as
//!   `execTuplesMatch` compares them; the planner puts a Sort on the partition and
//!   order columns below (or reads an input already in that order);
//! - a frame's ends only move forward within a partition (the input is sorted), so
//!   the searches for them start where the last row's ended;
//! - an aggregate whose frame start did not move and whose end did not move back
//!   advances its state over the new rows only; otherwise it restarts from the
//!   frame's start (PostgreSQL's restart, without inverse transition functions);
//! - a rescan forgets the partition and the kept row and rescans the child.
//!
//! Names against nodeWindowAgg.c (and windowfuncs.c):
//!
//! | here                    | PostgreSQL                                       |
//! |-------------------------|--------------------------------------------------|
//! | `WindowAggState`        | `WindowAggState`                                 |
//! | `WindowSpec`            | `WindowAgg` plan node (partColIdx, ordColIdx, frameOptions) |
//! | `exec_next`             | `ExecWindowAgg`                                  |
//! | `begin_partition`       | `begin_partition`                                |
//! | `spool_one`             | one row of `spool_tuples`                        |
//! | `needs_more`            | what `spool_tuples`' callers ask for: `window_gettupleslot`, `WinGetPartitionRowCount`, `update_frameheadpos`, `update_frametailpos` |
//! | `frame_head`            | `update_frameheadpos`                            |
//! | `frame_tail`            | `update_frametailpos`                            |
//! | `buffer`                | the partition's `buffer` tuplestore              |
//! | `pending`               | `first_part_slot`                                |
//! | `spooled`               | `partition_spooled`                              |
//! | `Row::group_start`      | `rank_up`'s peer test (`WinRowsArePeers`)        |
//! | `eval_function`         | `eval_windowfunction` (`window_row_number`, `window_rank`, `window_lag`, …) |
//! | `eval_aggregate`        | `eval_windowaggregates` (`advance_windowaggregate`, `finalize_windowaggregate`) |
//! | `exec_rescan`           | `ExecReScanWindowAgg`                            |
//!
//! Where it departs from PostgreSQL: the partition's rows stay in memory until the
//! partition ends (no tuplestore trimming).

use std::cmp::Ordering;

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::node_agg::Trans;
use super::{exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::instrument::ExplainNode;
use crate::numeric::Numeric;
use crate::plan::{AggFunc, Expr, FrameBound, SortKey, WinFrame, WinKind, WindowFunc};
use crate::types::{ColType, Column, Datum};

/// The window every function of the node shares: its functions, its PARTITION BY
/// and ORDER BY columns (of the input row), its frame, and the input's width.
#[derive(Clone, Debug)]
pub struct WindowSpec {
    funcs: Vec<WindowFunc>,
    part: Vec<usize>,
    order: Vec<usize>,
    /// Per ORDER BY column: descending (then NULLs first, PostgreSQL's default).
    desc: Vec<bool>,
    frame: WinFrame,
    width: usize,
    /// Per function: a `sum` whose result type is numeric over an int8 state
    /// (`sum(bigint)`, `numeric_poly_sum`), as the Agg node's `numeric`.
    numeric: Vec<bool>,
    /// The final target list's resjunk columns, for EXPLAIN (see `Plan::WindowAgg`).
    resjunk: Vec<usize>,
}

impl WindowSpec {
    /// Checks that every column is one of the input's (the planner gives columns, not
    /// expressions: PostgreSQL's `partColIdx` / `ordColIdx`) and that a frame offset
    /// is a constant, a RANGE offset's with exactly one ORDER BY column.
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
        if funcs.iter().flat_map(|f| &f.extra).any(|e| !matches!(e, Expr::Const(_))) {
            return Err("internal error: a window function's extra argument that is not a constant".into());
        }
        let numeric = vec![false; funcs.len()];
        let desc = order.iter().map(|k| k.desc).collect();
        let frame = WinFrame::default();
        Ok(WindowSpec { funcs, part, order: cols, desc, frame, width, numeric, resjunk: vec![] })
    }

    /// The window's frame; a RANGE frame with an offset needs exactly one ORDER BY
    /// column (as the parser requires), and an offset is a constant.
    pub fn with_frame(mut self, frame: WinFrame) -> Result<Self, String> {
        for b in [&frame.start, &frame.end] {
            if let FrameBound::Preceding(e) | FrameBound::Following(e) = b {
                if !matches!(e, Expr::Const(_)) {
                    return Err("internal error: a frame offset that is not a constant".into());
                }
                if !frame.rows && self.order.len() != 1 {
                    return Err("RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column".into());
                }
            }
        }
        self.frame = frame;
        Ok(self)
    }

    pub fn with_resjunk(mut self, resjunk: Vec<usize>) -> Self {
        self.resjunk = resjunk;
        self
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

    /// RANGE mode with an ORDER BY keeps pointers on the frame's ends, updated for
    /// every row whatever the functions (`begin_partition`'s `framehead_ptr` /
    /// `frametail_ptr`): (head, tail).
    fn tracks_frame(&self) -> (bool, bool) {
        if self.frame.rows {
            return (false, false);
        }
        let ordered = !self.order.is_empty();
        let tracked = |b: &FrameBound| match b {
            FrameBound::CurrentRow => ordered,
            FrameBound::Preceding(_) | FrameBound::Following(_) => true,
            _ => false,
        };
        (tracked(&self.frame.start), tracked(&self.frame.end))
    }
}

/// A frame offset's value: a row count (ROWS) or a distance (RANGE).
fn offset_value(e: &Expr) -> Datum {
    match e {
        Expr::Const(d) => d.clone(),
        _ => Datum::Null,
    }
}

/// A datum as a numeric, for RANGE distances (int and numeric ORDER BY columns).
fn as_numeric(d: &Datum) -> Option<Numeric> {
    match d {
        Datum::Int(i) => Some(Numeric::from_i64(*i)),
        Datum::Numeric(n) => Some((**n).clone()),
        _ => None,
    }
}

/// For a RANGE offset bound: how row `r`'s ORDER BY value stands against the current
/// row's `c` moved by `delta` (positive: toward the end of the sort order), in sort
/// order (`in_range`'s test): Less when `r` sorts before `c + delta`. A NULL sorts
/// after every value ascending, before every value descending, and equal to a NULL.
fn range_cmp(r: &Datum, c: &Datum, delta: &Numeric, desc: bool) -> Ordering {
    // NULLs: at the end ascending (NULLS LAST), at the start descending (NULLS FIRST).
    let null_side = if desc { Ordering::Less } else { Ordering::Greater };
    match (r.is_null(), c.is_null()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return null_side,
        (false, true) => return null_side.reverse(),
        _ => {}
    }
    let (Some(rv), Some(cv)) = (as_numeric(r), as_numeric(c)) else { return r.cmp(c) };
    // The distance from c to r in sort order, against delta.
    let Ok(diff) = rv.sub(&cv) else { return Ordering::Equal };
    let diff = if desc { Numeric::from_i64(0).sub(&diff).unwrap_or(diff) } else { diff };
    diff.cmp(delta)
}

#[derive(Clone)]
pub struct WindowAggState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    spec: WindowSpec,
    /// The current partition's rows read so far.
    buffer: Vec<Vec<Datum>>,
    /// The current row's position in the partition (`currentpos`).
    current: usize,
    /// A partition has begun (else the next call begins one).
    started: bool,
    /// Every row of the partition is in `buffer` (`partition_spooled`).
    spooled: bool,
    /// The row read past the partition's last one (the next partition's first:
    /// PostgreSQL's `first_part_slot`).
    pending: Option<Vec<Datum>>,
    /// The child returned its last row.
    input_done: bool,
    /// The current peer group's first row and the peer groups so far (rank,
    /// dense_rank), as of the last row returned.
    row: Row,
    /// Where the last row's frame started and ended (the searches start there).
    head_hint: usize,
    tail_hint: usize,
    /// Per function: an aggregate's state over the frame it last covered.
    aggs: Vec<Option<AggCache>>,
    slot: Vec<Datum>,
}

/// The peer-group bookkeeping of the last row returned.
#[derive(Clone, Copy, Debug, Default)]
struct Row {
    group_start: usize,
    groups: i64,
}

/// An aggregate's transition state over the frame rows `head..tail`.
#[derive(Clone, Debug)]
struct AggCache {
    head: usize,
    tail: usize,
    trans: Trans,
}

impl WindowAggState {
    pub fn init(child: PlanState, spec: WindowSpec) -> Self {
        Self::new(vec![child], spec)
    }

    /// A state over `children` that has read nothing yet.
    fn new(children: Vec<PlanState>, spec: WindowSpec) -> Self {
        WindowAggState {
            children,
            inputs: AsyncInputs::default(),
            aggs: vec![None; spec.funcs.len()],
            spec,
            buffer: Vec::new(),
            current: 0,
            started: false,
            spooled: false,
            pending: None,
            input_done: false,
            row: Row::default(),
            head_hint: 0,
            tail_hint: 0,
            slot: Vec::new(),
        }
    }

    /// A test's state with no child: `rows` already read into its buffer, the input
    /// at its end (the whole partition spooled) when `complete`.
    #[cfg(test)]
    fn buffered(spec: WindowSpec, rows: Vec<Vec<Datum>>, complete: bool) -> Self {
        let mut st = Self::new(vec![], spec);
        st.buffer = rows;
        st.started = true;
        st.spooled = complete;
        st.input_done = complete;
        st
    }

    /// The next input row: Ok(Some) a row, Ok(None) at the end (then `input_done`),
    /// Err(Wait) passed up as is.
    fn read(&mut self, es: &mut EState) -> ExecResult<Result<Option<Vec<Datum>>, ExecStatus>> {
        if self.input_done {
            return Ok(Ok(None));
        }
        match self.inputs.next(&mut self.children, 0, es)? {
            ExecStatus::Row => Ok(Ok(Some(self.children[0].node.slot().to_vec()))),
            ExecStatus::Done => {
                self.input_done = true;
                Ok(Ok(None))
            }
            other => Ok(Err(other)),
        }
    }

    /// Starts a partition with its first row: the one kept, else the next one read
    /// (`begin_partition`). Ok(false) when there is none (the input is done).
    fn begin_partition(&mut self, es: &mut EState) -> ExecResult<Result<bool, ExecStatus>> {
        let first = match self.pending.take() {
            Some(r) => r,
            None => match self.read(es)? {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(Ok(false)),
                Err(wait) => return Ok(Err(wait)),
            },
        };
        self.buffer.clear();
        self.buffer.push(first);
        self.current = 0;
        self.started = true;
        self.spooled = false;
        self.row = Row::default();
        (self.head_hint, self.tail_hint) = (0, 0);
        self.aggs.iter_mut().for_each(|a| *a = None);
        Ok(Ok(true))
    }

    /// Reads one more row of the partition (one step of `spool_tuples`): a row of
    /// another partition is kept for it and ends this one, as does the input's end.
    fn spool_one(&mut self, es: &mut EState) -> ExecResult<Result<(), ExecStatus>> {
        match self.read(es)? {
            Ok(Some(row)) if self.spec.same_partition(&self.buffer[0], &row) => self.buffer.push(row),
            Ok(Some(row)) => {
                self.pending = Some(row);
                self.spooled = true;
            }
            Ok(None) => self.spooled = true,
            Err(wait) => return Ok(Err(wait)),
        }
        Ok(Ok(()))
    }

    /// Is row `pos` of the partition still to be read?
    fn unread(&self, pos: usize) -> bool {
        !self.spooled && pos >= self.buffer.len()
    }

    /// The current row's frame start (`update_frameheadpos`); None while it depends
    /// on rows not read yet. ROWS: counted from the current row (maybe past the
    /// partition: an empty frame). RANGE: CURRENT ROW is the first peer, an offset
    /// the first row whose value is within it of the current row's.
    fn frame_head(&self, cur: usize) -> Option<usize> {
        let rows = self.spec.frame.rows;
        match &self.spec.frame.start {
            FrameBound::UnboundedPreceding => Some(0),
            FrameBound::CurrentRow if rows => Some(cur),
            FrameBound::CurrentRow => Some(self.first_peer(cur)),
            FrameBound::Preceding(n) | FrameBound::Following(n) if rows => {
                let n = offset_value(n).as_int().unwrap_or(0).max(0) as usize;
                Some(match &self.spec.frame.start {
                    FrameBound::Preceding(_) => cur.saturating_sub(n),
                    _ => cur + n,
                })
            }
            FrameBound::Preceding(n) | FrameBound::Following(n) => {
                let following = matches!(self.spec.frame.start, FrameBound::Following(_));
                // The first row not before the current value moved by the offset.
                self.range_search(cur, n, following, |o| o != Ordering::Less)
            }
            FrameBound::UnboundedFollowing => Some(self.buffer.len()),
        }
    }

    /// The current row's frame end, one past its last row (`update_frametailpos`);
    /// None while it depends on rows not read yet.
    fn frame_tail(&self, cur: usize) -> Option<usize> {
        let rows = self.spec.frame.rows;
        let whole = || self.spooled.then_some(self.buffer.len());
        match &self.spec.frame.end {
            FrameBound::UnboundedFollowing => whole(),
            FrameBound::CurrentRow if rows => Some(cur + 1),
            // Without ORDER BY every row is a peer: the whole partition.
            FrameBound::CurrentRow if self.spec.order.is_empty() => whole(),
            FrameBound::CurrentRow => {
                let from = self.tail_hint.max(cur + 1);
                match (from..self.buffer.len()).find(|&i| !self.spec.peers(&self.buffer[cur], &self.buffer[i])) {
                    Some(i) => Some(i),
                    None => whole(),
                }
            }
            FrameBound::Preceding(n) | FrameBound::Following(n) if rows => {
                let n = offset_value(n).as_int().unwrap_or(0).max(0) as usize;
                let tail = match &self.spec.frame.end {
                    FrameBound::Preceding(_) => (cur + 1).saturating_sub(n),
                    _ => cur + n + 1,
                };
                // Rows up to the tail's last are read (`spool_tuples(tail - 1)`).
                match tail > self.buffer.len() && !self.spooled {
                    true => None,
                    false => Some(tail.min(self.buffer.len())),
                }
            }
            FrameBound::Preceding(n) | FrameBound::Following(n) => {
                let following = matches!(self.spec.frame.end, FrameBound::Following(_));
                // The first row after the current value moved by the offset.
                self.range_search(cur, n, following, |o| o == Ordering::Greater)
            }
            FrameBound::UnboundedPreceding => Some(0),
        }
    }

    /// The first row (from the last row's frame end on) whose ORDER BY value stands
    /// as `stop` says against the current row's moved by the offset (forward when
    /// `following`); the partition's end when it is read and none does; None while
    /// rows are still to be read.
    fn range_search(&self, cur: usize, n: &Expr, following: bool, stop: impl Fn(Ordering) -> bool) -> Option<usize> {
        let col = self.spec.order[0];
        let desc = self.spec.desc[0];
        let n = as_numeric(&offset_value(n)).unwrap_or_else(|| Numeric::from_i64(0));
        let delta = if following { n } else { Numeric::from_i64(0).sub(&n).unwrap_or(n) };
        let c = &self.buffer[cur][col];
        let from = self.head_hint.min(self.tail_hint).min(cur);
        match (from..self.buffer.len()).find(|&i| stop(range_cmp(&self.buffer[i][col], c, &delta, desc))) {
            Some(i) => Some(i),
            None => self.spooled.then_some(self.buffer.len()),
        }
    }

    /// The first row of the current row's peer group (rows before it are all read).
    fn first_peer(&self, cur: usize) -> usize {
        let mut i = cur;
        while i > 0 && self.spec.peers(&self.buffer[i - 1], &self.buffer[cur]) {
            i -= 1;
        }
        i
    }

    /// Does the current row need rows not read yet (what `spool_tuples`' callers
    /// ask for, see the module doc)?
    fn needs_more(&self, cur: usize) -> bool {
        if self.spooled {
            return false;
        }
        let head = || self.frame_head(cur);
        let tail = || self.frame_tail(cur);
        for f in &self.spec.funcs {
            let needs = match f.kind {
                WinKind::RowNumber | WinKind::Rank | WinKind::DenseRank => false,
                // `WinGetPartitionRowCount`: the whole partition.
                WinKind::PercentRank | WinKind::CumeDist | WinKind::Ntile => true,
                // `WinGetFuncArgInPartition` reads the row it fetches: ahead for lead,
                // and for lag with a negative offset.
                WinKind::Lag | WinKind::Lead => match extra_int(f, 0, 1) {
                    Some(k) => {
                        let ahead = if f.kind == WinKind::Lead { k } else { -k };
                        ahead > 0 && self.unread(cur + ahead as usize)
                    }
                    None => false,
                },
                WinKind::FirstValue => head().is_none_or(|h| self.unread(h)),
                WinKind::NthValue => match (head(), extra_int(f, 0, 1)) {
                    (None, _) => true,
                    (Some(h), Some(k)) if k > 0 => self.unread(h + k as usize - 1),
                    _ => false,
                },
                WinKind::LastValue => tail().is_none(),
                WinKind::Agg(_) => head().is_none() || tail().is_none(),
            };
            if needs {
                return true;
            }
        }
        let (track_head, track_tail) = self.spec.tracks_frame();
        (track_head && head().is_none()) || (track_tail && tail().is_none())
    }

    /// The current row's values, every row it needs read.
    fn eval_row(&mut self, cur: usize) -> ExecResult<Vec<Datum>> {
        self.row = if cur == 0 {
            Row { group_start: 0, groups: 1 }
        } else if self.spec.peers(&self.buffer[cur - 1], &self.buffer[cur]) {
            self.row
        } else {
            Row { group_start: cur, groups: self.row.groups + 1 }
        };
        let head = self.frame_head(cur).unwrap_or(0);
        let tail = self.frame_tail(cur).unwrap_or(self.buffer.len()).min(self.buffer.len());
        let mut out = Vec::with_capacity(self.spec.funcs.len());
        for i in 0..self.spec.funcs.len() {
            let v = match self.spec.funcs[i].kind {
                WinKind::Agg(func) => self.eval_aggregate(i, func, head, tail),
                _ => self.eval_function(i, cur, head, tail)?,
            };
            out.push(v);
        }
        self.head_hint = head.min(self.buffer.len());
        self.tail_hint = tail;
        Ok(out)
    }

    /// A window function's value for the current row (`eval_windowfunction`).
    fn eval_function(&self, i: usize, cur: usize, head: usize, tail: usize) -> ExecResult<Datum> {
        let f = &self.spec.funcs[i];
        let n = self.buffer.len();
        let value_at = |pos: i64| match (pos >= 0 && (pos as usize) < n, f.arg) {
            (true, Some(c)) => Some(self.buffer[pos as usize][c].clone()),
            _ => None,
        };
        let rank = self.row.group_start as i64 + 1;
        Ok(match f.kind {
            WinKind::RowNumber => Datum::Int(cur as i64 + 1),
            WinKind::Rank => Datum::Int(rank),
            WinKind::DenseRank => Datum::Int(self.row.groups),
            // (rank - 1) / (rows - 1), 0 for a partition of one row.
            WinKind::PercentRank if n <= 1 => Datum::Float(0.0),
            WinKind::PercentRank => Datum::Float((rank - 1) as f64 / (n - 1) as f64),
            // The rows up to the current row's last peer over the partition's rows.
            WinKind::CumeDist => {
                let last = (cur + 1..n).find(|&j| !self.spec.peers(&self.buffer[cur], &self.buffer[j])).unwrap_or(n);
                Datum::Float(last as f64 / n as f64)
            }
            WinKind::Ntile => match extra(f, 0) {
                Datum::Null => Datum::Null,
                d => match d.as_int() {
                    Some(b) if b > 0 => Datum::Int(ntile(cur as i64, n as i64, b)),
                    _ => return Err(ExecError::Query("argument of ntile must be greater than zero".into())),
                },
            },
            WinKind::Lag | WinKind::Lead => match extra_int(f, 0, 1) {
                None => Datum::Null,
                Some(k) => {
                    let pos = if f.kind == WinKind::Lag { cur as i64 - k } else { cur as i64 + k };
                    value_at(pos).unwrap_or_else(|| extra(f, 1))
                }
            },
            WinKind::FirstValue if head < tail => value_at(head as i64).unwrap_or(Datum::Null),
            WinKind::LastValue if head < tail => value_at(tail as i64 - 1).unwrap_or(Datum::Null),
            WinKind::FirstValue | WinKind::LastValue => Datum::Null,
            WinKind::NthValue => match extra_int(f, 0, 1) {
                None => Datum::Null,
                Some(k) if k <= 0 => {
                    return Err(ExecError::Query("argument of nth_value must be greater than zero".into()));
                }
                Some(k) => {
                    let pos = head + k as usize - 1;
                    if pos < tail {
                        value_at(pos as i64).unwrap_or(Datum::Null)
                    } else {
                        Datum::Null
                    }
                }
            },
            WinKind::Agg(_) => Datum::Null,
        })
    }

    /// An aggregate's value over the frame `head..tail` (`eval_windowaggregates`): its
    /// state carried on when the frame only grew at its end, else restarted.
    fn eval_aggregate(&mut self, i: usize, func: AggFunc, head: usize, tail: usize) -> Datum {
        let f = &self.spec.funcs[i];
        let tail = tail.max(head);
        let mut cache = match self.aggs[i].take() {
            Some(c) if c.head == head && c.tail <= tail => c,
            _ => AggCache { head, tail: head, trans: Trans::new() },
        };
        for r in &self.buffer[cache.tail.min(self.buffer.len())..tail.min(self.buffer.len())] {
            cache.trans.advance(func, f.arg.map_or(Datum::Null, |c| r[c].clone()));
        }
        cache.tail = tail;
        let v = cache.trans.finish(func, self.spec.numeric[i]);
        self.aggs[i] = Some(cache);
        v
    }
}

/// A function's `k`-th extra argument (a constant), NULL when it has none.
fn extra(f: &WindowFunc, k: usize) -> Datum {
    f.extra.get(k).map_or(Datum::Null, offset_value)
}

/// A function's `k`-th extra argument as an integer: `default` when there is none,
/// None when it is NULL.
fn extra_int(f: &WindowFunc, k: usize, default: i64) -> Option<i64> {
    match f.extra.get(k) {
        None => Some(default),
        Some(e) => offset_value(e).as_int(),
    }
}

/// `window_ntile`: the bucket (from 1) of the partition's row `i` (from 0) of `n`
/// rows in `buckets` buckets; the first `n % buckets` buckets have one row more.
fn ntile(i: i64, n: i64, buckets: i64) -> i64 {
    let per = n / buckets;
    if per == 0 {
        return i + 1;
    }
    let extra = n % buckets;
    let big = extra * (per + 1);
    if i < big {
        i / (per + 1) + 1
    } else {
        extra + (i - big) / per + 1
    }
}

/// Every function's value for every row of a whole partition (rows in input order),
/// as the node computes them.
#[cfg(test)]
fn eval_partition(spec: &WindowSpec, rows: &[Vec<Datum>]) -> ExecResult<Vec<Vec<Datum>>> {
    let mut st = WindowAggState::buffered(spec.clone(), rows.to_vec(), true);
    (0..rows.len()).map(|cur| st.eval_row(cur)).collect()
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
        loop {
            if !self.started {
                match self.begin_partition(es)? {
                    Ok(true) => {}
                    Ok(false) => return Ok(ExecStatus::Done),
                    Err(wait) => return Ok(wait),
                }
            }
            let cur = self.current;
            // The current row itself (`spool_tuples(currentpos)`).
            while self.unread(cur) {
                if let Err(wait) = self.spool_one(es)? {
                    return Ok(wait);
                }
            }
            if cur >= self.buffer.len() {
                // The partition is done: the next one begins with the row kept.
                self.started = false;
                continue;
            }
            while self.needs_more(cur) {
                if let Err(wait) = self.spool_one(es)? {
                    return Ok(wait);
                }
            }
            let values = self.eval_row(cur)?;
            es.clock.charge(es.cost.result_row_ns);
            self.slot.clear();
            self.slot.extend_from_slice(&self.buffer[cur]);
            self.slot.extend(values);
            self.current += 1;
            return Ok(ExecStatus::Row);
        }
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.buffer.clear();
        self.current = 0;
        self.started = false;
        self.spooled = false;
        self.pending = None;
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
    /// ruleutils prints a window function in EXPLAIN: `lag(h.id, 2, 0) OVER (?)` (the
    /// window's definition, its frame too, is not resolved there).
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "WindowAgg".into();
        // The windows' PARTITION BY and ORDER BY columns: resjunk entries of the final
        // target list where the select list lacks them (`findTargetlistEntrySQL99`),
        // which a select list folded into the top WindowAgg prints after its own.
        if !self.spec.resjunk.is_empty() {
            let junk: Vec<String> = self.spec.resjunk.iter().map(ToString::to_string).collect();
            e.details.push((crate::instrument::SORT_OUTPUTS.into(), junk.join(",")));
        }
        let refs: Vec<String> = (0..self.spec.width).map(|i| format!("${i}")).collect();
        for r in &refs {
            e.push_output(r.clone());
        }
        for f in &self.spec.funcs {
            let mut args: Vec<String> = match (f.kind, f.arg) {
                (WinKind::Agg(_), None) => vec!["*".to_string()],
                (_, Some(c)) => vec![format!("${c}")],
                (_, None) => vec![],
            };
            args.extend(f.extra.iter().map(|x| x.to_sql(&refs)));
            e.push_output(format!("{}({}) OVER (?)", f.kind.name(), args.join(", ")));
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

    fn f(kind: WinKind, arg: Option<usize>) -> WindowFunc {
        WindowFunc { kind, arg, extra: vec![] }
    }

    fn fx(kind: WinKind, arg: Option<usize>, extra: Vec<Datum>) -> WindowFunc {
        WindowFunc { kind, arg, extra: extra.into_iter().map(Expr::Const).collect() }
    }

    fn rows(v: &[(i64, i64)]) -> Vec<Vec<Datum>> {
        v.iter().map(|&(a, b)| vec![Datum::Int(a), Datum::Int(b)]).collect()
    }

    fn ints(got: &[Vec<Datum>]) -> Vec<Vec<i64>> {
        got.iter().map(|r| r.iter().map(|d| if let Datum::Int(i) = d { *i } else { -1 }).collect()).collect()
    }

    /// Peers (equal order values) share rank and the running aggregate; row_number
    /// does not; dense_rank counts peer groups.
    #[test]
    fn peers_share_rank_and_running_value() {
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
        let got = eval_partition(&s, &rows(&[(1, 10), (2, 20), (3, 20), (4, 30)])).unwrap();
        let want: Vec<Vec<i64>> =
            vec![vec![1, 1, 1, 10, 1], vec![2, 2, 2, 50, 3], vec![3, 2, 2, 50, 3], vec![4, 4, 3, 80, 4]];
        assert_eq!(ints(&got), want);
    }

    /// Without ORDER BY every row is a peer: the whole partition's value everywhere.
    #[test]
    fn no_order_is_whole_partition() {
        let s = spec(vec![f(WinKind::Agg(AggFunc::Max), Some(1))], vec![0], vec![]);
        let got = eval_partition(&s, &rows(&[(1, 5), (1, 7), (1, 6)])).unwrap();
        assert!(got.iter().all(|r| r == &vec![Datum::Int(7)]), "{got:?}");
    }

    /// ROWS frames count rows, not peers: a moving sum over one row before and one
    /// after, and a frame entirely before the current row (empty at the start: NULL,
    /// count 0).
    #[test]
    fn rows_frames_count_rows() {
        let one = || Expr::Const(Datum::Int(1));
        let moving = spec(vec![f(WinKind::Agg(AggFunc::Sum), Some(1))], vec![], vec![1])
            .with_frame(WinFrame { rows: true, start: FrameBound::Preceding(one()), end: FrameBound::Following(one()) })
            .unwrap();
        let data = rows(&[(1, 10), (2, 20), (3, 20), (4, 30)]);
        assert_eq!(ints(&eval_partition(&moving, &data).unwrap()), vec![vec![30], vec![50], vec![70], vec![50]]);
        let before = spec(
            vec![f(WinKind::Agg(AggFunc::Sum), Some(1)), f(WinKind::Agg(AggFunc::CountStar), None)],
            vec![],
            vec![1],
        )
        .with_frame(WinFrame { rows: true, start: FrameBound::UnboundedPreceding, end: FrameBound::Preceding(one()) })
        .unwrap();
        let got = eval_partition(&before, &data).unwrap();
        assert_eq!(got[0], vec![Datum::Null, Datum::Int(0)]);
        assert_eq!(ints(&got[1..]), vec![vec![10, 1], vec![30, 2], vec![50, 3]]);
    }

    /// RANGE offsets compare values: rows within 10 below the current value; the peers
    /// of the current row are in; a NULL value's frame is the NULLs (sorted last).
    #[test]
    fn range_offsets_compare_values() {
        let ten = Expr::Const(Datum::Int(10));
        let s = spec(vec![f(WinKind::Agg(AggFunc::CountStar), None)], vec![], vec![1])
            .with_frame(WinFrame { rows: false, start: FrameBound::Preceding(ten), end: FrameBound::CurrentRow })
            .unwrap();
        let mut data = rows(&[(1, 10), (2, 15), (3, 20), (4, 20), (5, 35)]);
        data.push(vec![Datum::Int(6), Datum::Null]);
        data.push(vec![Datum::Int(7), Datum::Null]);
        let got = ints(&eval_partition(&s, &data).unwrap());
        assert_eq!(got, vec![vec![1], vec![2], vec![4], vec![4], vec![1], vec![2], vec![2]]);
    }

    /// lag and lead with an offset and a default; outside the partition the default
    /// (or NULL without one).
    #[test]
    fn lag_lead_defaults() {
        let s = spec(
            vec![
                f(WinKind::Lag, Some(1)),
                fx(WinKind::Lag, Some(1), vec![Datum::Int(2), Datum::Int(-1)]),
                fx(WinKind::Lead, Some(1), vec![Datum::Int(1), Datum::Int(0)]),
            ],
            vec![],
            vec![0],
        );
        let got = eval_partition(&s, &rows(&[(1, 10), (2, 20), (3, 30)])).unwrap();
        assert_eq!(got[0][0], Datum::Null);
        assert_eq!(ints(&got[1..]), vec![vec![10, -1, 30], vec![20, 10, 0]]);
        assert_eq!(got[0][1..], [Datum::Int(-1), Datum::Int(20)]);
    }

    /// first_value / last_value / nth_value read the frame: with the default frame
    /// last_value is the current row's last peer; ntile splits 5 rows into 2 and 3
    /// buckets as PostgreSQL does (the first buckets one row larger).
    #[test]
    fn value_functions_and_ntile() {
        let s = spec(
            vec![
                f(WinKind::FirstValue, Some(0)),
                f(WinKind::LastValue, Some(0)),
                fx(WinKind::NthValue, Some(0), vec![Datum::Int(2)]),
                fx(WinKind::Ntile, None, vec![Datum::Int(3)]),
            ],
            vec![],
            vec![1],
        );
        let got = ints(&eval_partition(&s, &rows(&[(1, 10), (2, 20), (3, 20), (4, 30), (5, 40)])).unwrap());
        assert_eq!(
            got,
            vec![vec![1, 1, -1, 1], vec![1, 3, 2, 1], vec![1, 3, 2, 2], vec![1, 4, 2, 2], vec![1, 5, 2, 3]]
        );
        assert_eq!((0..5).map(|i| ntile(i, 5, 2)).collect::<Vec<_>>(), vec![1, 1, 1, 2, 2]);
        assert_eq!((0..3).map(|i| ntile(i, 3, 5)).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    /// percent_rank and cume_dist over peers.
    #[test]
    fn percent_rank_cume_dist() {
        let s = spec(vec![f(WinKind::PercentRank, None), f(WinKind::CumeDist, None)], vec![], vec![1]);
        let got = eval_partition(&s, &rows(&[(1, 10), (2, 20), (3, 20), (4, 30), (5, 40)])).unwrap();
        let fl: Vec<(f64, f64)> = got
            .iter()
            .map(|r| match (&r[0], &r[1]) {
                (Datum::Float(a), Datum::Float(b)) => (*a, *b),
                _ => (-1.0, -1.0),
            })
            .collect();
        assert_eq!(fl, vec![(0.0, 0.2), (0.25, 0.6), (0.25, 0.6), (0.75, 0.8), (1.0, 1.0)]);
    }

    /// ntile(0) is PostgreSQL's error, not a panic.
    #[test]
    fn ntile_zero_is_an_error() {
        let s = spec(vec![fx(WinKind::Ntile, None, vec![Datum::Int(0)])], vec![], vec![]);
        let err = eval_partition(&s, &rows(&[(1, 1)])).err().map(|e| e.message()).unwrap_or_default();
        assert!(err.contains("argument of ntile must be greater than zero"), "{err}");
    }

    /// What each function makes the node read ahead, before a row is returned: a
    /// ROWS frame to its current row only for row_number, RANGE's peers (one row past
    /// them), lead its offset.
    #[test]
    fn read_ahead_as_postgresql() {
        let base = |funcs, frame: WinFrame| {
            let s = spec(funcs, vec![], vec![1]).with_frame(frame).unwrap();
            let mut st = WindowAggState::buffered(s, rows(&[(1, 10), (2, 10)]), false);
            let first = st.needs_more(0);
            st.buffer.push(vec![Datum::Int(3), Datum::Int(20)]);
            (first, st.needs_more(0))
        };
        let rows_frame = WinFrame { rows: true, start: FrameBound::UnboundedPreceding, end: FrameBound::CurrentRow };
        assert_eq!(base(vec![f(WinKind::RowNumber, None)], rows_frame.clone()), (false, false));
        // Default RANGE frame: the peers of row 0 (rows 0, 1) and one past them.
        assert_eq!(base(vec![f(WinKind::RowNumber, None)], WinFrame::default()), (true, false));
        let lead3 = fx(WinKind::Lead, Some(0), vec![Datum::Int(3)]);
        assert_eq!(base(vec![lead3], rows_frame.clone()), (true, true));
        // lag(x, -2) is lead(x, 2): it reads two rows ahead; lag(x, 2) none.
        let lag_back = fx(WinKind::Lag, Some(0), vec![Datum::Int(-2)]);
        assert_eq!(base(vec![lag_back], rows_frame.clone()), (true, false));
        let lag2 = fx(WinKind::Lag, Some(0), vec![Datum::Int(2)]);
        assert_eq!(base(vec![lag2], rows_frame), (false, false));
    }

    /// A column past the input is an error, not a panic at run time.
    #[test]
    fn column_past_input_refused() {
        let funcs = vec![f(WinKind::Agg(AggFunc::Sum), Some(5))];
        assert!(WindowSpec::new(funcs, vec![], &[], 2).is_err());
    }
}
