//! The event-wait step shared by the async-aware nodes (PostgreSQL's
//! ExecAppendAsyncEventWait): register the connections of our Waiting requests, then
//! notify the ones whose input arrived, oldest first, at most `max_events` per turn.

use super::PlanState;
use crate::estate::{EState, ExecError, ExecResult};
use crate::exec_async::{exec_async_configure_wait, exec_async_notify, exec_async_response, AsyncState};

/// Returns how many requests were notified. With `block`, having nothing to wait on
/// while requests are outstanding is an error (seed 000's `Assert(added)`), not a hang.
/// `on_response(es, child, has_row)` is the requestor's response callback.
pub fn async_event_wait(
    es: &mut EState,
    requestor: usize,
    children: &mut [PlanState],
    requests: &[Option<usize>],
    block: bool,
    mut on_response: impl FnMut(&mut EState, usize, bool),
) -> ExecResult<usize> {
    let mut added = false;
    let mut outstanding = 0;
    for r in requests.iter().flatten() {
        if es.requests[*r].state == AsyncState::Waiting {
            outstanding += 1;
            added |= exec_async_configure_wait(es, *r);
        }
    }
    if !added {
        if block && outstanding > 0 {
            return Err(ExecError::Internal(format!(
                "node {requestor} would wait with no event registered while {outstanding} requests are outstanding"
            )));
        }
        return Ok(0);
    }
    let queue: Vec<usize> = es.event_loop.waiting().filter(|&r| es.requests[r].requestor == requestor).collect();
    let mut fired = 0;
    for r in queue {
        if fired >= es.event_loop.max_events {
            break; // the rest stay queued, in order, for the next turn
        }
        let child = es.requests[r].request_index;
        if !children[child].node.async_ready(es) {
            continue;
        }
        exec_async_notify(es, r, &mut children[child])?;
        fired += 1;
        if es.requests[r].state == AsyncState::CallbackPending {
            let has_row = exec_async_response(es, r)?;
            on_response(es, child, has_row);
        }
    }
    es.event_loop.max_fired = es.event_loop.max_fired.max(fired);
    Ok(fired)
}
