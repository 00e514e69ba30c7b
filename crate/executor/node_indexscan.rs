//! IndexScan (nodeIndexscan.c, without quals): returns a table's rows in the order of
//! one of its indexes, forwards or backwards. Never waits.
//!
//! Invariants:
//! - Every row of the table comes out exactly once, in the index's order (ascending,
//!   NULLs last, equal keys by row number) or that order reversed (`Scan Direction:
//!   Backward`, NULLs first): the null orders of PostgreSQL's `ASC` and `DESC`.
//! - The table is shared and not changed during a run (`Rc<Table>`), so the row
//!   numbers in its index stay valid for the whole scan.
//! - A missing table or index is an error at init (ExecInitNode), not at the first row.
//! - Rescan starts again at the first entry.
//!
//! Where it departs from PostgreSQL: nodeIndexscan.c descends a B-tree with index
//! quals (scan keys, runtime keys), fetches each heap tuple and checks its visibility,
//! and evaluates the remaining quals itself; here an index is the table's row numbers
//! sorted by one column (`types::Index`), read from one end, with no quals (a filter
//! is a Result above). Its cost is charged as twice a SeqScan row.

use super::{copy_row, ExecNode, ExecStatus, InitContext};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::types::{Datum, Table};
use std::rc::Rc;

#[derive(Clone)]
pub struct IndexScanState {
    table: Rc<Table>,
    index: usize,
    desc: bool,
    next: usize,
    slot: Vec<Datum>,
}

impl IndexScanState {
    pub fn init(name: &str, column: usize, desc: bool, ctx: &InitContext) -> Result<IndexScanState, String> {
        let table = ctx.catalog.get(name).ok_or_else(|| format!("relation \"{name}\" does not exist"))?.clone();
        let index = table
            .indexes
            .iter()
            .position(|i| i.column == column)
            .ok_or_else(|| format!("relation \"{name}\" has no index on column {}", column + 1))?;
        Ok(IndexScanState { table, index, desc, next: 0, slot: Vec::new() })
    }
}

impl ExecNode for IndexScanState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        let order = &self.table.indexes[self.index].order;
        if self.next >= order.len() {
            return Ok(ExecStatus::Done);
        }
        let pos = if self.desc { order.len() - 1 - self.next } else { self.next };
        es.clock.charge(es.cost.seqscan_row_ns * 2);
        copy_row(&mut self.slot, self.table.row(order[pos] as usize));
        self.next += 1;
        Ok(ExecStatus::Row)
    }
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        self.next = 0;
        Ok(())
    }
    fn exec_end(&mut self, _es: &mut EState) {}
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Index Scan".into();
        e.relation = Some(self.table.name.clone());
        // Every column of the table, in order (the node copies whole rows).
        self.table.columns.iter().for_each(|c| e.push_output(c.name.clone()));
        if self.desc {
            e.details.push(("Scan Direction".into(), "Backward".into()));
        }
    }
}
