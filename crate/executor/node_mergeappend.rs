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

use super::async_wait::async_event_wait;
use super::node_sort::compare_rows;
use super::{copy_row, exec_proc_node, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::executor::exec_async::{exec_async_cancel, exec_async_response};
// exercise:async-merge-append begin
use crate::executor::exec_async::{exec_async_request, new_request, AsyncState};
// exercise:async-merge-append end
use crate::instrument::ExplainNode;
use crate::plan::SortKey;
use crate::types::Datum;
use std::collections::VecDeque;

#[derive(Clone)]
pub struct MergeAppendState {
    id: usize,
    children: Vec<PlanState>,
    keys: Vec<SortKey>,
    ms_asyncrequests: Vec<Option<usize>>,
    /// Each child's current row, if it has one.
    ms_rows: Vec<Vec<Datum>>,
    ms_valid: Vec<bool>,
    /// Per child: its next row must be obtained before the next merge step.
    ms_need: Vec<bool>,
    /// Async children asked and not yet answered.
    ms_requested: Vec<bool>,
    /// Async children whose request is CallbackPending, response not yet delivered.
    ms_callbackpending: VecDeque<usize>,
    slot: Vec<Datum>,
    /// Child numbers with a current row, in heap order (`ms_heap`'s `bh_nodes`).
    ms_heap: Vec<usize>,
    /// The heap is built (PostgreSQL's `ms_initialized`).
    ms_initialized: bool,
    /// The child whose row was returned last: the heap's top, replaced next call.
    ms_last: usize,
    /// The keys as EXPLAIN prints them.
    pub key_text: String,
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
            ms_asyncrequests,
            ms_rows: vec![Vec::new(); n],
            ms_valid: vec![false; n],
            ms_need: vec![true; n],
            ms_requested: vec![false; n],
            ms_callbackpending: VecDeque::new(),
            slot: Vec::new(),
            ms_heap: Vec::new(),
            ms_initialized: false,
            ms_last: 0,
            key_text: String::new(),
        }
    }

    fn store(&mut self, child: usize, has_row: bool) {
        self.ms_requested[child] = false;
        self.ms_valid[child] = has_row;
        if has_row {
            copy_row(&mut self.ms_rows[child], self.children[child].node.slot());
        }
        self.ms_need[child] = false;
    }

    /// ExecAsyncResponse for the requests whose result waits for us.
    fn deliver_responses(&mut self, es: &mut EState) -> ExecResult<()> {
        while let Some(child) = self.ms_callbackpending.pop_front() {
            let r = self.ms_asyncrequests[child].expect("async child");
            let has_row = exec_async_response(es, r)?;
            self.store(child, has_row);
        }
        Ok(())
    }

    /// Gets the next row of every child in `ms_need`. Returns false if some must still
    /// arrive (the node returns Wait), or in step mode after each request and
    /// notification. Loops over children by index: nothing is allocated per row.
    fn refill(&mut self, es: &mut EState) -> ExecResult<bool> {
        self.deliver_responses(es)?;
        // exercise:async-merge-append begin
        // Ask all async children first, so their requests travel concurrently.
        for child in 0..self.children.len() {
            let Some(r) = self.ms_asyncrequests[child] else { continue };
            if !self.ms_need[child] || self.ms_requested[child] {
                continue;
            }
            self.ms_requested[child] = true;
            exec_async_request(es, r, &mut self.children[child])?;
            if es.blocked_on.is_some() {
                self.ms_requested[child] = false; // asked again on the next call
                return Ok(false);
            }
            if es.requests[r].state == AsyncState::CallbackPending {
                self.ms_callbackpending.push_back(child);
            }
            if es.yield_step() {
                return Ok(false);
            }
            self.deliver_responses(es)?;
        }
        // exercise:async-merge-append end
        // Then synchronous children, one after another.
        for child in 0..self.children.len() {
            if !self.ms_need[child] || self.ms_asyncrequests[child].is_some() {
                continue;
            }
            match exec_proc_node(&mut self.children[child], es)? {
                ExecStatus::Row => {
                    self.store(child, true);
                    // Step mode: a row handed up by a child is a step, as in Append.
                    if es.yield_step() {
                        return Ok(false);
                    }
                }
                ExecStatus::Done => self.store(child, false),
                ExecStatus::Wait => return Ok(false),
            }
        }
        // exercise:async-merge-append begin
        // Finally wait for the async answers still missing.
        while (0..self.children.len()).any(|c| self.ms_need[c] && self.ms_requested[c]) {
            let budget = es.event_loop.max_events.max(1);
            let out = async_event_wait(es, self.id, &mut self.children, &self.ms_asyncrequests, true, budget, false)?;
            let progressed = out.progressed();
            self.ms_callbackpending.extend(out.callback_pending);
            if es.interrupted() || !progressed {
                return Ok(false);
            }
            self.deliver_responses(es)?;
        }
        // exercise:async-merge-append end
        Ok(!self.ms_need.contains(&true))
    }
}

impl MergeAppendState {
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
}

impl ExecNode for MergeAppendState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
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

    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        for r in self.ms_asyncrequests.iter().flatten() {
            exec_async_cancel(es, *r);
        }
        for c in self.children.iter_mut() {
            exec_rescan(c, es)?;
        }
        let n = self.children.len();
        self.ms_valid = vec![false; n];
        self.ms_requested = vec![false; n];
        self.ms_callbackpending.clear();
        self.ms_need = vec![true; n];
        self.ms_initialized = false;
        Ok(())
    }

    fn exec_end(&mut self, es: &mut EState) {
        for r in self.ms_asyncrequests.iter().flatten() {
            exec_async_cancel(es, *r);
        }
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
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Merge Append".into();
        e.details.push(("Sort Key".into(), self.key_text.clone()));
    }
}
