//! Result: filter and projection over one child (PostgreSQL evaluates these inside
//! every node; the sandbox gives them a node so the demo shows where rows are dropped).
//! Also the childless Result with `One-Time Filter: false` that stands for a relation
//! known to be empty (every partition pruned): it is done at its first call.
//!
//! Invariants:
//! - A row passes only when the filter is true: NULL drops it, as WHERE and HAVING do.
//! - The output is the child's row (no targets) or the targets evaluated over it,
//!   written into this node's slot.
//! - The node keeps no state between rows: a Wait passes straight up, and rescan is
//!   the child's.
//! - The empty Result calls nothing and is done at every call, also after a rescan.
//!
//! A Result that is a Filter or a target list (or the projection above such a Filter)
//! over an async-capable Foreign Scan is that scan's qual and projection in PostgreSQL
//! (postgres_fdw's local conditions and the scan's target list, evaluated by `ExecScan`
//! inside the Foreign Scan, which is projection-capable), so it is async-capable as the
//! scan is (`ResultState::is_scan_qual`): an Append's request goes to the Result, which
//! passes a request of its own to the node below it
//! (`async_through::AsyncInputs::init_scan_qual`) and completes the Append's with the
//! first fetched row that passes, as `produce_tuple_asynchronously` skips the rows the
//! quals drop. EXPLAIN folds it into "Async Foreign Scan … Filter:", as PostgreSQL
//! prints it.
//!
//! And the gating Result (`GatingResultState`, `create_gating_plan`'s): its
//! `One-Time Filter:` is a pseudoconstant qual (CURRENT_USER = SESSION_USER),
//! evaluated at the first call; not true, the node is done and its child is never
//! run ("never executed"); true, the child's rows pass through. It is not
//! async-capable, so a Foreign Scan under it runs synchronously even under an async
//! Append, as in PostgreSQL 15 (`mark_async_capable_plan` refuses a gating Result).
//!
//! Where it departs from PostgreSQL: PostgreSQL evaluates quals and projections in the
//! node that produces the rows (`ExecScan`'s `ExecQual` and `ExecProject` in
//! execScan.c; the HAVING qual in nodeAgg.c), and its Result node (nodeResult.c,
//! `ExecResult`) only projects and checks a constant `resconstantqual` once (the
//! `One-Time Filter`). EXPLAIN folds this node into its child (`instrument::explain`),
//! so the printed plan is PostgreSQL's. The empty Result is nodeResult.c's own case: the
//! one-time filter is false, so no tuple comes out.

use super::async_through::{AsyncInputs, Through};
use super::{copy_row, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::Expr;
use crate::types::Datum;

/// Does `e` call a correlated SubPlan?
fn calls_subplan(e: &Expr) -> bool {
    let mut k = vec![];
    super::node_subplan::correlated_subplans(e, &mut k);
    !k.is_empty()
}

#[derive(Clone)]
pub struct ResultState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    filter: Option<Expr>,
    targets: Option<Vec<(Expr, String)>>,
    input_names: Vec<String>,
    slot: Vec<Datum>,
    /// The filter and targets with InitPlan values bound (`node_subplan`), once they
    /// are; EXPLAIN prints the unbound ones (`$0`).
    bound_filter: Option<Expr>,
    bound_targets: Option<Vec<Expr>>,
    /// A child row is in the child's slot, not yet handed on: an InitPlan its filter
    /// or targets need returned Wait.
    holding: bool,
    /// The filter, the targets read a subplan's value (decided once, not per row).
    filter_has_param: bool,
    targets_have_param: bool,
    /// The filter, the targets call a correlated SubPlan: bound again for every row.
    filter_has_subplan: bool,
    targets_have_subplan: bool,
    /// This node's id and the number of input rows it has read (a correlated
    /// SubPlan runs once per row: `node_subplan::bind_row`).
    id: usize,
    rows_read: u64,
    /// The Filter or projection of an async-capable Foreign Scan: PostgreSQL's scan qual
    /// and target list, so async-capable under an Append (`is_scan_qual`).
    scan_qual: bool,
}

impl ResultState {
    pub fn init(
        child: PlanState,
        filter: Option<Expr>,
        targets: Option<Vec<(Expr, String)>>,
        input_names: Vec<String>,
    ) -> Self {
        ResultState {
            filter_has_param: filter.as_ref().is_some_and(Expr::has_exec_param),
            targets_have_param: targets.iter().flatten().any(|(e, _)| e.has_exec_param()),
            filter_has_subplan: filter.iter().any(calls_subplan),
            targets_have_subplan: targets.iter().flatten().any(|(e, _)| calls_subplan(e)),
            id: usize::MAX,
            rows_read: 0,
            scan_qual: false,
            children: vec![child],
            inputs: AsyncInputs::default(),
            filter,
            targets,
            input_names,
            slot: Vec::new(),
            bound_filter: None,
            bound_targets: None,
            holding: false,
        }
    }

    /// Binds the filter's InitPlan values once; false if one of them waits.
    fn bind_filter(&mut self, es: &mut EState) -> ExecResult<bool> {
        match &self.filter {
            // A correlated SubPlan's value is this row's: bound for every row.
            Some(f) if self.filter_has_subplan => {
                let at = (self.id, self.rows_read);
                self.bound_filter = super::node_subplan::bind_row(es, f, self.children[0].node.slot(), at)?;
                Ok(self.bound_filter.is_some())
            }
            Some(f) if self.filter_has_param && self.bound_filter.is_none() => {
                self.bound_filter = super::node_subplan::bind_params(es, f)?;
                Ok(self.bound_filter.is_some())
            }
            _ => Ok(true),
        }
    }

    /// The targets with their InitPlan values (only once a row passed the filter, as
    /// PostgreSQL projects only such rows); false if one of them waits.
    fn bind_targets(&mut self, es: &mut EState) -> ExecResult<bool> {
        let Some(t) = &self.targets else { return Ok(true) };
        if self.targets_have_subplan {
            // A correlated SubPlan's value is this row's: bound for every row.
            self.bound_targets = None;
        }
        if self.bound_targets.is_some() || !self.targets_have_param {
            return Ok(true);
        }
        let mut bound = Vec::with_capacity(t.len());
        let at = (self.id, self.rows_read);
        for (e, _) in t.clone() {
            let b = match self.targets_have_subplan {
                true => super::node_subplan::bind_row(es, &e, self.children[0].node.slot(), at)?,
                false => super::node_subplan::bind_params(es, &e)?,
            };
            match b {
                Some(b) => bound.push(b),
                None => return Ok(false),
            }
        }
        self.bound_targets = Some(bound);
        Ok(true)
    }
}

impl ResultState {
    /// Is this Result part of the async-capable Foreign Scan below it (`child`, its
    /// plan)? A Foreign Scan is projection-capable (`is_projection_capable_path`), so
    /// PostgreSQL evaluates the local conditions (`Filter:`) and the target list in the
    /// scan node itself, whatever the target list computes (`create_scan_plan`; under
    /// an Append, `apply_scanjoin_target_to_paths` and `create_projection_plan` put the
    /// select list into the scan), and `mark_async_capable_plan` refuses a Foreign Scan
    /// only when its plan is a Result (a gating One-Time Filter, `GatingResultState`).
    /// The sandbox has a Result for the Filter over the scan and, when the scan fetches
    /// columns only the Filter reads, another one above it that projects them away
    /// (`planner::scan_path`), and a set operation's branch its select list above
    /// those: all are the scan's, so all are async-capable as the scan is. Not with an
    /// InitPlan's value or a SubPlan in them (their binding waits are not passed
    /// through a request).
    fn is_scan_qual(&self, child: Option<&crate::plan::Plan>) -> bool {
        use crate::plan::Plan;
        let own = self.filter.is_some() || self.targets.is_some();
        let plain = !self.filter_has_param
            && !self.filter_has_subplan
            && !self.targets_have_param
            && !self.targets_have_subplan;
        // The scan itself, or a Result of the scan's (its Filter, the projection above
        // it: async-capable, they are `scan_qual` too).
        fn over_scan(p: &Plan) -> bool {
            match p {
                Plan::ForeignScan(_) => true,
                Plan::Result { child, .. } => over_scan(child),
                _ => false,
            }
        }
        own && plain && child.is_some_and(over_scan) && self.children[0].node.is_async_capable()
    }

    /// As a Foreign Scan's own Filter (`scan_qual`), sends the scan this node's own
    /// request, once.
    fn scan_qual_requests(&mut self, es: &mut EState) {
        if self.scan_qual && !self.inputs.capable() {
            let marked = self.inputs.marked();
            self.inputs = AsyncInputs::init_scan_qual(self.id, &mut self.children, es);
            if marked {
                self.inputs.mark();
            }
        }
    }
}

impl Through for ResultState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for ResultState {
    fn is_async_capable(&self) -> bool {
        self.inputs.capable() || self.scan_qual
    }
    fn is_async_requestee(&self) -> bool {
        self.inputs.marked()
    }
    fn mark_async_requestee(&mut self) {
        self.inputs.mark()
    }
    /// An Append's request: a Foreign Scan's own Filter passes it to the scan.
    fn mark_async_requestee_in(&mut self, es: &mut EState) {
        self.scan_qual_requests(es);
        self.inputs.mark()
    }
    fn async_request(&mut self, es: &mut EState, r: usize) -> ExecResult<()> {
        // A parent that marked this node without `mark_async_requestee_in`.
        self.scan_qual_requests(es);
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

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.id = id;
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
        self.scan_qual = self.is_scan_qual(plans.first().copied());
    }
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            if !self.holding {
                match self.inputs.next(&mut self.children, 0, es)? {
                    ExecStatus::Row => self.rows_read += 1,
                    other => return Ok(other),
                }
                es.clock.charge(es.cost.result_row_ns);
            }
            self.holding = false;
            if !self.bind_filter(es)? {
                self.holding = true;
                return Ok(ExecStatus::Wait);
            }
            if let Some(f) = self.bound_filter.as_ref().or(self.filter.as_ref()) {
                if !f.qual(self.children[0].node.slot())? {
                    continue;
                }
            }
            if !self.bind_targets(es)? {
                self.holding = true;
                return Ok(ExecStatus::Wait);
            }
            let row = self.children[0].node.slot();
            match (&self.bound_targets, &self.targets) {
                (_, None) => copy_row(&mut self.slot, row),
                (Some(b), Some(_)) => {
                    self.slot.clear();
                    for e in b.iter() {
                        self.slot.push(e.eval(row)?);
                    }
                }
                (None, Some(t)) => {
                    self.slot.clear();
                    for (e, _) in t.iter() {
                        self.slot.push(e.eval(row)?);
                    }
                }
            }
            return Ok(ExecStatus::Row);
        }
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.holding = false;
        // Parameters may have changed (a correlated SubPlan's): bound again.
        self.bound_filter = None;
        self.bound_targets = None;
        self.inputs.cancel_all(es);
        exec_rescan(&mut self.children[0], es)
    }
    fn exec_end(&mut self, es: &mut EState) {
        self.inputs.cancel_all(es);
        super::exec_end_node(&mut self.children[0], es);
    }
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn children(&self) -> &[PlanState] {
        &self.children
    }
    /// ExecSetTupleBound passes through a projection, not through a filter (which
    /// may drop rows).
    fn set_tuple_bound(&mut self, bound: Option<u64>) {
        if self.filter.is_none() {
            self.children[0].node.set_tuple_bound(bound);
        }
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Result".into();
        // `$N` names the child's N-th output: EXPLAIN prints it as it prints the child's
        // (qualified where PostgreSQL qualifies), and folds this node into its child.
        let refs: Vec<String> = (0..self.input_names.len()).map(|i| format!("${i}")).collect();
        if let Some(f) = &self.filter {
            e.details.push(("Filter".into(), f.to_sql(&refs)));
        }
        if let Some(t) = &self.targets {
            for (x, _) in t {
                e.push_output(x.to_sql(&refs));
            }
            if t.is_empty() {
                e.details.push((crate::instrument::EMPTY_TLIST.into(), String::new()));
            }
        }
    }
}

/// PostgreSQL's Result with a constant-false one-time filter (ExecResult checks
/// `resconstantqual` once, then returns no tuple): the plan of a dummy relation.
#[derive(Clone)]
pub struct EmptyResultState {
    names: Vec<String>,
    /// Over a join's relations: several range-table entries (EXPLAIN qualifies).
    joined: bool,
}

impl EmptyResultState {
    pub fn init(names: Vec<String>, joined: bool) -> Self {
        EmptyResultState { names, joined }
    }
}

impl ExecNode for EmptyResultState {
    fn exec_next(&mut self, _es: &mut EState) -> ExecResult<ExecStatus> {
        Ok(ExecStatus::Done)
    }
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        Ok(())
    }
    fn exec_end(&mut self, _es: &mut EState) {}
    fn slot(&self) -> &[Datum] {
        &[]
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Result".into();
        for n in &self.names {
            e.push_output(n.clone());
        }
        e.details.push(("One-Time Filter".into(), "false".into()));
        if self.joined {
            e.details.push(("Qualify".into(), String::new()));
        }
    }
}

/// PostgreSQL's Result with a one-time filter over a child (nodeResult.c's
/// `resconstantqual`): the filter reads no column (a stable function, a generic plan's
/// parameter, InitPlan values); it is checked at the first call (running its
/// InitPlans, `node_subplan`), and when it is not true the node is done without ever
/// calling its child. A rescan checks it again.
#[derive(Clone)]
pub struct GatingResultState {
    children: Vec<PlanState>,
    qual: Expr,
    input_names: Vec<String>,
    /// None until checked (ExecResult's `rs_checkqual`), then whether rows may pass.
    passed: Option<bool>,
    slot: Vec<Datum>,
}

impl GatingResultState {
    pub fn init(child: PlanState, qual: Expr, input_names: Vec<String>) -> Self {
        GatingResultState { children: vec![child], qual, input_names, passed: None, slot: Vec::new() }
    }
}

impl ExecNode for GatingResultState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.passed.is_none() {
            let Some(bound) = super::node_subplan::bind_params(es, &self.qual)? else {
                return Ok(ExecStatus::Wait);
            };
            self.passed = Some(bound.qual(&[])?);
        }
        if self.passed != Some(true) {
            return Ok(ExecStatus::Done);
        }
        let status = super::exec_proc_node(&mut self.children[0], es)?;
        if status == ExecStatus::Row {
            copy_row(&mut self.slot, self.children[0].node.slot());
        }
        Ok(status)
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.passed = None;
        exec_rescan(&mut self.children[0], es)
    }
    fn exec_end(&mut self, es: &mut EState) {
        super::exec_end_node(&mut self.children[0], es);
    }
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn children(&self) -> &[PlanState] {
        &self.children
    }
    /// ExecSetTupleBound passes through a Result with an input: a one-time filter that
    /// fails asks its input for nothing, one that holds changes nothing.
    fn set_tuple_bound(&mut self, bound: Option<u64>) {
        self.children[0].node.set_tuple_bound(bound);
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Result".into();
        let refs: Vec<String> = (0..self.input_names.len()).map(|i| format!("${i}")).collect();
        for r in &refs {
            e.push_output(r.clone());
        }
        e.details.push(("One-Time Filter".into(), self.qual.to_sql(&refs)));
    }
}
