//! The event-wait step shared by the async-aware nodes (PostgreSQL's
//! ExecAppendAsyncEventWait): let every Waiting request configure its wait, then notify
//! the ones whose input arrived, oldest first, at most `max_events` per turn.
//!
//! Invariants:
//! - only the requestor's own Waiting requests are configured, in child order; a
//!   requestee that blocks ends configuring there (`stopped_at`) and the caller goes on
//!   from that child, so no request configures twice in one wait (one wait set per wait);
//! - with `must_progress`, no event registered while requests are outstanding and none
//!   completed is an error, not a hang (seed 000's `Assert(added)`);
//! - only requests whose input arrived are notified, in the order they started waiting
//!   (`EventLoop::waiting`), at most `max_events` (one in step mode); the rest stay
//!   queued, in order, for the next turn; nothing is notified after a requestee blocked.
//!
//! Where it departs from PostgreSQL (nodeAppend.c, ExecAppendAsyncEventWait): PostgreSQL
//! builds a WaitEventSet for each wait, blocks in WaitEventSetWait (timeout -1) or polls
//! (timeout 0), and notifies in the order WaitEventSetWait reports the events; here
//! nothing blocks (with nothing ready the node returns Wait and the host waits), and the
//! notification order is the order of waiting, so a run on the virtual clock replays
//! exactly.

use super::PlanState;
use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::executor::exec_async::{exec_async_configure_wait, exec_async_notify, AsyncState, WaitContext};

/// What one event wait did.
#[derive(Clone, Debug, Default)]
pub struct EventWaitOutcome {
    /// Requests notified.
    pub fired: usize,
    /// Children whose request is now CallbackPending (completed while configuring or
    /// notified), in order; the requestor delivers their responses (ExecAsyncResponse).
    pub callback_pending: Vec<usize>,
    /// Configuring stopped at this child: its requestee blocked (the caller configures
    /// again from there, not from the first child: one wait set per wait).
    pub stopped_at: Option<usize>,
}

impl EventWaitOutcome {
    pub fn progressed(&self) -> bool {
        self.fired > 0 || !self.callback_pending.is_empty()
    }
}

/// Configures the waits of the requestor's Waiting requests (in child order), then
/// notifies the requests whose input arrived (see `configure_waits`, `notify_ready`).
pub fn async_event_wait(
    es: &mut EState,
    requestor: usize,
    children: &mut [PlanState],
    requests: &[Option<usize>],
    must_progress: bool,
    budget: usize,
    requestor_needs_request: bool,
) -> ExecResult<EventWaitOutcome> {
    let mut out = EventWaitOutcome::default();
    let events =
        configure_waits(es, requestor, children, requests, must_progress, requestor_needs_request, (0, 0), &mut out)?;
    if events > 0 && es.blocked_on.is_none() {
        notify_ready(es, requestor, children, budget, &mut out)?;
    }
    Ok(out)
}

/// ExecAsyncConfigureWait for each of the requestor's Waiting requests, in child
/// order; returns how many events were registered. Requests completed on the way are
/// added to `out`. With `must_progress` (the caller has nothing else to do and will make
/// the host wait), having no event while requests are outstanding is an error (seed
/// 000's `Assert(added)`), not a hang. A requestee that blocks (postgres_fdw's DECLARE)
/// ends this early with `es.blocked_on` set and `out.stopped_at` its child; the caller
/// goes on from there (`from`: the first child to configure and the events registered
/// before it).
#[allow(clippy::too_many_arguments)]
pub fn configure_waits(
    es: &mut EState,
    requestor: usize,
    children: &mut [PlanState],
    requests: &[Option<usize>],
    must_progress: bool,
    requestor_needs_request: bool,
    from: (usize, usize),
    out: &mut EventWaitOutcome,
) -> ExecResult<usize> {
    let mut ctx = WaitContext { requestor_needs_request, events_registered: from.1 };
    let mut outstanding = 0;
    out.stopped_at = None;
    for (child, r) in requests.iter().enumerate().skip(from.0) {
        let Some(r) = *r else { continue };
        if es.requests[r].state != AsyncState::Waiting {
            continue;
        }
        outstanding += 1;
        if exec_async_configure_wait(es, r, &mut children[child], &ctx)? {
            ctx.events_registered += 1;
        }
        if es.blocked_on.is_some() {
            out.stopped_at = Some(child);
            return Ok(ctx.events_registered);
        }
        if es.requests[r].state == AsyncState::CallbackPending {
            out.callback_pending.push(child);
        }
    }
    if ctx.events_registered == 0 && must_progress && outstanding > 0 && out.callback_pending.is_empty() {
        return Err(ExecError::Internal(format!(
            "node {requestor} would wait with no event registered while {outstanding} requests are outstanding"
        )));
    }
    Ok(ctx.events_registered)
}

/// Delivers the notifications: requests whose input arrived, in the order they started
/// waiting, at most `budget` (one in step mode, each notification a step the demo can
/// show).
pub fn notify_ready(
    es: &mut EState,
    requestor: usize,
    children: &mut [PlanState],
    budget: usize,
    out: &mut EventWaitOutcome,
) -> ExecResult<()> {
    let queue: Vec<usize> = es.event_loop.waiting().filter(|&r| es.requests[r].requestor == requestor).collect();
    let limit = if es.step_mode { budget.min(1) } else { budget };
    for r in queue {
        if out.fired >= limit {
            break; // the rest stay queued, in order, for the next turn
        }
        let child = es.requests[r].request_index;
        if !children[child].node.async_ready(es) {
            continue;
        }
        exec_async_notify(es, r, &mut children[child])?;
        if es.blocked_on.is_some() {
            break;
        }
        out.fired += 1;
        if es.requests[r].state == AsyncState::CallbackPending {
            out.callback_pending.push(child);
        }
    }
    es.event_loop.max_fired = es.event_loop.max_fired.max(out.fired);
    if out.fired > 0 {
        es.yield_step();
    }
    Ok(())
}
