//! INSERT … ON CONFLICT as planned (PostgreSQL's `OnConflictExpr`, made by
//! parse_clause.c's `transformOnConflictClause` and plancat.c's
//! `infer_arbiter_indexes`, carried by the ModifyTable plan as
//! `onConflictAction`, `arbiterIndexes`, `onConflictSet`, `onConflictWhere`).
//!
//! Invariants: `arbiters` are unique indexes of the target (empty: DO NOTHING without
//! a conflict target, which checks every unique index of the table, and EXPLAIN then
//! names none); DO UPDATE always has arbiters (PostgreSQL requires an inference
//! specification for it). The SET and WHERE expressions read a row of twice the
//! table's width: the existing row's columns, then `excluded`'s (the row proposed).

use serde::Serialize;

/// A unique index of the coordinator's table: its name and its one column.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UniqueKey {
    pub name: String,
    pub column: usize,
    /// A primary key's column is also NOT NULL.
    pub primary: bool,
    /// Made by a constraint (PRIMARY KEY, UNIQUE) rather than CREATE UNIQUE INDEX:
    /// a partition's copy of it is then named `part_col_key`, not `part_col_idx`.
    #[serde(skip)]
    pub constraint: bool,
    /// A partition's index: the partitioned table's index it is a partition of
    /// (PostgreSQL's `pg_inherits` between indexes), which ON CONFLICT's arbiters
    /// name (ExecInitPartitionInfo maps them to the partition's).
    #[serde(skip)]
    pub parent: Option<String>,
}

/// What a conflicting row makes the INSERT do.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum ConflictAction {
    /// `DO NOTHING`: the proposed row is skipped.
    Nothing,
    /// `DO UPDATE SET … [WHERE …]`: the existing row is updated, the proposed one
    /// skipped. `sets`: each changed column's new value; `filter`: the WHERE.
    Update {
        #[serde(skip)]
        sets: Vec<(usize, super::Expr)>,
        #[serde(skip)]
        filter: Option<super::Expr>,
    },
}

/// The ON CONFLICT clause of a ModifyTable.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OnConflict {
    pub action: ConflictAction,
    /// The arbiter indexes (infer_arbiter_indexes), in the table's index order.
    pub arbiters: Vec<UniqueKey>,
    /// EXPLAIN's `Conflict Filter: …` text (the WHERE of DO UPDATE).
    pub filter_sql: Option<String>,
}

impl OnConflict {
    /// The ON CONFLICT of a row routed to a partition whose unique indexes are
    /// `unique` (ExecInitPartitionInfo): the arbiters are the partition's indexes that
    /// are partitions of the parent's arbiters (none stays none: DO NOTHING without a
    /// target checks every index of the partition).
    pub fn for_partition(&self, unique: &[UniqueKey]) -> OnConflict {
        let arbiters = unique
            .iter()
            .filter(|u| u.parent.as_ref().is_some_and(|p| self.arbiters.iter().any(|a| &a.name == p)))
            .cloned()
            .collect();
        OnConflict { arbiters, ..self.clone() }
    }

    /// EXPLAIN's `Conflict Resolution:` word.
    pub fn resolution(&self) -> &'static str {
        match self.action {
            ConflictAction::Nothing => "NOTHING",
            ConflictAction::Update { .. } => "UPDATE",
        }
    }
}
