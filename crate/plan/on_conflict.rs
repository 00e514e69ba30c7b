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
    /// EXPLAIN's `Conflict Resolution:` word.
    pub fn resolution(&self) -> &'static str {
        match self.action {
            ConflictAction::Nothing => "NOTHING",
            ConflictAction::Update { .. } => "UPDATE",
        }
    }
}
