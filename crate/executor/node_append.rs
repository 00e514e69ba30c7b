//! Append (nodeAppend.c), async-aware as in PostgreSQL 15.
//!
//! Protocol:
//! - the first call sends a request to every async child, in child order
//!   (ExecAppendAsyncBegin), before running any synchronous child;
//! - ExecAppendAsyncRequest returns a stored async result if there is one; only when
//!   none is left does it send a new request to every child in `as_needrequest`, in
//!   child order. A child enters `as_needrequest` when its response delivers a row
//!   (ExecAsyncAppendResponse); `as_asyncresults` is a stack;
//! - between synchronous children it polls for events (timeout 0); once they are done
//!   it waits (timeout -1): the node returns Wait and the host waits on the connections
//!   registered during the turn.
//!
//! Interruptions: a requestee that blocks (postgres_fdw's waited DECLARE) and, in the
//! demo's step mode, each request transition end the call with Wait. The node keeps a
//! resume point (`as_requesting`, `as_eventwait`) and `resume` finishes that piece of
//! work first on the next call, so the order of work is the same as without them.
//! Step mode also ends the call after each row a synchronous child hands up (the row
//! is returned by the next call, `as_rowheld`): a row reaching the Append is then one
//! step whether the child is async (its request's transition) or not, so sync and
//! async runs step alike.
//!
//! The `fifo_results` knob restores the earlier model: results leave in the order they
//! arrived and each child is re-requested as soon as its row is taken.

use super::async_wait::{configure_waits, notify_ready, EventWaitOutcome};
use super::{copy_row, exec_proc_node, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::executor::exec_async::{
    exec_async_cancel, exec_async_request, exec_async_response, new_request, AsyncState,
};
use crate::instrument::ExplainNode;
use crate::trace::TraceKind;
use crate::types::Datum;
use std::collections::VecDeque;

/// Where an interrupted ExecAppendAsyncEventWait continues.
#[derive(Clone, Copy, Debug)]
struct EventWaitResume {
    /// Wait (timeout -1), not poll.
    block: bool,
    configured: bool,
    /// Requests notified so far.
    fired: usize,
    /// Not configured yet: the child to configure next and the events registered
    /// before it (a requestee blocked while configuring).
    from: (usize, usize),
}

#[derive(Clone)]
pub struct AppendState {
    id: usize,
    children: Vec<PlanState>,
    /// Per child: its async request, if the child is async-capable.
    as_asyncrequests: Vec<Option<usize>>,
    as_nasyncplans: usize,
    /// Synchronous children, in order, and which one runs now (as_whichplan).
    as_syncplans: Vec<usize>,
    as_whichsync: usize,
    /// Async children whose row is ready to return (in their slot): a stack, or a
    /// queue with `fifo_results`.
    as_asyncresults: VecDeque<usize>,
    /// Async children that need a new request.
    as_needrequest: Vec<usize>,
    /// Async children whose request is CallbackPending: the response is still to be
    /// delivered (at once, or on the next call in step mode).
    as_callbackpending: VecDeque<usize>,
    /// A request round in progress: the children still to be asked (empty: none).
    /// Kept with `as_needrequest` between rounds so a round allocates nothing: a round
    /// is one row on the async path.
    as_requesting: VecDeque<usize>,
    /// An interrupted event wait: the waits are configured (notifying goes on) or not
    /// (a requestee blocked while configuring: configure again).
    as_eventwait: Option<EventWaitResume>,
    /// The resumed event wait must sleep before it goes on (see `resume`).
    as_mustwait: bool,
    as_nasyncremain: usize,
    as_syncdone: bool,
    as_begun: bool,
    /// The current synchronous child returned Wait (it blocked, or stepped): it is
    /// called again first, as PostgreSQL would still be inside it.
    as_syncwaiting: bool,
    /// Step mode: a synchronous child's row is in our slot, to be returned by the next
    /// call (a row handed to the Append is a step in both modes, see `exec_next`).
    as_rowheld: bool,
    /// Inside a call from our parent (it returned Wait and will call again): the next
    /// call is not a new ExecAppend call (`TraceKind::NodeCall`).
    in_call: bool,
    fifo_results: bool,
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
            as_requesting: VecDeque::new(),
            as_eventwait: None,
            as_mustwait: false,
            as_nasyncremain: 0,
            as_syncdone: false,
            as_begun: false,
            as_syncwaiting: false,
            as_rowheld: false,
            in_call: false,
            fifo_results: es.behaviour.fifo_results,
            slot: Vec::new(),
        }
    }

    /// ExecAppendAsyncBegin: every async child gets a request before anything else runs.
    fn async_begin(&mut self, es: &mut EState) -> ExecResult<()> {
        self.as_nasyncremain = self.as_nasyncplans;
        let requests = &self.as_asyncrequests;
        self.as_requesting.extend((0..requests.len()).filter(|&i| requests[i].is_some()));
        self.make_requests(es)
    }

    /// Sends the requests of the round in `as_requesting`, delivering immediate results.
    fn make_requests(&mut self, es: &mut EState) -> ExecResult<()> {
        while let Some(&child) = self.as_requesting.front() {
            let r = self.as_asyncrequests[child].expect("async child");
            exec_async_request(es, r, &mut self.children[child])?;
            if es.blocked_on.is_some() {
                return Ok(()); // the same request is made again in `resume`
            }
            self.as_requesting.pop_front();
            if es.requests[r].state == AsyncState::CallbackPending {
                self.as_callbackpending.push_back(child);
            }
            if es.yield_step() {
                return Ok(()); // continues in `resume`
            }
            self.deliver_responses(es)?;
        }
        Ok(())
    }

    /// Finishes the request round or event wait an interruption cut short.
    fn resume(&mut self, es: &mut EState) -> ExecResult<()> {
        if let Some(at) = self.as_eventwait.take() {
            // The notified requests' responses are delivered at the end of the wait.
            let progressed = self.event_wait_from(es, at)?;
            if at.block && !progressed && !es.interrupted() && !es.event_loop.wait_set().is_empty() {
                // A wait whose configuring was cut short (a requestee blocked) and that
                // found nothing ready: it now sleeps (WaitEventSetWait) and then notifies,
                // still the same ExecAppendAsyncEventWait call, not a second one.
                self.as_eventwait = Some(EventWaitResume { block: true, configured: true, fired: 0, from: (0, 0) });
                self.as_mustwait = true;
            }
            return Ok(());
        }
        self.deliver_responses(es)?;
        if !self.as_requesting.is_empty() {
            self.make_requests(es)?;
        }
        Ok(())
    }

    /// ExecAsyncResponse for every request whose result is waiting for us, then
    /// ExecAsyncAppendResponse: a row is stored and its child needs a new request; end
    /// of data retires the child.
    fn deliver_responses(&mut self, es: &mut EState) -> ExecResult<()> {
        while let Some(child) = self.as_callbackpending.pop_front() {
            let r = self.as_asyncrequests[child].expect("async child");
            if exec_async_response(es, r)? {
                self.as_asyncresults.push_back(child);
                if !self.fifo_results {
                    self.as_needrequest.push(child);
                }
            } else {
                self.as_nasyncremain -= 1;
            }
        }
        Ok(())
    }

    /// Returns a stored async row, if any, into our slot: the last stored (PostgreSQL's
    /// `as_asyncresults[--as_nasyncresults]`), or the first with `fifo_results`.
    fn take_async_result(&mut self, es: &mut EState) -> bool {
        let taken = if self.fifo_results { self.as_asyncresults.pop_front() } else { self.as_asyncresults.pop_back() };
        let Some(child) = taken else { return false };
        es.clock.charge(es.cost.passthrough_row_ns);
        copy_row(&mut self.slot, self.children[child].node.slot());
        if self.fifo_results {
            self.as_needrequest.push(child);
        }
        true
    }

    /// ExecAppendAsyncRequest: a stored result, else a request to every child that
    /// needs one (in child order) and maybe a result.
    fn async_request(&mut self, es: &mut EState) -> ExecResult<bool> {
        if self.as_needrequest.is_empty() && !self.fifo_results {
            return Ok(false);
        }
        if self.take_async_result(es) {
            return Ok(true);
        }
        if !self.fifo_results {
            self.as_needrequest.sort_unstable();
        }
        self.as_requesting.extend(self.as_needrequest.drain(..));
        self.make_requests(es)?;
        Ok(!es.interrupted() && self.take_async_result(es))
    }

    /// ExecAppendAsyncEventWait: configures the waits and notifies what is ready (with
    /// `block`, the host must wait if nothing is), then delivers the responses. True if
    /// any request progressed.
    fn event_wait(&mut self, es: &mut EState, block: bool) -> ExecResult<bool> {
        self.event_wait_from(es, EventWaitResume { block, configured: false, fired: 0, from: (0, 0) })
    }

    /// The event wait from where an interruption left it: a requestee that blocked
    /// while configuring (configure again), or a step boundary after a notification
    /// (step mode notifies one request per step; go on notifying). The same work in the
    /// same order as without interruptions.
    fn event_wait_from(&mut self, es: &mut EState, at: EventWaitResume) -> ExecResult<bool> {
        let mut out = EventWaitOutcome::default();
        let mut configured = at.configured;
        let mut from = at.from;
        if !configured {
            let must_progress = at.block && at.fired == 0;
            let needs_request = !self.as_needrequest.is_empty();
            let (children, requests) = (&mut self.children, &self.as_asyncrequests);
            let events =
                configure_waits(es, self.id, children, requests, must_progress, needs_request, at.from, &mut out)?;
            configured = es.blocked_on.is_none();
            if let Some(child) = out.stopped_at {
                from = (child, events);
            }
            if configured && events == 0 {
                let progressed = out.progressed() || at.fired > 0;
                self.as_callbackpending.extend(out.callback_pending);
                self.deliver_responses(es)?;
                return Ok(progressed);
            }
        }
        if configured {
            let budget = es.event_loop.max_events.max(1).saturating_sub(at.fired);
            notify_ready(es, self.id, &mut self.children, budget, &mut out)?;
        }
        let progressed = out.progressed() || at.fired > 0;
        self.as_callbackpending.extend(out.callback_pending);
        if es.interrupted() {
            let fired = at.fired + out.fired;
            self.as_eventwait = Some(EventWaitResume { block: at.block, configured, fired, from }); // see `resume`
            return Ok(true);
        }
        self.deliver_responses(es)?;
        Ok(progressed)
    }

    /// ExecAppendAsyncGetNext: Some(status) if the async side decided the call.
    fn async_get_next(&mut self, es: &mut EState) -> ExecResult<Option<ExecStatus>> {
        if self.async_request(es)? {
            return Ok(Some(ExecStatus::Row));
        }
        while self.as_nasyncremain > 0 && !es.interrupted() {
            let progressed = self.event_wait(es, self.as_syncdone)?;
            if es.interrupted() {
                break;
            }
            if self.async_request(es)? {
                return Ok(Some(ExecStatus::Row));
            }
            if !self.as_syncdone {
                break; // go run synchronous children meanwhile
            }
            if !progressed {
                // The host waits on the wait set (WaitEventSetWait); the next call goes on
                // with this event wait (notifying), as PostgreSQL's one call does: the
                // wait set is not configured again.
                self.as_eventwait = Some(EventWaitResume { block: true, configured: true, fired: 0, from: (0, 0) });
                return Ok(Some(ExecStatus::Wait));
            }
        }
        if es.interrupted() {
            return Ok(Some(ExecStatus::Wait)); // resume here on the next call
        }
        if self.as_syncdone && self.as_nasyncremain == 0 {
            return Ok(Some(ExecStatus::Done));
        }
        Ok(None)
    }

    /// The current synchronous child is done: poll for async events, then choose the
    /// next synchronous child (choose_next_subplan).
    fn sync_child_done(&mut self, es: &mut EState) -> ExecResult<()> {
        self.as_whichsync += 1;
        self.as_syncdone = self.as_whichsync >= self.as_syncplans.len();
        if self.as_nasyncremain > 0 {
            self.event_wait(es, false)?;
        }
        Ok(())
    }

    /// ExecAppend's work: begin or resume the async side, then the synchronous children.
    fn append_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if !self.as_begun {
            self.as_begun = true;
            self.as_syncdone = self.as_syncplans.is_empty();
            if self.as_nasyncplans > 0 {
                self.async_begin(es)?;
            }
        } else {
            self.resume(es)?;
        }
        if es.interrupted() {
            return Ok(ExecStatus::Wait);
        }
        if std::mem::take(&mut self.as_mustwait) {
            return Ok(ExecStatus::Wait); // the host waits on the wait set
        }
        loop {
            if self.as_syncdone && self.as_nasyncremain == 0 {
                return Ok(ExecStatus::Done);
            }
            let async_work = !self.as_needrequest.is_empty() || !self.as_asyncresults.is_empty();
            if !self.as_syncwaiting && (self.as_syncdone || async_work) {
                if let Some(status) = self.async_get_next(es)? {
                    return Ok(status);
                }
            }
            let child = self.as_syncplans[self.as_whichsync];
            let status = exec_proc_node(&mut self.children[child], es)?;
            self.as_syncwaiting = status == ExecStatus::Wait;
            match status {
                ExecStatus::Row => {
                    es.clock.charge(es.cost.passthrough_row_ns);
                    copy_row(&mut self.slot, self.children[child].node.slot());
                    if es.trace_calls {
                        let node = self.children[child].id;
                        es.record(|| TraceKind::NodeRow { node });
                    }
                    if es.yield_step() {
                        // Step mode: a row handed to the Append is a step, as an async
                        // child's row is (its request's transition); returned next call.
                        self.as_rowheld = true;
                        return Ok(ExecStatus::Wait);
                    }
                    return Ok(ExecStatus::Row);
                }
                ExecStatus::Wait => return Ok(ExecStatus::Wait),
                ExecStatus::Done => {
                    self.sync_child_done(es)?;
                    if es.interrupted() {
                        return Ok(ExecStatus::Wait);
                    }
                }
            }
        }
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
        let status = if self.as_rowheld {
            self.as_rowheld = false;
            ExecStatus::Row
        } else {
            self.append_next(es)?
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
        self.as_requesting.clear();
        self.as_eventwait = None;
        self.as_mustwait = false;
        self.as_nasyncremain = 0;
        self.as_syncdone = false;
        self.as_begun = false;
        self.as_syncwaiting = false;
        self.as_rowheld = false;
        self.in_call = false;
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
