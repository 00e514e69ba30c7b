//! The asynchronous request protocol (PostgreSQL's execAsync.c), with an explicit state
//! per request as in the 2016 patch's `AsyncRequestState`.
//!
//! A *requestor* (Append, MergeAppend) asks a *requestee* (an async-capable
//! ForeignScan) for its next row:
//!
//! ```text
//!  Idle/Complete --ExecAsyncRequest--> requestee has a row (or EOF) -> CallbackPending
//!                                   \-> it must wait for its connection -> Waiting
//!  Waiting --ExecAsyncConfigureWait--> its connection is in the wait set, request queued
//!  Waiting --ExecAsyncNotify (connection readable)--> CallbackPending (or still Waiting)
//!  CallbackPending --ExecAsyncResponse--> Complete (the requestor took the result)
//!  Waiting/CallbackPending --cancel (rescan, error)--> Cancelled --ExecAsyncRequest--> …
//! ```
//!
//! The requestee reports with `exec_async_request_done` / `exec_async_request_pending`;
//! the row itself stays in the requestee's slot until the requestor copies it. Every
//! transition is recorded in the trace with its time.
//!
//! A requestee that must block (postgres_fdw's DECLARE is a waited round trip) sets
//! `es.blocked_on` and leaves the request as it was; the requestor returns Wait and
//! repeats the call when the connection has input.
//!
//! Mind the names: PostgreSQL 14's flag `callback_pending` means "waiting for an
//! event", which is our **Waiting**; our **CallbackPending** is its `request_complete`
//! before the requestor has been told. PostgreSQL calls ExecAsyncResponse inside
//! ExecAsyncRequest/ExecAsyncNotify, so that moment is invisible there; the requestors
//! here deliver the response in a separate call (at once, or on the next call in the
//! demo's step mode), so the state can be seen.

use crate::estate::{EState, ExecError, ExecResult};
use crate::executor::PlanState;
use crate::trace::TraceKind;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AsyncState {
    /// No request outstanding.
    Idle,
    /// Sent; the requestee waits for its connection (PG: callback_pending).
    Waiting,
    /// The requestee has a result the requestor has not taken yet (PG: request_complete).
    CallbackPending,
    /// The requestor's response callback consumed the result.
    Complete,
    /// Cancelled by a rescan or an error.
    Cancelled,
}

#[derive(Clone, Debug, Serialize)]
pub struct AsyncRequest {
    pub id: usize,
    pub requestor: usize,
    pub requestee: usize,
    /// Which child of the requestor (PG: request_index).
    pub request_index: usize,
    pub state: AsyncState,
    /// The result: Some(true) a row (in the requestee's slot), Some(false) end of data.
    pub result: Option<bool>,
    /// The connection the request waits on, while Waiting.
    pub conn: Option<usize>,
    /// When the request started waiting (for the wait-time counter).
    pub waiting_since: u64,
}

/// Creates a request (ExecInitAppend creates one per async child).
pub fn new_request(es: &mut EState, requestor: usize, requestee: usize, request_index: usize) -> usize {
    let id = es.requests.len();
    es.requests.push(AsyncRequest {
        id,
        requestor,
        requestee,
        request_index,
        state: AsyncState::Idle,
        result: None,
        conn: None,
        waiting_since: 0,
    });
    id
}

fn set_state(es: &mut EState, r: usize, to: AsyncState) {
    let req = &mut es.requests[r];
    let from = req.state;
    req.state = to;
    let (requestor, requestee) = (req.requestor, req.requestee);
    es.record(|| TraceKind::Request { request: r, requestor, requestee, from, to });
}

/// ExecAsyncRequest: asks the requestee for a row. Afterwards the request is either
/// CallbackPending (the requestor must call `exec_async_response`) or Waiting — or, if
/// the requestee blocked on its connection (`es.blocked_on`), unchanged: the requestor
/// makes the same request again when the connection has input.
pub fn exec_async_request(es: &mut EState, r: usize, requestee: &mut PlanState) -> ExecResult<()> {
    match es.requests[r].state {
        AsyncState::Idle | AsyncState::Complete | AsyncState::Cancelled => {}
        s => return Err(ExecError::Internal(format!("request {r} made while {s:?}"))),
    }
    es.requests[r].result = None;
    timed(es, r, requestee, |node, es| node.async_request(es, r))?;
    if es.blocked_on.is_none() {
        es.instr[requestee.id].remote.requests += 1;
        es.clock.charge(es.cost.async_request_ns);
    }
    Ok(())
}

/// What a requestee may consider when it configures its wait (postgres_fdw looks at
/// its requestor's `as_needrequest` and at the events already in the set).
#[derive(Clone, Copy, Debug, Default)]
pub struct WaitContext {
    pub requestor_needs_request: bool,
    pub events_registered: usize,
}

/// ExecAsyncConfigureWait: the requestee of a Waiting request adds its connection to
/// the wait set, or not (postgres_fdw configures only the request whose FETCH is in
/// flight), or completes the request at once. Returns whether an event was added; the
/// request is then queued (once) for notification.
pub fn exec_async_configure_wait(
    es: &mut EState,
    r: usize,
    requestee: &mut PlanState,
    ctx: &WaitContext,
) -> ExecResult<bool> {
    if es.requests[r].state != AsyncState::Waiting {
        return Ok(false);
    }
    let added = requestee.node.async_configure_wait(es, r, ctx)?;
    if es.blocked_on.is_none() {
        es.record(|| TraceKind::ConfigureWait { request: r, added });
    }
    if added {
        es.event_loop.enqueue(r);
    } else {
        es.event_loop.dequeue(r);
    }
    Ok(added)
}

/// ExecAsyncNotify: the request's connection has input; let the requestee consume it.
pub fn exec_async_notify(es: &mut EState, r: usize, requestee: &mut PlanState) -> ExecResult<()> {
    if es.requests[r].state != AsyncState::Waiting {
        return Err(ExecError::Internal(format!("notify for request {r} that is not Waiting")));
    }
    es.event_loop.dequeue(r);
    es.event_loop.note_fired(r);
    es.record(|| TraceKind::Notify { request: r });
    timed(es, r, requestee, |node, es| node.async_notify(es, r))
}

/// ExecAsyncRequestDone: called by the requestee when it has a result.
pub fn exec_async_request_done(es: &mut EState, r: usize, has_row: bool) {
    if es.requests[r].state == AsyncState::Waiting {
        let waited = es.now().saturating_sub(es.requests[r].waiting_since);
        let requestee = es.requests[r].requestee;
        es.instr[requestee].remote.wait_ns += waited;
    }
    es.requests[r].result = Some(has_row);
    es.requests[r].conn = None;
    set_state(es, r, AsyncState::CallbackPending);
}

/// ExecAsyncRequestPending: called by the requestee when it must wait for `conn`.
pub fn exec_async_request_pending(es: &mut EState, r: usize, conn: usize) {
    let was_waiting = es.requests[r].state == AsyncState::Waiting;
    es.requests[r].conn = Some(conn);
    if !was_waiting {
        es.requests[r].waiting_since = es.now();
        let requestee = es.requests[r].requestee;
        es.instr[requestee].remote.waits += 1;
        set_state(es, r, AsyncState::Waiting);
    }
}

/// ExecAsyncResponse: the requestor takes the result. Returns true for a row (in the
/// requestee's slot), false for end of data.
pub fn exec_async_response(es: &mut EState, r: usize) -> ExecResult<bool> {
    if es.requests[r].state != AsyncState::CallbackPending {
        return Err(ExecError::Internal(format!("response for request {r} that is not CallbackPending")));
    }
    let Some(has_row) = es.requests[r].result else {
        return Err(ExecError::Internal(format!("request {r} is CallbackPending without a result")));
    };
    set_state(es, r, AsyncState::Complete);
    Ok(has_row)
}

/// Cancels a request (rescan, error): it leaves the waiting queue and is never notified.
pub fn exec_async_cancel(es: &mut EState, r: usize) {
    es.event_loop.dequeue(r);
    es.requests[r].conn = None;
    if matches!(es.requests[r].state, AsyncState::Waiting | AsyncState::CallbackPending) {
        set_state(es, r, AsyncState::Cancelled);
    }
}

/// Async calls reach the requestee without the dispatcher, so they are timed here:
/// the time in the call counts, the time spent Waiting does not (it is reported
/// separately as wait time, which PostgreSQL's EXPLAIN leaves out).
fn timed(
    es: &mut EState,
    r: usize,
    requestee: &mut PlanState,
    f: impl FnOnce(&mut dyn crate::executor::ExecNode, &mut EState) -> ExecResult<()>,
) -> ExecResult<()> {
    let node = requestee.id;
    let now = es.timing_now();
    es.instr[node].start_call(now);
    if let Err(e) = f(requestee.node.as_mut(), es) {
        let now = es.timing_now();
        es.instr[node].pause_call(now);
        return Err(e);
    }
    finish_call(es, r, node)
}

fn finish_call(es: &mut EState, r: usize, node: usize) -> ExecResult<()> {
    let now = es.timing_now();
    if es.blocked_on.is_some() {
        es.instr[node].pause_call(now);
        return Ok(());
    }
    match es.requests[r].state {
        AsyncState::CallbackPending => {
            es.instr[node].stop_call(now, es.requests[r].result);
            Ok(())
        }
        AsyncState::Waiting => {
            es.instr[node].pause_call(now);
            Ok(())
        }
        s => Err(ExecError::Internal(format!("requestee left request {r} in state {s:?}"))),
    }
}
