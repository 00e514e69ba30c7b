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
//! The states' names are the 2016 design's (seed 000: `ASYNC_WAITING`,
//! `ASYNC_CALLBACK_PENDING`, `ASYNC_COMPLETE`); PostgreSQL 14+ has two flags instead,
//! `callback_pending` and `request_complete`, and its `callback_pending` = true is our
//! **Waiting**. One definition of each state, against both, is [`STATE_TERMS`]: the
//! page's glossary, the README, the handout and the lessons say the same words (a test
//! checks it). PostgreSQL calls ExecAsyncResponse inside ExecAsyncRequest/ExecAsyncNotify,
//! so Callback pending is an instant there; the requestors here deliver the response in
//! a separate call (at once, or on the next call in the demo's step mode), so the state
//! can be seen.
//!
//! Invariants:
//! - a request's state changes only in `set_state`, which traces it, so the trace
//!   misses no transition;
//! - each call checks the state it is made from (request from Idle, Complete or
//!   Cancelled; notify from Waiting; response from CallbackPending with a result) and
//!   fails with an internal error otherwise, so a requestor bug (a second request while
//!   one is Waiting) is an error, not a lost row;
//! - after a requestee's call the request is CallbackPending or Waiting, unless the
//!   requestee blocked (`es.blocked_on`): a requestee that reports neither is an error,
//!   not a request that would wait forever;
//! - a request is queued for notification only when its configure added an event, once,
//!   and leaves the queue when notified, cancelled, or configured again without one;
//! - `waits` and the wait's start are counted on entering Waiting only, and `requests`
//!   and the request's CPU cost only when the requestee did not block, so a request
//!   repeated after a block, or pending twice, counts once.

/// One request state, defined once: the page's name, what it means (a short form for
/// the narration and a full one), the 2016 design's enum value and PostgreSQL 14+'s
/// flags and functions.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StateTerm {
    /// The `AsyncState` variant's name (`CallbackPending`).
    pub state: &'static str,
    /// The page's name ("Callback pending").
    pub label: &'static str,
    /// A few words, the narration's.
    pub short: &'static str,
    /// The definition.
    pub meaning: &'static str,
    /// The 2016 design's `AsyncRequestState` value (seed 000).
    pub design_2016: &'static str,
    /// PostgreSQL 14+'s flags and the functions that set them.
    pub postgres_14: &'static str,
}

/// The definitions of the request states (see [`StateTerm`]).
pub const STATE_TERMS: &[StateTerm] = &[
    StateTerm {
        state: "Idle",
        label: "Idle",
        short: "not asked yet",
        meaning: "no request outstanding: the child has not been asked for a row yet.",
        design_2016: "none of its three values (a request exists once ExecAsyncRequest makes it)",
        postgres_14: "before the child's first ExecAsyncRequest: callback_pending = false, request_complete = false",
    },
    StateTerm {
        state: "Waiting",
        label: "Waiting",
        short: "asked, no result yet",
        meaning: "the requestee was asked and has no result yet: it called ExecAsyncRequestPending and waits for its socket (or for its turn on a shared connection).",
        design_2016: "ASYNC_WAITING",
        postgres_14: "callback_pending = true, request_complete = false (set by ExecAsyncRequestPending); ExecAsyncNotify runs when the socket fires",
    },
    StateTerm {
        state: "CallbackPending",
        label: "Callback pending",
        short: "result ready, not yet taken by the requestor",
        meaning: "the requestee has its result (a row, or end of data) and reported it with ExecAsyncRequestDone; the requestor's callback, ExecAsyncResponse, has not taken it yet.",
        design_2016: "ASYNC_CALLBACK_PENDING (the callback to the requestor is pending)",
        postgres_14: "callback_pending = false, request_complete = true (set by ExecAsyncRequestDone), before ExecAsyncResponse: an instant only, since ExecAsyncRequest and ExecAsyncNotify call ExecAsyncResponse before they return",
    },
    StateTerm {
        state: "Complete",
        label: "Complete",
        short: "result taken by the requestor",
        meaning: "the requestor took the result: ExecAsyncResponse → ExecAsyncAppendResponse stored the row (as_asyncresults, the child in as_needrequest) or retired the child at end of data.",
        design_2016: "ASYNC_COMPLETE",
        postgres_14: "request_complete = true, after ExecAsyncResponse",
    },
    StateTerm {
        state: "Cancelled",
        label: "Cancelled",
        short: "cancelled",
        meaning: "a rescan or an error cancelled the request before it completed.",
        design_2016: "none (the sandbox's own)",
        postgres_14: "none: PostgreSQL abandons the request with the query (no flag)",
    },
];

/// The definition of `state` (by its `AsyncState` name).
pub fn state_term(state: &str) -> &'static StateTerm {
    STATE_TERMS.iter().find(|t| t.state == state).expect("every state is defined")
}

use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::executor::PlanState;
use crate::trace::TraceKind;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AsyncState {
    /// Not asked yet (see `STATE_TERMS` for each state against the 2016 enum and
    /// PostgreSQL 14+'s flags).
    Idle,
    /// Asked, no result yet (2016: ASYNC_WAITING; PostgreSQL: callback_pending = true).
    Waiting,
    /// Result ready, not yet taken by the requestor (2016: ASYNC_CALLBACK_PENDING;
    /// PostgreSQL: request_complete = true before ExecAsyncResponse).
    CallbackPending,
    /// Result taken by the requestor (2016: ASYNC_COMPLETE).
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
        // ExecAsyncConfigureWait stops the node's instrumentation with no row
        // (InstrStopNode(…, 0.0)); a row the requestee delivered while configuring
        // (postgres_fdw's complete_pending_request: its batch was read by
        // process_pending_request) is counted there with InstrUpdateTupleCount.
        if es.requests[r].state == AsyncState::CallbackPending && es.requests[r].result == Some(true) {
            es.instr[requestee.id].update_tuple_count(1);
        }
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
