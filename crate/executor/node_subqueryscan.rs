//! Subquery Scan (nodeSubqueryscan.c): a set operation's branch read as a subquery
//! (`Subquery Scan on "*SELECT* 1"`), projecting the branch's rows through its target
//! list: the branch's columns (cast to the set operation's column types where the
//! branch's differ, `generate_setop_tlist`), and for INTERSECT / EXCEPT the flag
//! constant that tells SetOp which input a row came from (`generate_nonunion_paths`
//! adds it).
//!
//! Protocol: one child row in, one row out; a Wait from the child passes up and the
//! node keeps nothing between calls, so the next call simply asks again.
//!
//! Invariants: the output has one value per target, evaluated over the child's row;
//! rescan is the child's. PostgreSQL removes a Subquery Scan that would only pass its
//! child's rows through (`trivial_subqueryscan` in setrefs.c); the planner builds one
//! only where PostgreSQL keeps it, so the node is never async-capable: a Foreign Scan
//! under it is not a direct child of the Append, and runs synchronously, as in
//! PostgreSQL 15 (`mark_async_capable_plan` accepts only a trivial subquery scan).

use super::{exec_proc_node, exec_rescan, ExecNode, ExecStatus, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{Expr, Func};
use crate::types::Datum;

#[derive(Clone)]
pub struct SubqueryScanState {
    children: Vec<PlanState>,
    alias: String,
    targets: Vec<(Expr, String)>,
    /// The subquery's column names: EXPLAIN's Output names them, qualified by the alias.
    input_names: Vec<String>,
    slot: Vec<Datum>,
}

impl SubqueryScanState {
    pub fn init(child: PlanState, alias: String, targets: Vec<(Expr, String)>, input_names: Vec<String>) -> Self {
        SubqueryScanState { children: vec![child], alias, targets, input_names, slot: Vec::new() }
    }
}

impl ExecNode for SubqueryScanState {
    /// ExecSubqueryScan (SubqueryNext, then the projection).
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        match exec_proc_node(&mut self.children[0], es)? {
            ExecStatus::Row => {}
            other => return Ok(other),
        }
        es.clock.charge(es.cost.result_row_ns);
        let row = self.children[0].node.slot();
        self.slot.clear();
        for (e, _) in &self.targets {
            self.slot.push(e.eval(row)?);
        }
        Ok(ExecStatus::Row)
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
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
    /// ExecSetTupleBound passes through a Subquery Scan without a qual (the sandbox's
    /// never has one): it returns one row per row of its subquery.
    fn set_tuple_bound(&mut self, bound: Option<u64>) {
        self.children[0].node.set_tuple_bound(bound);
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Subquery Scan".into();
        e.relation = Some(self.alias.clone());
        e.details.push(("Schema".into(), String::new()));
        for (i, (x, _)) in self.targets.iter().enumerate() {
            // A set operation's coercion is an implicit cast, which ruleutils.c shows
            // as its argument at the top of an Output entry (`"*SELECT* 1".id`); a node
            // above reads the cast, which it prints whole (IMPLICIT_CAST).
            let shown = match x {
                Expr::Func(Func::Cast { implicit: true, to, .. }, args) if args.len() == 1 => {
                    e.details.push((crate::instrument::IMPLICIT_CAST.into(), format!("{i}\t{}", to.name())));
                    &args[0]
                }
                x => x,
            };
            e.push_output(shown.to_sql(&self.input_names));
        }
    }
}
