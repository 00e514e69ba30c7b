//! IndexOnlyScan (nodeIndexonlyscan.c): an Index Scan whose every returned column is
//! the index's key, so the values come from the index entry; the heap is visited only
//! for a tuple on a page the visibility map does not mark all-visible, counted as
//! EXPLAIN ANALYZE's `Heap Fetches`. Never waits.
//!
//! Invariants:
//! - The rows, their order and the Index Cond are the Index Scan's (the entry walk is
//!   `node_indexscan::IndexCursor`).
//! - `Heap Fetches` counts every entry returned from a table not all-visible (never
//!   VACUUMed, or changed since: `Table::all_visible`), as on a PostgreSQL table only
//!   loaded and ANALYZEd, and none from a VACUUMed one; a rescan keeps counting (EXPLAIN prints the total over
//!   the loops, not divided by them: explain.c prints `instrument->ntuples2` as it is).
//!
//! Where it departs from PostgreSQL: the value is read from the table's row (the
//! sandbox's index holds row numbers only), which returns the same value the index
//! entry holds; PostgreSQL's `index_fetch_heap` is there only for visibility.

use super::node_indexscan::{explain_index, IndexCursor};
use super::{ExecNode, ExecStatus, InitContext};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{Expr, NestParam, ScanName};
use crate::types::{Column, Datum};

#[derive(Clone)]
pub struct IndexOnlyScanState {
    cursor: IndexCursor,
    desc: bool,
    name: Option<ScanName>,
    /// `ioss_HeapFetches`: entries whose tuple was fetched from the heap (all of them).
    heap_fetches: u64,
}

impl IndexOnlyScanState {
    pub fn init(
        name: &str,
        columns: &[Column],
        column: usize,
        desc: bool,
        (quals, nest_param): (&[Expr], Option<&NestParam>),
        ctx: &InitContext,
    ) -> Result<IndexOnlyScanState, String> {
        let cursor = IndexCursor::init(name, columns, column, desc, quals, nest_param, ctx)?;
        if cursor.projection.iter().any(|&c| c != column) {
            return Err(format!("internal error: an Index Only Scan of \"{name}\" returns a column its index lacks"));
        }
        Ok(IndexOnlyScanState { cursor, desc, name: None, heap_fetches: 0 })
    }

    pub fn named(mut self, name: Option<ScanName>) -> IndexOnlyScanState {
        self.name = name;
        self
    }
}

impl ExecNode for IndexOnlyScanState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        Ok(match self.cursor.next(es)? {
            Some(_) => {
                // VM_ALL_VISIBLE: every page after VACUUM (until a change), none before.
                if !self.cursor.table.all_visible {
                    self.heap_fetches += 1;
                }
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
        &self.cursor.slot
    }
    fn explain(&self, e: &mut ExplainNode) {
        e.node_type = "Index Only Scan".into();
        e.relation = Some(self.cursor.table.name.clone());
        explain_index(e, &self.cursor, self.desc, self.name.as_ref());
        // Printed under ANALYZE only (`instrument::explain`), as PostgreSQL does.
        e.details.push(("Heap Fetches".into(), self.heap_fetches.to_string()));
    }
}
