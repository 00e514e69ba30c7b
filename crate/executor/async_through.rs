//! Async beyond Append (the `async_through_nodes` knob): Hash Join (probe and build
//! side), Nested Loop (outer and inner side), Merge Join (both sides, as Hash Join
//! reads them), Materialize, Result, Agg, Sort and Limit
//! pass asynchronous requests through to the Foreign Scans below them, so an Append over joins (Robert Haas's plan in seed 000, scenario
//! R) overlaps the remote waits of all its joins. PostgreSQL 15 does not: a Foreign Scan
//! runs asynchronously only as a direct child of an Append.
//!
//! Which seed design: **async-aware nodes with ExecAsyncRequest paths** — Robert Haas's
//! second framework (seed 000, 2016-09-23: "both the requestor and the requestee have to
//! be specifically modified", results reported through a function "thoroughly
//! different" from the one that returns a tuple to a synchronous caller), which is what
//! PostgreSQL 14 committed for Append. Not the first framework's parent pointers and
//! `result_ready`, where results bubbled up through ExecProcNode. Each intermediate node
//! here is a requestor *and* a requestee:
//!
//! - as a requestor (`AsyncInputs::next`, in place of ExecProcNode on a child): a child
//!   that is async-capable (a Foreign Scan on an `async_capable` server, or an
//!   intermediate node that is async-capable itself) gets an ExecAsyncRequest; its
//!   result is taken with ExecAsyncResponse. Other children are called with
//!   ExecProcNode as before;
//! - as a requestee (its `async_request`, `async_configure_wait`, `async_ready`,
//!   `async_notify`): a request runs the node's own ExecProcNode code; when that code
//!   needs a row from a child whose request is Waiting, the node does not wait: it
//!   reports its own request pending (ExecAsyncRequestPending) on the child's
//!   connection, and its requestor configures and notifies *through* it: configure is
//!   passed to the child's request, notify too, and then the node goes on with its own
//!   code (probe, build, filter, aggregate, sort, count) and completes its request
//!   (ExecAsyncRequestDone) with a row or end of data, or reports pending again;
//! - a node called synchronously (no request: the plan's top, or under a node that is
//!   not async-aware) waits where it stands for the child it needs —
//!   ExecAsyncWaitForNode — configuring only that child's request: Kyotaro Horiguchi's
//!   rule (seed 002) that a wait configures only **descendants** of the waiting node
//!   ("node identifiers in depth-first order … nested-set model"; `PlanShape`).
//!
//! What each intermediate node must do (and nothing else changes in it):
//! - **Hash Join**: read the build (inner) side and the probe (outer) side through
//!   `AsyncInputs::next`; its table and matches already survive a Wait;
//! - **Nested Loop**: read both sides through `next`; while the outer side sleeps,
//!   start the inner side's first pass (Kyotaro's example, `node_nestloop.rs`);
//! - **Result, Limit, Materialize**: read the child through `next`; Limit stops asking
//!   at its count, Materialize replays what it kept on a rescan;
//! - **Agg, Sort**: read the child to its end through `next` (they return nothing
//!   before), so under a request they report pending for as long as the input waits;
//! - every one: `is_async_capable` when its inputs are (`AsyncInputs::capable`: no child
//!   below which an Append could sleep without a request to wait through), the
//!   requestee functions by `through_requestee!`, and cancel its child requests on
//!   rescan and end. When the child it needs registers no event (its connection
//!   carries a sibling's FETCH, postgres_fdw's pendingAreq), it configures and
//!   notifies its other waiting children too, as an Append does.
//!
//! EXPLAIN prints a node that a parent sends requests to as "Async Hash Join" (the
//! sandbox's mark: PostgreSQL 15 has "Async" only on Foreign Scans, and never shows it
//! here, since the knob is off in `pg15`).
//!
//! The hazard (the `no_descendant_check` teaching knob, seed 000, Amit Khandekar): the
//! first framework's nodes waited in place (ExecAsyncWaitForNode) on *every* event of
//! the query. Then, while a Hash Join under an Append waits for its Foreign Scan b, a
//! ready Foreign Scan a of another subtree is dispatched, and its result goes to its
//! parent, the Append — which is in the middle of executing the Hash Join. With the
//! knob, a node under a request waits in place (it blocks, as a libpq call would, but
//! the host wakes for any Waiting request's connection), and when a request that is not
//! its descendant has input first, the run stops with `TraceKind::Reentry` and the error
//! "Append re-entered while executing its child Hash Join" (`reentry`) — never a panic,
//! never a wrong row. Requests left Waiting across other work come from an Append's
//! direct Foreign Scans and from a Nested Loop's outer side while its inner side starts;
//! the re-entered node is the lowest one executing both (scenario H: the Append; the
//! proptest in tests/suite/async_through.rs finds the Nested Loop case too). Without the knob the same plan is safe twice over: a node under a
//! request never waits in place (the async-aware-parent rule), and a node that does
//! configures only its descendants (the nested-set check).
//!
//! Invariants:
//! - a child request is made only from Idle, Complete or Cancelled (`exec_async.rs`
//!   checks it), and its result is taken once, by `next`;
//! - a node reports its own request pending only while the child it needs is Waiting,
//!   on that child's connection, so its requestor's wait has an event to wait on;
//! - a node never configures or notifies a request that is not its child's;
//! - in pg15 (knob off) no request is made here and nothing changes: no trace, EXPLAIN
//!   or wire difference.
//!
//! | here | seed 000 / PostgreSQL |
//! |---|---|
//! | `AsyncInputs::next` | a node's "code path where it uses ExecAsyncRequest() … rather than ExecProcNode()" |
//! | `request`, `notify` | the node as requestee: ExecAsyncRequest / ExecAsyncNotify reach it, it ends with ExecAsyncRequestDone or …Pending |
//! | `configure_wait` | ExecAsyncConfigureWait, passed to the child's request |
//! | `AsyncInputs::wait_for_child` | ExecAsyncWaitForNode (2016), with the descendant check |
//! | `PlanShape::is_descendant` | the 2016 patch's depth-first node ids (nested sets) |

use super::{exec_proc_node, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecError, ExecResult};
use crate::executor::exec_async::{
    exec_async_configure_wait, exec_async_notify, exec_async_request, exec_async_request_done,
    exec_async_request_pending, exec_async_response, new_request, AsyncState, WaitContext,
};
use crate::plan::Plan;
use crate::trace::TraceKind;

/// A bound on the work one call may do without waiting: a requestee that neither
/// completes nor waits is a bug, reported instead of looping.
const MAX_ROUNDS: usize = 1_000_000;

/// The plan's shape for the nested-set check: node ids are allocated depth-first
/// (`init_plan`), so the descendants of node `n` are exactly the ids in `(n, end[n])`.
#[derive(Clone, Debug, Default)]
pub struct PlanShape {
    /// One past the last id of each node's subtree.
    pub end: Vec<usize>,
    pub parent: Vec<Option<usize>>,
    /// EXPLAIN's node name ("Hash Join").
    pub name: Vec<&'static str>,
}

impl PlanShape {
    /// Is `node` a (strict) descendant of `of`?
    pub fn is_descendant(&self, node: usize, of: usize) -> bool {
        of < node && node < self.end[of]
    }

    /// The lowest node whose subtree holds both `a` and `b`.
    fn common_ancestor(&self, a: usize, b: usize) -> usize {
        let mut x = a;
        while !(x == b || self.is_descendant(b, x)) {
            match self.parent[x] {
                Some(p) => x = p,
                None => return x,
            }
        }
        x
    }

    /// The child of `ancestor` on the way down to `node`.
    fn child_towards(&self, ancestor: usize, node: usize) -> usize {
        let mut x = node;
        while let Some(p) = self.parent[x] {
            if p == ancestor {
                return x;
            }
            x = p;
        }
        x
    }
}

/// EXPLAIN's name of a plan node, for the shape and the hazard's message.
pub fn plan_node_name(plan: &Plan) -> &'static str {
    match plan {
        Plan::SeqScan { .. } => "Seq Scan",
        Plan::IndexScan { index_only: false, .. } => "Index Scan",
        Plan::IndexScan { index_only: true, .. } => "Index Only Scan",
        Plan::BitmapHeapScan { .. } => "Bitmap Heap Scan",
        Plan::BitmapIndexScan { .. } => "Bitmap Index Scan",
        Plan::ForeignScan(_) => "Foreign Scan",
        Plan::Append { .. } => "Append",
        Plan::MergeAppend { .. } => "Merge Append",
        Plan::Sort { .. } => "Sort",
        Plan::IncrementalSort { .. } => "Incremental Sort",
        Plan::Limit { .. } => "Limit",
        Plan::Agg { .. } => "Aggregate",
        Plan::Result { .. } | Plan::EmptyResult { .. } | Plan::Gating { .. } => "Result",
        Plan::HashJoin { .. } => "Hash Join",
        Plan::NestLoop { .. } => "Nested Loop",
        Plan::MergeJoin { .. } => "Merge Join",
        Plan::Material { .. } => "Materialize",
        Plan::Memoize { .. } => "Memoize",
        Plan::SubqueryScan { .. } => "Subquery Scan",
        Plan::FunctionScan { .. } => "Function Scan",
        Plan::CteScan { .. } => "CTE Scan",
        Plan::ModifyTable(_) => "ModifyTable",
        Plan::ConstResult { rows, .. } if rows.len() > 1 => "Values Scan",
        Plan::ConstResult { .. } => "Result",
        Plan::DirectModify(d) => match d.operation {
            crate::plan::modifytable::CmdType::Delete => "Foreign Delete",
            _ => "Foreign Update",
        },
        Plan::Unique { .. } => "Unique",
        Plan::WindowAgg { .. } => "WindowAgg",
        Plan::SetOp { strategy: crate::plan::SetOpStrategy::Hashed, .. } => "HashSetOp",
        Plan::SetOp { .. } => "SetOp",
        Plan::WithInitPlans { .. } => "InitPlans",
        Plan::WithCtes { .. } => "CTEs",
    }
}

/// Does the subtree hold a node that returns Wait without a request to wait through
/// (an Append or MergeAppend sleeping on its own wait set)? A node above one cannot be
/// a requestee: it would have no connection to report pending on.
fn may_sleep(plan: &Plan) -> bool {
    matches!(plan, Plan::Append { .. } | Plan::MergeAppend { .. }) || plan.children().into_iter().any(may_sleep)
}

/// An intermediate node's way to its children under `async_through_nodes` (see the
/// module doc): a request per async-capable child, and where the node's call stopped.
#[derive(Clone, Debug, Default)]
pub struct AsyncInputs {
    node: usize,
    /// Per child: the request this node sends it, if the child is async-capable.
    requests: Vec<Option<usize>>,
    /// This node can itself be a requestee.
    capable: bool,
    /// The request this node is executing for, during a requestee call.
    own: Option<usize>,
    /// The child whose Waiting request the last call stopped at.
    waiting_on: Option<usize>,
    /// `no_descendant_check`: wait in place, on every event of the query.
    unguarded: bool,
    /// A parent sends this node requests (EXPLAIN prints "Async Hash Join": the
    /// sandbox's mark, PostgreSQL 15 marks only Foreign Scans).
    marked: bool,
}

impl AsyncInputs {
    /// At ExecInit: with the knob on and the query async, each async-capable child
    /// becomes this node's requestee (marked, so EXPLAIN prints "Async Foreign Scan").
    /// `plans` are the children's plans, in order.
    pub fn init(id: usize, children: &mut [PlanState], plans: &[&Plan], es: &mut EState) -> AsyncInputs {
        let on = es.async_enabled && es.behaviour.async_through_nodes;
        let mut requests = vec![None; children.len()];
        let mut capable = on;
        for (i, c) in children.iter_mut().enumerate() {
            if on && c.node.is_async_capable() {
                c.node.mark_async_requestee();
                requests[i] = Some(new_request(es, id, c.id, i));
            } else if may_sleep(plans[i]) {
                capable = false;
            }
        }
        capable &= requests.iter().any(Option::is_some);
        AsyncInputs {
            node: id,
            requests,
            capable,
            own: None,
            waiting_on: None,
            unguarded: es.behaviour.no_descendant_check,
            marked: false,
        }
    }

    /// A Result that is a Foreign Scan's own Filter or projection (PostgreSQL evaluates
    /// the scan's quals and target list inside the scan node, which stays async-capable;
    /// `node_result`): its one child, the scan or the Result of the scan's Filter, gets
    /// this node's request, whatever the knob says (that Result sets up its own request
    /// to the scan now, so EXPLAIN marks the scan async before any row is asked for).
    pub fn init_scan_qual(id: usize, children: &mut [PlanState], es: &mut EState) -> AsyncInputs {
        let mut requests = vec![None; children.len()];
        if let Some(c) = children.first_mut() {
            c.node.mark_async_requestee_in(es);
            requests[0] = Some(new_request(es, id, c.id, 0));
        }
        AsyncInputs {
            node: id,
            requests,
            capable: true,
            own: None,
            waiting_on: None,
            unguarded: es.behaviour.no_descendant_check,
            marked: false,
        }
    }

    /// Can this node take requests (its parent may make it a requestee)?
    pub fn capable(&self) -> bool {
        self.capable
    }

    /// A parent will send this node requests.
    pub fn mark(&mut self) {
        self.marked = true;
    }

    pub fn marked(&self) -> bool {
        self.marked
    }

    /// Is child `i` called synchronously (no request of this node's goes to it)?
    pub fn is_sync(&self, i: usize) -> bool {
        self.requests.get(i).copied().flatten().is_none()
    }

    /// The next row of child `i` into its slot: by ExecAsyncRequest if the child is
    /// async, else ExecProcNode. Wait: under a request, the child's request is Waiting
    /// (the node reports pending); called synchronously, the host must wait (the child's
    /// connection is in the wait set) or a libpq call blocked.
    #[inline]
    pub fn next(&mut self, children: &mut [PlanState], i: usize, es: &mut EState) -> ExecResult<ExecStatus> {
        // The synchronous call inlined into the caller's row loop (the common case, and
        // every row of it); a request's rounds out of line.
        match self.requests.get(i).copied().flatten() {
            None => exec_proc_node(&mut children[i], es),
            Some(r) => self.next_by_request(children, i, r, es),
        }
    }

    /// `next` for a child this node sends requests to.
    fn next_by_request(
        &mut self,
        children: &mut [PlanState],
        i: usize,
        r: usize,
        es: &mut EState,
    ) -> ExecResult<ExecStatus> {
        for _ in 0..MAX_ROUNDS {
            match es.requests[r].state {
                AsyncState::CallbackPending => {
                    self.waiting_on = None;
                    let has_row = exec_async_response(es, r)?;
                    return Ok(if has_row { ExecStatus::Row } else { ExecStatus::Done });
                }
                AsyncState::Waiting => {
                    self.waiting_on = Some(i);
                    if self.own.is_some() && !self.unguarded {
                        return Ok(ExecStatus::Wait); // our requestor waits through us
                    }
                    if !self.wait_for_child(children, i, es)? {
                        return Ok(ExecStatus::Wait);
                    }
                }
                AsyncState::Idle | AsyncState::Complete | AsyncState::Cancelled => {
                    exec_async_request(es, r, &mut children[i])?;
                    if es.blocked_on.is_some() {
                        return Ok(ExecStatus::Wait);
                    }
                }
            }
        }
        Err(ExecError::Internal(format!("node {} made no progress on request {r}", self.node)))
    }

    /// ExecAsyncWaitForNode(child `i`): configures the child's request — the only
    /// descendant this node waits for — and notifies it if its input is here. True if
    /// it progressed (look at the request again); false if the node must return Wait.
    fn wait_for_child(&mut self, children: &mut [PlanState], i: usize, es: &mut EState) -> ExecResult<bool> {
        let r = self.requests[i].expect("async child");
        let mut added = exec_async_configure_wait(es, r, &mut children[i], &WaitContext::default())?;
        if es.blocked_on.is_some() {
            return Ok(false);
        }
        if es.requests[r].state != AsyncState::Waiting {
            return Ok(true);
        }
        if !added {
            added = self.configure_others(children, i, es, &WaitContext::default())?;
            if es.blocked_on.is_some() {
                return Ok(false);
            }
        }
        if children[i].node.async_ready(es) {
            exec_async_notify(es, r, &mut children[i])?;
            return Ok(es.blocked_on.is_none());
        }
        if self.notify_others(children, i, es)? {
            return Ok(es.blocked_on.is_none());
        }
        if self.unguarded {
            self.wait_on_everything(es, r)?;
        }
        if !added {
            return Err(ExecError::Internal(format!(
                "node {} would wait for request {r} with no event registered",
                self.node
            )));
        }
        if self.own.is_some() {
            // In place under a request (teaching knob): block, as the 2016 framework's
            // ExecAsyncWaitForNode did, until an event of the wait set fires.
            let conn = es.requests[r].conn.ok_or_else(|| no_conn(self.node, r))?;
            es.block_on(conn);
        }
        Ok(false)
    }

    /// The child it needs registered no event: its connection carries another child's
    /// FETCH (postgres_fdw's pendingAreq, the same requestor: only that request's event
    /// is configured). Configures this node's other Waiting children — descendants too
    /// — so the wait has that event, as an Append configures all its children. True if
    /// one added an event.
    fn configure_others(
        &mut self,
        children: &mut [PlanState],
        except: usize,
        es: &mut EState,
        ctx: &WaitContext,
    ) -> ExecResult<bool> {
        let mut added = false;
        for (c, r) in self.requests.iter().enumerate() {
            let Some(r) = *r else { continue };
            if c == except || es.requests[r].state != AsyncState::Waiting {
                continue;
            }
            added |= exec_async_configure_wait(es, r, &mut children[c], ctx)?;
            if es.blocked_on.is_some() {
                break;
            }
        }
        Ok(added)
    }

    /// Notifies the first other Waiting child whose input is here (its result waits,
    /// CallbackPending, until this node asks that child); true if one was.
    fn notify_others(&mut self, children: &mut [PlanState], except: usize, es: &mut EState) -> ExecResult<bool> {
        for (c, r) in self.requests.iter().enumerate() {
            let Some(r) = *r else { continue };
            if c != except && es.requests[r].state == AsyncState::Waiting && children[c].node.async_ready(es) {
                exec_async_notify(es, r, &mut children[c])?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `no_descendant_check`: the wait set is every Waiting request of the query, not
    /// only this node's descendants. A request of another subtree whose connection has
    /// input would be dispatched now, and its result would run its requestor, which is
    /// executing: the hazard (see `reentry`). Otherwise its connection joins the wait.
    fn wait_on_everything(&self, es: &mut EState, own_request: usize) -> ExecResult<()> {
        let others: Vec<(usize, usize)> = es
            .requests
            .iter()
            .filter(|q| q.id != own_request && q.state == AsyncState::Waiting)
            .filter(|q| !es.shape.is_descendant(q.requestee, self.node))
            .filter_map(|q| q.conn.map(|c| (q.id, c)))
            .collect();
        if let Some(&(q, _)) = others.iter().find(|(_, c)| es.conns[*c].has_answer()) {
            return Err(reentry(es, self.node, q));
        }
        for (_, c) in others {
            es.event_loop.add_wait_conn(c);
            if !es.wake_also.contains(&c) {
                es.wake_also.push(c);
            }
        }
        Ok(())
    }

    /// The connection the child this node stopped at waits on.
    fn waiting_conn(&self, es: &EState) -> Option<usize> {
        let r = self.requests[self.waiting_on?]?;
        es.requests[r].conn
    }

    /// The child request this node stopped at, if it is still Waiting.
    fn waiting_request(&self, es: &EState) -> Option<(usize, usize)> {
        let child = self.waiting_on?;
        let r = self.requests[child]?;
        (es.requests[r].state == AsyncState::Waiting).then_some((child, r))
    }

    /// Is the input this node waits for here (so a notify would progress)?
    pub fn ready(&self, children: &[PlanState], es: &EState) -> bool {
        let Some(child) = self.waiting_on else { return false };
        let Some(r) = self.requests[child] else { return false };
        if es.requests[r].state == AsyncState::CallbackPending || children[child].node.async_ready(es) {
            return true;
        }
        // Another child's input (see `configure_others`).
        self.requests.iter().enumerate().any(|(c, q)| {
            q.is_some_and(|q| es.requests[q].state == AsyncState::Waiting && children[c].node.async_ready(es))
        })
    }

    /// Cancels the child requests (rescan, end).
    pub fn cancel_all(&mut self, es: &mut EState) {
        for r in self.requests.iter().flatten() {
            crate::executor::exec_async::exec_async_cancel(es, *r);
        }
        self.waiting_on = None;
        self.own = None;
    }
}

fn no_conn(node: usize, r: usize) -> ExecError {
    ExecError::Internal(format!("node {node} waits for request {r}, which waits on no connection"))
}

/// The hazard: while `waiting` waits in place, request `fired` of another subtree has
/// its input. Dispatching it would run its requestor, and up the tree the first node
/// that is executing — the lowest common ancestor of the two, which is in the middle of
/// executing its child on the way to `waiting`. Recorded as `TraceKind::Reentry`.
pub fn reentry(es: &mut EState, waiting: usize, fired: usize) -> ExecError {
    let fired_node = es.requests[fired].requestee;
    let node = es.shape.common_ancestor(waiting, fired_node);
    let child = es.shape.child_towards(node, waiting);
    let message = format!("{} re-entered while executing its child {}", es.shape.name[node], es.shape.name[child]);
    let text = message.clone();
    es.record(|| TraceKind::Reentry { node, child, waiting, request: fired, message: text });
    ExecError::Reentry(message)
}

/// An intermediate node that passes requests through (see the module doc).
pub trait Through: ExecNode {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]);
}

/// The node's own code for request `r`, and its report: a row or end of data completes
/// the request; a Wait on a child's request leaves it pending on that connection; a
/// blocked libpq call leaves it as it was (it is made again).
fn run<N: Through>(n: &mut N, es: &mut EState, r: usize) -> ExecResult<()> {
    n.inputs().0.own = Some(r);
    let status = n.exec_next(es);
    let inputs = n.inputs().0;
    inputs.own = None;
    match status? {
        ExecStatus::Row => exec_async_request_done(es, r, true),
        ExecStatus::Done => exec_async_request_done(es, r, false),
        ExecStatus::Wait if es.blocked_on.is_some() => {}
        ExecStatus::Wait => {
            let conn = inputs.waiting_conn(es).ok_or_else(|| no_conn(inputs.node, r))?;
            exec_async_request_pending(es, r, conn);
        }
    }
    Ok(())
}

/// The node as requestee of ExecAsyncRequest.
pub fn request<N: Through>(n: &mut N, es: &mut EState, r: usize) -> ExecResult<()> {
    run(n, es, r)
}

/// ExecAsyncConfigureWait, passed to the child request the node waits for; if that
/// completes on the spot, the node goes on with its own code at once.
pub fn configure_wait<N: Through>(n: &mut N, es: &mut EState, r: usize, ctx: &WaitContext) -> ExecResult<bool> {
    for _ in 0..MAX_ROUNDS {
        let (inputs, children) = n.inputs();
        if let Some((child, cr)) = inputs.waiting_request(es) {
            let mut added = exec_async_configure_wait(es, cr, &mut children[child], ctx)?;
            if es.blocked_on.is_none() && es.requests[cr].state == AsyncState::Waiting && !added {
                added = inputs.configure_others(children, child, es, ctx)?;
            }
            if es.blocked_on.is_some() || es.requests[cr].state == AsyncState::Waiting {
                return Ok(added);
            }
        }
        run(n, es, r)?;
        if es.blocked_on.is_some() || es.requests[r].state != AsyncState::Waiting {
            return Ok(false);
        }
    }
    Err(ExecError::Internal(format!("configuring request {r} made no progress")))
}

/// ExecAsyncNotify: the child's request is notified, then the node goes on.
pub fn notify<N: Through>(n: &mut N, es: &mut EState, r: usize) -> ExecResult<()> {
    let (inputs, children) = n.inputs();
    if let Some((child, cr)) = inputs.waiting_request(es) {
        if children[child].node.async_ready(es) {
            exec_async_notify(es, cr, &mut children[child])?;
        } else {
            inputs.notify_others(children, child, es)?;
        }
        if es.blocked_on.is_some() {
            return Ok(());
        }
    }
    run(n, es, r)
}

/// The four requestee functions of `ExecNode` for a node that implements `Through`.
macro_rules! through_requestee {
    () => {
        fn is_async_capable(&self) -> bool {
            self.inputs.capable()
        }
        fn is_async_requestee(&self) -> bool {
            self.inputs.marked()
        }
        fn mark_async_requestee(&mut self) {
            self.inputs.mark()
        }
        fn async_request(&mut self, es: &mut EState, r: usize) -> ExecResult<()> {
            crate::executor::async_through::request(self, es, r)
        }
        fn async_configure_wait(
            &mut self,
            es: &mut EState,
            r: usize,
            ctx: &crate::executor::exec_async::WaitContext,
        ) -> ExecResult<bool> {
            crate::executor::async_through::configure_wait(self, es, r, ctx)
        }
        fn async_ready(&self, es: &EState) -> bool {
            self.inputs.ready(&self.children, es)
        }
        fn async_notify(&mut self, es: &mut EState, r: usize) -> ExecResult<()> {
            crate::executor::async_through::notify(self, es, r)
        }
    };
}
pub(crate) use through_requestee;
