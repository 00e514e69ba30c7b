//! IndexScan (nodeIndexscan.c): returns a table's rows in the order of one of its
//! indexes, forwards or backwards, those whose index entry satisfies the Index Cond.
//! Never waits. The entry walk is [`IndexCursor`], which the Index Only Scan
//! (`node_indexonlyscan`) shares.
//!
//! Invariants:
//! - Every row of the table whose key satisfies the Index Cond comes out exactly
//!   once, in the index's order (ascending, NULLs last, equal keys by row number) or
//!   that order reversed (`Index Scan Backward`, NULLs first): the null orders of
//!   PostgreSQL's `ASC` and `DESC`.
//! - The table is shared and not changed during a run (`Rc<Table>`), so the row
//!   numbers in its index stay valid for the whole scan.
//! - A missing table, column or index is an error at init (ExecInitNode), not at the
//!   first row.
//! - Rescan starts again at the first entry.
//! - A parameterized scan (a Nested Loop's inner side) reads, at each pass, only the
//!   entries whose key equals `EState::nest_params[n]` as it is at the pass's first
//!   entry (a binary search of the index, as `_bt_first` descends to them); a NULL
//!   parameter finds none.
//!
//! Where it departs from PostgreSQL: nodeIndexscan.c turns the Index Cond into scan
//! keys and descends the B-tree to the first entry that can match (`_bt_first`),
//! stopping at the first that cannot (`_bt_checkkeys`); here an index is the table's
//! row numbers sorted by one column (`types::Index`), walked from one end, and the
//! Index Cond is evaluated on each entry (an entry that fails costs a little, a row
//! fetched costs twice a SeqScan row). Every heap tuple is visible. Further quals
//! (`Filter:`) are a Result above, as for a Seq Scan.

use super::{ExecNode, ExecStatus, InitContext};
use crate::executor::estate::{EState, ExecResult};
use crate::instrument::ExplainNode;
use crate::plan::{Expr, NestParam, ScanName};
use crate::types::{Column, Datum, Table};
use std::rc::Rc;

/// A walk over one index's entries in order (or reversed), returning the row numbers
/// whose key satisfies the quals; the row's scan columns are left in `slot`.
#[derive(Clone)]
pub struct IndexCursor {
    pub table: Rc<Table>,
    index: usize,
    desc: bool,
    /// Table columns the scan returns, in order.
    pub projection: Vec<usize>,
    /// The Index Cond, over the scan's columns.
    quals: Vec<Expr>,
    /// A parameterized scan: the Nested Loop's parameter the key must equal, and the
    /// key's position among the scan's columns.
    nest_param: Option<(NestParam, usize)>,
    /// This pass's entries, `[start, end)` of the index's order (the key equal to the
    /// parameter), fixed at the pass's first entry; the whole index without one.
    range: Option<(usize, usize)>,
    next: usize,
    pub slot: Vec<Datum>,
}

impl IndexCursor {
    pub fn init(
        name: &str,
        columns: &[Column],
        column: usize,
        desc: bool,
        quals: &[Expr],
        nest_param: Option<&NestParam>,
        ctx: &InitContext,
    ) -> Result<IndexCursor, String> {
        let table = ctx.catalog.get(name).ok_or_else(|| format!("relation \"{name}\" does not exist"))?.clone();
        let index = table
            .indexes
            .iter()
            .position(|i| i.column == column)
            .ok_or_else(|| format!("relation \"{name}\" has no index on column {}", column + 1))?;
        let projection = columns
            .iter()
            .map(|c| {
                table
                    .column_index(&c.name)
                    .ok_or_else(|| format!("column \"{}\" of relation \"{name}\" does not exist", c.name))
            })
            .collect::<Result<Vec<usize>, String>>()?;
        let nest_param = match nest_param {
            Some(p) => {
                let at = projection.iter().position(|&c| c == column);
                let at =
                    at.ok_or_else(|| format!("internal error: a parameterized scan of \"{name}\" without its key"))?;
                Some((p.clone(), at))
            }
            None => None,
        };
        Ok(IndexCursor {
            table,
            index,
            desc,
            projection,
            quals: quals.to_vec(),
            nest_param,
            range: None,
            next: 0,
            slot: Vec::new(),
        })
    }

    /// The entries this pass reads: with a parameter, those whose key equals its value
    /// (`_bt_first`'s descent to the first, `_bt_checkkeys` stopping after the last;
    /// none for NULL, which `=` never matches); else all of them.
    fn pass_range(&self, es: &EState) -> (usize, usize) {
        let index = &self.table.indexes[self.index];
        let Some((p, _)) = &self.nest_param else { return (0, index.order.len()) };
        let value = es.nest_params.get(p.no).cloned().unwrap_or(Datum::Null);
        if value.is_null() {
            return (0, 0);
        }
        let key = |r: &u32| &self.table.row(*r as usize)[index.column];
        let start = index.order.partition_point(|r| key(r) < &value);
        let end = index.order.partition_point(|r| key(r) <= &value);
        (start, end)
    }

    /// The next entry satisfying the Index Cond: its row number, its columns in `slot`.
    pub fn next(&mut self, es: &mut EState) -> Result<Option<usize>, crate::plan::eval::EvalError> {
        let (start, end) = match self.range {
            Some(r) => r,
            None => *self.range.insert(self.pass_range(es)),
        };
        let order = &self.table.indexes[self.index].order;
        while start + self.next < end {
            let pos = if self.desc { end - 1 - self.next } else { start + self.next };
            self.next += 1;
            let row_no = order[pos] as usize;
            let row = self.table.row(row_no);
            self.slot.clear();
            self.slot.extend(self.projection.iter().map(|&c| row[c].clone()));
            if qual_all(&self.quals, &self.slot)? {
                es.clock.charge(es.cost.seqscan_row_ns * 2);
                return Ok(Some(row_no));
            }
            es.clock.charge(es.cost.seqscan_row_ns / 2);
        }
        Ok(None)
    }

    pub fn rescan(&mut self) {
        self.next = 0;
        self.range = None;
    }

    /// The index's name (its `CREATE INDEX`'s, or its constraint's: `t_pkey`).
    pub fn index_name(&self) -> String {
        self.table.indexes[self.index].name.clone()
    }

    /// The Index Cond over `$N` (the scan's N-th column), as `instrument::explain`
    /// resolves a scan's conditions.
    pub fn cond_text(&self) -> Option<String> {
        let refs: Vec<String> = (0..self.projection.len()).map(|i| format!("${i}")).collect();
        let own = cond_text(&self.quals, &refs);
        // The join clause first, as PostgreSQL's parameterized path lists it.
        let Some((p, at)) = &self.nest_param else { return own };
        let param = format!("(${at} = {})", p.outer);
        Some(match (own, self.quals.len()) {
            (None, _) => param,
            (Some(o), 1) => format!("({param} AND {o})"),
            (Some(o), _) => format!("({param} AND {})", &o[1..o.len() - 1]),
        })
    }

    /// The scan's columns as EXPLAIN's Output.
    pub fn explain_output(&self, e: &mut ExplainNode) {
        self.projection.iter().for_each(|&c| e.push_output(self.table.columns[c].name.clone()));
    }
}

/// Conditions ANDed as EXPLAIN prints them: one in its own parentheses, several
/// inside one more pair.
pub fn cond_text(quals: &[Expr], refs: &[String]) -> Option<String> {
    match quals {
        [] => None,
        [q] => Some(q.to_sql(refs)),
        qs => Some(format!("({})", qs.iter().map(|q| q.to_sql(refs)).collect::<Vec<_>>().join(" AND "))),
    }
}

#[derive(Clone)]
pub struct IndexScanState {
    cursor: IndexCursor,
    desc: bool,
    name: Option<ScanName>,
}

impl IndexScanState {
    pub fn init(
        name: &str,
        columns: &[Column],
        column: usize,
        desc: bool,
        (quals, nest_param): (&[Expr], Option<&NestParam>),
        ctx: &InitContext,
    ) -> Result<IndexScanState, String> {
        let cursor = IndexCursor::init(name, columns, column, desc, quals, nest_param, ctx)?;
        Ok(IndexScanState { cursor, desc, name: None })
    }

    pub fn named(mut self, name: Option<ScanName>) -> IndexScanState {
        self.name = name;
        self
    }
}

impl ExecNode for IndexScanState {
    fn exec_next(&mut self, es: &mut EState) -> ExecResult<ExecStatus> {
        Ok(match self.cursor.next(es)? {
            Some(_) => ExecStatus::Row,
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
        e.node_type = "Index Scan".into();
        e.relation = Some(self.cursor.table.name.clone());
        explain_index(e, &self.cursor, self.desc, self.name.as_ref());
        let columns = self.cursor.table.columns.iter().map(|c| c.name.as_str());
        super::explain_physical_tlist(e, self.name.as_ref(), columns);
    }
}

/// What an Index Scan and an Index Only Scan tell EXPLAIN alike: the scan direction
/// and index name (TEXT prints them in the node's title, `Index Scan Backward using
/// t_c_idx on t`), the Output, and the Index Cond.
pub fn explain_index(e: &mut ExplainNode, cursor: &IndexCursor, desc: bool, name: Option<&ScanName>) {
    if desc {
        e.details.push(("Scan Direction".into(), "Backward".into()));
    }
    e.details.push(("Index Name".into(), cursor.index_name()));
    cursor.explain_output(e);
    super::explain_scan_name(e, name);
    if let Some(c) = cursor.cond_text() {
        e.details.push(("Index Cond".into(), c));
    }
}

/// Every qual true over `row` (`ExecQual` of an implicit AND); an error is raised.
pub fn qual_all(quals: &[crate::plan::Expr], row: &[Datum]) -> Result<bool, crate::plan::eval::EvalError> {
    for q in quals {
        if !q.qual(row)? {
            return Ok(false);
        }
    }
    Ok(true)
}
