//! BitmapHeapScan over a BitmapIndexScan (nodeBitmapHeapscan.c, nodeBitmapIndexscan.c):
//! the index is walked once for every entry satisfying the Index Cond, their row
//! numbers collected in a bitmap (`MultiExecBitmapIndexScan`: the whole set before
//! the first row), then the heap is read in physical order, each page holding a
//! matching row once. Never waits.
//!
//! Protocol: the Bitmap Heap Scan, at its first call, pulls every row of its child
//! (the Bitmap Index Scan returns one row per matching entry: its row number), sorts
//! them by row number (the bitmap's page order) and counts the distinct heap pages
//! (`Heap Blocks: exact=N`, every page exact: the bitmap never outgrows `work_mem`
//! here); then it returns the rows one by one. A rescan starts both again.
//!
//! Invariants:
//! - The rows are those whose key satisfies the Index Cond, each once, in row order
//!   (heap order), whatever the index's order.
//! - The page of a row is the one `plan::stats::heap_blocks` lays it on: the pages
//!   ANALYZE and the cost model count for the table, so `Heap Blocks` agrees with the
//!   `relpages` the plan was costed with.
//! - `Recheck Cond` (the index's conditions) is printed, as PostgreSQL prints it, but
//!   evaluated on no row: with exact pages PostgreSQL rechecks none either.
//!
//! Where it departs from PostgreSQL: the Bitmap Index Scan hands its row numbers up
//! one at a time through the usual `exec_proc_node` (so EXPLAIN's rows for it are the
//! entries it found, as PostgreSQL's `nodeBitmapIndexscan` counts them) instead of
//! one TIDBitmap by `MultiExecProcNode`; no lossy pages, no prefetching
//! (`effective_io_concurrency`).

use super::node_indexscan::{cond_text, IndexCursor};
use super::{exec_proc_node, exec_rescan, ExecNode, ExecStatus, InitContext, PlanState};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{Expr, ScanName, SqlType};
use crate::types::{Column, Datum, Table};
use std::rc::Rc;

#[derive(Clone)]
pub struct BitmapIndexScanState {
    cursor: IndexCursor,
    /// The Index Cond over the heap scan's columns, for EXPLAIN.
    cond: Vec<Expr>,
    ncols: usize,
    slot: Vec<Datum>,
}

impl BitmapIndexScanState {
    /// `quals` are over the key alone (column 0); `cond` over the heap scan's
    /// `ncols` columns.
    pub fn init(
        name: &str,
        column: usize,
        quals: &[Expr],
        cond: &[Expr],
        ncols: usize,
        ctx: &InitContext,
    ) -> Result<BitmapIndexScanState, String> {
        let table = ctx.catalog.get(name).ok_or_else(|| format!("relation \"{name}\" does not exist"))?;
        let key =
            table.columns.get(column).ok_or_else(|| format!("relation \"{name}\" has no column {}", column + 1))?;
        let cursor = IndexCursor::init(name, std::slice::from_ref(key), column, false, quals, None, ctx)?;
        Ok(BitmapIndexScanState { cursor, cond: cond.to_vec(), ncols, slot: Vec::new() })
    }
}

impl ExecNode for BitmapIndexScanState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        Ok(match self.cursor.next(es)? {
            Some(row_no) => {
                self.slot.clear();
                self.slot.push(Datum::Int(row_no as i64));
                ExecStatus::Row
            }
            None => ExecStatus::Done,
        })
    }
    fn exec_rescan(&mut self, _es: &mut EState) -> ExecResult<()> {
        self.cursor.rescan();
        Ok(())
    }
    fn exec_end(&mut self, _es: &mut EState) {}
    fn slot(&self) -> &[Datum] {
        &self.slot
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Bitmap Index Scan".into();
        e.relation = Some(self.cursor.index_name());
        let refs: Vec<String> = (0..self.ncols).map(|i| format!("${i}")).collect();
        if let Some(c) = cond_text(&self.cond, &refs) {
            e.details.push(("Index Cond".into(), c));
        }
    }
}

#[derive(Clone)]
pub struct BitmapHeapScanState {
    table: Rc<Table>,
    projection: Vec<usize>,
    recheck: Vec<Expr>,
    /// Each row's heap block.
    blocks: Rc<Vec<u32>>,
    children: Vec<PlanState>,
    /// The bitmap: matching row numbers in heap order, once built.
    bitmap: Option<Vec<usize>>,
    next: usize,
    /// Distinct heap pages read, over every loop (`exact_pages`).
    exact_pages: u64,
    slot: Vec<Datum>,
    name: Option<ScanName>,
}

impl BitmapHeapScanState {
    pub fn init(
        name: &str,
        columns: &[Column],
        recheck: &[Expr],
        types: &[SqlType],
        child: PlanState,
        ctx: &InitContext,
    ) -> Result<BitmapHeapScanState, String> {
        let table = ctx.catalog.get(name).ok_or_else(|| format!("relation \"{name}\" does not exist"))?.clone();
        let projection = columns
            .iter()
            .map(|c| {
                table
                    .column_index(&c.name)
                    .ok_or_else(|| format!("column \"{}\" of relation \"{name}\" does not exist", c.name))
            })
            .collect::<Result<Vec<usize>, String>>()?;
        if types.len() != table.ncols() {
            return Err(format!("internal error: {} column types for relation \"{name}\"", types.len()));
        }
        let blocks = Rc::new(crate::plan::stats::heap_blocks(types, (0..table.nrows()).map(|i| table.row(i))));
        Ok(BitmapHeapScanState {
            table,
            projection,
            recheck: recheck.to_vec(),
            blocks,
            children: vec![child],
            bitmap: None,
            next: 0,
            exact_pages: 0,
            slot: Vec::new(),
            name: None,
        })
    }

    pub fn named(mut self, name: Option<ScanName>) -> BitmapHeapScanState {
        self.name = name;
        self
    }

    /// MultiExecBitmapIndexScan, then the bitmap's pages in order (tbm_iterate).
    fn build_bitmap(&mut self, es: &mut EState) -> ExecResult<()> {
        let mut rows = Vec::new();
        loop {
            match exec_proc_node(&mut self.children[0], es)? {
                ExecStatus::Row => match self.children[0].node.slot().first() {
                    Some(Datum::Int(n)) => rows.push(*n as usize),
                    _ => {}
                },
                ExecStatus::Done => break,
                // An index scan never waits; were it to, the bitmap would be half built.
                ExecStatus::Wait => {
                    return Err(crate::executor::estate::ExecError::Internal("a Bitmap Index Scan waited".into()))
                }
            }
        }
        rows.sort_unstable();
        rows.dedup();
        let mut pages: Vec<u32> = rows.iter().filter_map(|&r| self.blocks.get(r).copied()).collect();
        pages.dedup();
        self.exact_pages += pages.len() as u64;
        self.bitmap = Some(rows);
        Ok(())
    }
}

impl ExecNode for BitmapHeapScanState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        if self.bitmap.is_none() {
            self.build_bitmap(es)?;
        }
        let Some(&row_no) = self.bitmap.as_ref().and_then(|b| b.get(self.next)) else {
            return Ok(ExecStatus::Done);
        };
        self.next += 1;
        es.clock.charge(es.cost.seqscan_row_ns * 2);
        let row = self.table.row(row_no);
        self.slot.clear();
        self.slot.extend(self.projection.iter().map(|&c| row[c].clone()));
        Ok(ExecStatus::Row)
    }
    fn exec_rescan(&mut self, es: &mut EState) -> ExecResult<()> {
        self.bitmap = None;
        self.next = 0;
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
        e.node_type = "Bitmap Heap Scan".into();
        e.relation = Some(self.table.name.clone());
        self.projection.iter().for_each(|&c| e.push_output(self.table.columns[c].name.clone()));
        super::explain_scan_name(e, self.name.as_ref());
        // A bitmap scan that returns no column keeps its empty target list.
        if !self.projection.is_empty() {
            super::explain_physical_tlist(e, self.name.as_ref(), self.table.columns.iter().map(|c| c.name.as_str()));
        }
        let refs: Vec<String> = (0..self.projection.len()).map(|i| format!("${i}")).collect();
        if let Some(c) = cond_text(&self.recheck, &refs) {
            e.details.push(("Recheck Cond".into(), c));
        }
        if self.exact_pages > 0 {
            e.details.push(("Heap Blocks".into(), format!("exact={}", self.exact_pages)));
        }
    }
}
