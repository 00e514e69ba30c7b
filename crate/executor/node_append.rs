//! Append (nodeAppend.c), async-aware as in PostgreSQL 15.
//!
//! Protocol (the functions are nodeAppend.c's, in its order):
//! - ExecAppend's first call sends a request to every async child, in child order
//!   (ExecAppendAsyncBegin), before running any synchronous child;
//! - ExecAppendAsyncRequest returns a stored async result if there is one; only when
//!   none is left does it send a new request to every child in `as_needrequest`, in
//!   child order. A child enters `as_needrequest` when its response delivers a row
//!   (ExecAsyncAppendResponse); `as_asyncresults` is a stack;
//! - between synchronous children it polls for events (timeout 0); once they are done
//!   it waits (timeout -1): the node returns Wait and the host waits on the connections
//!   registered during the turn.
//!
//! Invariants: a child is in `as_asyncresults` at most once, with its row in its slot;
//! `as_nasyncremain` counts the async children that have not reported end of data; the
//! node is Done only when every synchronous child is done and `as_nasyncremain` is 0.
//! The requests, the callback-pending queue, the request round and the event wait are
//! the shared requestor side's (`requestor.rs`, also MergeAppend's).
//!
//! Where it departs from PostgreSQL, which blocks in place: a call can end early, with
//! Wait, where PostgreSQL's would block (a requestee's waited DECLARE, WaitEventSetWait)
//! and, in the demo's step mode, at each step (each request made, each notification,
//! each row a synchronous child hands up). Such a stop is `Stop::Suspended`, carried up
//! by `?` like an error; the round or event wait it cut short is finished first on the
//! next call (`requestor::resume`), and `as_syncchild` says whether the call stopped
//! inside the current synchronous child (call it again first, as PostgreSQL would still
//! be in it) or after its row (return the row). So the order of work is the same with
//! or without stops, and the code below has no other resume points. A row handed up by
//! a synchronous child is a step so that sync and async runs step alike (an async
//! child's row is its request's transition).
//!
//! Run-time pruning (ExecInitPartitionPruning, in `init_plan`): a generic plan's
//! Append is built with only the children that may hold rows for its parameters'
//! values; the others are never initialized (no connection, no cursor number) and
//! EXPLAIN says `Subplans Removed: N`. With none left the node returns end of data at
//! once (ExecAppend's `as_nplans == 0`); with one async child left it runs as any async
//! Append does (nodeAppend.c has no special case for it).
//!
//! Exec pruning (an InitPlan's value against the partition key; `exec_prune`): every
//! child is initialized, and the first call runs the InitPlan and leaves out the
//! children that cannot match, from the synchronous list and the request round
//! (ExecFindMatchingSubPlans, `classify_matching_subplans`); EXPLAIN shows them `never
//! executed`, with no `Subplans Removed`.
//!
//! A rescan with changed parameters resets exec pruning's choice when the Append
//! has one (ExecReScanAppend's `as_valid_subplans`: a Nested Loop's parameter on
//! the partition key, `coordinator_sql::paramfdw`, prunes anew in every loop).
//!
//! A rescan with changed parameters (a correlated SubPlan's `chgParam`) leaves each
//! child to be rescanned when it next runs (`es.chg_param_pending`: ExecProcNode's or
//! ExecAsyncRequest's check), as ExecReScanAppend does: each partition's cursor is
//! closed and declared again in turn.
//!
//! The `fifo_results` knob restores the earlier model: results leave in the order they
//! arrived and each child is re-requested as soon as its row is taken.
//!
//! | here | nodeAppend.c |
//! |---|---|
//! | `exec_append` | `ExecAppend` |
//! | `async_begin` | `ExecAppendAsyncBegin` |
//! | `async_get_next` | `ExecAppendAsyncGetNext` |
//! | `async_request` | `ExecAppendAsyncRequest` |
//! | `requestor::event_wait` | `ExecAppendAsyncEventWait` |
//! | `Requestor::async_response` | `ExecAsyncAppendResponse` |
//! | `sync_child_done` | the event poll and `choose_next_subplan` after a sync child's end |
//! | `as_syncplans[as_whichsync]` | `as_whichplan` (here only synchronous children are counted) |
//! | `areq` | `as_asyncrequests`, and the loops' local `needrequest` and WaitEventSet |

use super::requestor::{event_wait, make_requests, resume, sleep, AsyncRequestor, Requestor};
use super::{copy_row, exec_proc_node, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{wait_if_suspended, EState, ExecResult, StepResult, Stop};
use crate::executor::exec_async::new_request;
use crate::instrument::ExplainNode;
use crate::trace::TraceKind;
use crate::types::Datum;
use std::collections::VecDeque;

/// Where the last call left the current synchronous child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SyncChild {
    /// Not inside it.
    Idle,
    /// It returned Wait (it blocked, or stepped): it is called again first.
    Waiting,
    /// Step mode: its row is in our slot, returned by the next call.
    RowHeld,
}

#[derive(Clone)]
pub struct AppendState {
    id: usize,
    children: Vec<PlanState>,
    /// The requests (one per async child) and the work on them in progress.
    areq: AsyncRequestor,
    as_nasyncplans: usize,
    /// Synchronous children, in order, and which one runs now (as_whichplan).
    as_syncplans: Vec<usize>,
    as_whichsync: usize,
    /// Async children whose row is ready to return (in their slot): a stack, or a
    /// queue with `fifo_results`.
    as_asyncresults: VecDeque<usize>,
    /// Async children that need a new request.
    as_needrequest: Vec<usize>,
    as_nasyncremain: usize,
    as_syncdone: bool,
    as_begun: bool,
    as_syncchild: SyncChild,
    /// Inside a call from our parent (it returned Wait and will call again): the next
    /// call is not a new ExecAppend call (`TraceKind::NodeCall`).
    in_call: bool,
    fifo_results: bool,
    slot: Vec<Datum>,
    /// The child whose row is in our slot (`current_child`).
    row_child: Option<usize>,
    /// Children left out by initial run-time pruning (ExecInitPartitionPruning):
    /// never initialized; EXPLAIN's `Subplans Removed`.
    pub subplans_removed: usize,
    /// Exec pruning's conditions (an InitPlan's value against the partition key):
    /// evaluated at the first call (`as_valid_subplans`, ExecFindMatchingSubPlans).
    pub exec_prune: Option<crate::plan::PartPruneInfo>,
    /// The children exec pruning left (`as_valid_subplans`); None: all.
    as_valid: Option<Vec<bool>>,
    /// Every synchronous child, before exec pruning (chosen again after a rescan
    /// with changed parameters).
    all_syncplans: Vec<usize>,
}

impl Requestor for AppendState {
    fn requestor(&mut self) -> (&mut AsyncRequestor, &mut [PlanState]) {
        (&mut self.areq, &mut self.children)
    }

    /// ExecAsyncAppendResponse: a row is stored and its child needs a new request; end
    /// of data retires the child.
    fn async_response(&mut self, child: usize, has_row: bool) {
        if !has_row {
            self.as_nasyncremain -= 1;
            return;
        }
        self.as_asyncresults.push_back(child);
        if !self.fifo_results {
            self.as_needrequest.push(child);
        }
    }

    fn needs_request(&self) -> bool {
        !self.as_needrequest.is_empty()
    }
}

/// `mark_async_capable_plan` (createplan.c, called by `create_append_plan` for each
/// member when `enable_async_append` is on and the Append is unordered): may this
/// member run asynchronously? PostgreSQL 15's rule, as the sandbox's plans meet it:
///
/// - a **Foreign Scan** whose FDW says its path is async-capable (postgres_fdw:
///   `async_capable` on the server or table): yes, unless the plan needs a **Result**
///   above it, for a projection (a select list the scan cannot return as is) or to
///   gate it (`create_gating_plan`: a pseudoconstant qual's One-Time Filter): the
///   member is then that Result, which is not async-capable;
/// - a **Subquery Scan**: only a trivial one (which setrefs.c removes), by the rule
///   for its subplan; a Subquery Scan that stays (a set operation's flag column, a
///   projection) is not;
/// - an **Append** (a partitioned member's own): no; its own members are decided when
///   that Append is planned;
/// - anything else (Seq Scan, Sort, Aggregate, Limit, Hash Join, …): no.
///
/// The sandbox asks the member's state whether it is async-capable
/// (`ExecNode::is_async_capable`): only a Foreign Scan on an `async_capable` server in
/// an async run says yes, and a Result, Subquery Scan or gating Result above it hides
/// it, which is the rule above. (With the `async_through_nodes` teaching knob, which
/// PostgreSQL 15 does not have, intermediate nodes say yes too.)
fn mark_async_capable_plan(member: &PlanState) -> bool {
    member.node.is_async_capable()
}

impl AppendState {
    /// ExecInitAppend: classifies children and creates one request per async child.
    /// `ordered`: an ordered Append (`Plan::Append::ordered`), whose members all run
    /// synchronously, in order (`create_append_plan` marks none async-capable).
    pub fn init(id: usize, mut children: Vec<PlanState>, ordered: bool, es: &mut EState) -> AppendState {
        let mut as_asyncrequests = Vec::with_capacity(children.len());
        let mut as_syncplans = Vec::new();
        for (i, c) in children.iter_mut().enumerate() {
            if !ordered && mark_async_capable_plan(c) {
                c.node.mark_async_requestee_in(es);
                as_asyncrequests.push(Some(new_request(es, id, c.id, i)));
            } else {
                as_asyncrequests.push(None);
                as_syncplans.push(i);
            }
        }
        let as_nasyncplans = as_asyncrequests.iter().flatten().count();
        let all_syncplans = as_syncplans.clone();
        AppendState {
            id,
            children,
            areq: AsyncRequestor::new(id, as_asyncrequests),
            as_nasyncplans,
            as_syncplans,
            as_whichsync: 0,
            as_asyncresults: VecDeque::new(),
            as_needrequest: Vec::new(),
            as_nasyncremain: 0,
            as_syncdone: false,
            as_begun: false,
            as_syncchild: SyncChild::Idle,
            in_call: false,
            fifo_results: es.behaviour.fifo_results,
            slot: Vec::new(),
            row_child: None,
            subplans_removed: 0,
            exec_prune: None,
            as_valid: None,
            all_syncplans,
        }
    }

    /// Exec pruning at the first call (ExecAppend's `as_valid_subplans ==
    /// NULL` case, before ExecAppendAsyncBegin): the InitPlans the conditions read run
    /// now; the children that cannot hold a matching row are left out of the
    /// synchronous list and of the first request round (they stay initialized and
    /// EXPLAIN shows them `never executed`). False while an InitPlan waits.
    fn exec_pruning(&mut self, es: &mut EState) -> StepResult<bool> {
        let Some(info) = &self.exec_prune else { return Ok(true) };
        if self.as_valid.is_some() {
            return Ok(true);
        }
        let mut bound = vec![];
        // The conditions on InitPlan values; a SubPlan's test is no pruning step.
        let step = |c: &&crate::plan::Expr| {
            let mut k = vec![];
            c.hashed_subplans(&mut k);
            super::node_subplan::correlated_subplans(c, &mut k);
            k.is_empty()
        };
        for c in info.conjuncts.iter().filter(step) {
            match super::node_subplan::bind_params(es, c).map_err(Stop::Failed)? {
                Some(b) => bound.push(b),
                None => return Ok(false),
            }
        }
        let keep = crate::coordinator_sql::planner::find_matching_subplans(&crate::plan::PartPruneInfo {
            conjuncts: bound,
            ..info.clone()
        });
        let keep: Vec<bool> = (0..self.children.len()).map(|i| keep.get(i).copied().unwrap_or(true)).collect();
        self.as_syncplans = self.all_syncplans.iter().copied().filter(|&i| keep[i]).collect();
        self.as_nasyncplans = (0..keep.len()).filter(|&i| keep[i] && self.areq.request_of(i).is_some()).count();
        self.as_valid = Some(keep);
        Ok(true)
    }

    /// ExecAppend's work: begin, or finish what the last call left, then the loop over
    /// the async side and the synchronous children.
    fn exec_append(&mut self, es: &mut EState) -> StepResult<ExecStatus> {
        if !self.as_begun {
            // Every child pruned at startup: nothing to do (ExecAppend's as_nplans == 0).
            if self.children.is_empty() {
                return Ok(ExecStatus::Done);
            }
            if !self.exec_pruning(es)? {
                return Ok(ExecStatus::Wait);
            }
            self.as_begun = true;
            self.as_syncdone = self.as_syncplans.is_empty();
            if self.as_nasyncplans > 0 {
                self.async_begin(es)?;
            }
        } else {
            resume(self, es)?;
        }
        loop {
            if self.as_syncdone && self.as_nasyncremain == 0 {
                return Ok(ExecStatus::Done);
            }
            let async_work = !self.as_needrequest.is_empty() || !self.as_asyncresults.is_empty();
            if self.as_syncchild != SyncChild::Waiting && (self.as_syncdone || async_work) {
                if let Some(status) = self.async_get_next(es)? {
                    return Ok(status);
                }
            }
            let status = self.exec_sync_child(es)?;
            if status != ExecStatus::Done {
                return Ok(status);
            }
            self.sync_child_done(es)?;
        }
    }

    /// ExecAppendAsyncBegin: every async child gets a request before anything else runs.
    fn async_begin(&mut self, es: &mut EState) -> StepResult<()> {
        self.as_nasyncremain = self.as_nasyncplans;
        match &self.as_valid {
            // Exec pruning left some: only theirs are asked (classify_matching_subplans).
            Some(valid) => {
                let valid = valid.clone();
                let asked: Vec<usize> =
                    (0..valid.len()).filter(|&i| valid[i] && self.areq.request_of(i).is_some()).collect();
                self.areq.begin_round(asked);
            }
            None => self.areq.begin_round_all(),
        }
        make_requests(self, es)
    }

    /// ExecAppendAsyncGetNext: Some(status) if the async side decided the call.
    fn async_get_next(&mut self, es: &mut EState) -> StepResult<Option<ExecStatus>> {
        if self.async_request(es)? {
            return Ok(Some(ExecStatus::Row));
        }
        while self.as_nasyncremain > 0 {
            let block = self.as_syncdone;
            let progressed = event_wait(self, es, block)?;
            if self.async_request(es)? {
                return Ok(Some(ExecStatus::Row));
            }
            if !self.as_syncdone {
                break; // go run synchronous children meanwhile
            }
            if !progressed {
                return Err(sleep(self)); // the host waits on the wait set
            }
        }
        if self.as_syncdone && self.as_nasyncremain == 0 {
            return Ok(Some(ExecStatus::Done));
        }
        Ok(None)
    }

    /// ExecAppendAsyncRequest: a stored result, else a request to every child that
    /// needs one (in child order) and maybe a result.
    fn async_request(&mut self, es: &mut EState) -> StepResult<bool> {
        if self.as_needrequest.is_empty() && !self.fifo_results {
            return Ok(false);
        }
        if self.take_async_result(es) {
            return Ok(true);
        }
        if !self.fifo_results {
            self.as_needrequest.sort_unstable();
        }
        self.areq.begin_round(self.as_needrequest.drain(..));
        make_requests(self, es)?;
        Ok(self.take_async_result(es))
    }

    /// Returns a stored async row, if any, into our slot: the last stored (PostgreSQL's
    /// `as_asyncresults[--as_nasyncresults]`), or the first with `fifo_results`.
    fn take_async_result(&mut self, es: &mut EState) -> bool {
        let taken = if self.fifo_results { self.as_asyncresults.pop_front() } else { self.as_asyncresults.pop_back() };
        let Some(child) = taken else { return false };
        es.clock.charge(es.cost.passthrough_row_ns);
        copy_row(&mut self.slot, self.children[child].node.slot());
        self.row_child = Some(child);
        if self.fifo_results {
            self.as_needrequest.push(child);
        }
        true
    }

    /// ExecProcNode of the current synchronous child; its row goes into our slot.
    fn exec_sync_child(&mut self, es: &mut EState) -> StepResult<ExecStatus> {
        let child = self.as_syncplans[self.as_whichsync];
        let status = exec_proc_node(&mut self.children[child], es)?;
        self.as_syncchild = if status == ExecStatus::Wait { SyncChild::Waiting } else { SyncChild::Idle };
        if status == ExecStatus::Row {
            es.clock.charge(es.cost.passthrough_row_ns);
            copy_row(&mut self.slot, self.children[child].node.slot());
            self.row_child = Some(child);
            if es.trace_calls {
                let node = self.children[child].id;
                es.record(|| TraceKind::NodeRow { node });
            }
            if es.yield_step() {
                self.as_syncchild = SyncChild::RowHeld;
                return Err(Stop::Suspended);
            }
        }
        Ok(status)
    }

    /// The current synchronous child is done: poll for async events, then choose the
    /// next synchronous child (choose_next_subplan).
    fn sync_child_done(&mut self, es: &mut EState) -> StepResult<()> {
        self.as_whichsync += 1;
        self.as_syncdone = self.as_whichsync >= self.as_syncplans.len();
        if self.as_nasyncremain > 0 {
            event_wait(self, es, false)?;
        }
        Ok(())
    }
}

impl ExecNode for AppendState {
    /// ExecAppend. With `trace_calls`, each new call and each row returned are recorded
    /// (the demo's "next ExecAppend call" and "row out of Append" breakpoints), and each
    /// row a synchronous child hands up (`NodeRow` of the child: in step mode that row
    /// is the step, as an async child's is its request's transition).
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if !self.in_call {
            self.in_call = true;
            if es.trace_calls {
                let node = self.id;
                es.record(|| TraceKind::NodeCall { node });
            }
        }
        let status = if self.as_syncchild == SyncChild::RowHeld {
            self.as_syncchild = SyncChild::Idle;
            ExecStatus::Row
        } else {
            wait_if_suspended(self.exec_append(es))?
        };
        if status != ExecStatus::Wait {
            self.in_call = false;
        }
        if status == ExecStatus::Row && es.trace_calls {
            let node = self.id;
            es.record(|| TraceKind::NodeRow { node });
        }
        Ok(status)
    }

    /// ExecSetTupleBound: the Append need read no more than the bound from any one of
    /// its children (each initialized one, `as_nplans`), so each gets it: a Sort under
    /// an ordered Append below a LIMIT becomes a top-N sort.
    fn set_tuple_bound(&mut self, bound: Option<u64>) {
        for c in self.children.iter_mut() {
            c.node.set_tuple_bound(bound);
        }
    }

    /// ExecReScanAppend: cancels every outstanding request, then restarts all children.
    /// ExecReScanAppend: with changed parameters each child is rescanned only when it
    /// next runs (its `chgParam`, `es.chg_param_pending`), otherwise now.
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.areq.cancel_all(es);
        if es.chg_param && self.exec_prune.is_some() {
            // The pruning conditions read the changed parameters: the valid
            // children are chosen again at the next first call.
            self.as_valid = None;
            self.as_syncplans = self.all_syncplans.clone();
        }
        for c in self.children.iter_mut() {
            if es.chg_param {
                if !es.chg_param_pending.contains(&c.id) {
                    es.chg_param_pending.push(c.id);
                }
            } else {
                exec_rescan(c, es)?;
            }
        }
        self.as_whichsync = 0;
        self.as_asyncresults.clear();
        self.as_needrequest.clear();
        self.as_nasyncremain = 0;
        self.as_syncdone = false;
        self.as_begun = false;
        self.as_syncchild = SyncChild::Idle;
        self.in_call = false;
        Ok(())
    }

    fn exec_end(&mut self, es: &mut EState) {
        self.areq.cancel_all(es);
        for c in self.children.iter_mut() {
            super::exec_end_node(c, es);
        }
    }

    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn current_child(&self) -> Option<usize> {
        self.row_child
    }
    fn children(&self) -> &[PlanState] {
        &self.children
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Append".into();
        if self.subplans_removed > 0 {
            e.details.push(("Subplans Removed".into(), self.subplans_removed.to_string()));
        }
    }
}
