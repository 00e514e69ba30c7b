//! Function Scan (nodeFunctionscan.c) of `generate_series(start, stop, step)` over
//! integers: returns `start`, `start + step`, … while not past `stop`
//! (`generate_series_step_int4`).
//!
//! Protocol: each call returns the next value or the end; it never waits (no I/O).
//! Invariants: `step` is not zero (the planner refused it); the next value is kept in
//! the node, so a rescan starts again from `start`; arithmetic past i64 ends the series
//! instead of wrapping.
//!
//! Where it departs from PostgreSQL: PostgreSQL materializes a function's result in a
//! tuplestore first (`ExecMakeTableFunctionResult`); generate_series' values need no
//! store, so they are made one call at a time.

use super::{ExecNode, ExecStatus};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::types::Datum;

#[derive(Clone)]
pub struct FunctionScanState {
    start: i64,
    stop: i64,
    step: i64,
    next: Option<i64>,
    alias: Option<String>,
    column: String,
    slot: Vec<Datum>,
}

impl FunctionScanState {
    pub fn init(start: i64, stop: i64, step: i64, alias: Option<String>, column: String) -> Self {
        FunctionScanState { start, stop, step, next: Some(start), alias, column, slot: Vec::new() }
    }
}

impl ExecNode for FunctionScanState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        let Some(v) = self.next else { return Ok(ExecStatus::Done) };
        let within = if self.step > 0 { v <= self.stop } else { v >= self.stop };
        if !within {
            self.next = None;
            return Ok(ExecStatus::Done);
        }
        es.clock.charge(es.cost.result_row_ns);
        self.next = v.checked_add(self.step);
        self.slot.clear();
        self.slot.push(Datum::Int(v));
        Ok(ExecStatus::Row)
    }
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        self.next = Some(self.start);
        Ok(())
    }
    fn exec_end(&mut self, _es: &mut EState) {}
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Function Scan".into();
        e.relation = Some("generate_series".into());
        e.details.push(("Schema".into(), "pg_catalog".into()));
        if let Some(a) = &self.alias {
            e.set_alias(a.clone());
        }
        e.push_output(self.column.clone());
        // Each argument an int4 Const as get_const_expr prints one: a negative one
        // quoted and labelled (`'-2'::integer`).
        let arg = |v: i64| crate::plan::const_sql(&Datum::Int(v), true);
        let step = if self.step == 1 { String::new() } else { format!(", {}", arg(self.step)) };
        e.details
            .push(("Function Call".into(), format!("generate_series({}, {}{step})", arg(self.start), arg(self.stop))));
    }
}
