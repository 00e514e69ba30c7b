//! SeqScan over an in-memory table (nodeSeqscan.c). Never waits.
//!
//! The plan lists the columns the scan returns (its target list); when that is fewer
//! than the table has, only those are copied into the slot, so a `sum(a)` never
//! touches the text column's heap memory.
//!
//! An Aggregate above reads it a page at a time (`exec_page`, the executor's page
//! mode): up to `ROWS_PER_PAGE` stored rows handed over in place, with the target
//! list's column numbers instead of a copy into the slot.
//!
//! Invariants:
//! - Rows come out in storage order, each once, row by row or a page at a time;
//!   rescan starts again at row 0.
//! - A page is charged on the clock as its rows one by one would be.
//! - The table is shared and not changed during a run (`Rc<Table>`).
//! - A missing table or column is an error at init (ExecInitNode), not at the first row.
//!
//! Where it departs from PostgreSQL: nodeSeqscan.c reads heap pages through the table
//! access method, checks each tuple's visibility and evaluates its quals itself
//! (`ExecScan`); here a table is a flat vector of values, every row is visible, and a
//! filter is a Result above. A PostgreSQL heap scan of a large table may also start
//! mid-table (`synchronize_seqscans`); this one always starts at row 0.

use super::{copy_row, ExecNode, ExecStatus, InitContext, Page};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::ScanName;
use crate::types::{Column, Datum, Table};
use std::rc::Rc;

/// Rows per page in page mode: about what an 8 kB heap page of a narrow table holds
/// (PostgreSQL's `MaxHeapTuplesPerPage` is 291); enough that the per-page work of the
/// dispatch is a small part of a row's cost.
const ROWS_PER_PAGE: usize = 256;

#[derive(Clone)]
pub struct SeqScanState {
    table: Rc<Table>,
    /// Table columns to return, in order; None when it is all of them.
    projection: Option<Vec<usize>>,
    next_row: usize,
    slot: Vec<Datum>,
    /// How EXPLAIN names the scan of a partition.
    name: Option<ScanName>,
}

impl SeqScanState {
    pub fn named(mut self, name: Option<ScanName>) -> SeqScanState {
        self.name = name;
        self
    }

    pub fn init(name: &str, columns: &[Column], ctx: &InitContext) -> Result<SeqScanState, String> {
        let table = ctx.catalog.get(name).ok_or_else(|| format!("relation \"{name}\" does not exist"))?.clone();
        let wanted = columns
            .iter()
            .map(|c| {
                table
                    .column_index(&c.name)
                    .ok_or_else(|| format!("column \"{}\" of relation \"{name}\" does not exist", c.name))
            })
            .collect::<Result<Vec<usize>, String>>()?;
        let projection = (wanted != (0..table.ncols()).collect::<Vec<_>>()).then_some(wanted);
        let slot = Vec::with_capacity(table.ncols());
        Ok(SeqScanState { table, projection, next_row: 0, slot, name: None })
    }
}

impl ExecNode for SeqScanState {
    #[inline]
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.next_row >= self.table.nrows() {
            return Ok(ExecStatus::Done);
        }
        es.clock.charge(es.cost.seqscan_row_ns);
        let row = self.table.row(self.next_row);
        match &self.projection {
            None => copy_row(&mut self.slot, row),
            Some(cols) => {
                // A push per column, inline (`extend` over the map was a call per
                // row); the slot keeps its capacity from row to row.
                self.slot.clear();
                for &c in cols {
                    self.slot.push(row[c].clone());
                }
            }
        }
        self.next_row += 1;
        Ok(ExecStatus::Row)
    }
    fn has_page_mode(&self) -> bool {
        true
    }
    fn exec_page(&mut self, es: &mut EState) -> Page<'_> {
        let width = self.table.ncols();
        let start = self.next_row.min(self.table.nrows());
        let end = (start + ROWS_PER_PAGE).min(self.table.nrows());
        let n = (end - start) as u64;
        let mut first_row_at = 0;
        if n > 0 {
            // The first row's charge, then the others': its call would have returned
            // at `first_row_at` (the node's startup time).
            es.clock.charge(es.cost.seqscan_row_ns);
            first_row_at = es.timing_now();
            es.clock.charge(es.cost.seqscan_row_ns * (n - 1));
        }
        self.next_row = end;
        Page {
            rows: &self.table.data[start * width..end * width],
            width,
            columns: self.projection.as_deref(),
            first_row_at,
        }
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
        match &self.projection {
            None => self.table.columns.iter().for_each(|c| e.push_output(c.name.clone())),
            Some(cols) => cols.iter().for_each(|&c| e.push_output(self.table.columns[c].name.clone())),
        }
        super::explain_scan_name(e, self.name.as_ref());
        super::explain_physical_tlist(e, self.name.as_ref(), self.table.columns.iter().map(|c| c.name.as_str()));
    }
}
