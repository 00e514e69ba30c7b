//! MergeAppend (nodeMergeAppend.c). PostgreSQL 15's is synchronous: children are run
//! one after another. With the `async_merge_append` knob it is async-aware as in the
//! "Asynchronous MergeAppend" patch (seed 003).
//!
//! Protocol:
//! - first call: every child must produce its first row. Async children are all asked
//!   at once (their first FETCHes travel concurrently); synchronous children are run in
//!   turn meanwhile; then wait until every async child has answered;
//! - afterwards, return the smallest current row and ask **only the child whose row was
//!   consumed** for its next one (usually still in its batch; with `fetch_ahead` the
//!   next batch is on its way too).
//! The smallest row is the top of a binary heap of child numbers kept as PostgreSQL's
//! `binaryheap.c` keeps it (`ms_heap`: built once every child has its first row, then
//! the top replaced by the consumed child, or removed when that child is done). Which
//! child is taken among rows that tie on the keys is the heap's: `sift_down` swaps a
//! node only with a strictly smaller child, so a tie leaves the top where it is. (A
//! linear scan taking the lowest-numbered child reads a different number of rows from
//! each child, and at a batch boundary inside a run of ties sends FETCHes in another
//! order: checked against PostgreSQL 15 by cli/tests/live_scenarios.rs, scenario M.)
//!
//! Invariants: a child is asked (`ms_requested`) at most once per row it owes; the
//! merge step runs only when no child is in `ms_need`; a child at end of data is never
//! asked again. The requests and the callback-pending queue are the requestor side
//! shared with Append (`requestor.rs`): `request`, `deliver_responses`, and
//! `async_response` (here: `store`) as the response callback.
//!
//! Where it departs from PostgreSQL: as in Append, a call may end early with
//! Wait (`Stop::Suspended`: a step in the demo's step mode, or a requestee that
//! blocked): what was asked is not asked again, and an unfinished event wait starts over
//! on the next call.
//!
//! | here | nodeMergeAppend.c (and the seed 003 patch) |
//! |---|---|
//! | `exec_merge_append` | `ExecMergeAppend` |
//! | `refill` | the first call's loop over all children, later the one consumed child |
//! | `ms_rows`, `ms_valid` | `ms_slots` |
//! | `ms_heap`, `sift_down` | `ms_heap`, binaryheap.c's `sift_down` |
//! | `areq` | the patch's `ms_asyncrequests`, its needrequest/callback handling |

use super::async_wait::async_event_wait;
use super::node_sort::compare_rows;
use super::requestor::{deliver_responses, AsyncRequestor, Requestor};
use super::{copy_row, exec_proc_node, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{wait_if_suspended, EState, ExecResult, StepResult};
// exercise:async-merge-append begin
use crate::executor::exec_async::new_request;
use crate::executor::requestor::request;
// exercise:async-merge-append end
use crate::instrument::ExplainNode;
use crate::plan::SortKey;
use crate::types::Datum;

#[derive(Clone)]
pub struct MergeAppendState {
    id: usize,
    children: Vec<PlanState>,
    keys: Vec<SortKey>,
    /// The requests (one per async child) and the callback-pending queue.
    areq: AsyncRequestor,
    /// Each child's current row, if it has one.
    ms_rows: Vec<Vec<Datum>>,
    ms_valid: Vec<bool>,
    /// Per child: its next row must be obtained before the next merge step.
    ms_need: Vec<bool>,
    /// Async children asked and not yet answered.
    ms_requested: Vec<bool>,
    slot: Vec<Datum>,
    /// Child numbers with a current row, in heap order (`ms_heap`'s `bh_nodes`).
    ms_heap: Vec<usize>,
    /// The heap is built (PostgreSQL's `ms_initialized`).
    ms_initialized: bool,
    /// The child whose row was returned last: the heap's top, replaced next call.
    ms_last: usize,
    /// The keys as EXPLAIN prints them.
    pub key_text: String,
    /// Children left out by initial run-time pruning (never initialized).
    pub subplans_removed: usize,
    /// The InitPlans the select list computed in the members reads
    /// (`ExecNode::set_projection_params`): run at the first row a member returns,
    /// before the next member is started; emptied then.
    projection_params: Vec<usize>,
}

impl MergeAppendState {
    pub fn init(id: usize, mut children: Vec<PlanState>, keys: Vec<SortKey>, es: &mut EState) -> MergeAppendState {
        let ms_asyncrequests = children
            .iter_mut()
            .enumerate()
            .map(|(i, c)| {
                // exercise:async-merge-append begin
                // PostgreSQL 15's MergeAppend is synchronous; seed 003's patch is a knob.
                let capable = es.behaviour.async_merge_append && c.node.is_async_capable();
                if capable {
                    c.node.mark_async_requestee();
                }
                capable.then(|| new_request(es, id, c.id, i))
                // exercise:async-merge-append end
            })
            .collect();
        let n = children.len();
        MergeAppendState {
            id,
            children,
            keys,
            areq: AsyncRequestor::new(id, ms_asyncrequests),
            ms_rows: vec![Vec::new(); n],
            ms_valid: vec![false; n],
            ms_need: vec![true; n],
            ms_requested: vec![false; n],
            slot: Vec::new(),
            ms_heap: Vec::new(),
            ms_initialized: false,
            ms_last: 0,
            key_text: String::new(),
            subplans_removed: 0,
            projection_params: vec![],
        }
    }

    /// PostgreSQL projects each member's rows in the member's scan: its first row runs
    /// the select list's InitPlans (ExecEvalParamExec → ExecSetParamPlan) before
    /// ExecMergeAppend goes on to the next member. False while one waits.
    fn run_projection_params(&mut self, es: &mut EState) -> ExecResult<bool> {
        if self.projection_params.is_empty() || !self.ms_valid.contains(&true) {
            return Ok(true);
        }
        if !super::node_subplan::run_projection_params(es, &self.projection_params)? {
            return Ok(false);
        }
        self.projection_params.clear();
        Ok(true)
    }

    fn store(&mut self, child: usize, has_row: bool) {
        self.ms_requested[child] = false;
        self.ms_valid[child] = has_row;
        if has_row {
            copy_row(&mut self.ms_rows[child], self.children[child].node.slot());
        }
        self.ms_need[child] = false;
    }

    /// Gets the next row of every child in `ms_need`. Returns false if some must still
    /// arrive (the node returns Wait); suspended at a step or a blocking call (the next
    /// call goes on: what was asked is not asked again). Loops over children by index:
    /// nothing is allocated per row.
    fn refill(&mut self, es: &mut EState) -> StepResult<bool> {
        deliver_responses(self, es)?;
        if !self.run_projection_params(es)? {
            return Ok(false);
        }
        // exercise:async-merge-append begin
        // Ask all async children first, so their requests travel concurrently.
        for child in 0..self.children.len() {
            if self.areq.request_of(child).is_none() || !self.ms_need[child] || self.ms_requested[child] {
                continue;
            }
            request(self, es, child)?;
            self.ms_requested[child] = true;
            es.step_boundary()?;
            deliver_responses(self, es)?;
        }
        // exercise:async-merge-append end
        // Then synchronous children, one after another.
        for child in 0..self.children.len() {
            if !self.ms_need[child] || self.areq.request_of(child).is_some() {
                continue;
            }
            match exec_proc_node(&mut self.children[child], es)? {
                ExecStatus::Row => {
                    self.store(child, true);
                    if !self.run_projection_params(es)? {
                        return Ok(false);
                    }
                    // A row handed up by a child is a step, as in Append.
                    es.step_boundary()?;
                }
                ExecStatus::Done => self.store(child, false),
                ExecStatus::Wait => return Ok(false),
            }
        }
        // exercise:async-merge-append begin
        // Finally wait for the async answers still missing. Unlike Append's, this wait
        // starts over after a suspension (a step, a requestee that blocked).
        while (0..self.children.len()).any(|c| self.ms_need[c] && self.ms_requested[c]) {
            let (id, budget) = (self.id, es.event_loop.max_events.max(1));
            let (areq, children) = self.requestor();
            let out = async_event_wait(es, id, children, areq.requests(), true, budget, false)?;
            areq.queue_callback_pending(&out.callback_pending);
            es.suspend_if_interrupted()?;
            if !out.progressed() {
                return Ok(false);
            }
            deliver_responses(self, es)?;
        }
        // exercise:async-merge-append end
        Ok(!self.ms_need.contains(&true))
    }

    /// Whether the row of the child at heap position `a` sorts after that at `b`
    /// (PostgreSQL's `heap_compare_slots`, inverted for its max-heap, `< 0`).
    fn sorts_after(&self, a: usize, b: usize) -> bool {
        compare_rows(&self.keys, &self.ms_rows[self.ms_heap[a]], &self.ms_rows[self.ms_heap[b]]).is_gt()
    }

    /// binaryheap.c's `sift_down`: moves the node at `node` down while a child sorts
    /// strictly before it, to the smaller child (the left one on a tie).
    fn sift_down(&mut self, mut node: usize) {
        let n = self.ms_heap.len();
        loop {
            let (left, right) = (2 * node + 1, 2 * node + 2);
            let mut swap = None;
            if left < n && self.sorts_after(node, left) {
                swap = Some(left);
            }
            if right < n && self.sorts_after(node, right) && (swap.is_none() || self.sorts_after(left, right)) {
                swap = Some(right);
            }
            let Some(to) = swap else { break };
            self.ms_heap.swap(to, node);
            node = to;
        }
    }

    /// ExecMergeAppend's merge step: refill, then the smallest current row.
    fn exec_merge_append(&mut self, es: &mut EState) -> StepResult<ExecStatus> {
        if self.ms_need.contains(&true) && !self.refill(es)? {
            return Ok(ExecStatus::Wait);
        }
        if !self.ms_initialized {
            // binaryheap_add_unordered for each child with a row, then binaryheap_build.
            self.ms_heap = (0..self.children.len()).filter(|&i| self.ms_valid[i]).collect();
            for node in (0..self.ms_heap.len() / 2).rev() {
                self.sift_down(node);
            }
            self.ms_initialized = true;
        } else if !self.ms_heap.is_empty() {
            if self.ms_valid[self.ms_last] {
                // binaryheap_replace_first: the consumed child's next row.
                self.sift_down(0);
            } else {
                // binaryheap_remove_first: the consumed child is done.
                let last = self.ms_heap.len() - 1;
                self.ms_heap.swap(0, last);
                self.ms_heap.pop();
                self.sift_down(0);
            }
        }
        let best = self.ms_heap.first().copied();
        if let Some(b) = best {
            self.ms_last = b;
        }
        let Some(b) = best else {
            return Ok(ExecStatus::Done);
        };
        es.clock.charge(es.cost.passthrough_row_ns * self.children.len() as u64);
        std::mem::swap(&mut self.slot, &mut self.ms_rows[b]);
        self.ms_valid[b] = false;
        self.ms_need[b] = true;
        Ok(ExecStatus::Row)
    }
}

impl Requestor for MergeAppendState {
    fn requestor(&mut self) -> (&mut AsyncRequestor, &mut [PlanState]) {
        (&mut self.areq, &mut self.children)
    }

    /// The child's next row (or its end) is in: it is no longer needed.
    fn async_response(&mut self, child: usize, has_row: bool) {
        self.store(child, has_row);
    }
}

impl ExecNode for MergeAppendState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        wait_if_suspended(self.exec_merge_append(es))
    }

    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.areq.cancel_all(es);
        for c in self.children.iter_mut() {
            exec_rescan(c, es)?;
        }
        let n = self.children.len();
        self.ms_valid = vec![false; n];
        self.ms_requested = vec![false; n];
        self.ms_need = vec![true; n];
        self.ms_initialized = false;
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
    fn children(&self) -> &[PlanState] {
        &self.children
    }
    /// ExecSetTupleBound: no input needs to give more rows than the Merge Append
    /// returns, so each child gets the bound (a Sort under it becomes a top-N sort).
    fn set_projection_params(&mut self, params: Vec<usize>, _values: Vec<crate::plan::SqlType>) {
        self.projection_params = params;
    }
    fn set_tuple_bound(&mut self, bound: Option<u64>) {
        for c in self.children.iter_mut() {
            c.node.set_tuple_bound(bound);
        }
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Merge Append".into();
        e.details.push(("Sort Key".into(), self.key_text.clone()));
        if self.subplans_removed > 0 {
            e.details.push(("Subplans Removed".into(), self.subplans_removed.to_string()));
        }
    }
}
