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
//!   when no registered connection is ready;
//! - in step mode (the demo) it also returns Wait after each request it sends and each
//!   notification, with `es.yielded` set: the host calls again at once, and the node
//!   resumes where it was (a notified request stays CallbackPending until then).
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
    /// Async children whose row is ready to return (their row is in their slot). A
    /// FIFO, so rows leave in the order they arrived (PostgreSQL uses a stack).
    as_asyncresults: VecDeque<usize>,
    /// Async children that need a new request.
    as_needrequest: Vec<usize>,
    /// Async children whose request is CallbackPending: the response is still to be
    /// delivered (at once, or on the next call in step mode).
    as_callbackpending: VecDeque<usize>,
    /// Step mode: a request round or an event wait was interrupted by a step boundary
    /// and continues on the next call, so the order of work is the same as without steps.
    as_requesting: bool,
    as_eventwait: Option<(bool, usize)>,
    as_nasyncremain: usize,
    as_syncdone: bool,
    as_begun: bool,
    slot: Vec<Datum>,
}

impl AppendState {
    /// ExecInitAppend: classifies children and creates one request per async child.
    pub fn init(id: usize, mut children: Vec<PlanState>, es: &mut EState) -> AppendState {
        let mut as_asyncrequests = Vec::with_capacity(children.len());
        let mut as_syncplans = Vec::new();
        for (i, c) in children.iter_mut().enumerate() {
            if c.node.is_async_capable() {
                c.node.mark_async_requestee();
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
            as_callbackpending: VecDeque::new(),
            as_requesting: false,
            as_eventwait: None,
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

    /// Sends the requests in `as_needrequest`, delivering immediate results.
    fn make_requests(&mut self, es: &mut EState) -> ExecResult<()> {
        self.as_requesting = true;
        while !self.as_needrequest.is_empty() {
            let child = self.as_needrequest.remove(0);
            let r = self.as_asyncrequests[child].expect("async child");
            exec_async_request(es, r, &mut self.children[child])?;
            if es.requests[r].state == AsyncState::CallbackPending {
                self.as_callbackpending.push_back(child);
            }
            if es.yield_step() {
                return Ok(()); // continues in `resume`
            }
            self.deliver_responses(es)?;
        }
        self.as_requesting = false;
        Ok(())
    }

    /// Step mode: finishes the request round or event wait a step boundary cut short,
    /// in the order a run without steps does the same work.
    fn resume(&mut self, es: &mut EState) -> ExecResult<()> {
        if self.as_requesting {
            self.deliver_responses(es)?;
            self.make_requests(es)
        } else if let Some((block, fired)) = self.as_eventwait.take() {
            self.event_wait_from(es, block, fired).map(|_| ())
        } else {
            self.deliver_responses(es)
        }
    }

    /// ExecAsyncResponse for every request whose result is waiting for us, then
    /// ExecAsyncAppendResponse: a row is queued for return; end of data retires the child.
    fn deliver_responses(&mut self, es: &mut EState) -> ExecResult<()> {
        while let Some(child) = self.as_callbackpending.pop_front() {
            let r = self.as_asyncrequests[child].expect("async child");
            if exec_async_response(es, r)? {
                self.as_asyncresults.push_back(child);
            } else {
                self.as_nasyncremain -= 1;
            }
        }
        Ok(())
    }

    /// Returns a ready async row, if any, into our slot.
    fn take_async_result(&mut self, es: &mut EState) -> bool {
        let Some(child) = self.as_asyncresults.pop_front() else { return false };
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
        Ok(!es.yielded && self.take_async_result(es))
    }

    /// ExecAppendAsyncEventWait: notifies what is ready (blocking: the host must wait
    /// if nothing is), then delivers the responses.
    fn event_wait(&mut self, es: &mut EState, block: bool) -> ExecResult<usize> {
        self.event_wait_from(es, block, 0)
    }

    /// The event wait, `fired` notifications in (step mode notifies one per step).
    /// Without steps this notifies up to `max_events` requests at once; in step mode
    /// each notification is a step, and the wait resumes here (`resume`) until nothing
    /// more is ready or the bound is reached — the same work in the same order.
    fn event_wait_from(&mut self, es: &mut EState, block: bool, fired: usize) -> ExecResult<usize> {
        let budget = es.event_loop.max_events.max(1).saturating_sub(fired);
        let must_progress = block && fired == 0;
        let (n, ready) =
            async_event_wait(es, self.id, &mut self.children, &self.as_asyncrequests, must_progress, budget)?;
        let fired = fired + n;
        self.as_callbackpending.extend(ready);
        if es.yielded {
            self.as_eventwait = Some((block, fired)); // continues in `resume`
            return Ok(fired);
        }
        self.deliver_responses(es)?;
        Ok(fired)
    }

    /// ExecAppendAsyncGetNext: Some(status) if the async side decided the call.
    fn async_get_next(&mut self, es: &mut EState) -> ExecResult<Option<ExecStatus>> {
        if self.async_request(es)? {
            return Ok(Some(ExecStatus::Row));
        }
        while self.as_nasyncremain > 0 && !es.yielded {
            let fired = self.event_wait(es, self.as_syncdone)?;
            if es.yielded {
                break;
            }
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
        if es.yielded {
            return Ok(Some(ExecStatus::Wait)); // step mode: resume here on the next call
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
                if es.yielded {
                    return Ok(ExecStatus::Wait);
                }
            }
        }
        self.resume(es)?;
        if es.yielded {
            return Ok(ExecStatus::Wait);
        }
        loop {
            let async_work = !self.as_needrequest.is_empty() || !self.as_asyncresults.is_empty();
            if self.as_syncdone || async_work {
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
                        if es.yielded {
                            return Ok(ExecStatus::Wait);
                        }
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
        self.as_callbackpending.clear();
        self.as_requesting = false;
        self.as_eventwait = None;
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
