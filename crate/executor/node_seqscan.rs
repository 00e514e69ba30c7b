//! SeqScan over an in-memory table (nodeSeqscan.c). Never waits.

use super::{copy_row, ExecNode, ExecStatus, InitContext};
use crate::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::types::{Datum, Table};
use std::rc::Rc;

pub struct SeqScanState {
    table: Rc<Table>,
    next_row: usize,
    slot: Vec<Datum>,
}

impl SeqScanState {
    pub fn init(name: &str, ctx: &InitContext) -> Result<SeqScanState, String> {
        let table = ctx
            .catalog
            .get(name)
            .ok_or_else(|| format!("relation \"{name}\" does not exist"))?
            .clone();
        let slot = Vec::with_capacity(table.ncols());
        Ok(SeqScanState {
            table,
            next_row: 0,
            slot,
        })
    }
}

impl ExecNode for SeqScanState {
    #[inline]
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.next_row >= self.table.nrows() {
            return Ok(ExecStatus::Done);
        }
        es.clock.charge(es.cost.seqscan_row_ns);
        copy_row(&mut self.slot, self.table.row(self.next_row));
        self.next_row += 1;
        Ok(ExecStatus::Row)
    }
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        self.next_row = 0;
        Ok(())
    }
    fn exec_end(&mut self, _es: &mut EState) {}
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Seq Scan".into();
        e.relation = Some(self.table.name.clone());
    }
}
