//! INSERT … ON CONFLICT into the coordinator's table, and its unique keys
//! (nodeModifyTable.c's `ExecInsert` with `ExecCheckIndexConstraints` (the
//! speculative pre-check of the arbiter indexes), `ExecOnConflictUpdate`, and
//! execIndexing.c's unique check, `check_exclusion_or_unique_constraint`).
//!
//! For each row proposed by the child (ModifyTable has made it a row of the table):
//! - a row equal in an arbiter index's column (every unique index for DO NOTHING
//!   without a conflict target) conflicts: DO NOTHING skips the proposed row; DO
//!   UPDATE evaluates its WHERE over (existing row, `excluded` row) and, if it holds,
//!   replaces the existing row by the SET values (a row this same command inserted
//!   or updated already is PostgreSQL's "command cannot affect row a second time");
//!   either way the row counts as a conflicting tuple (`InstrCountTuples2`);
//! - otherwise the row is inserted, and every unique index is checked: an equal key
//!   is a unique violation; a primary key's NULL a not-null violation.
//!
//! Invariants: `rows` is the table as this statement has made it so far (the rows at
//! its start, then each insert and update in order), and `keys[k]` maps each
//! non-NULL value of unique index `k`'s column to its row in `rows`. The
//! catalog's table itself changes only at the end of the statement
//! (`LocalChanges::apply`), so the scans of the statement see the rows as they were.
//!
//! Departs from PostgreSQL: unique indexes on one column only (the catalog refuses
//! others); error messages without their DETAIL line.

use std::collections::BTreeMap;

use crate::plan::on_conflict::{ConflictAction, OnConflict, UniqueKey};
use crate::plan::SqlType;
use crate::types::{Column, Datum, Table};

/// The unique checks of one row stored into `table` as it is (a setup section's
/// INSERT): PostgreSQL's not-null and unique violations, as their messages.
pub fn check_unique(
    rel: &str,
    unique: &[UniqueKey],
    columns: &[Column],
    table: &Table,
    row: &[Datum],
) -> Result<(), String> {
    for u in unique {
        let v = &row[u.column];
        if v.is_null() {
            if u.primary {
                return Err(not_null(rel, &columns[u.column].name));
            }
            continue;
        }
        if (0..table.nrows()).any(|i| &table.row(i)[u.column] == v) {
            return Err(duplicate(&u.name));
        }
    }
    Ok(())
}

fn not_null(rel: &str, col: &str) -> String {
    format!("null value in column \"{col}\" of relation \"{rel}\" violates not-null constraint")
}

fn duplicate(index: &str) -> String {
    format!("duplicate key value violates unique constraint \"{index}\"")
}

/// What becomes of a proposed row.
pub enum Outcome {
    /// Stored as a new row.
    Insert(Vec<Datum>),
    /// Not stored (DO NOTHING, or DO UPDATE whose WHERE did not hold).
    Skip,
    /// DO UPDATE: the row as the statement found it (`old`, named by value in
    /// `LocalChanges`) is replaced by `new`.
    Update { old: Vec<Datum>, new: Vec<Datum> },
}

/// A row of the table as the statement has made it.
#[derive(Clone)]
struct Live {
    row: Vec<Datum>,
    /// The row at the statement's start (None: inserted by this statement).
    original: Option<Vec<Datum>>,
    /// Inserted or updated by this command already.
    touched: bool,
}

/// ModifyTable's unique checks and ON CONFLICT for a local target.
#[derive(Clone)]
pub struct ConflictState {
    relation: String,
    columns: Vec<(String, SqlType)>,
    unique: Vec<UniqueKey>,
    on_conflict: Option<OnConflict>,
    rows: Vec<Live>,
    keys: Vec<BTreeMap<Datum, usize>>,
    /// Rows that conflicted (`Conflicting Tuples`), and those of them DO UPDATE's
    /// WHERE removed (`Rows Removed by Conflict Filter`).
    pub conflicting: usize,
    pub filtered: usize,
}

impl ConflictState {
    /// The state over `table`'s rows at the statement's start.
    pub fn new(
        relation: &str,
        columns: &[(String, SqlType)],
        unique: &[UniqueKey],
        on_conflict: Option<&OnConflict>,
        table: &Table,
    ) -> ConflictState {
        let mut s = ConflictState {
            relation: relation.to_string(),
            columns: columns.to_vec(),
            unique: unique.to_vec(),
            on_conflict: on_conflict.cloned(),
            rows: Vec::with_capacity(table.nrows()),
            keys: vec![BTreeMap::new(); unique.len()],
            conflicting: 0,
            filtered: 0,
        };
        for i in 0..table.nrows() {
            let row = table.row(i).to_vec();
            s.add(Live { row: row.clone(), original: Some(row), touched: false });
        }
        s
    }

    fn add(&mut self, live: Live) {
        let at = self.rows.len();
        for (k, u) in self.unique.iter().enumerate() {
            let v = &live.row[u.column];
            if !v.is_null() {
                self.keys[k].insert(v.clone(), at);
            }
        }
        self.rows.push(live);
    }

    /// The row that conflicts with `row` in one of the arbiter indexes.
    fn arbiter_conflict(&self, row: &[Datum]) -> Option<usize> {
        let oc = self.on_conflict.as_ref()?;
        self.unique.iter().enumerate().find_map(|(k, u)| {
            let arbiter = oc.arbiters.is_empty() || oc.arbiters.iter().any(|a| a.name == u.name);
            let v = &row[u.column];
            if !arbiter || v.is_null() {
                return None;
            }
            self.keys[k].get(v).copied()
        })
    }

    /// Every unique index's check of `row`, stored at position `at` (None: a new
    /// row; Some: the row it replaces, which may keep its own key).
    fn check(&self, row: &[Datum], at: Option<usize>) -> Result<(), String> {
        for (k, u) in self.unique.iter().enumerate() {
            let v = &row[u.column];
            if v.is_null() {
                if u.primary {
                    return Err(not_null(&self.relation, &self.columns[u.column].0));
                }
                continue;
            }
            if let Some(&i) = self.keys[k].get(v) {
                if Some(i) != at {
                    return Err(duplicate(&u.name));
                }
            }
        }
        Ok(())
    }

    /// ExecInsert of one proposed row.
    pub fn propose(&mut self, row: Vec<Datum>) -> Result<Outcome, String> {
        let Some(i) = self.arbiter_conflict(&row) else {
            self.check(&row, None)?;
            self.add(Live { row: row.clone(), original: None, touched: true });
            return Ok(Outcome::Insert(row));
        };
        let Some(ConflictAction::Update { sets, filter }) = self.on_conflict.as_ref().map(|o| &o.action) else {
            self.conflicting += 1;
            return Ok(Outcome::Skip);
        };
        if self.rows[i].touched {
            return Err("ON CONFLICT DO UPDATE command cannot affect row a second time".into());
        }
        self.conflicting += 1;
        // The existing row, then `excluded`'s columns.
        let mut both = self.rows[i].row.clone();
        both.extend(row);
        if let Some(f) = filter {
            if !f.qual(&both).map_err(|e| e.to_string())? {
                self.filtered += 1;
                return Ok(Outcome::Skip);
            }
        }
        let mut new = self.rows[i].row.clone();
        for (c, e) in sets {
            new[*c] = assign(e.eval(&both).map_err(|e| e.to_string())?, self.columns[*c].1)?;
        }
        self.check(&new, Some(i))?;
        // The index entries of the old version go; the new version's come.
        for (k, u) in self.unique.iter().enumerate() {
            let v = &self.rows[i].row[u.column];
            if self.keys[k].get(v) == Some(&i) {
                self.keys[k].remove(v);
            }
            if !new[u.column].is_null() {
                self.keys[k].insert(new[u.column].clone(), i);
            }
        }
        let live = &mut self.rows[i];
        live.row = new.clone();
        live.touched = true;
        let old = live.original.clone().unwrap_or_default();
        Ok(Outcome::Update { old, new })
    }
}

impl ConflictState {
    /// ExecUpdate of a local row (`old`, as the statement found it) to `new`: the
    /// unique indexes checked for the new version, as each index insertion checks
    /// it (so a transient duplicate fails, as in PostgreSQL's non-deferred keys).
    pub fn replace(&mut self, old: &[Datum], new: &[Datum]) -> Result<(), String> {
        let found = self.rows.iter().position(|l| !l.touched && l.original.as_deref() == Some(old));
        let Some(i) = found else {
            return Err("internal error: the updated row is not in the table".into());
        };
        self.check(new, Some(i))?;
        for (k, u) in self.unique.iter().enumerate() {
            let v = &self.rows[i].row[u.column];
            if self.keys[k].get(v) == Some(&i) {
                self.keys[k].remove(v);
            }
            if !new[u.column].is_null() {
                self.keys[k].insert(new[u.column].clone(), i);
            }
        }
        self.rows[i].row = new.to_vec();
        self.rows[i].touched = true;
        Ok(())
    }
}

/// A SET value cast to its column's type (the assignment cast).
fn assign(v: Datum, ty: SqlType) -> Result<Datum, String> {
    let from = match v {
        Datum::Int(_) => Some(SqlType::Int8),
        Datum::Numeric(_) => Some(SqlType::Numeric),
        Datum::Float(_) => Some(SqlType::Float8),
        _ => None,
    };
    crate::plan::eval::cast(v, from, ty).map_err(|k| crate::plan::eval::EvalError::from(k).to_string())
}
