//! The event-wait step shared by the async-aware nodes (PostgreSQL's
//! ExecAppendAsyncEventWait): register the connections of our Waiting requests, then
//! notify the ones whose input arrived, oldest first, at most `max_events` per turn.

use super::PlanState;
use crate::estate::{EState, ExecError, ExecResult};
use crate::exec_async::{exec_async_configure_wait, exec_async_notify, AsyncState};

/// Notifies the requests whose input arrived; returns how many were notified and the
/// children whose request is now CallbackPending, in order; the requestor then delivers their responses
/// (ExecAsyncResponse). With `must_progress` (the caller has nothing else to do and will
/// make the host wait), having nothing to wait on while requests are outstanding is an
/// error (seed 000's `Assert(added)`), not a hang. In step mode one
/// request is notified per call, so each notification is a step the demo can show.
pub fn async_event_wait(
    es: &mut EState,
    requestor: usize,
    children: &mut [PlanState],
    requests: &[Option<usize>],
    must_progress: bool,
    budget: usize,
) -> ExecResult<(usize, Vec<usize>)> {
    let mut added = false;
    let mut outstanding = 0;
    for r in requests.iter().flatten() {
        if es.requests[*r].state == AsyncState::Waiting {
            outstanding += 1;
            added |= exec_async_configure_wait(es, *r);
        }
    }
    if !added {
        if must_progress && outstanding > 0 {
            return Err(ExecError::Internal(format!(
                "node {requestor} would wait with no event registered while {outstanding} requests are outstanding"
            )));
        }
        return Ok((0, vec![]));
    }
    let queue: Vec<usize> = es.event_loop.waiting().filter(|&r| es.requests[r].requestor == requestor).collect();
    let limit = if es.step_mode { budget.min(1) } else { budget };
    let mut fired = 0;
    let mut callback_pending = Vec::new();
    for r in queue {
        if fired >= limit {
            break; // the rest stay queued, in order, for the next turn
        }
        let child = es.requests[r].request_index;
        if !children[child].node.async_ready(es) {
            continue;
        }
        exec_async_notify(es, r, &mut children[child])?;
        fired += 1;
        if es.requests[r].state == AsyncState::CallbackPending {
            callback_pending.push(child);
        }
    }
    es.event_loop.max_fired = es.event_loop.max_fired.max(fired);
    if fired > 0 {
        es.yield_step();
    }
    Ok((fired, callback_pending))
}
