//! Append (nodeAppend.c), async-aware.
//!
//! Protocol, as in PostgreSQL 14:
//! - on the first call, send a request to every async child (ExecAppendAsyncBegin)
//!   before running any synchronous child;
//! - return rows of synchronous children one after another; between them, poll (never
//!   block) for async results, so local work overlaps the remote waits;
//! - a row from an async child is returned as soon as it is taken; the child then
//!   needs a new request (`as_needrequest`) which is sent on the next call;
//! - once the synchronous children are done, wait for events: return Wait to the host
//!   when no registered connection is ready.
//! With no async children every call takes the plain synchronous path.

use super::async_wait::async_event_wait;
use super::{copy_row, exec_proc_node, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::estate::{EState, ExecResult};
use crate::exec_async::{exec_async_cancel, exec_async_request, exec_async_response, new_request, AsyncState};
use crate::instrument::ExplainNode;
use crate::types::Datum;
use std::collections::VecDeque;

pub struct AppendState {
    id: usize,
    children: Vec<PlanState>,
    /// Per child: its async request, if the child is async-capable.
    as_asyncrequests: Vec<Option<usize>>,
    as_nasyncplans: usize,
    /// Synchronous children, in order, and which one runs now.
    as_syncplans: Vec<usize>,
    as_whichsync: usize,
    /// Async children whose row is ready to return (their row is in their slot).
    as_asyncresults: VecDeque<usize>,
    /// Async children that need a new request.
    as_needrequest: Vec<usize>,
    as_nasyncremain: usize,
    as_syncdone: bool,
    as_begun: bool,
    slot: Vec<Datum>,
}

impl AppendState {
    /// ExecInitAppend: classifies children and creates one request per async child.
    pub fn init(id: usize, children: Vec<PlanState>, es: &mut EState) -> AppendState {
        let mut as_asyncrequests = Vec::with_capacity(children.len());
        let mut as_syncplans = Vec::new();
        for (i, c) in children.iter().enumerate() {
            if c.node.is_async_capable() {
                as_asyncrequests.push(Some(new_request(es, id, c.id, i)));
            } else {
                as_asyncrequests.push(None);
                as_syncplans.push(i);
            }
        }
        let as_nasyncplans = as_asyncrequests.iter().flatten().count();
        AppendState {
            id,
            children,
            as_asyncrequests,
            as_nasyncplans,
            as_syncplans,
            as_whichsync: 0,
            as_asyncresults: VecDeque::new(),
            as_needrequest: Vec::new(),
            as_nasyncremain: 0,
            as_syncdone: false,
            as_begun: false,
            slot: Vec::new(),
        }
    }

    /// ExecAppendAsyncBegin: every async child gets a request before anything else runs.
    fn async_begin(&mut self, es: &mut EState) -> ExecResult<()> {
        self.as_nasyncremain = self.as_nasyncplans;
        self.as_needrequest = (0..self.children.len()).filter(|&i| self.as_asyncrequests[i].is_some()).collect();
        self.make_requests(es)
    }

    fn make_requests(&mut self, es: &mut EState) -> ExecResult<()> {
        for child in std::mem::take(&mut self.as_needrequest) {
            let r = self.as_asyncrequests[child].expect("async child");
            exec_async_request(es, r, &mut self.children[child])?;
            if es.requests[r].state == AsyncState::CallbackPending {
                let has_row = exec_async_response(es, r)?;
                self.async_append_response(child, has_row);
            }
        }
        Ok(())
    }

    /// ExecAsyncAppendResponse: a row is queued for return; end of data retires the child.
    fn async_append_response(&mut self, child: usize, has_row: bool) {
        if has_row {
            self.as_asyncresults.push_back(child);
        } else {
            self.as_nasyncremain -= 1;
        }
    }

    /// Returns a ready async row, if any, into our slot.
    fn take_async_result(&mut self, es: &mut EState) -> bool {
        let Some(child) = self.as_asyncresults.pop_front() else {
            return false;
        };
        es.clock.charge(es.cost.passthrough_row_ns);
        copy_row(&mut self.slot, self.children[child].node.slot());
        self.as_needrequest.push(child);
        true
    }

    /// ExecAppendAsyncRequest: a ready result, else new requests and maybe a result.
    fn async_request(&mut self, es: &mut EState) -> ExecResult<bool> {
        if self.take_async_result(es) {
            return Ok(true);
        }
        self.make_requests(es)?;
        Ok(self.take_async_result(es))
    }

    fn event_wait(&mut self, es: &mut EState, block: bool) -> ExecResult<usize> {
        let (results, remain) = (&mut self.as_asyncresults, &mut self.as_nasyncremain);
        async_event_wait(es, self.id, &mut self.children, &self.as_asyncrequests, block, |_, child, has_row| {
            if has_row {
                results.push_back(child);
            } else {
                *remain -= 1;
            }
        })
    }

    /// ExecAppendAsyncGetNext: Some(status) if the async side decided the call.
    fn async_get_next(&mut self, es: &mut EState) -> ExecResult<Option<ExecStatus>> {
        if self.async_request(es)? {
            return Ok(Some(ExecStatus::Row));
        }
        while self.as_nasyncremain > 0 {
            let fired = self.event_wait(es, self.as_syncdone)?;
            if self.async_request(es)? {
                return Ok(Some(ExecStatus::Row));
            }
            if !self.as_syncdone {
                break; // go run synchronous children meanwhile
            }
            if fired == 0 {
                return Ok(Some(ExecStatus::Wait));
            }
        }
        if self.as_syncdone && self.as_nasyncremain == 0 {
            return Ok(Some(ExecStatus::Done));
        }
        Ok(None)
    }
}

impl ExecNode for AppendState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if !self.as_begun {
            self.as_begun = true;
            if self.as_nasyncplans > 0 {
                self.async_begin(es)?;
            }
        }
        loop {
            if self.as_syncdone || !self.as_needrequest.is_empty() || !self.as_asyncresults.is_empty() {
                if let Some(status) = self.async_get_next(es)? {
                    return Ok(status);
                }
            }
            let Some(&child) = self.as_syncplans.get(self.as_whichsync) else {
                self.as_syncdone = true;
                if self.as_nasyncremain == 0 {
                    return Ok(ExecStatus::Done);
                }
                continue;
            };
            match exec_proc_node(&mut self.children[child], es)? {
                ExecStatus::Row => {
                    es.clock.charge(es.cost.passthrough_row_ns);
                    copy_row(&mut self.slot, self.children[child].node.slot());
                    return Ok(ExecStatus::Row);
                }
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => {
                    self.as_whichsync += 1;
                    if self.as_nasyncremain > 0 {
                        self.event_wait(es, false)?;
                    }
                }
            }
        }
    }

    /// ExecReScanAppend: cancels every outstanding request, then restarts all children.
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        for r in self.as_asyncrequests.iter().flatten() {
            exec_async_cancel(es, *r);
        }
        for c in self.children.iter_mut() {
            exec_rescan(c, es)?;
        }
        self.as_whichsync = 0;
        self.as_asyncresults.clear();
        self.as_needrequest.clear();
        self.as_nasyncremain = 0;
        self.as_syncdone = false;
        self.as_begun = false;
        Ok(())
    }

    fn exec_end(&mut self, es: &mut EState) {
        for r in self.as_asyncrequests.iter().flatten() {
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
        e.node_type = "Append".into();
    }
}
