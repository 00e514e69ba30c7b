//! The Volcano executor: every node has the same four verbs, PostgreSQL's
//! ExecInitNode / ExecProcNode / ExecReScan / ExecEndNode:
//!
//! - init: `init_plan` builds the state tree from a `Plan` (one function per node type);
//! - next: `exec_proc_node` — the one dispatcher, and the only place that times nodes
//!   and counts their rows — returns a row (left in the node's slot), end of data, or
//!   **Wait**: the node is blocked on a connection it registered with the event loop;
//! - rescan and end.
//!
//! A node's state lives in the node, never on the call stack, so a node that returned
//! Wait is simply called again after the host has delivered input, and resumes where it
//! was. Parents copy a child's row out of the child's slot; values are cheap to clone
//! (integers are copied, text is reference-counted), so no row allocates.
//!
//! The async protocol: `exec_async.rs` (execAsync.c: the requests and their states),
//! `requestor.rs` (what the requestors Append and MergeAppend share: their requests,
//! the callback-pending queue, the request round, the event wait), `async_wait.rs`
//! (configuring the waits and notifying), `event_loop.rs` (the waiting queue and the
//! wait set), the requestee in `node_foreignscan.rs` (postgres_fdw).
//!
//! Beyond Append, with the `async_through_nodes` knob: `async_through.rs` (Hash Join,
//! Result, Agg, Sort and Limit as requestors and requestees, and the descendant check).
//!
//! Invariants: `exec_proc_node` is the only caller of `exec_next` and the only place
//! that times a node's call and counts its rows — but for an intermediate node's own
//! code under a request (`async_through`), timed like a Foreign Scan's by `exec_async`; a node id indexes `es.instr`.
//!
//! Where it departs from PostgreSQL: **Wait** stands for every place PostgreSQL blocks
//! (a libpq call, WaitEventSetWait), and in the demo's step mode for each step; the
//! node is called again and goes on (see `estate::Stop`). A statement a rescan sends
//! and PostgreSQL waits for inside ExecReScan (postgres_fdw's CLOSE) is queued in
//! `es.remote_commands` instead; the run loop sends it, waits, and calls the plan
//! again (the Nested Loop that rescanned returns Wait for that).
//!
//! | here | PostgreSQL |
//! |---|---|
//! | `init_plan` | `ExecInitNode` |
//! | `exec_proc_node` | `ExecProcNode` |
//! | `exec_rescan` | `ExecReScan` |
//! | `exec_end_node` | `ExecEndNode` |
//! | `ExecStatus::Row` / `Done` | a filled / an empty `TupleTableSlot` |
//! | `ExecStatus::Wait` | none: PostgreSQL blocks in place |
//! | `exec_proc_node_page` | none: see below |
//!
//! Page mode, the one batched path: an Aggregate reading a SeqScan takes the scan's
//! rows a page at a time (`exec_proc_node_page`, `ExecNode::exec_page`) instead of one
//! `exec_proc_node` per row. PostgreSQL's heap scan also works a page at a time
//! (`heapgetpage` collects a block's visible tuples, `heapgettup_pagemode` hands them
//! out), but its executor still takes one tuple per ExecProcNode; the sandbox batches
//! here because a dispatch per row (a virtual call, the instrumentation, a copy into
//! the slot) cost more than the aggregate's own work, and twice that in wasm. What the
//! node returns, its row counts and (on the virtual clock) its times are the same as
//! row by row; it is not used where a row-by-row call would be observed differently
//! (a host clock with TIMING on, a pending rescan).

pub mod async_through;
mod async_wait;
pub mod estate;
pub mod event_loop;
pub mod exec_async;
mod fdw_modify;
mod hash_space;
mod node_agg;
mod node_append;
mod node_bitmapheapscan;
pub mod node_ctescan;
mod node_foreignscan;
mod node_functionscan;
mod node_hashjoin;
mod node_incrementalsort;
mod node_indexonlyscan;
mod node_indexscan;
mod node_limit;
mod node_material;
mod node_memoize;
mod node_mergeappend;
mod node_mergejoin;
pub mod node_modifytable;
mod node_nestloop;
mod node_result;
mod node_seqscan;
mod node_setop;
mod node_sort;
pub mod node_subplan;
mod node_subqueryscan;
mod node_unique;
mod node_windowagg;
pub mod on_conflict;
mod requestor;
#[cfg(test)]
mod test_rows;
mod tlist_order;
mod tuplesort_space;

pub use node_append::AppendState;
pub use node_foreignscan::ForeignScanState;
pub use node_mergeappend::MergeAppendState;

use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::instrument::{ExplainNode, Instrumentation};
use crate::plan::Plan;
use crate::types::{Catalog, Datum};

/// What `next` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecStatus {
    /// A row is in the node's slot.
    Row,
    /// End of data.
    Done,
    /// Blocked on I/O registered with the event loop; call again later.
    Wait,
}

/// A node of the state tree: its id (index of its instrumentation) and its state.
/// Cloneable, so the demo can keep checkpoints of a whole run (`session.rs`).
#[derive(Clone)]
pub struct PlanState {
    pub id: usize,
    pub node: Box<dyn ExecNode>,
}

/// Copies a boxed node (every node state is `Clone`; a trait object needs this helper).
pub trait CloneNode {
    fn clone_node(&self) -> Box<dyn ExecNode>;
}

impl<T: ExecNode + Clone + 'static> CloneNode for T {
    fn clone_node(&self) -> Box<dyn ExecNode> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn ExecNode> {
    fn clone(&self) -> Self {
        self.clone_node()
    }
}

/// The verbs every executor node implements. Async-capable nodes (ForeignScan) also
/// implement the requestee side of the async protocol (`exec_async`).
pub trait ExecNode: CloneNode {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus>;
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()>;
    fn exec_end(&mut self, es: &mut EState);
    /// The current row (valid after `exec_next` returned Row).
    fn slot(&self) -> &[Datum];
    fn children(&self) -> &[PlanState] {
        &[]
    }
    /// Fills the node's EXPLAIN type, relation and details.
    fn explain(&self, e: &mut ExplainNode);
    /// Can this node return its rows a page at a time (`exec_page`)? Only a node
    /// that never waits and whose rows are stored (SeqScan) says yes.
    fn has_page_mode(&self) -> bool {
        false
    }
    /// Page mode's `exec_next` (called only by `exec_proc_node_page`, only when
    /// `has_page_mode`): the next rows at once, charged on the clock as row-by-row
    /// calls would be; an empty page is end of data.
    fn exec_page(&mut self, _es: &mut EState) -> Page<'_> {
        Page::default()
    }
    /// After `explain`, its children's EXPLAIN views (ModifyTable tells its members'
    /// scans the Output PostgreSQL prints for them).
    fn explain_children(&self, _children: &mut [ExplainNode]) {}
    /// The member whose row is in the slot (an Append's child, by index: what
    /// PostgreSQL's `tableoid` junk column tells ModifyTable); None for other nodes.
    fn current_child(&self) -> Option<usize> {
        None
    }
    /// `ExecSetTupleBound`: a Limit above will take at most `bound` rows (None: all).
    /// Only an Incremental Sort uses it; a node that passes rows through unchanged
    /// passes it on.
    fn set_tuple_bound(&mut self, _bound: Option<u64>) {}
    /// The InitPlan values (`$n`) of a select list that PostgreSQL computes inside
    /// this node's input scans (`apply_scanjoin_target_to_paths`): the first row the
    /// node reads from its input runs those InitPlans, as that scan's projection would
    /// (ExecEvalParamExec → ExecSetParamPlan), before the node reads further rows. Set
    /// by the projecting Result above (a Sort, a Merge Append take it; others need not:
    /// they hand their first row straight up).
    /// `values`: the types of the InitPlan values the select list returns as they are
    /// (`$0`), which PostgreSQL's tuples below carry and the sandbox's do not (a Sort
    /// sizes its tuples with them).
    fn set_projection_params(&mut self, _params: Vec<usize>, _values: Vec<crate::plan::SqlType>) {}

    /// At ExecInit, after the children: an intermediate node sets up its requests to
    /// async-capable children (`async_through::AsyncInputs::init`; none in pg15).
    fn init_async(&mut self, _id: usize, _plans: &[&Plan], _es: &mut EState) {}
    /// Can this node take async requests (an async-capable ForeignScan)?
    fn is_async_capable(&self) -> bool {
        false
    }
    /// EXPLAIN's "Async" mark: a parent sends this node requests (an async Foreign Scan
    /// says so in `explain`; an intermediate requestee of `async_through` here).
    fn is_async_requestee(&self) -> bool {
        self.is_async_capable()
    }
    /// Called by an async-aware parent that will send this node requests (PostgreSQL
    /// marks only such children async: EXPLAIN prints them as "Async Foreign Scan").
    fn mark_async_requestee(&mut self) {}
    /// `mark_async_requestee` by an Append at its ExecInit, where a node may set up
    /// requests of its own: a Result that is a Foreign Scan's own Filter
    /// (`node_result`) passes the Append's requests to the scan.
    fn mark_async_requestee_in(&mut self, _es: &mut EState) {
        self.mark_async_requestee()
    }
    /// The requestee side of ExecAsyncRequest (postgres_fdw's postgresForeignAsyncRequest):
    /// ends with `exec_async_request_done` or `exec_async_request_pending`.
    fn async_request(&mut self, _es: &mut EState, r: usize) -> ExecResult<()> {
        Err(ExecError::Internal(format!("request {r} sent to a node that is not async-capable")))
    }
    /// The requestee side of ExecAsyncConfigureWait: adds its connection to the wait
    /// set (true), or not, or completes the request at once.
    fn async_configure_wait(
        &mut self,
        _es: &mut EState,
        r: usize,
        _ctx: &crate::executor::exec_async::WaitContext,
    ) -> ExecResult<bool> {
        Err(ExecError::Internal(format!("configure wait for request {r} sent to a node that is not async-capable")))
    }
    /// Has the input this node waits for arrived (so a notify would progress)?
    fn async_ready(&self, _es: &EState) -> bool {
        false
    }
    fn async_notify(&mut self, _es: &mut EState, r: usize) -> ExecResult<()> {
        Err(ExecError::Internal(format!("notify for request {r} sent to a node that is not async-capable")))
    }
}

/// ExecProcNode: the one dispatcher. Times the call and counts the row; a call that
/// returns Wait keeps its clock running until it completes.
#[inline]
pub fn exec_proc_node(ps: &mut PlanState, es: &mut EState) -> ExecResult<ExecStatus> {
    if !es.chg_param_pending.is_empty() && rescan_if_pending(ps, es)? {
        return Ok(ExecStatus::Wait);
    }
    let now = es.timing_now();
    if !es.instr[ps.id].running {
        let node = ps.id;
        es.record(|| crate::trace::TraceKind::NodeStart { node });
    }
    es.instr[ps.id].start_call(now);
    let status = ps.node.exec_next(es)?;
    let now = es.timing_now();
    let outcome = match status {
        ExecStatus::Row => Some(true),
        ExecStatus::Done => Some(false),
        ExecStatus::Wait => None,
    };
    es.instr[ps.id].stop_call(now, outcome);
    Ok(status)
}

/// Rows a page-mode node returns at once: `rows.len() / width` stored rows of `width`
/// values each, of which the node's output row is the values at `columns` (None: all
/// of them, in order) — the slot a row-by-row call would have filled, not copied.
#[derive(Default)]
pub struct Page<'a> {
    pub rows: &'a [Datum],
    pub width: usize,
    pub columns: Option<&'a [usize]>,
    /// Clock time at which the first row was ready (the row's own call would have
    /// returned then): the node's startup time.
    pub first_row_at: u64,
}

impl Page<'_> {
    pub fn nrows(&self) -> usize {
        self.rows.len().checked_div(self.width).unwrap_or(0)
    }
}

/// ExecProcNode in page mode (see the module's doc): the dispatcher's work once for a
/// page of rows, the rows counted one by one. `None`: not usable now (a host clock
/// with TIMING on would time each row; a rescan is pending), call `exec_proc_node`.
#[inline]
pub fn exec_proc_node_page<'a>(ps: &'a mut PlanState, es: &mut EState) -> Option<Page<'a>> {
    if !es.chg_param_pending.is_empty() || (es.timing && !es.clock.is_virtual()) {
        return None;
    }
    let id = ps.id;
    let now = es.timing_now();
    if !es.instr[id].running {
        es.record(|| crate::trace::TraceKind::NodeStart { node: id });
    }
    es.instr[id].start_call(now);
    let page = ps.node.exec_page(es);
    let now = es.timing_now();
    let first_row_at = if es.timing { page.first_row_at } else { 0 };
    es.instr[id].stop_call_page(now, page.nrows() as u64, first_row_at);
    Some(page)
}

/// A node left with changed parameters (`es.chg_param_pending`) is rescanned before it
/// runs, as ExecProcNode's `chgParam` check does (a foreign scan closes its cursor to
/// declare it again). True if that rescan's statements must go out first (the caller
/// returns Wait; the run loop sends them and calls again).
pub fn rescan_if_pending(ps: &mut PlanState, es: &mut EState) -> ExecResult<bool> {
    let Some(at) = es.chg_param_pending.iter().position(|&n| n == ps.id) else { return Ok(false) };
    es.chg_param_pending.swap_remove(at);
    es.chg_param = true;
    let r = exec_rescan(ps, es);
    es.chg_param = false;
    r?;
    Ok(!es.remote_commands.is_empty())
}

/// ExecReScan: closes the node's current loop and restarts it.
pub fn exec_rescan(ps: &mut PlanState, es: &mut EState) -> ExecResult<()> {
    es.instr[ps.id].end_loop();
    ps.node.exec_rescan(es)
}

/// ExecEndNode.
pub fn exec_end_node(ps: &mut PlanState, es: &mut EState) {
    ps.node.exec_end(es);
}

/// What `init_plan` needs besides the plan: local tables.
#[derive(Clone)]
pub struct InitContext<'a> {
    pub catalog: &'a Catalog,
}

/// ExecInitNode: builds the state tree, allocating node ids in depth-first order (so
/// that, as in the 2016 patch, ancestry can be checked by id ranges).
pub fn init_plan(plan: &Plan, ctx: &InitContext, es: &mut EState) -> Result<PlanState, String> {
    // Not a node: the InitPlans are started first, then attached to the child's node.
    if let Plan::WithInitPlans { child, init_plans } = plan {
        return node_subplan::init_with_init_plans(child, init_plans, ctx, es);
    }
    if let Plan::WithCtes { child, ctes } = plan {
        return node_ctescan::init_with_ctes(child, ctes, ctx, es);
    }
    let id = es.instr.len();
    es.instr.push(Instrumentation::default());
    es.shape.name.push(async_through::plan_node_name(plan));
    es.shape.parent.push(None);
    es.shape.end.push(id + 1);
    let node: Box<dyn ExecNode> = match plan {
        Plan::SeqScan { table, columns, alias } => {
            Box::new(node_seqscan::SeqScanState::init(table, columns, ctx)?.named(alias.clone()))
        }
        Plan::IndexScan { table, columns, column, desc, alias, index_only: false, quals, nest_param } => {
            let conds = (quals.as_slice(), nest_param.as_ref());
            Box::new(
                node_indexscan::IndexScanState::init(table, columns, *column, *desc, conds, ctx)?.named(alias.clone()),
            )
        }
        Plan::IndexScan { table, columns, column, desc, alias, index_only: true, quals, nest_param } => {
            let conds = (quals.as_slice(), nest_param.as_ref());
            Box::new(
                node_indexonlyscan::IndexOnlyScanState::init(table, columns, *column, *desc, conds, ctx)?
                    .named(alias.clone()),
            )
        }
        Plan::BitmapHeapScan { table, columns, alias, recheck, types, child } => {
            let child = init_plan(child, ctx, es)?;
            Box::new(
                node_bitmapheapscan::BitmapHeapScanState::init(table, columns, recheck, types, child, ctx)?
                    .named(alias.clone()),
            )
        }
        Plan::BitmapIndexScan { table, column, quals, cond } => {
            // The heap scan's columns, which `cond` is over: its parent's.
            let ncols = cond.iter().map(max_col).max().map_or(0, |m| m + 1);
            Box::new(node_bitmapheapscan::BitmapIndexScanState::init(table, *column, quals, cond, ncols, ctx)?)
        }
        Plan::ForeignScan(f) => Box::new(ForeignScanState::init(id, f, es)?),
        Plan::Append { children, prune, ordered } => {
            // An InitPlan's value in the pruning conditions: every child is initialized,
            // and the Append prunes at its first call (exec pruning).
            let exec_prune = prune.as_deref().filter(|p| p.conjuncts.iter().any(crate::plan::Expr::has_exec_param));
            let initial = if exec_prune.is_some() { None } else { prune.as_deref() };
            let (children, removed) = init_partition_pruning(children, initial, ctx, es)?;
            let mut state = AppendState::init(id, children, *ordered, es);
            state.subplans_removed = removed;
            state.exec_prune = exec_prune.cloned();
            Box::new(state)
        }
        Plan::MergeAppend { children, keys, prune } => {
            let (children, removed) = init_partition_pruning(children, prune.as_deref(), ctx, es)?;
            let names = input_refs(plan);
            let mut state = MergeAppendState::init(id, children, keys.clone(), es);
            state.key_text = node_sort::sort_key_text(keys, &names);
            state.subplans_removed = removed;
            Box::new(state)
        }
        Plan::Sort { child, keys } => {
            let names = input_refs(child);
            let mut state = node_sort::SortState::init(
                init_plan(child, ctx, es)?,
                keys.clone(),
                names.len(),
                es.planner.nodes.get(id).map(|n| n.types.clone()).unwrap_or_default(),
            );
            state.key_text = node_sort::sort_key_text(keys, &names);
            state.stored_order = tlist_order::stored_order(child, false);
            state.junk = tlist_order::junk_columns(child);
            state.work_mem_kb = es.planner.params.work_mem as u64;
            Box::new(state)
        }
        Plan::IncrementalSort { child, keys, presorted } => {
            let names = input_refs(child);
            let state = init_plan(child, ctx, es)?;
            let mut state =
                node_incrementalsort::IncrementalSortState::init(state, keys.clone(), *presorted, names.len());
            state.key_text = node_sort::sort_key_text(keys, &names);
            // show_incremental_sort_keys prints the presorted expressions alone (no DESC).
            let prefix: Vec<crate::plan::SortKey> = keys[..(*presorted).min(keys.len())]
                .iter()
                .map(|k| crate::plan::SortKey { expr: k.expr.clone(), desc: false })
                .collect();
            state.presorted_text = node_sort::sort_key_text(&prefix, &names);
            Box::new(state)
        }
        Plan::Limit { child, offset, count } => {
            Box::new(node_limit::LimitState::init(init_plan(child, ctx, es)?, *offset, *count))
        }
        Plan::Agg { child, strategy, group_by, aggs, split } => {
            let input = child.output_columns();
            Box::new(
                node_agg::AggState::init(
                    init_plan(child, ctx, es)?,
                    strategy.clone(),
                    group_by.clone(),
                    aggs.clone(),
                    &input,
                )
                .with_split(*split),
            )
        }
        Plan::Result { child, filter, targets } => {
            let exprs = filter.iter().chain(targets.iter().flatten().map(|(e, _)| e));
            node_subplan::attach_subplans(es, id, exprs);
            let names = child.output_columns().into_iter().map(|c| c.name).collect();
            let mut input = init_plan(child, ctx, es)?;
            // The select list's InitPlans run where PostgreSQL's projection inside the
            // input's scans runs them: at the first row read below (`set_projection_params`).
            let mut params = vec![];
            targets.iter().flatten().for_each(|(e, _)| e.for_each_param(&mut |n, _| params.push(n)));
            if !params.is_empty() && filter.is_none() {
                let values = targets
                    .iter()
                    .flatten()
                    .filter_map(|(e, _)| match e {
                        crate::plan::Expr::ExecParam(_, ty) => Some(*ty),
                        _ => None,
                    })
                    .collect();
                input.node.set_projection_params(params, values);
            }
            Box::new(node_result::ResultState::init(input, filter.clone(), targets.clone(), names))
        }
        Plan::EmptyResult { columns, rels, joined } => {
            // A dummy relation's columns are its Vars: qualified where EXPLAIN
            // qualifies (`instrument::qualifiable`).
            let names = columns
                .iter()
                .enumerate()
                .map(|(i, c)| match rels.get(i).and_then(Option::as_ref) {
                    Some(a) => crate::instrument::qualifiable(a, &c.name),
                    None => c.name.clone(),
                })
                .collect();
            Box::new(node_result::EmptyResultState::init(names, *joined))
        }
        Plan::HashJoin { outer, inner, outer_key, inner_key, more_keys, join_type, .. } => {
            let inner_plan: &Plan = inner;
            let (o, i) = (init_plan(outer, ctx, es)?, init_plan(inner, ctx, es)?);
            let widths = (outer.output_columns().len(), inner.output_columns().len());
            let mut n = node_hashjoin::HashJoinState::init(o, i, outer_key.clone(), inner_key.clone(), widths);
            n.join_type = *join_type;
            n.more_keys = more_keys.clone();
            // The Hash's estimate is its input's (the inner side's node).
            let inner = es.planner.nodes.get(n.children()[1].id);
            // ExecHashJoin's HJ_BUILD_HASHTABLE: the first outer row is fetched before
            // the build for a Left/Full/Anti join, or when the outer's startup cost is
            // below the Hash's total cost (the Hash's costs are its input's).
            let outer_startup = es.planner.nodes.get(n.children()[0].id).map(|o| o.est.startup);
            n.first_outer_first =
                join_type.fills_outer() || matches!((outer_startup, inner), (Some(o), Some(i)) if o < i.est.total);
            n.sizing = node_hashjoin::HashSizing {
                estimate: inner.map(|i| (i.est.rows, i.est.width as f64)),
                params: es.planner.params,
                types: inner.map(|i| i.types.clone()).unwrap_or_default(),
                order: tlist_order::stored_order(inner_plan, true),
            };
            Box::new(n)
        }
        Plan::Material { child } => Box::new(node_material::MaterialState::init(init_plan(child, ctx, es)?)),
        Plan::Memoize { child, cache_key } => {
            let param = nest_param_of(child)
                .ok_or_else(|| "internal error: a Memoize over a scan without a parameter".to_string())?;
            Box::new(node_memoize::MemoizeState::init(init_plan(child, ctx, es)?, param, cache_key.clone()))
        }
        Plan::SubqueryScan { child, alias, targets } => {
            let names = child.output_columns().into_iter().map(|c| c.name).collect();
            let state = init_plan(child, ctx, es)?;
            Box::new(node_subqueryscan::SubqueryScanState::init(state, alias.clone(), targets.clone(), names))
        }
        Plan::FunctionScan { alias, column, start, stop, step } => Box::new(
            node_functionscan::FunctionScanState::init(*start, *stop, *step, alias.clone(), column.name.clone()),
        ),
        Plan::WithInitPlans { .. } => return Err("internal error: InitPlans below a plan's top".into()),
        Plan::WithCtes { .. } => return Err("internal error: CTEs below a plan's top".into()),
        Plan::CteScan { cte, name, alias, columns, positions, .. } => {
            let columns = columns.iter().map(|c| c.name.clone()).collect();
            let reader = node_ctescan::Reader { cte: *cte, positions: positions.clone() };
            Box::new(node_ctescan::CteScanState::init(es, reader, name.clone(), alias.clone(), columns))
        }
        Plan::ModifyTable(m) => Box::new(node_modifytable::ModifyTableState::init(id, m, ctx, es)?),
        Plan::ConstResult { rows, .. } => Box::new(node_modifytable::ConstResultState::init(rows)),
        Plan::DirectModify(d) => Box::new(node_modifytable::DirectModifyState::init(id, d, es)?),
        Plan::Gating { child, qual } => {
            let names: Vec<String> = (0..child.output_columns().len()).map(|i| format!("${i}")).collect();
            Box::new(node_result::GatingResultState::init(init_plan(child, ctx, es)?, qual.clone(), names))
        }
        Plan::Unique { child, ncols } => Box::new(node_unique::UniqueState::init(init_plan(child, ctx, es)?, *ncols)),
        Plan::WindowAgg { child, funcs, part, order, frame, resjunk } => {
            let input = child.output_columns();
            let spec = node_windowagg::WindowSpec::new(funcs.clone(), part.clone(), order, input.len())?
                .with_frame(frame.clone())?
                .with_result_types(&input)
                .with_resjunk(resjunk.clone());
            Box::new(node_windowagg::WindowAggState::init(init_plan(child, ctx, es)?, spec))
        }
        Plan::SetOp { child, cmd, strategy, ncols, first_flag } => {
            Box::new(node_setop::SetOpState::init(init_plan(child, ctx, es)?, *cmd, *strategy, *ncols, *first_flag))
        }
        Plan::MergeJoin { outer, inner, outer_key, inner_key, join_type, .. } => {
            let (o, i) = (init_plan(outer, ctx, es)?, init_plan(inner, ctx, es)?);
            let widths = (outer.output_columns().len(), inner.output_columns().len());
            let keys = (outer_key.clone(), inner_key.clone());
            Box::new(node_mergejoin::MergeJoinState::init(o, i, keys, *join_type, widths))
        }
        Plan::NestLoop { outer, inner, outer_key, inner_key, filter_inner_first, join_type, .. } => {
            let (o, i) = (init_plan(outer, ctx, es)?, init_plan(inner, ctx, es)?);
            let widths = (outer.output_columns().len(), inner.output_columns().len());
            let mut n = node_nestloop::NestLoopState::init(o, i, outer_key.clone(), inner_key.clone(), widths);
            n.filter_inner_first = *filter_inner_first;
            n.join_type = *join_type;
            n.nest_param = nest_param_of(inner);
            if crate::coordinator_sql::paramfdw::reads_nest_fdw_param(inner) {
                n.exec_param = Some(crate::coordinator_sql::paramfdw::NEST_FDW_PARAM);
            }
            Box::new(n)
        }
    };
    let mut ps = PlanState { id, node };
    ps.node.init_async(id, &plan.children(), es);
    es.shape.end[id] = es.instr.len();
    for c in ps.node.children() {
        es.shape.parent[c.id] = Some(id);
    }
    Ok(ps)
}

/// ExecInitPartitionPruning for an Append or a Merge Append: with initial pruning
/// steps, only the children that may hold rows for the bound parameters are
/// initialized at all (no connection is opened for the others). Returns them and how
/// many were removed (EXPLAIN's `Subplans Removed`).
fn init_partition_pruning(
    children: &[Plan],
    prune: Option<&crate::plan::PartPruneInfo>,
    ctx: &InitContext,
    es: &mut EState,
) -> Result<(Vec<PlanState>, usize), String> {
    let Some(info) = prune else { return Ok((init_children(children, ctx, es)?, 0)) };
    let keep = crate::coordinator_sql::planner::find_matching_subplans(info);
    let mut valid: Vec<Plan> = children.iter().zip(keep).filter(|(_, k)| *k).map(|(c, _)| c.clone()).collect();
    let removed = children.len() - valid.len();
    if removed > 0 {
        // EXPLAIN names only the range-table entries of the plan it shows
        // (select_rtable_names_for_explain): the children left are numbered anew.
        for (i, c) in valid.iter_mut().enumerate() {
            rename_partition_scan(c, i + 1);
        }
    }
    Ok((init_children(&valid, ctx, es)?, removed))
}

/// Gives the partition scan under `plan` the alias `parent_k` (its parent's alias).
fn rename_partition_scan(plan: &mut Plan, k: usize) {
    let rename = |name: &mut Option<crate::plan::ScanName>| {
        if let Some(n) = name {
            if let Some(parent) = &n.parent {
                n.alias = format!("{parent}_{k}");
            }
        }
    };
    match plan {
        Plan::SeqScan { alias, .. } | Plan::IndexScan { alias, .. } | Plan::BitmapHeapScan { alias, .. } => {
            rename(alias)
        }
        Plan::ForeignScan(f) => rename(&mut f.alias),
        Plan::DirectModify(d) => rename(&mut d.scan.alias),
        Plan::Result { child, .. } | Plan::Sort { child, .. } | Plan::Agg { child, .. } | Plan::Limit { child, .. } => {
            rename_partition_scan(child, k)
        }
        _ => {}
    }
}

/// `$0`, `$1`, …: sort keys name their input columns so that EXPLAIN prints them as
/// it prints the input (qualified when PostgreSQL qualifies them).
fn input_refs(plan: &Plan) -> Vec<String> {
    (0..plan.output_columns().len()).map(|i| format!("${i}")).collect()
}

fn init_children(children: &[Plan], ctx: &InitContext, es: &mut EState) -> Result<Vec<PlanState>, String> {
    children.iter().map(|c| init_plan(c, ctx, es)).collect()
}

/// A partition scan's EXPLAIN names: its alias, the parent's when the plan refers to
/// it, and that outputs are qualified (see `instrument::explain`).
/// The physical target list a scan of a base relation could return (all of the
/// relation's columns, `build_physical_tlist`): EXPLAIN prints it as the scan's Output
/// where PostgreSQL's `use_physical_tlist` would choose it (`instrument::explain`).
/// Not for a partition's scan (an appendrel member), which never returns one.
pub(crate) fn explain_physical_tlist<'a>(
    e: &mut ExplainNode,
    name: Option<&crate::plan::ScanName>,
    columns: impl Iterator<Item = &'a str>,
) {
    if name.is_some_and(|n| n.member) {
        return;
    }
    for c in columns {
        e.details.push((crate::instrument::PHYSICAL_TLIST.into(), c.to_string()));
    }
}

pub(crate) fn explain_scan_name(e: &mut ExplainNode, name: Option<&crate::plan::ScanName>) {
    if let Some(n) = name {
        e.set_alias(n.alias.clone());
        if !n.unqualified {
            e.details.push(("Qualify".into(), String::new()));
        }
        if let Some(t) = &n.tlist {
            // `rank<TAB>column<TAB>column…` (instrument::explain's TLIST_ORDER).
            let line = std::iter::once(t.rank.to_string()).chain(t.columns.iter().cloned()).collect::<Vec<_>>();
            e.details.push((crate::instrument::TLIST_ORDER.into(), line.join("\t")));
            // `place:needed` for each column (instrument::explain's TLIST_NEEDED).
            let needed: Vec<String> = t.needed.iter().map(|(at, bits)| format!("{at}:{bits}")).collect();
            e.details.push((crate::instrument::TLIST_NEEDED.into(), needed.join("\t")));
        }
        if let Some(p) = &n.parent {
            e.details.push(("Parent".into(), p.clone()));
        }
    }
}

/// The EXPLAIN view of a state tree, with each node's current counters.
pub fn explain_tree(ps: &PlanState, es: &EState, relationship: Option<&str>) -> ExplainNode {
    let mut e = ExplainNode {
        id: ps.id,
        node_type: String::new(),
        async_capable: ps.node.is_async_requestee(),
        strategy: None,
        relation: None,
        parent_relationship: relationship.map(str::to_string),
        details: vec![],
        instr: es.instr[ps.id].clone(),
        timed: es.timing,
        children: vec![],
    };
    ps.node.explain(&mut e);
    let kids = ps.node.children();
    let member = matches!(e.node_type.as_str(), "Append" | "Merge Append");
    for (i, c) in kids.iter().enumerate() {
        let rel = if member {
            "Member"
        } else if i == 0 {
            "Outer"
        } else {
            "Inner"
        };
        e.children.push(explain_tree(c, es, Some(rel)));
    }
    ps.node.explain_children(&mut e.children);
    // After the children, so that the first child stays the input `$N` refers to;
    // printed before them, as ExplainNode prints a node's InitPlans
    // (`instrument::explain`).
    // The CTEs' subplans come first: PostgreSQL numbers them before the InitPlans.
    e.children.extend(node_ctescan::explain_ctes(es, ps.id));
    e.children.extend(node_subplan::explain_init_plans(es, ps.id));
    e
}

/// The Nested Loop parameter a parameterized inner side reads: its Index Scan's,
/// under the filter and projection Results over it (and a Memoize over those).
fn nest_param_of(inner: &Plan) -> Option<usize> {
    match inner {
        Plan::IndexScan { nest_param, .. } => nest_param.as_ref().map(|p| p.no),
        Plan::Result { child, .. } | Plan::Memoize { child, .. } => nest_param_of(child),
        _ => None,
    }
}

/// The highest column an expression reads (0 when it reads none).
fn max_col(e: &crate::plan::Expr) -> usize {
    let mut m = 0;
    e.for_each_col(&mut |c| m = m.max(c + 1));
    m.saturating_sub(1)
}

/// Copies a row into a slot without reallocating it.
#[inline]
/// A join's input names for EXPLAIN: `$0 … $n-1` over the outer side's outputs, then
/// the inner side's (`instrument::explain` resolves them to the columns).
pub(crate) fn join_input_refs(outer_width: usize, inner_width: usize) -> (Vec<String>, Vec<String>) {
    let refs = |from: usize, n: usize| (from..from + n).map(|i| format!("${i}")).collect();
    (refs(0, outer_width), refs(outer_width, inner_width))
}

pub(crate) fn copy_row(slot: &mut Vec<Datum>, row: &[Datum]) {
    slot.clear();
    slot.extend_from_slice(row);
}
