//! The requestor side of the async protocol, written once for Append and MergeAppend:
//! one request per async child, the callback-pending queue and the delivery of
//! responses, and, for Append, the request round and the event wait that a call may
//! leave unfinished.
//!
//! Protocol and invariants:
//! - a request is made (`request`) only from Idle, Complete or Cancelled; a requestee
//!   that blocks (postgres_fdw's waited DECLARE) leaves it as it was, and the request is
//!   made again on the next call;
//! - a child is in `callback_pending` from the moment its request is CallbackPending
//!   until its response is delivered (`deliver_responses`), once, in the order the
//!   results came: ExecAsyncResponse, then the requestor's own response callback
//!   (`Requestor::async_response`, PostgreSQL's ExecAsyncAppendResponse);
//! - a request round (`make_requests`) asks each child of `round` once, in order, and
//!   delivers what each request completed before asking the next;
//! - an event wait (`event_wait`) configures the waits once and notifies at most
//!   EVENT_BUFFER_SIZE requests, as one ExecAppendAsyncEventWait does, however many
//!   calls it takes.
//!
//! Suspension: a step boundary (the demo's step mode: each request made and each
//! notification is a step) or a blocking call ends the node's call with
//! `Stop::Suspended` (`?` carries it up, the node returns Wait). What the round or the
//! event wait still has to do stays here (`round`, `event_wait`), and `resume`
//! finishes it first on the next call, so the node's own code has no resume points for
//! them and the order of work is the same with or without steps.
//!
//! Where this departs from PostgreSQL: PostgreSQL calls ExecAsyncResponse inside
//! ExecAsyncRequest and ExecAsyncNotify; here the response waits in `callback_pending`
//! and is delivered right after (or on the next call, across a step), so Callback
//! pending can be seen. PostgreSQL's round is a local bitmap (`needrequest`) and its
//! event wait a local WaitEventSet: here both outlive the call, since the call may end
//! early.
//!
//! | here | PostgreSQL 15 |
//! |---|---|
//! | `AsyncRequestor::requests` | `as_asyncrequests` / the MergeAppend patch's `ms_asyncrequests` |
//! | `Requestor::async_response` | `ExecAsyncAppendResponse` (dispatched by `ExecAsyncResponse`) |
//! | `Requestor::needs_request` | `!bms_is_empty(requestor->as_needrequest)` in `postgresForeignAsyncConfigureWait` |
//! | `make_requests` over `round` | the loop of `ExecAppendAsyncRequest` over `needrequest` |
//! | `event_wait` | `ExecAppendAsyncEventWait` (configure, `WaitEventSetWait`, notify) |
//! | `Stop::Suspended` | none: PostgreSQL blocks in place |

use super::async_wait::{configure_waits, notify_ready, EventWaitOutcome};
use super::PlanState;
use crate::executor::estate::{EState, ExecResult, StepResult, Stop};
use crate::executor::exec_async::{exec_async_cancel, exec_async_request, exec_async_response, AsyncState};
use std::collections::VecDeque;

/// A node that makes async requests (Append, MergeAppend).
pub trait Requestor {
    fn requestor(&mut self) -> (&mut AsyncRequestor, &mut [PlanState]);
    /// The requestor's response callback: `child`'s result was taken (a row in its
    /// slot, or end of data).
    fn async_response(&mut self, child: usize, has_row: bool);
    /// Does the requestor have children that need a new request (postgres_fdw's
    /// ConfigureWait looks at Append's `as_needrequest`)?
    fn needs_request(&self) -> bool {
        false
    }
}

/// Where an unfinished ExecAppendAsyncEventWait goes on.
#[derive(Clone, Copy, Debug)]
struct EventWait {
    /// Wait (timeout -1), not poll.
    block: bool,
    configured: bool,
    /// Requests notified so far.
    fired: usize,
    /// Not configured yet: the child to configure next and the events registered
    /// before it (a requestee blocked while configuring).
    from: (usize, usize),
}

impl EventWait {
    fn new(block: bool) -> EventWait {
        EventWait { block, configured: false, fired: 0, from: (0, 0) }
    }

    /// Configured, nothing notified yet: what is left after WaitEventSetWait returns.
    fn sleeping() -> EventWait {
        EventWait { block: true, configured: true, fired: 0, from: (0, 0) }
    }
}

#[derive(Clone, Debug)]
pub struct AsyncRequestor {
    /// The requestor's node id.
    id: usize,
    /// Per child: its request, if the child is async.
    requests: Vec<Option<usize>>,
    /// Children whose request is CallbackPending, response not yet delivered.
    callback_pending: VecDeque<usize>,
    /// A request round in progress: the children still to be asked.
    round: VecDeque<usize>,
    /// An event wait in progress.
    event_wait: Option<EventWait>,
}

impl AsyncRequestor {
    /// `requests`: per child, the request ExecInit created for it, if any.
    pub fn new(id: usize, requests: Vec<Option<usize>>) -> AsyncRequestor {
        AsyncRequestor { id, requests, callback_pending: VecDeque::new(), round: VecDeque::new(), event_wait: None }
    }

    /// `child`'s request, if the child is async.
    pub fn request_of(&self, child: usize) -> Option<usize> {
        self.requests[child]
    }

    pub fn requests(&self) -> &[Option<usize>] {
        &self.requests
    }

    /// Queues the children whose request an event wait left CallbackPending.
    pub fn queue_callback_pending(&mut self, children: &[usize]) {
        self.callback_pending.extend(children.iter().copied());
    }

    /// Starts a request round over `children` (in the order given).
    pub fn begin_round(&mut self, children: impl IntoIterator<Item = usize>) {
        self.round.extend(children);
    }

    /// Starts a request round over every async child, in child order.
    pub fn begin_round_all(&mut self) {
        let requests = &self.requests;
        self.round.extend((0..requests.len()).filter(|&i| requests[i].is_some()));
    }

    /// Nothing left unfinished by an earlier call: no event wait, no undelivered
    /// response, no request round in progress (always so without async children).
    #[inline]
    fn idle(&self) -> bool {
        self.event_wait.is_none() && self.callback_pending.is_empty() && self.round.is_empty()
    }

    /// Cancels every outstanding request and forgets all work in progress (rescan,
    /// end).
    pub fn cancel_all(&mut self, es: &mut EState) {
        for r in self.requests.iter().flatten() {
            exec_async_cancel(es, *r);
        }
        self.callback_pending.clear();
        self.round.clear();
        self.event_wait = None;
    }
}

/// ExecAsyncRequest to `child`, queueing it if the result is there at once. Suspended,
/// with nothing changed, if the requestee blocked: the same request is made again.
pub fn request<N: Requestor>(node: &mut N, es: &mut EState, child: usize) -> StepResult<()> {
    let (areq, children) = node.requestor();
    // ExecAsyncRequest rescans a requestee whose parameters changed first; its CLOSE
    // goes out (the run loop sends it) before the same request is made again.
    if !es.chg_param_pending.is_empty() && super::rescan_if_pending(&mut children[child], es)? {
        return Err(Stop::Suspended);
    }
    let r = areq.requests[child].expect("async child");
    exec_async_request(es, r, &mut children[child])?;
    if es.blocked_on.is_some() {
        return Err(Stop::Suspended);
    }
    if es.requests[r].state == AsyncState::CallbackPending {
        areq.callback_pending.push_back(child);
    }
    Ok(())
}

/// ExecAsyncResponse for every child whose result waits for us, oldest first, each
/// followed by the requestor's own response callback.
pub fn deliver_responses<N: Requestor>(node: &mut N, es: &mut EState) -> ExecResult<()> {
    while let Some(child) = node.requestor().0.callback_pending.pop_front() {
        let r = node.requestor().0.requests[child].expect("async child");
        let has_row = exec_async_response(es, r)?;
        node.async_response(child, has_row);
    }
    Ok(())
}

/// The request round: each child of `round` is asked in turn, and what its request
/// completed is delivered before the next is asked. Each request is a step.
pub fn make_requests<N: Requestor>(node: &mut N, es: &mut EState) -> StepResult<()> {
    while let Some(&child) = node.requestor().0.round.front() {
        request(node, es, child)?;
        node.requestor().0.round.pop_front();
        es.step_boundary()?;
        deliver_responses(node, es)?;
    }
    Ok(())
}

/// Finishes what a suspension cut short: the event wait, or else the responses and the
/// request round. An event wait that was still configuring and then found nothing
/// ready now sleeps (the node returns Wait), as the one ExecAppendAsyncEventWait it is.
/// Nothing to finish is checked here, inline: that is every call of an Append with
/// only synchronous children, once per row (the calls below were the row path's
/// largest cost over the first release's Append; issue 20).
#[inline]
pub fn resume<N: Requestor>(node: &mut N, es: &mut EState) -> StepResult<()> {
    if node.requestor().0.idle() {
        return Ok(());
    }
    resume_unfinished(node, es)
}

/// `resume` with something left to finish.
#[inline(never)]
fn resume_unfinished<N: Requestor>(node: &mut N, es: &mut EState) -> StepResult<()> {
    if let Some(at) = node.requestor().0.event_wait.take() {
        let progressed = event_wait_from(node, es, at)?;
        if at.block && !progressed && has_own_event(node, es) {
            return Err(sleep(node));
        }
        return Ok(());
    }
    deliver_responses(node, es)?;
    make_requests(node, es)
}

/// Did one of this requestor's Waiting requests add its connection to this turn's wait
/// set (it is queued for notification and its connection is in the set), so sleeping now
/// waits on it? In PostgreSQL 15's plans only one requestor registers events in a turn,
/// so this is "the wait set is not empty"; with `async_through_nodes` a Nested Loop's
/// other side may have registered its own events in the same turn.
fn has_own_event<N: Requestor>(node: &mut N, es: &EState) -> bool {
    let wait_set = es.event_loop.wait_set();
    let queued: Vec<usize> = es.event_loop.waiting().collect();
    node.requestor()
        .0
        .requests
        .iter()
        .flatten()
        .any(|&r| queued.contains(&r) && es.requests[r].conn.is_some_and(|c| wait_set.contains(&c)))
}

/// WaitEventSetWait with nothing ready: the node returns Wait (the suspension this
/// returns), the host waits on the wait set, and the next call notifies without
/// configuring again.
pub fn sleep<N: Requestor>(node: &mut N) -> Stop {
    node.requestor().0.event_wait = Some(EventWait::sleeping());
    Stop::Suspended
}

/// ExecAppendAsyncEventWait: configures the waits and notifies what is ready (with
/// `block`, the caller sleeps if nothing is), then delivers the responses. True if any
/// request progressed.
pub fn event_wait<N: Requestor>(node: &mut N, es: &mut EState, block: bool) -> StepResult<bool> {
    event_wait_from(node, es, EventWait::new(block))
}

/// The event wait from where a suspension left it: a requestee that blocked while
/// configuring (configure again from its child), or a step after a notification (go
/// on notifying within the same budget). The responses are delivered at its end.
fn event_wait_from<N: Requestor>(node: &mut N, es: &mut EState, at: EventWait) -> StepResult<bool> {
    let mut out = EventWaitOutcome::default();
    let (mut configured, mut from) = (at.configured, at.from);
    if !configured {
        let must_progress = at.block && at.fired == 0;
        let needs_request = node.needs_request();
        let (areq, children) = node.requestor();
        let events =
            configure_waits(es, areq.id, children, areq.requests(), must_progress, needs_request, at.from, &mut out)?;
        configured = es.blocked_on.is_none();
        if let Some(child) = out.stopped_at {
            from = (child, events);
        }
        if configured && events == 0 {
            node.requestor().0.queue_callback_pending(&out.callback_pending);
            deliver_responses(node, es)?;
            return Ok(out.progressed() || at.fired > 0);
        }
    }
    let (areq, children) = node.requestor();
    if configured {
        let budget = es.event_loop.max_events.max(1).saturating_sub(at.fired);
        notify_ready(es, areq.id, children, budget, &mut out)?;
    }
    areq.queue_callback_pending(&out.callback_pending);
    if es.interrupted() {
        // A step after a notification, or a requestee that blocked: go on next call.
        let fired = at.fired + out.fired;
        areq.event_wait = Some(EventWait { block: at.block, configured, fired, from });
        return Err(Stop::Suspended);
    }
    deliver_responses(node, es)?;
    Ok(out.progressed() || at.fired > 0)
}
