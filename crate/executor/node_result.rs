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

use super::async_through::{through_requestee, AsyncInputs, Through};
use super::{copy_row, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::Expr;
use crate::types::Datum;

#[derive(Clone)]
pub struct ResultState {
    children: Vec<PlanState>,
    /// Requests to async children (`async_through_nodes`; none in pg15).
    inputs: AsyncInputs,
    filter: Option<Expr>,
    targets: Option<Vec<(Expr, String)>>,
    input_names: Vec<String>,
    slot: Vec<Datum>,
}

impl ResultState {
    pub fn init(
        child: PlanState,
        filter: Option<Expr>,
        targets: Option<Vec<(Expr, String)>>,
        input_names: Vec<String>,
    ) -> Self {
        ResultState {
            children: vec![child],
            inputs: AsyncInputs::default(),
            filter,
            targets,
            input_names,
            slot: Vec::new(),
        }
    }
}

impl Through for ResultState {
    fn inputs(&mut self) -> (&mut AsyncInputs, &mut [PlanState]) {
        (&mut self.inputs, &mut self.children)
    }
}

impl ExecNode for ResultState {
    through_requestee!();

    fn init_async(&mut self, id: usize, plans: &[&crate::plan::Plan], es: &mut EState) {
        self.inputs = AsyncInputs::init(id, &mut self.children, plans, es);
    }
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        loop {
            match self.inputs.next(&mut self.children, 0, es)? {
                ExecStatus::Row => {}
                other => return Ok(other),
            }
            es.clock.charge(es.cost.result_row_ns);
            let row = self.children[0].node.slot();
            if let Some(f) = &self.filter {
                if !f.eval(row).is_true() {
                    continue;
                }
            }
            match &self.targets {
                None => copy_row(&mut self.slot, row),
                Some(t) => {
                    self.slot.clear();
                    self.slot.extend(t.iter().map(|(e, _)| e.eval(row)));
                }
            }
            return Ok(ExecStatus::Row);
        }
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
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
        }
    }
}

/// PostgreSQL's Result with a constant-false one-time filter (ExecResult checks
/// `resconstantqual` once, then returns no tuple): the plan of a dummy relation.
#[derive(Clone)]
pub struct EmptyResultState {
    names: Vec<String>,
}

impl EmptyResultState {
    pub fn init(names: Vec<String>) -> Self {
        EmptyResultState { names }
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
    }
}

/// `ExecResult` with a `resconstantqual`: checks the one-time filter once, then passes
/// the child's rows through (or none).
#[derive(Clone)]
pub struct GatingResultState {
    children: Vec<PlanState>,
    qual: Expr,
    input_width: usize,
    /// None before the first call; then whether the qual held.
    passed: Option<bool>,
    slot: Vec<Datum>,
}

impl GatingResultState {
    pub fn init(child: PlanState, qual: Expr, input_width: usize) -> Self {
        GatingResultState { children: vec![child], qual, input_width, passed: None, slot: Vec::new() }
    }
}

impl ExecNode for GatingResultState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        // rs_checkqual: the qual reads no column, so it is evaluated over no row.
        let passed = *self.passed.get_or_insert_with(|| self.qual.eval(&[]).is_true());
        if !passed {
            return Ok(ExecStatus::Done);
        }
        match super::exec_proc_node(&mut self.children[0], es)? {
            ExecStatus::Row => {
                copy_row(&mut self.slot, self.children[0].node.slot());
                Ok(ExecStatus::Row)
            }
            other => Ok(other),
        }
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
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Result".into();
        let refs: Vec<String> = (0..self.input_width).map(|i| format!("${i}")).collect();
        for r in &refs {
            e.push_output(r.clone());
        }
        e.details.push(("One-Time Filter".into(), self.qual.to_sql(&refs)));
    }
}
