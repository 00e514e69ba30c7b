//! The plan of an INSERT (PostgreSQL's `ModifyTable` plan node, createplan.c's
//! `make_modifytable`, with postgres_fdw's `postgresPlanForeignModify` for a foreign
//! target): the child plan computes the rows, ModifyTable stores them
//! (`executor::node_modifytable`).
//!
//! The target is a [`ResultRel`]: one of the coordinator's own tables, a foreign
//! table (postgres_fdw's foreign modify: the remote `INSERT … VALUES ($1, …)` and the
//! batch size, `postgresGetForeignModifyBatchSize`), or a partitioned table whose rows
//! are routed to their partition at run time (execPartition.c's tuple routing), each
//! partition itself a `ResultRel`.
//!
//! Invariants: `source` has one entry per target column; a partition's columns are
//! its parent's, in the same order (the planner refuses other partitions), so a routed
//! row needs no conversion.
//!
//! UPDATE and DELETE of a foreign table run as postgres_fdw's direct modify
//! ([`DirectModifyPlan`]): the child is a `Foreign Update` / `Foreign Delete` per
//! foreign table (an Append of them for a partitioned target), ModifyTable only drives
//! it and projects RETURNING; of a local table ([`ResultRel::LocalModify`]), the child
//! scans the rows to change and ModifyTable changes them.
//!
//! UPDATE and DELETE of a partitioned table ([`ResultRel::Partitions`]): a result
//! relation per partition, each a direct modify, a foreign modify or a local one.
//!
//! Where it departs from PostgreSQL: INSERT's RETURNING
//! only over the inserted row's columns; no triggers or column defaults (a column
//! the INSERT does not name is NULL).

use super::SqlType;
use crate::coordinator_sql::catalog::Bound;
use crate::coordinator_sql::statement::Strategy;
use serde::Serialize;

/// What ModifyTable does (PostgreSQL's `CmdType`): only INSERT runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CmdType {
    Insert,
    Update,
    Delete,
}

impl CmdType {
    /// EXPLAIN's word for it (`Insert on …`, `Foreign Update on …`).
    pub fn word(self) -> &'static str {
        match self {
            CmdType::Insert => "Insert",
            CmdType::Update => "Update",
            CmdType::Delete => "Delete",
        }
    }
}

/// postgres_fdw's direct modify (`postgresPlanDirectModify`): the Foreign Scan of a
/// foreign table (or partition) whose UPDATE or DELETE runs entirely on the remote
/// server, one statement, `Foreign Update on …` / `Foreign Delete on …`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DirectModifyPlan {
    pub operation: CmdType,
    /// The scan it replaces (relation, server, alias; its estimate).
    pub scan: super::ForeignScanPlan,
    /// `UPDATE public.t SET … WHERE …` / `DELETE FROM public.t WHERE …` (with
    /// `RETURNING cols` when the statement returns rows).
    pub sql: String,
    /// The columns the remote statement returns (deparse.c's `deparseReturningList`:
    /// those RETURNING uses, in the table's order); the node's rows.
    #[serde(skip)]
    pub returning: Vec<crate::types::Column>,
}

/// ModifyTable: `child`'s rows, each made a row of the target (`source`), stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModifyTablePlan {
    pub operation: CmdType,
    /// The target relation's name (EXPLAIN: `Insert on public.t`).
    pub relation: String,
    /// The target's alias (`UPDATE t AS x`; EXPLAIN: `Update on public.t x`).
    pub alias: Option<String>,
    pub target: ResultRel,
    /// The target's columns, in its order, with their types (values are cast to them).
    pub columns: Vec<(String, SqlType)>,
    /// For each target column, the child's output column it takes (None: NULL).
    pub source: Vec<Option<usize>>,
    pub child: super::Plan,
    /// RETURNING: expressions over the child's row (a direct modify's returned
    /// columns), with their names; empty without RETURNING.
    pub returning: Vec<(super::Expr, String)>,
    /// How EXPLAIN writes each RETURNING expression (`pt_1.b`, `(pt_1.b + 1)`).
    pub returning_sql: Vec<String>,
    /// INSERT … ON CONFLICT (`crate::plan::on_conflict`); None without one.
    pub on_conflict: Option<super::on_conflict::OnConflict>,
    /// The unique indexes of a local INSERT target, each checked for every row
    /// stored (a duplicate is PostgreSQL's unique violation); empty for others.
    pub unique: Vec<super::on_conflict::UniqueKey>,
}

/// Where ModifyTable puts a row (PostgreSQL's `ResultRelInfo`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum ResultRel {
    /// One of the coordinator's tables, with its unique indexes (a partition's are
    /// checked where the row is routed; a plain target's by ModifyTable's `unique`).
    Local { table: String, unique: Vec<super::on_conflict::UniqueKey> },
    /// A foreign table: postgres_fdw's foreign modify.
    Foreign(ForeignModify),
    /// A partitioned table: each row goes to the partition whose bound holds its key.
    Partitioned(PartitionRouting),
    /// The child modifies the rows itself (postgres_fdw's direct modify): ModifyTable
    /// only runs it.
    Direct,
    /// UPDATE (`sets`: each column's new value over the old row) or DELETE (no sets)
    /// of the coordinator's table: the child returns the rows to change, whole.
    /// `joined` (UPDATE … FROM, DELETE … USING): the child is the join, its row the
    /// target's columns then the SET values (`sets` read them there); a target row
    /// the join returns again is changed once, by its first (ExecUpdate's
    /// `TM_SelfModified`: a row this command already changed is skipped).
    LocalModify { table: String, sets: Vec<(usize, super::Expr)>, joined: bool },
    /// UPDATE or DELETE of a foreign table that is no direct modify: postgres_fdw's
    /// foreign modify, a row at a time by its ctid (`executor::fdw_modify`).
    ForeignRow(ForeignRowModify),
    /// UPDATE or DELETE of a partitioned table: one result relation per partition
    /// left after pruning, in the order of the child's members (an Append's, or the
    /// one scan left), each changed its own way (`coordinator_sql::partition_modify`).
    Partitions(Vec<PartitionTarget>),
}

/// One partition's result relation of a partitioned UPDATE or DELETE (PostgreSQL's
/// per-partition `ResultRelInfo`), with the EXPLAIN label ModifyTable prints for it
/// (`Foreign Update on public.pt1 pt_1`, `Update on public.pt3 pt_3`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionTarget {
    /// The partition (`public.pt1` in EXPLAIN).
    pub relation: String,
    /// Its alias in the statement (`pt_1`).
    pub alias: String,
    /// How its rows are changed, and what its member of the child returns.
    pub how: PartitionModify,
    /// The Output PostgreSQL prints for the member's scan (a local one: the new values,
    /// `pt_3.tableoid`, `pt_3.ctid`, …); empty for a direct modify.
    pub shown: Vec<String>,
}

/// How a partition of a partitioned UPDATE or DELETE is changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum PartitionModify {
    /// postgres_fdw's direct modify: the member is the `Foreign Update`, whose rows are
    /// the columns `returned` (table columns, in order) of the remote RETURNING.
    Direct { returned: Vec<usize> },
    /// A local partition: the member scans its rows, whole; each is changed in
    /// `es.local_changes` (`sets` over the old row, none for DELETE).
    Local { sets: Vec<(usize, super::Expr)> },
    /// postgres_fdw's foreign modify: the member scans the rows with their ctid, each
    /// changed by the prepared statement; it returns the columns `returned`.
    ForeignRow { modify: ForeignRowModify, returned: Vec<usize> },
}

/// postgres_fdw's foreign modify of UPDATE or DELETE (`postgresPlanForeignModify`,
/// deparse.c's `deparseUpdateSql` / `deparseDeleteSql`): the child is the scan of
/// the rows with their ctid (`RowMark`), and each of its rows is changed by the
/// prepared `UPDATE remote SET col = $2, … WHERE ctid = $1` / `DELETE FROM remote
/// WHERE ctid = $1`, its parameters the row's ctid, then the new values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForeignRowModify {
    pub relation: String,
    pub server: String,
    /// The remote statement, prepared once (`pgsql_fdw_prep_N`), executed a row.
    pub sql: String,
    /// The child's column holding the row's ctid.
    pub ctid_col: usize,
    /// UPDATE: the SET columns' new values over the child's row, in the columns'
    /// order (parameters `$2`, …), each with the column's type; empty for DELETE.
    pub sets: Vec<(super::Expr, SqlType)>,
    /// RETURNING: the columns the remote statement returns (none without), the rows
    /// RETURNING's expressions read.
    #[serde(skip)]
    pub returned: Vec<crate::types::Column>,
}

/// postgres_fdw's `PgFdwModifyState`, as planned (`postgresPlanForeignModify`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ForeignModify {
    pub relation: String,
    pub server: String,
    /// `public.t_remote` as deparse.c writes it.
    pub remote_table: String,
    /// The remote columns, in the order the INSERT names them (every column).
    pub columns: Vec<String>,
    /// Rows per remote INSERT (`batch_size`, table option over server option; 1, and
    /// always 1 with RETURNING).
    pub batch_size: usize,
    /// RETURNING: the columns the remote INSERT returns (deparseReturningList).
    pub returning: Vec<usize>,
    /// `ON CONFLICT DO NOTHING` shipped in the remote INSERT (deparseInsertSql's
    /// `doNothing`: the only ON CONFLICT postgres_fdw takes).
    pub do_nothing: bool,
}

impl ForeignModify {
    /// deparseInsertSql / rebuildInsertSql: the remote INSERT of `rows` rows, its
    /// parameters numbered row after row.
    pub fn insert_sql(&self, rows: usize) -> String {
        let cols: Vec<String> = self.columns.iter().map(|c| crate::sql_text::quote_identifier(c)).collect();
        let n = self.columns.len();
        let values: Vec<String> = (0..rows.max(1))
            .map(|r| {
                let params: Vec<String> = (1..=n).map(|i| format!("${}", r * n + i)).collect();
                format!("({})", params.join(", "))
            })
            .collect();
        let returning = if self.returning.is_empty() {
            String::new()
        } else {
            let r: Vec<String> =
                self.returning.iter().map(|&c| crate::sql_text::quote_identifier(&self.columns[c])).collect();
            format!(" RETURNING {}", r.join(", "))
        };
        let on_conflict = if self.do_nothing { " ON CONFLICT DO NOTHING" } else { "" };
        format!(
            "INSERT INTO {}({}) VALUES {}{on_conflict}{returning}",
            self.remote_table,
            cols.join(", "),
            values.join(", ")
        )
    }
}

/// Tuple routing of a partitioned target (`PartitionDispatch`): the key columns and
/// the partitions with their bounds, the default partition last if there is one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionRouting {
    pub relation: String,
    #[serde(skip)]
    pub strategy: Strategy,
    pub key: Vec<(usize, SqlType)>,
    #[serde(skip)]
    pub partitions: Vec<(Bound, ResultRel)>,
}
